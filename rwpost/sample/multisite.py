"""The bundled multi-site sample: generated fact-check pages of eight fictional publishers in six
languages, each in a markup shape real fact-checkers use, plus a ClaimReview feed, robots.txt, a
sitemap and the gold answers (``rwpost sample build-multisite``).

Everything here is generated (claims, verdicts, publishers, hosts under ``sample.rwpost.invalid``);
the shapes copy how real pages carry their markup (../shared/multisite/SOURCES.md): one ClaimReview
script (AFP), a Yoast ``@graph`` with a type array (Africa Check, Factly), microdata, RDFa, a
``claimReviewed`` array, two ClaimReviews on one page, broken JSON-LD and a finding written as a
sentence with ``ratingValue`` (AFP Hindi), no ``ratingValue`` (TFC), and pages without ClaimReview
(Reuters), one of them reviewed in the feed only. The crawl serves the folder on 127.0.0.1
(:class:`rwpost.testing.sites.FolderServer`), ``__SITE_BASE__`` in the feed, sitemap and robots.txt
becoming its address.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwpost.io import write_json, write_text

SITE_BASE = "__SITE_BASE__"
"""Placeholder for the server's own address in the feed, the sitemap and robots.txt."""
FEED_FILE = "feed.json"
GOLD_FILE = "gold.json"
SOCIAL = "https://social.sample.rwpost.invalid"
"""Where the sample's posts (the claims' appearances) are said to be."""
SOURCES = "https://sources.sample.rwpost.invalid"
"""Where the sample's articles link their sources (the evidence candidates)."""
SOURCE_ANCHOR = {
    "en": "The original source",
    "es": "La fuente original",
    "fr": "La source originale",
    "de": "Die Originalquelle",
    "pt": "A fonte original",
    "hi": "मूल स्रोत",
    "zh-Hant": "原始資料來源",
}
OPEN_LICENCE = "https://creativecommons.org/licenses/by/4.0/"
"""The ``sdLicense`` of the one sample publisher that licenses its ClaimReview markup openly."""


@dataclass(frozen=True)
class SamplePage:
    """One generated page: where it is served, what it says and how its markup carries it."""

    path: str
    host: str
    publisher: str
    language: str
    shape: str
    headline: str
    body: list[str]
    claim: str | None = None
    rating: str | None = None
    rating_value: int | None = None
    best: int | None = 5
    worst: int | None = 1
    date: str = "2024-03-01"
    label: str | None = None
    """The RW-Post label the reader must give (None: set aside, with :attr:`reason`)."""
    reason: str | None = None
    in_feed: bool = True
    extra_claims: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://{self.host}/{self.path.split('/', 1)[1]}"

    @property
    def appearance(self) -> str:
        return f"{SOCIAL}/{self.path.replace('/', '-').removesuffix('.html')}"


