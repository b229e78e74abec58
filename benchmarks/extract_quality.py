"""Extraction quality on the bundled sample site and on real Snopes pages, side by side.

**Sample site**: extraction vs the gold records of ``data/sample/site/`` (generated pages).
**Real pages** (``--real``, default ``tests/fixtures/snopes_html``): the real 2018 pages with
hand-labelled post links (``2018/labels.json``) and the four with the authors' released record
(``2018/with-rwpost-gold/*.rwpost.json``): post link correct where a page has one, false positives
where it has none, and evidence URL precision / recall against the gold evidence URLs present in the
body (URLs compared through :func:`rwpost.snopes.links.link_identity`, so Snopes images of every era,
tweets and players match). The post is the extractor's ``post_link``, else its first post image.

For each backend it reports claim exact match (claim read from the page), post link found, post
image found, post false positive (a post link named on a page whose article has none: on the sample the
records without a post link, whose pages show the post's image only; on the real pages those whose
labelled post is an image or nothing), evidence URL precision / recall (micro, over articles whose gold
has evidence URLs),
key point counts and hallucinated links dropped. The LLM backend runs through the loopback test
server replaying answers recorded from :mod:`rwpost.extract.scripted` (a deterministic script, not
a model); ``--record`` rebuilds that recording.

    python -m benchmarks.extract_quality [--site data/sample/site] [--record]
    OPENAI_API_KEY=... python -m benchmarks.extract_quality --llm-real --out /tmp/llm_real.json

``--llm-real`` runs only the real pages, with the LLM backend of the environment's endpoint: the
figures the issue's goals (the paper's GPT-4o) are stated for; the offline rules are a fallback.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rwpost.extract.llm import ExtractionFailure, LLMExtractor
from rwpost.extract.offline import OfflineExtractor, link_key
from rwpost.io import write_json
from rwpost.llm import LLMCache, LLMClient
from rwpost.records import Extraction, TaggedArticle
from rwpost.tagged import tag_article
from rwpost.testing.llm import FakeLLMServer, Recorder, Replayer
from rwpost.urls import evidence_key

DEFAULT_RECORDING = Path("data/sample/llm/scripted_answers.jsonl")
DEFAULT_REAL = Path("tests/fixtures/snopes_html")
SCRIPTED_MODEL = "scripted-offline-rules"


def _norm_url(url: str | None) -> str | None:
    """An http(s) URL as the evaluation compares evidence (:func:`rwpost.urls.evidence_key`), else None."""
    if not url or not str(url).lower().startswith(("http://", "https://")):
        return None
    return evidence_key(str(url))


def load_sample(site: Path) -> tuple[list[dict[str, Any]], list[TaggedArticle]]:
    """Gold records and the tagged articles of their pages."""
    gold = [
        json.loads(line) for line in (site / "gold.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]
    articles = []
    for row in gold:
        html = (site / row["page"].strip("/") / "index.html").read_text(encoding="utf-8")
        articles.append(tag_article(html, row["news_url"]))
    return gold, articles


def score(
    gold: list[dict[str, Any]],
    articles: list[TaggedArticle],
    outcomes: dict[str, Extraction | ExtractionFailure],
) -> dict[str, Any]:
    """The quality figures of one backend's outcomes against the gold records."""
    by_id = {a.id: a for a in articles}
    claim_hits = post_hits = post_total = image_hits = image_total = 0
    has_post = post_right = no_post = post_wrong = no_link = link_wrong = 0
    tp = n_pred = n_gold = 0
    key_points: list[int] = []
    hallucinated = failed = 0
    for row in gold:
        article = by_id[row["id"]]
        claim_hits += (article.claim or "").strip() == (row.get("claim") or "").strip()
        outcome = outcomes.get(row["id"])
        if not isinstance(outcome, Extraction):
            failed += 1
            continue
        reference = _norm_url(post_reference(outcome))
        if _norm_url(row.get("post_link")) or _norm_url(row.get("image_link")):
            has_post += 1
            post_right += reference is not None and (
                reference == _norm_url(row.get("post_link"))
                or reference == _norm_url(row.get("image_link"))
                or reference.endswith("/" + (row.get("image_path") or "\0"))
            )
        else:
            no_post += 1
            post_wrong += reference is not None
        if not _norm_url(row.get("post_link")):
            # the record has no post link (the page shows the post's image only): naming one is wrong
            no_link += 1
            link_wrong += _norm_url(outcome.post.post_link) is not None or (
                not _norm_url(row.get("image_link")) and reference is not None
            )
        if _norm_url(row.get("post_link")):
            post_total += 1
            post_hits += _norm_url(outcome.post.post_link) == _norm_url(row["post_link"])
        if _norm_url(row.get("image_link")):
            image_total += 1
            # the site serves a generated stand-in for the gold image at image_path; either URL counts
            found = {_norm_url(u) for u in outcome.post.image_links}
            image_hits += _norm_url(row["image_link"]) in found or any(
                (u or "").endswith("/" + row.get("image_path", "\0")) for u in found
            )
        gold_urls = {u for u in (_norm_url(x) for x in row.get("evidence_urls") or []) if u}
        if gold_urls:
            # the page shows the gold image as its stand-in at image_path: citing it is citing the image
            stand_in, image = row.get("image_path"), _norm_url(row.get("image_link"))
            predicted = {
                image if stand_in and image and u.endswith("/" + stand_in) else u
                for u in (_norm_url(e.url) for e in outcome.evidence)
                if u
            }
            tp += len(predicted & gold_urls)
            n_pred += len(predicted)
            n_gold += len(gold_urls)
        key_points.append(len(outcome.key_points))
        hallucinated += len(outcome.hallucinated_urls)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    return {
        "articles": len(gold),
        "extracted": len(gold) - failed,
        "set_aside": failed,
        "claim_exact_match": round(claim_hits / len(gold), 4) if gold else 0.0,
        "post_link_found": round(post_hits / post_total, 4) if post_total else None,
        "post_link_gold_count": post_total,
        "post_correct": round(post_right / has_post, 4) if has_post else None,
        "post_false_positive": round(link_wrong / no_link, 4) if no_link else None,
        "no_post_link_pages": no_link,
        "post_or_image_false_positive": round(post_wrong / no_post, 4) if no_post else None,
        "no_post_pages": no_post,
        "post_image_found": round(image_hits / image_total, 4) if image_total else None,
        "evidence_url_precision": round(precision, 4),
        "evidence_url_recall": round(recall, 4),
        "evidence_url_f1": round(2 * precision * recall / (precision + recall), 4)
        if precision + recall
        else 0.0,
        "key_points_mean": round(statistics.mean(key_points), 3) if key_points else 0.0,
        "key_points_3_to_5": round(sum(3 <= k <= 5 for k in key_points) / len(key_points), 4)
        if key_points
        else 0.0,
        "hallucinated_links_dropped": hallucinated,
    }


