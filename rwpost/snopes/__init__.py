"""One model of a Snopes page, 2017 to today: layouts, JSON-LD and microdata, body region, link rules,
listing and sitemap parsing. The Scrapy spider, the tagger and the bundled sample site all use it."""