PAGES: tuple[SamplePage, ...] = (
    SamplePage(
        path="checkpoint/fact-check/moon-base-photo.html",
        host="checkpoint.sample.rwpost.invalid",
        publisher="Checkpoint Sample",
        language="en",
        shape="one ClaimReview script",
        headline="No, this photo does not show a base on the Moon",
        body=[
            "A photo shared thousands of times claims to show a new base built on the far side of the Moon. "
            "The image is a rendering from a 2019 architecture competition, not a photograph.",
            "We traced the picture to the competition's website, where it was published with the names of "
            "the students who drew it. No space agency has announced any such base.",
            "The post also says the base was finished last month. There is no record of a launch that could "
            "have carried its parts, and astronomers we asked said nothing of the kind can be seen.",
        ],
        claim="A photo shows a new base on the far side of the Moon.",
        rating="False",
        rating_value=1,
        label="False",
    ),
    SamplePage(
        path="verificado/es/autobus-electrico-nieve.html",
        host="verificado.sample.rwpost.invalid",
        publisher="Verificado Muestra",
        language="es",
        shape="Yoast @graph, @type array",
        headline="El vídeo del autobús eléctrico bajo la nieve es de otro país",
        body=[
            "Un vídeo que circula en redes sociales asegura mostrar un autobús eléctrico de la ciudad "
            "detenido por la nieve esta semana. Las imágenes son reales, pero se grabaron hace tres años "
            "en otro país y el autobús no era eléctrico.",
            "Encontramos la grabación original publicada por un canal de noticias local, con la fecha y el "
            "lugar. El contexto que acompaña al vídeo es engañoso, aunque la nevada sí ocurrió.",
            "La empresa de transporte explicó que sus autobuses siguieron funcionando durante toda la "
            "semana.",
        ],
        claim="Un vídeo muestra un autobús eléctrico de la ciudad detenido por la nieve esta semana.",
        rating="Engañoso",
        rating_value=2,
        label="Mixture",
    ),
    SamplePage(
        path="vraioufaux/2024/03/pain-interdit.html",
        host="vraioufaux.sample.rwpost.invalid",
        publisher="Vrai ou Faux Exemple",
        language="fr",
        shape="microdata",
        headline="Non, le pain de mie ne sera pas interdit en avril",
        body=[
            "Un message partagé sur les réseaux sociaux affirme que le pain de mie sera interdit à la vente "
            "dès le mois d'avril. Aucun texte de loi ne prévoit une telle mesure.",
            "Le ministère interrogé par notre rédaction dément toute interdiction. Le message reprend un "
            "faux communiqué qui circulait déjà l'an dernier dans un autre pays.",
            "Les boulangers que nous avons contactés n'ont reçu aucune consigne et continuent de vendre leur "
            "pain comme d'habitude.",
        ],
        claim="Le pain de mie sera interdit à la vente dès le mois d'avril.",
        rating="Faux",
        rating_value=1,
        label="False",
    ),
    SamplePage(
        path="faktenpruefer/artikel/stromausfall-karte.html",
        host="faktenpruefer.sample.rwpost.invalid",
        publisher="Faktenprüfer Beispiel",
        language="de",
        shape="RDFa",
        headline="Diese Karte zeigt keinen geplanten Stromausfall",
        body=[
            "In sozialen Netzwerken wird eine Karte geteilt, die angeblich einen geplanten Stromausfall im "
            "ganzen Land für das kommende Wochenende zeigt. Die Karte stammt aus einer Übung des "
            "Netzbetreibers.",
            "Der Netzbetreiber hat die Karte vor zwei Jahren für eine öffentliche Schulung veröffentlicht. "
            "Ein Stromausfall ist nicht geplant, wie eine Sprecherin auf Anfrage bestätigte.",
            "Die Behauptung ist falsch: Die Karte wurde aus dem Zusammenhang gerissen und mit einem neuen "
            "Datum versehen.",
        ],
        claim="Eine Karte zeigt einen geplanten landesweiten Stromausfall am Wochenende.",
        rating="Falsch",
        rating_value=1,
        label="False",
    ),
    SamplePage(
        path="checagem/2024/vacina-chip.html",
        host="checagem.sample.rwpost.invalid",
        publisher="Checagem Amostra",
        language="pt",
        shape="claimReviewed array",
        headline="É falso que frascos de vacina tragam chips de rastreamento",
        body=[
            "Publicações nas redes sociais afirmam que frascos de vacina trazem chips de rastreamento e "
            "que o "
            "governo comprou antenas para ler esses chips. As duas afirmações são falsas.",
            "O fabricante informou que os frascos têm apenas um código de barras impresso no rótulo. As "
            "antenas citadas nas publicações são de uma rede de telefonia e foram instaladas em 2018.",
            "Especialistas ouvidos pela reportagem explicam que um chip desse tipo não caberia na tampa do "
            "frasco.",
        ],
        claim="Frascos de vacina trazem chips de rastreamento.",
        extra_claims=["O governo comprou antenas para ler os chips das vacinas."],
        rating="Falso",
        rating_value=1,
        label="False",
    ),
    SamplePage(
        path="satyajaanch/hindi/purana-video-baadh.html",
        host="satyajaanch.sample.rwpost.invalid",
        publisher="सत्य जाँच नमूना",
        language="hi",
        shape="broken JSON-LD, the finding as a sentence",
        headline="बाढ़ का यह वीडियो इस साल का नहीं है",
        body=[
            "सोशल मीडिया पर एक वीडियो शेयर किया जा रहा है जिसमें दावा है कि यह इस साल की बाढ़ का है। "
            "हमारी जाँच में पता चला कि यह वीडियो चार साल पुराना है और किसी दूसरे राज्य का है।",
            "वीडियो का मूल संस्करण एक स्थानीय समाचार चैनल ने उसी समय प्रकाशित किया था। "
            "उस रिपोर्ट में जगह और तारीख़ दोनों साफ़ लिखी हैं।",
            "ज़िला प्रशासन ने भी बताया कि इस साल वहाँ ऐसी कोई बाढ़ नहीं आई है।",
        ],
        claim="यह वीडियो इस साल की बाढ़ का है।",
        rating="यह वीडियो चार साल पुराना है और किसी दूसरे राज्य का है",
        rating_value=1,
        label="False",
    ),
    SamplePage(
        path="chahe/articles/1024.html",
        host="chahe.sample.rwpost.invalid",
        publisher="查核樣本中心",
        language="zh-Hant",
        shape="no ratingValue, two ClaimReviews",
        headline="【錯誤】網傳「喝熱水可以預防所有流感」？",
        body=[
            "網路上流傳一則訊息，聲稱每天喝三杯熱水就可以預防所有種類的流感。查核後發現，這個說法沒有任何研究支持。",
            "醫師表示，喝水有助於維持身體健康，但無法阻止病毒感染。預防流感最有效的方式是接種疫苗與勤洗手。",
            "衛生單位也曾發布澄清，說明這則訊息是錯誤的，並提醒民眾不要轉傳未經證實的健康資訊。",
            "這則訊息最早出現在一個通訊軟體群組，之後被改寫成圖卡，在社群網站上被分享了上千次。"
            "圖卡上引用的「研究」並不存在，我們在學術資料庫中也找不到相關的論文。",
            "查核中心詢問了三位感染科醫師，他們都表示，流感病毒會透過飛沫傳播，"
            "熱水的溫度無法在身體裡殺死病毒，也不能取代疫苗的保護效果。",
            "結論：網傳訊息宣稱喝熱水可以預防所有流感，與醫學證據不符，查核結果為錯誤。",
        ],
        claim="每天喝三杯熱水可以預防所有種類的流感。",
        rating="錯誤",
        rating_value=None,
        label="False",
    ),
    SamplePage(
        path="newswire/world/bridge-closure-photo.html",
        host="newswire.sample.rwpost.invalid",
        publisher="Newswire Sample",
        language="en",
        shape="no ClaimReview on the page (the feed reviews it)",
        headline="Fact Check: Photo of closed bridge is from 2015 repairs, not this week's storm",
        body=[
            "Social media users are sharing a photo of a closed bridge with the claim that this week's storm "
            "destroyed it. The photo was taken in 2015, when the bridge was closed for planned repairs.",
            "The city's transport office published the same photo at the time, announcing the works. The "
            "bridge was open to traffic on Monday, a spokesperson said.",
            "The storm did close several roads in the region, but not this bridge.",
        ],
        claim="A photo shows a bridge destroyed by this week's storm.",
        rating="Missing context",
        rating_value=None,
        label="Mixture",
    ),
    SamplePage(
        path="newswire/world/market-report.html",
        host="newswire.sample.rwpost.invalid",
        publisher="Newswire Sample",
        language="en",
        shape="no ClaimReview anywhere (an article, set aside)",
        headline="Markets steady as traders wait for the central bank",
        body=[
            "Stock markets were steady on Tuesday as traders waited for the central bank's decision on "
            "interest rates, due on Thursday.",
            "Analysts expect rates to stay where they are, after inflation slowed for the third month in a "
            "row.",
            "Oil prices rose slightly, while the currency was little changed against the dollar.",
        ],
        in_feed=False,
        label=None,
        reason="no-claimreview",
    ),
    SamplePage(
        path="verificado/es/tarifa-agua-duda.html",
        host="verificado.sample.rwpost.invalid",
        publisher="Verificado Muestra",
        language="es",
        shape="Yoast @graph, a wording no table knows",
        headline="¿Subirá la tarifa del agua un 40 por ciento?",
        body=[
            "Un mensaje afirma que la tarifa del agua subirá un 40 por ciento el próximo mes. El "
            "ayuntamiento "
            "todavía no ha aprobado ninguna subida y la propuesta que se estudia es menor.",
            "La concejalía explicó que la cifra del mensaje sale de un borrador que se descartó en enero. La "
            "decisión final se tomará en el pleno de mayo.",
            "Hasta entonces no se puede saber cuál será la nueva tarifa.",
        ],
        claim="La tarifa del agua subirá un 40 por ciento el próximo mes.",
        rating="Pendiente de pleno",
        rating_value=None,
        label=None,
        reason="unmapped-rating: Pendiente de pleno",
    ),
)
"""The sample's pages: 8 publishers, 6 languages (en, es, fr, de, pt, hi, zh-Hant), every markup shape."""