# --- real pages --------------------------------------------------------------------------------------


def load_real(root: Path) -> list[dict[str, Any]]:
    """Real pages with a hand label or a gold record: ``name``, ``article`` (tagged), ``label``, ``gold``."""
    era = root / "2018"
    urls = {e["file"].removeprefix("2018/"): e["url"] for e in json.loads((era / "index.json").read_text())}
    for entry in json.loads((era / "with-rwpost-gold" / "index.json").read_text()):
        urls[f"with-rwpost-gold/{entry['slug']}.fragment.html"] = entry["url"]
    for path in sorted(era.glob("*.html")):
        if not path.name.endswith(".fragment.html"):  # whole pages carry their canonical URL
            urls.setdefault(path.name, f"https://www.snopes.com/fact-check/{path.stem.split('_', 1)[-1]}/")
    labels = json.loads((era / "labels.json").read_text(encoding="utf-8"))["pages"]
    pages = []
    for name in sorted(set(labels) | {n for n in urls if n.startswith("with-rwpost-gold/")}):
        gold_path = era / name.replace(".fragment.html", ".rwpost.json").replace(".html", ".rwpost.json")
        pages.append(
            {
                "name": name,
                "article": tag_article((era / name).read_text(encoding="utf-8"), urls[name]),
                "label": labels.get(name),
                "gold": json.loads(gold_path.read_text(encoding="utf-8")) if gold_path.exists() else None,
            }
        )
    return pages


