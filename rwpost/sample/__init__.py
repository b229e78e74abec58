"""The bundled Snopes-like site the crawler is tested and demonstrated on (tooling, not a pipeline stage).

- :mod:`.records`: released RW-Post records as site articles (:class:`~.records.SiteArticle`).
- :mod:`.images`: stand-in images drawn with Pillow (the release has links, not images).
- :mod:`.render`: one HTML renderer per Snopes layout, and the listing pages.
- :mod:`.hostile`: hostile pages with what the crawler must do on each.
- :mod:`.build`: ``build_site`` (``rwpost sample build``) and the gold answers (``load_gold``).
- :mod:`.serve`: ``SampleServer`` and ``serve_site`` (``rwpost sample serve``), on 127.0.0.1.
"""