def _review(page: SamplePage, claim: str | None = None) -> dict[str, Any]:
    rating: dict[str, Any] = {"@type": "Rating", "alternateName": page.rating}
    if page.rating_value is not None:
        rating |= {
            "ratingValue": str(page.rating_value),
            "bestRating": str(page.best),
            "worstRating": str(page.worst),
        }
    return {
        "@type": "ClaimReview",
        "url": page.url,
        "claimReviewed": claim or page.claim,
        "datePublished": page.date,
        "author": {"@type": "Organization", "name": page.publisher},
        "itemReviewed": {
            "@type": "Claim",
            "author": {"@type": "Person", "name": "Sample social media user"},
            "datePublished": "2024-02-27",
            "appearance": [{"@type": "CreativeWork", "url": page.appearance}],
        },
        "reviewRating": rating,
        **({"sdLicense": OPEN_LICENCE} if page.host.startswith("checkpoint.") else {}),
    }


def _script(data: Any) -> str:
    return f'<script type="application/ld+json">{json.dumps(data, ensure_ascii=False)}</script>'


def _article(page: SamplePage) -> dict[str, Any]:
    return {"@type": "NewsArticle", "headline": page.headline, "datePublished": f"{page.date}T09:00:00Z"}


def _markup(page: SamplePage) -> tuple[str, str]:
    """The page's ClaimReview markup: (in the head, in the body)."""
    shape = page.shape
    if page.claim is None or shape.startswith("no ClaimReview"):
        return _script(_article(page)), ""
    if shape.startswith("Yoast"):
        review = {**_review(page), "@type": ["Review", "ClaimReview"], "@id": page.url + "#review"}
        graph = {
            "@context": "https://schema.org",
            "@graph": [{"@type": "WebPage", "@id": page.url}, _article(page), review],
        }
        return _script(graph), ""
    if shape == "microdata":
        body = (
            '<div itemscope itemtype="https://schema.org/ClaimReview">'
            f'<meta itemprop="url" content="{page.url}"><meta itemprop="datePublished" content="{page.date}">'
            '<p class="claim">Affirmation : <span '
            f'itemprop="claimReviewed">{html.escape(page.claim)}</span></p>'
            '<div itemprop="itemReviewed" itemscope itemtype="https://schema.org/Claim">'
            f'<link itemprop="appearance" href="{page.appearance}"></div>'
            '<div itemprop="reviewRating" itemscope itemtype="https://schema.org/Rating">'
            f'<meta itemprop="ratingValue" content="{page.rating_value}"><meta itemprop="bestRating" '
            'content="5">'
            '<meta itemprop="worstRating" content="1"><p>Verdict : <b '
            f'itemprop="alternateName">{page.rating}</b></p>'
            "</div></div>"
        )
        return "", body
    if shape == "RDFa":
        body = (
            f'<div vocab="https://schema.org/" typeof="ClaimReview" resource="{page.url}#review">'
            f'<meta property="url" content="{page.url}"><meta property="datePublished" content="{page.date}">'
            f'<p>Behauptung: <span property="claimReviewed">{html.escape(page.claim)}</span></p>'
            '<div property="itemReviewed" typeof="Claim"><a property="appearance" '
            f'href="{page.appearance}">Beitrag</a></div>'
            '<div property="reviewRating" typeof="Rating">'
            f'<meta property="ratingValue" content="{page.rating_value}"><meta property="bestRating" '
            'content="5">'
            '<meta property="worstRating" content="1"><p>Bewertung: <b '
            f'property="alternateName">{page.rating}</b></p>'
            "</div></div>"
        )
        return "", body
    if shape == "claimReviewed array":
        return _script(
            {
                "@context": "https://schema.org",
                **_review(page),
                "claimReviewed": [page.claim, *page.extra_claims],
            }
        ), ""
    if shape.startswith("broken JSON-LD"):
        text = json.dumps({"@context": "https://schema.org", **_review(page)}, ensure_ascii=False)
        broken = f'<script type="application/ld+json">{text[:-1]},}}</script>'  # a trailing comma: repaired
        return broken + '<script type="application/ld+json"><<< not JSON >>></script>', ""  # set aside
    if shape.startswith("no ratingValue, two"):
        second = {**_review(page, "喝熱水可以治療流感。")}
        return _script([{"@context": "https://schema.org", **_review(page)}, second]), ""
    return _script({"@context": "https://schema.org", **_review(page)}), ""