def _is_image_url(url: str) -> bool:
    return bool(re.search(r"\.(?:jpe?g|png|gif|webp)$", urlsplit(url).path, re.IGNORECASE))


def post_reference(extraction: Extraction) -> str | None:
    """What an extraction names as the post: its post link, else its first post image."""
    post = extraction.post
    return post.post_link or (post.image_links[0] if post.image_links else None)


def score_real(
    pages: list[dict[str, Any]], outcomes: dict[str, Extraction | ExtractionFailure]
) -> dict[str, Any]:
    """Post link and evidence figures on real pages (see the module docstring). A page whose extraction
    failed counts as naming no post and no evidence (a miss where it has them), never as left out."""
    with_post = post_hits = without_post = false_pos = no_link = link_wrong = 0
    tp = n_pred = n_gold = 0
    ranked: list[tuple[list[str], set[str]]] = []  # (predicted evidence keys in order, gold keys)
    misses: list[str] = []
    failed = [name for name, outcome in outcomes.items() if isinstance(outcome, ExtractionFailure)]
    for page in pages:
        outcome = outcomes[page["name"]]
        extraction = outcome if isinstance(outcome, Extraction) else None
        found = post_reference(extraction) if extraction is not None else None
        label = page["label"]
        if label is not None:
            acceptable = {link_key(u) for u in filter(None, [label["post_link"], *label["also_acceptable"]])}
            if label["post_link"]:
                with_post += 1
                hit = found is not None and link_key(found) in acceptable
                post_hits += hit
                if not hit:
                    misses.append(f"{page['name']}: post {found}")
            else:
                without_post += 1
                wrong = found is not None and link_key(found) not in acceptable
                false_pos += wrong
                if wrong:
                    misses.append(f"{page['name']}: false post {found}")
            named = extraction.post.post_link if extraction is not None else None
            if not label["post_link"] or _is_image_url(label["post_link"]):
                # no post link on the page (its post is an image, or nothing): naming one is wrong
                no_link += 1
                named_wrong = named is not None and link_key(named) not in acceptable
                link_wrong += named_wrong
                if named_wrong and label["post_link"]:
                    misses.append(f"{page['name']}: post link named {named}, the post is an image")
        if page["gold"] is not None:
            body = {link_key(link.url) for link in page["article"].links}
            gold = {link_key(e["url"]) for e in page["gold"].get("fact_checking_evidence") or []}
            gold = {u for u in gold if u in body}
            evidence = extraction.evidence if extraction is not None else []
            ordered = list(dict.fromkeys(link_key(e.url) for e in evidence if e.url))  # text-only: no URL
            predicted = set(ordered)
            ranked.append((ordered, gold))
            tp += len(predicted & gold)
            n_pred += len(predicted)
            n_gold += len(gold)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    return {
        "pages": len(pages),
        "post_link_correct": round(post_hits / with_post, 4) if with_post else None,
        "post_link_pages": with_post,
        "post_link_false_positive": round(false_pos / without_post, 4) if without_post else None,
        "no_post_pages": without_post,
        "post_false_positive": round(link_wrong / no_link, 4) if no_link else None,
        "no_post_link_pages": no_link,
        "evidence_url_precision": round(precision, 4),
        "evidence_url_recall": round(recall, 4),
        "evidence_first_k": _first_k(ranked),
        "evidence_gold_pages": sum(p["gold"] is not None for p in pages),
        "evidence_gold_urls_in_body": n_gold,
        "failed": failed,
        "misses": misses,
    }


