"""`rwpost view` over HTTP: every route on the bundled sample's outputs (built by the pipeline's stages, two
`rwpost evaluate` runs, an AgentFact run on the loopback servers, a leaderboard), paths out of the folders
refused, no secret of the environment in any page, damaged folders named file by file, read-only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rwpost.view.app import build_app
from tests.conftest import free_port
from tests.killing import child_env
from tests.view_helpers import ROOT, SECRET, bundled_outputs

pytestmark = [pytest.mark.slow, pytest.mark.session_fixtures("cli_built_sample")]


@pytest.fixture(scope="module")
def built(tmp_path_factory, request) -> Path:
    return bundled_outputs(tmp_path_factory, request)


@pytest.fixture(scope="module")
def folders(built) -> list[str]:
    return [str(built / "data" / "rwpost" / "v0.1.0"), str(built / "data" / "work"), str(built / "reports")]


@pytest.fixture(scope="module")
def client(folders) -> TestClient:
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", SECRET)
    with TestClient(build_app(folders, allowed_hosts=["testserver"])) as c:
        yield c
    mp.undo()


def keys(client) -> dict[str, str]:
    """Source label (its folder's last part) -> key."""
    return {Path(s["label"]).name: s["key"] for s in client.get("/api/sources").json()["sources"]}


def test_the_dataset_pages_filter_search_and_open_a_sample_with_its_image_evidence_and_history(client):
    k = keys(client)
    summary = client.get(f"/api/version/{k['v0.1.0']}").json()
    assert summary["samples"] == 57 and summary["problems"] == []
    assert dict(summary["facets"]["label"])["False"] == 22 and summary["funnel"][0]["in"] == 111
    page = client.get(f"/api/version/{k['v0.1.0']}/samples", params={"label": "False", "limit": 5}).json()
    assert page["total"] == 22 and len(page["rows"]) == 5 and {r["label"] for r in page["rows"]} == {"False"}
    second = client.get(f"/api/version/{k['v0.1.0']}/samples", params={"label": "False", "offset": 20}).json()
    assert len(second["rows"]) == 2 and not {r["id"] for r in second["rows"]} & {
        r["id"] for r in page["rows"]
    }
    clamped = client.get(f"/api/version/{k['v0.1.0']}/samples", params={"offset": "x", "limit": "-5"}).json()
    assert (clamped["offset"], len(clamped["rows"])) == (0, 1)  # a bad offset is 0, a limit at least 1
    found = client.get(f"/api/version/{k['v0.1.0']}/samples", params={"q": "TITANIC"}).json()
    assert [r["id"] for r in found["rows"]] == ["rw-004d9cc6e0795f2a"]

    sample = client.get("/api/sample/rw-004d9cc6e0795f2a").json()
    assert sample["sample"]["claim"].startswith("A viral photograph") and sample["sample"]["has_image"]
    assert any(e["url"] for e in sample["sample"]["evidence"]) and sample["sample"]["key_points"]
    work = sample["work"][0]
    assert [d["filter"] for d in work["decisions"]] == ["size", "necessity", "watermark", "neardup"]
    tags = [s for s in work["tagged"]["segments"] if "tag" in s]
    assert tags and tags[0]["tag"].startswith("[WEBPAGE 1: ")
    image = client.get(f"/api/image/{k['v0.1.0']}/rw-004d9cc6e0795f2a")
    assert image.status_code == 200 and image.headers["content-type"] == "image/jpeg"
    assert image.content[:2] == b"\xff\xd8"
    assert client.get("/api/sample/rw-no-such").status_code == 404


def test_the_funnel_page_lists_every_set_aside_record_with_its_reason(client):
    k = keys(client)
    funnel = client.get(f"/api/work/{k['work']}").json()
    assert funnel["funnel_file"] == "annotated/funnel.json" or funnel["steps"]
    assert dict(funnel["stages"])["filter:size"] == 28 and funnel["rejects"] == 54
    page = client.get(f"/api/work/{k['work']}/rejects", params={"stage": "filter:size", "limit": 100}).json()
    assert page["total"] == 28 and {r["stage"] for r in page["rows"]} == {"filter:size"}
    assert all(r["reason"] for r in page["rows"])
    dropped = client.get(f"/api/sample/{page['rows'][0]['id']}").json()  # not in the dataset: the work folder
    assert "sample" not in dropped and dropped["work"][0]["rejects"][0]["stage"] == "filter:size"
    crawled = [i for i in dropped["work"][0]["crawl"]["images"] if i.get("path")]
    assert crawled  # the dropped article's image, from the crawl store (one too small is still shown)
    image = client.get(f"/files/{k['work']}/crawl/{crawled[0]['path']}")
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/")


def test_a_run_shows_metrics_filters_errors_and_an_agent_transcript_with_the_guard_drops(client):
    k = keys(client)
    run = client.get(f"/api/run/{k['majority-T']}").json()
    assert run["failures"] == "wrong" and run["coverage"]["total"] == 26 and run["problems"] == []
    assert run["views"]["main"]["ci95"]["macro_f1"][0] <= run["views"]["main"]["macro_f1"]
    wrong = client.get(
        f"/api/run/{k['majority-T']}/samples", params={"outcome": "wrong", "limit": 200}
    ).json()
    assert wrong["total"] == sum(
        1
        for r in client.get(f"/api/run/{k['majority-T']}/samples?limit=200").json()["rows"]
        if not r["correct"]
    )
    assert wrong["total"] and all(not r["correct"] and r["category"] for r in wrong["rows"])
    gold = client.get(f"/api/run/{k['majority-T']}/samples", params={"gold": "True"}).json()
    assert gold["total"] == 6 and {r["gold"] for r in gold["rows"]} == {"True"}

    agent = client.get(f"/api/run/{k['agentfact-TW']}/sample/rw-130924e8f285a038").json()
    calls = agent["answers"][0]["calls"]
    assert [c["step"] for c in calls] == list(range(1, len(calls) + 1))
    assert calls[0]["kind"] == "model" and calls[1]["name"] == "search:loopback"
    assert {c["dropped"] for c in calls if "dropped" in c} == {"blocked:snopes.com", "after-claim-time"}
    assert sum(c.get("tokens_in", 0) for c in calls) > 0 and agent["answers"][0]["explanation"]
    shown = agent["blinded"]
    assert (
        "label" not in shown
        and "reasoning_logic" not in shown
        and shown["news_url"].startswith("urn:rwpost:")
    )
    assert client.get(f"/api/run/{k['agentfact-TW']}/sample/rw-nope").status_code == 404


def test_two_runs_side_by_side_pair_their_samples_and_list_where_they_differ(client):
    k = keys(client)
    both = client.get(
        f"/api/compare/{k['majority-T']}/{k['category-prior-T']}", params={"only": "all"}
    ).json()
    assert both["paired"] == 26 and sum(both["table"].values()) == 26 and both["total"] == 26
    differ = client.get(f"/api/compare/{k['majority-T']}/{k['category-prior-T']}").json()
    assert all(r["a"] != r["b"] for r in differ["rows"])
    board = client.get(f"/api/leaderboard/{k['leaderboard']}").json()
    assert len(board["rows"]) == 3 and all(r["run_key"] for r in board["rows"])


def test_paths_out_of_the_given_folders_are_refused(client, built, tmp_path):
    k = keys(client)
    outside_png = tmp_path / "outside.png"
    outside_png.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    plots = built / "reports" / "evaluate" / "leaderboard"
    link = plots / "link-out.png"
    link.unlink(missing_ok=True)
    link.symlink_to(outside_png)
    key = k["leaderboard"]
    try:
        for path in (
            "../../data/work/crawl/articles.jsonl",
            "%2e%2e/%2e%2e/params.yaml",
            "link-out.png",
            "..%2F..%2Fparams.yaml",
            "/etc/passwd",
            "%2Fetc%2Fpasswd",
            "C:%5Cx.png",
        ):
            answer = client.get(f"/files/{key}/{path}")
            assert answer.status_code in (403, 404), path
            assert b"not really" not in answer.content and b"root:" not in answer.content
        assert client.get(f"/files/{key}/leaderboard.json").status_code == 404  # images and videos only
        (plots / "inside.png").write_bytes(b"\x89PNG\r\n\x1a\ninside")
        assert client.get(f"/files/{key}/inside.png").content.endswith(b"inside")
        assert client.get("/files/s999/inside.png").status_code == 404
        assert client.get("/static/../app.py").status_code == 404
        assert client.get("/static/%2e%2e/app.py").status_code == 404
    finally:
        link.unlink(missing_ok=True)
        (plots / "inside.png").unlink(missing_ok=True)


def test_no_secret_of_the_environment_appears_in_any_page(client, folders, built, tmp_path):
    run = tmp_path / "leaky-run"
    shutil.copytree(built / "reports" / "evaluate" / "main" / "agentfact-TW", run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["notes"] = [f"a careless note with the key {SECRET}"]  # a file that holds one anyway
    (run / "manifest.json").write_text(json.dumps(manifest))
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", SECRET)
    try:
        with TestClient(build_app([*folders, str(run)])) as c:
            sources = c.get("/api/sources").json()["sources"]
            pages = ["/", "/api/sources", "/static/app.js", "/api/sample/rw-130924e8f285a038"]
            for s in sources:
                base = {
                    "version": "/api/version/",
                    "work": "/api/work/",
                    "run": "/api/run/",
                    "leaderboard": "/api/leaderboard/",
                }[s["kind"]] + s["key"]
                pages += [base, base + "/samples", base + "/rejects", base + "/sample/rw-130924e8f285a038"]
            leaky = next(s["key"] for s in sources if s["label"] == str(run))
            seen = 0
            for page in pages:
                answer = c.get(page)
                assert SECRET not in answer.text, page
                seen += answer.status_code == 200
            assert seen > 20
            assert "***" in json.dumps(c.get(f"/api/run/{leaky}").json()["notes"])
    finally:
        mp.undo()


def test_a_damaged_folder_shows_what_is_readable_and_names_each_broken_file(built, tmp_path):
    run = tmp_path / "runs" / "damaged"
    shutil.copytree(built / "reports" / "evaluate" / "main" / "majority-T", run)
    (run / "metrics.json").write_text('{"system": "majority/T", "views": ')
    with open(run / "scored.jsonl", "a") as handle:
        handle.write("{not json\n")
    (run / "predictions.jsonl").unlink()
    version = tmp_path / "version"
    shutil.copytree(built / "data" / "rwpost" / "v0.1.0", version)
    (version / "main" / "dev.parquet").write_bytes(b"PAR1 cut short")
    with TestClient(build_app([str(tmp_path / "runs"), str(version), str(tmp_path / "missing")])) as c:
        listed = c.get("/api/sources").json()
        assert listed["problems"] == [f"{tmp_path / 'missing'}: not found"]
        k = {Path(s["label"]).name: s["key"] for s in listed["sources"]}
        summary = c.get(f"/api/run/{k['damaged']}").json()
        problems = summary["problems"]
        assert any(p.startswith("metrics.json: ") and "not valid JSON" in p for p in problems)
        assert any(p.startswith("scored.jsonl: 1 unreadable line(s) set aside: line 27:") for p in problems)
        assert any(p.startswith("predictions.jsonl: not found") for p in problems)
        assert summary["samples"] == 26  # what is readable still shows
        rows = c.get(f"/api/run/{k['damaged']}/samples").json()
        assert rows["total"] == 26
        sample = c.get(f"/api/run/{k['damaged']}/sample/{rows['rows'][0]['id']}").json()
        assert sample["scored"]["id"] == rows["rows"][0]["id"] and sample["answers"] == []
        version_summary = c.get(f"/api/version/{k['version']}").json()
        assert [p.split(":")[0] for p in version_summary["problems"]] == ["main/dev.parquet"]
        assert version_summary["samples"] == 57 - 6
        for answer in (summary, version_summary, listed):
            assert "Traceback" not in json.dumps(answer)


def test_the_view_is_read_only_and_answers_only_its_own_host_names(folders):
    with TestClient(
        build_app(folders, allowed_hosts=["127.0.0.1", "localhost"]), base_url="http://127.0.0.1"
    ) as c:
        assert c.get("/api/sources").status_code == 200
        assert c.post("/api/sources").status_code == 405
        assert c.delete("/api/sample/x").status_code == 405
        rebound = c.get("/api/sources", headers={"Host": "attacker.example"})
        assert rebound.status_code == 400
        page = c.get("/")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert "http://" not in page.text and "https://" not in page.text  # no CDN, nothing from elsewhere


def test_the_command_line_refuses_a_missing_folder_and_a_taken_port_in_one_line(built):
    def rwpost(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "rwpost", "view", *args],
            cwd=ROOT,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    missing = rwpost("/nonexistent/folder")
    assert missing.returncode == 2 and missing.stderr.strip() == "rwpost view: /nonexistent/folder: not found"
    import socket

    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        busy = rwpost(str(built / "reports"), "--port", str(port))
    assert busy.returncode == 2 and "Traceback" not in busy.stderr
    assert (
        busy.stderr.strip()
        .splitlines()[-1]
        .startswith(f"error: --host 127.0.0.1 --port {port}: cannot listen")
    )
    wide = rwpost(str(built / "reports"), "--host", "0.0.0.0", "--port", "70000")
    assert "warning: --host 0.0.0.0" in wide.stderr and wide.returncode == 2


def test_a_sample_page_shows_its_annotators_verdicts_and_the_adjudication(folders, tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    rows = [
        {
            "id": "rw-004d9cc6e0795f2a",
            "annotator": "a@example.org",
            "post_extraction": "correct",
            "image_role": "necessary",
            "project": "validation",
            "task_id": 1,
            "annotation_id": 11,
        },
        {
            "id": "rw-004d9cc6e0795f2a",
            "annotator": "judge@example.org",
            "post_extraction": "correct",
            "adjudicated": True,
            "note": "the post is the photo",
            "project": "adjudication",
            "task_id": 7,
            "annotation_id": 70,
        },
        {
            "id": "rw-other",
            "annotator": "a@example.org",
            "project": "validation",
            "task_id": 2,
            "annotation_id": 12,
        },
    ]
    (export / "validation_verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with TestClient(build_app([*folders, str(export)])) as c:
        kinds = [s["kind"] for s in c.get("/api/sources").json()["sources"]]
        assert "annotations" in kinds
        verdicts = c.get("/api/sample/rw-004d9cc6e0795f2a").json()["annotations"]
    assert [(v["annotator"], v.get("adjudicated", False)) for v in verdicts] == [
        ("a@example.org", False),
        ("judge@example.org", True),
    ]
