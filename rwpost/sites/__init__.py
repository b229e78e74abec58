"""Fact-check pages of any publisher, in any language: the multi-site reader.

``sites.yaml`` (:mod:`.registry`) names the fact-checkers; :mod:`.claimreview` reads schema.org
ClaimReview from JSON-LD, microdata and RDFa; :mod:`.language` detects the body's language;
:mod:`.reader` turns one page into a :class:`~rwpost.sites.reader.SitePage`; :mod:`.feed` streams
ClaimReview feeds. The Snopes page model (:mod:`rwpost.snopes`) stays the one reader of Snopes.
"""