def _first_k(ranked: list[tuple[list[str], set[str]]]) -> dict[str, Any]:
    """Evidence precision / recall if each article kept only its first *k* evidence URLs, for k from 3 to
    the longest list (no cap): what a cap in the extractor's order (reading order) would give. The
    authors' released records keep 5.5 evidence items per record on average."""
    n_gold = sum(len(gold) for _, gold in ranked)
    figures: dict[str, Any] = {}
    for k in range(3, max((len(ordered) for ordered, _ in ranked), default=3) + 1):
        kept = [(ordered[:k], gold) for ordered, gold in ranked]
        n_pred = sum(len(ordered) for ordered, _ in kept)
        tp = sum(len(set(ordered) & gold) for ordered, gold in kept)
        figures[str(k)] = {
            "precision": round(tp / n_pred, 4) if n_pred else 0.0,
            "recall": round(tp / n_gold, 4) if n_gold else 0.0,
        }
    return figures


def run_real(root: Path, extractor: OfflineExtractor | LLMExtractor | None = None) -> dict[str, Any]:
    """A backend (default: the offline rules) on the real pages, scored."""
    pages = load_real(root)
    if isinstance(extractor, LLMExtractor):
        results = extractor.run([p["article"] for p in pages])
        outcomes: dict[str, Extraction | ExtractionFailure] = {
            p["name"]: r for p, r in zip(pages, results, strict=True)
        }
    else:
        rules = extractor or OfflineExtractor()
        outcomes = {p["name"]: rules.extract(p["article"]) for p in pages}
    return score_real(pages, outcomes)


def run_real_llm(root: Path, cache: Path | None) -> dict[str, Any]:
    """The LLM backend of the environment's endpoint (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
    ``RWPOST_LLM_MODEL``) on the real pages, scored: the figures the paper gives for GPT-4o."""
    from rwpost.llm import client_from, settings_from_env

    settings = settings_from_env()
    client = client_from(settings, cache_path=cache)
    result = run_real(root, LLMExtractor(client))
    result["model"] = settings.model
    result["llm_report"] = client.report()
    return result


def run_offline(articles: list[TaggedArticle]) -> dict[str, Extraction | ExtractionFailure]:
    extractor = OfflineExtractor()
    return {a.id: extractor.extract(a) for a in articles}


