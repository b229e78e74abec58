"""Scrapy settings of the rwpost crawler: polite by default (robots.txt, AutoThrottle, one site slot).

``snopes_crawler.run`` overrides the few that a run chooses (output folder, User-Agent, throttling,
the polite delay, image limits); everything else is fixed here, read once at the edge (STYLE.md 4).
"""

from scrapy.settings import default_settings

from rwpost import __version__
from rwpost.crawl import MAX_VIDEO_BYTES
from rwpost.images import FETCH_DELAY, MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS
from rwpost.snopes.listing import SITEMAP_HOSTS

BOT_NAME = "rwpost"
SPIDER_MODULES = ["snopes_crawler.spiders"]
NEWSPIDER_MODULE = "snopes_crawler.spiders"

# Politeness. The User-Agent names the project and a contact (set per run by the runner).
USER_AGENT = f"rwpost-crawler/{__version__} (research crawler for the RW-Post fact-checking dataset)"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 8
CONCURRENT_REQUESTS_PER_DOMAIN = 2
DOWNLOAD_DELAY = FETCH_DELAY  # a run's --delay (CrawlConfig.delay) replaces it, and the start delay
# DOWNLOAD_DELAY is jittered by +-50% by default (DOWNLOAD_DELAY_JITTER), so requests do not beat a rhythm.
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = FETCH_DELAY
AUTOTHROTTLE_MAX_DELAY = 60.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
# Scrapy (2.13+) starts its remote-control HTTP server in every crawl unless told not to: an aiohttp server on
# a localhost port that runs the Python code posted to it, announced in a job file in the user's profile.
# The crawler is driven by its runner only, so it is off.
REMOTE_CONTROL_ENABLED = False

# Robustness: retries with backoff honouring Retry-After, bounded redirects, size and time caps.
RETRY_ENABLED = True
RETRY_TIMES = 4
RETRY_HTTP_CODES = [429, 500, 502, 503, 504, 522, 524, 408]
RETRY_BACKOFF_BASE = 1.0
RETRY_BACKOFF_MAX = 120.0
REDIRECT_MAX_TIMES = 5
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 5 * 1024 * 1024
DOWNLOAD_WARNSIZE = 2 * 1024 * 1024

# The built-in components switched off above are left out of Scrapy's base lists: Scrapy imports every
# listed component's module before the component says it is off, and a `None` entry in DOWNLOADER_MIDDLEWARES
# or EXTENSIONS is imported too (to name it). The cookies middleware's module imports tldextract, requests
# and urllib3; the remote control's aiohttp and its web server; the Telnet console's twisted.conch: 0.3-0.5 s
# of each crawl's start, for nothing.
_off = {
    "scrapy.downloadermiddlewares.cookies.CookiesMiddleware",  # COOKIES_ENABLED = False
    "scrapy.extensions.telnet.TelnetConsole",  # TELNETCONSOLE_ENABLED = False
    "scrapy.extensions.remote_control.RemoteControl",  # REMOTE_CONTROL_ENABLED = False
}
DOWNLOADER_MIDDLEWARES_BASE = {
    k: v for k, v in default_settings.DOWNLOADER_MIDDLEWARES_BASE.items() if k not in _off
}
EXTENSIONS_BASE = {k: v for k, v in default_settings.EXTENSIONS_BASE.items() if k not in _off}

DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "snopes_crawler.middlewares.RobotsTxtMiddleware": 100,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "snopes_crawler.middlewares.BackoffRetryMiddleware": 550,
    "snopes_crawler.middlewares.DelayMiddleware": 50,
}
ITEM_PIPELINES = {
    "snopes_crawler.pipelines.ArticleImagesPipeline": 300,
    "snopes_crawler.pipelines.ArticleVideosPipeline": 350,
    "snopes_crawler.pipelines.StorePipeline": 800,
}
EXTENSIONS = {
    "snopes_crawler.extensions.CrawlReport": 500,
}

# Images follow redirects, as pages do (Scrapy's media pipelines do not by default).
MEDIA_ALLOW_REDIRECTS = True

# rwpost's own settings (the runner sets them from its arguments).
RWPOST_DOWNLOAD_IMAGES = True
RWPOST_ALLOW_LOOPBACK = False
RWPOST_MAX_IMAGE_BYTES = MAX_IMAGE_BYTES
RWPOST_MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
RWPOST_DOWNLOAD_VIDEOS = True
RWPOST_MAX_VIDEO_BYTES = MAX_VIDEO_BYTES
RWPOST_PROGRESS_INTERVAL = 2.0
# Hosts besides the start URL's that may serve the site's sitemaps (a --sitemaps run reads
# media.snopes.com/sitemaps/sitemap-latest.xml, sitemap-news.xml and sitemap-articles-YYYY-MM.xml);
# a run adds its --sitemap-host ones. A sitemap anywhere else is ignored and counted.
RWPOST_SITEMAP_HOSTS = list(SITEMAP_HOSTS)

LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
