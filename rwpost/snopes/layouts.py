"""Names of the Snopes page layouts the page model knows (each a theme the site used)."""

from __future__ import annotations

LAYOUT_2020S = "snopes-2020s"
"""The 2020s theme (2020-2026): ``main#article_main``, ``#fact_check_rating_container``."""
LAYOUT_WORDPRESS = "snopes-wordpress-2017"
"""The 2017-2019 WordPress theme: ``article.snopes-post``, ``.claim-wrapper``, ``.rating-wrapper``."""
LAYOUT_JSONLD = "jsonld-only"
"""No known markup, but a ``ClaimReview`` JSON-LD block."""
LAYOUT_UNKNOWN = "unknown"