def render_page(page: SamplePage) -> str:
    """The HTML of one sample page: head metadata, navigation, the article, a footer."""
    head, in_body = _markup(page)
    source = f"{SOURCES}/{page.path.replace('/', '-').removesuffix('.html')}"
    cited = f' (<a href="{source}">{html.escape(SOURCE_ANCHOR[page.language])}</a>)'
    paragraphs = "".join(
        f"<p>{html.escape(text)}{cited if number == 1 else ''}</p>" for number, text in enumerate(page.body)
    )
    post = f'<p><a href="{page.appearance}">{html.escape(page.appearance)}</a></p>' if page.claim else ""
    lang = {"zh-Hant": "zh-hant"}.get(page.language, "en" if page.language in ("hi", "pt") else page.language)
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{html.escape(page.headline)} | {html.escape(page.publisher)}</title>"
        f'<link rel="canonical" href="{page.url}">'
        f'<meta property="og:title" content="{html.escape(page.headline)}">'
        f'<meta property="og:site_name" content="{html.escape(page.publisher)}">'
        f'<meta property="article:published_time" content="{page.date}T09:00:00+00:00">{head}</head>'
        f'<body><header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>'
        f"<main><article><h1>{html.escape(page.headline)}</h1>{in_body}{paragraphs}{post}</article></main>"
        f"<footer><p>Generated sample page of rwpost (not a real publisher).</p></footer></body></html>"
    )


