"""rwpost's Scrapy project: Snopes listing/sitemap discovery, article parsing, images and the store."""