def run_llm(
    articles: list[TaggedArticle], recording: Path, record: bool
) -> tuple[dict[str, Extraction | ExtractionFailure], dict[str, Any]]:
    """The LLM backend against the loopback server: recording from the script, or replaying."""
    if record:
        from rwpost.extract.scripted import scripted_reply

        recording.parent.mkdir(parents=True, exist_ok=True)
        recording.unlink(missing_ok=True)
        responder: Any = Recorder(scripted_reply, recording)
    else:
        responder = Replayer(recording)
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer(responder, models=(SCRIPTED_MODEL,)) as server:
        client = LLMClient(
            model=SCRIPTED_MODEL,
            base_url=server.base_url,
            api_key="scripted",
            cache=LLMCache(Path(tmp) / "cache.sqlite"),
            concurrency=8,
            max_retries=1,
        )
        outcomes = LLMExtractor(client).run(articles)
    return {a.id: o for a, o in zip(articles, outcomes, strict=True)}, client.report()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--site", type=Path, default=Path("data/sample/site"))
    parser.add_argument("--recording", type=Path, default=DEFAULT_RECORDING)
    parser.add_argument("--real", type=Path, default=DEFAULT_REAL, help="real pages with labels and gold")
    parser.add_argument("--record", action="store_true", help="re-record the scripted answers first")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/extract_quality.json"))
    parser.add_argument(
        "--llm-real",
        action="store_true",
        help="only the real pages, with the LLM of OPENAI_API_KEY / OPENAI_BASE_URL / RWPOST_LLM_MODEL "
        "(the paper's goals are for such a model); writes --out",
    )
    parser.add_argument("--cache", type=Path, default=Path("data/cache/llm.sqlite"), help="with --llm-real")
    parser.add_argument(
        "--smoke", action="store_true", help="the offline backend on the real pages only; writes nothing"
    )
    args = parser.parse_args(argv)
    from benchmarks import load

    before = load()
    if args.smoke:
        real = run_real(args.real)
        _goal(real, before)
        return 0
    if args.llm_real:
        real = run_real_llm(args.real, args.cache)
        write_json(args.out, {"real_pages": str(args.real), "llm_real": real})
        print(f"LLM backend ({real['model']}) on {real['pages']} real pages")
        for key in (
            "post_link_correct",
            "post_false_positive",
            "evidence_url_precision",
            "evidence_url_recall",
        ):
            print(f"{key:28} {real[key]!s:>10}")
        print(f"failed extractions: {len(real['failed'])}; requests {real['llm_report']['total']}")
        print(f"wrote {args.out}")
        return 0
    gold, articles = load_sample(args.site)
    offline = score(gold, articles, run_offline(articles))
    outcomes, report = run_llm(articles, args.recording, args.record)
    llm = score(gold, articles, outcomes)
    llm["note"] = (
        "LLM path through the loopback test server replaying answers recorded from a deterministic "
        "script (rwpost.extract.scripted), not a real model"
    )
    llm["llm_report"] = report
    real = run_real(args.real)
    result = {
        "site": str(args.site),
        "offline": offline,
        "llm_scripted_replay": llm,
        "real_pages": str(args.real),
        "offline_real": real,
    }
    write_json(args.out, result)
    keys = [k for k in offline if k not in ("post_link_gold_count", "no_post_link_pages", "no_post_pages")]
    print(f"{'metric':28} {'offline':>10} {'llm (scripted replay)':>22}")
    for key in keys:
        print(f"{key:28} {offline[key]!s:>10} {llm[key]!s:>22}")
    print(f"\noffline backend, generated site vs real pages ({real['pages']} real pages)")
    side = [
        ("post link correct", offline["post_link_found"], real["post_link_correct"]),
        ("post (link or image) correct", offline["post_correct"], real["post_link_correct"]),
        ("post false positive", offline["post_false_positive"], real["post_false_positive"]),
        ("  pages without a post link", offline["no_post_link_pages"], real["no_post_link_pages"]),
        ("no-post false positive", offline["post_or_image_false_positive"], real["post_link_false_positive"]),
        ("  pages without any post", offline["no_post_pages"], real["no_post_pages"]),
        ("evidence URL precision", offline["evidence_url_precision"], real["evidence_url_precision"]),
        ("evidence URL recall", offline["evidence_url_recall"], real["evidence_url_recall"]),
    ]
    print(f"{'metric':28} {'sample site':>12} {'real pages':>12}")
    for name, site_value, real_value in side:
        print(f"{name:28} {site_value!s:>12} {real_value!s:>12}")
    for miss in real["misses"]:
        print(f"  real miss: {miss}")
    budgets = real["evidence_first_k"]
    print("\nreal pages, evidence kept per article (first k, reading order): precision / recall")
    print("  ".join(f"k={k}: {f['precision']:.3f}/{f['recall']:.3f}" for k, f in budgets.items()))
    print(f"wrote {args.out}")
    _goal(real, before)
    return 0


def _goal(real: dict, before: float) -> None:
    from benchmarks import goal

    goal(
        f"offline evidence URLs on {real['pages']} real pages: precision {real['evidence_url_precision']}, "
        f"recall {real['evidence_url_recall']} (issue 17's goal for an LLM: precision >= .9 at recall >= .8)",
        before,
    )


if __name__ == "__main__":
    sys.exit(main())