def feed(pages: tuple[SamplePage, ...] = PAGES) -> dict[str, Any]:
    """The sample's ClaimReview DataFeed: the reviews of the pages in it, at the server's address (the
    feed's wording of a claim differs from the page's, to show which one a record keeps)."""
    elements = []
    for page in pages:
        if not page.in_feed or page.claim is None:
            continue
        review = _review(page, f"(feed) {page.claim}")
        review["url"] = f"{SITE_BASE}/{page.path}"
        elements.append({"@type": "DataFeedItem", "dateCreated": f"{page.date}T10:00:00Z", "item": [review]})
    return {"@context": "https://schema.org", "@type": "DataFeed", "dataFeedElement": elements}


def gold(pages: tuple[SamplePage, ...] = PAGES) -> list[dict[str, Any]]:
    """What the reader must find on each page."""
    return [
        {
            "path": p.path,
            "url": p.url,
            "publisher": p.publisher,
            "language": p.language,
            "shape": p.shape,
            "claim": None if p.shape.startswith("no ClaimReview on the page") else p.claim,
            "rating": p.rating if p.claim else None,
            "label": p.label,
            "reason": p.reason,
            "appearance": p.appearance if p.claim else None,
            "in_feed": p.in_feed,
        }
        for p in pages
    ]


def build_multisite(out: Path) -> dict[str, int]:
    """Write the sample (pages, feed, sitemap, robots.txt, gold) under ``out``; returns counts."""
    out = Path(out)
    for page in PAGES:
        write_text(out / page.path, render_page(page))
    write_json(out / FEED_FILE, feed())
    urls = "".join(f"<url><loc>{SITE_BASE}/{p.path}</loc><lastmod>{p.date}</lastmod></url>" for p in PAGES)
    sitemap = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>\n'
    write_text(out / "sitemap.xml", sitemap)
    write_text(
        out / "robots.txt", f"User-agent: *\nDisallow: /private/\n\nSitemap: {SITE_BASE}/sitemap.xml\n"
    )
    write_json(out / GOLD_FILE, gold())
    write_text(
        out / "README.md",
        "# The multi-site sample (generated)\n\nGenerated by `rwpost sample build-multisite` "
        "(rwpost/sample/multisite.py): fictional publishers, claims and verdicts in the markup shapes of "
        "real "
        "fact-checkers. Nothing here is a real page.\n",
    )
    return {
        "pages": len(PAGES),
        "feed_reviews": len(feed()["dataFeedElement"]),
        "languages": len({p.language for p in PAGES}),
    }
