"""Evaluation inputs from files (rwpost.evaluate.data): the samples to score, the training part."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from rwpost.evaluate.data import load_eval_data
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.conftest import DEV as RELEASED
from tests.evaluate_helpers import (
    MMFAKEBENCH,
    TRUST_GOLD,
    TRUST_OPTIONS,
    evaluate_quietly,
    evaluate_vlm_scripted,
    make_sample,
    mmfakebench_folder,
)


@pytest.mark.trust
class TestTrust:
    """Issue 14, numbers you can trust: a regression test for each defect of "Wrong or misleading numbers".

    1 stale results, 2 repeats, 3 failures (coverage, policies, invalid answers), 4 compare, 5 calibration,
    6 BOM / unreadable predictions files / duplicate ids. Every score is checked against a direct
    scikit-learn computation under each failure policy."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]

    def test_duplicate_sample_ids_in_the_data_are_refused_naming_them(self, tmp_path, samples, capsys):
        path = tmp_path / "dup.jsonl"
        write_jsonl(path, [*samples, samples[3]])
        code = main(
            [
                "evaluate",
                "--data",
                str(path),
                "--detector",
                "majority",
                "--train-fraction",
                "0.5",
                "--out",
                str(tmp_path / "r"),
                *TRUST_OPTIONS,
            ]
        )
        assert code == 2
        err = capsys.readouterr().err
        assert "duplicate sample ids" in err and samples[3].id in err


@pytest.mark.hostile
class TestHostile:
    """Hostile and careless input to the evaluation commands: every case here was a defect found by trying
    them (an internal error, an input deleted, a ranking shown without its caveat); each test runs the real
    CLI on real files."""

    @pytest.mark.parametrize("n", [0, 1])
    def test_train_fraction_of_too_few_samples_is_one_line(self, tmp_path, n, capsys):
        data = tmp_path / "few.jsonl"
        write_jsonl(data, [make_sample(i, Label.FALSE) for i in range(n)])
        code = evaluate_quietly(data, tmp_path / "run", "--detector", "majority", "--train-fraction", "0.5")
        err = capsys.readouterr().err
        assert code == 2, err
        assert "internal error" not in err
        assert "--train-fraction" in err and str(data) in err
        assert not (tmp_path / "run").exists()


def test_seeded_half_split_is_stratified_and_reproducible():
    a = load_eval_data(RELEASED, train_fraction=0.5, seed=0)
    b = load_eval_data(RELEASED, train_fraction=0.5, seed=0)
    assert [s.id for s in a.test] == [s.id for s in b.test]
    assert len(a.train) == 23 and len(a.test) == 23
    assert not {s.id for s in a.train} & {s.id for s in a.test}
    assert "stratified by label" in a.info["train"]["split_of_data"]


class TestBenchmarkFolders:
    """``--data NAME[/SPLIT]:FOLDER`` reads another benchmark's released layout (rwpost.evaluate.datasets)."""

    def test_a_benchmark_folder_is_scored_with_its_images_sent(self, tmp_path, monkeypatch):
        root = mmfakebench_folder(tmp_path, MMFAKEBENCH)
        out = tmp_path / "run"
        answer = {"label": "False", "confidence": 0.7, "explanation": "mismatch", "evidence_urls": []}
        requests = evaluate_vlm_scripted(monkeypatch, f"mmfakebench:{root}", out, answer, "T+I")
        images = [
            part
            for request in requests
            for message in request.get("messages", [])
            if isinstance(message.get("content"), list)
            for part in message["content"]
            if part.get("type") == "image_url"
        ]
        assert len(images) == 2  # each sample's image found under the split folder, no --image-root given
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["data"]["benchmark"] == "mmfakebench" and manifest["data"]["split"] == "test"
        assert manifest["data"]["path"] == str(root / "source" / "MMFakeBench_test.json")
        assert manifest["images"]["sent"] == 2
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["coverage"]["answered"] == 2
        # MMFakeBench's own scores (main_eval_only.py): both answered Fake; gold True and Fake; the first
        # line of each explanation ("mismatch") is a native class, so the 4-class table is there too
        own = metrics["benchmark_scores"]
        assert own["binary"] == pytest.approx(
            {"accuracy": 0.5, "precision": 0.25, "recall": 0.5, "f1": 1 / 3}
        )
        assert own["multiclass"]["accuracy"] == 0.5
        assert "## mmfakebench's own metrics" in (out / "report.md").read_text()

    @pytest.mark.parametrize(
        ("spec", "problem"),
        [
            ("nosuchbench:{root}", "no benchmark named 'nosuchbench' (known: averimatec, averitec,"),
            ("mmfakebench/dev:{root}", "mmfakebench has no split 'dev' (have: test, val)"),
            ("mmfakebench:{root}/absent", "absent is not a folder (MMFakeBench"),
            ("mmfakebench/val:{root}", "MMFakeBench_val.json: not found"),
        ],
    )
    def test_a_bad_benchmark_spec_is_one_line(self, tmp_path, capsys, spec, problem):
        root = mmfakebench_folder(tmp_path, MMFAKEBENCH)
        capsys.readouterr()
        args = ["evaluate", "--data", spec.format(root=root), "--detector", "majority", "--setting", "T"]
        assert main([*args, "--train-fraction", "0.5", "--out", str(tmp_path / "o")]) == 2
        [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
        assert problem in line
        assert not (tmp_path / "o").exists()

    def test_a_plain_path_with_a_colon_is_still_a_file(self, tmp_path):
        path = tmp_path / "x:y.jsonl"
        path.write_bytes(RELEASED.read_bytes())
        assert load_eval_data(path).test


class TestAuthorsDenominators:
    """Issue 24 §2: ``--denominators authors`` scores only the claims the authors' loader keeps."""

    def test_claims_whose_image_is_missing_or_broken_leave_every_cell(self, tmp_path, capsys):
        from tests.evaluate_helpers import released_head

        data, root = released_head(tmp_path, 8)
        samples = load_eval_data(data, train_fraction=0.5, seed=0).test  # the half the runs score
        (root / samples[1].image.path).unlink()  # missing
        (root / samples[3].image.path).write_bytes(b"\xff\xd8\xff not a whole jpeg")  # does not open
        out = tmp_path / "runs"
        args = ["evaluate", "--data", str(data), "--image-root", str(root), "--detector", "majority"]
        args += ["--train-fraction", "0.5", "--setting", "T", "--setting", "T+I", "--out", str(out)]
        capsys.readouterr()
        assert main([*args, "--denominators", "authors", "--bootstrap", "0", "--no-progress"]) == 0
        said = capsys.readouterr()
        said = " ".join((said.out + said.err).split())
        assert "authors' denominators: 2 of 4 claims left out of every cell" in said
        for cell in ("T", "TI"):
            manifest = json.loads((out / f"majority-{cell}" / "manifest.json").read_text())
            assert manifest["data"]["denominators"] == "authors" and manifest["data"]["left_out"] == 2
            assert manifest["data"]["samples"] == 2  # the test half (4) less the two the loader drops
            rows = (out / f"majority-{cell}" / "predictions.jsonl").read_text().splitlines()
            kept = {json.loads(row)["id"] for row in rows}
            assert kept == {samples[0].id, samples[2].id}
            report = (out / f"majority-{cell}" / "report.md").read_text()
            assert "Authors' denominators: 2 claims whose post image is missing or does not open" in report
            assert "ours would score 4." in report

    def test_no_image_that_opens_is_one_line(self, tmp_path, capsys):
        from tests.evaluate_helpers import released_head

        data, _ = released_head(tmp_path, 4)
        args = ["evaluate", "--data", str(data), "--detector", "majority", "--train-fraction", "0.5"]
        capsys.readouterr()
        assert main([*args, "--denominators", "authors", "--out", str(tmp_path / "o")]) == 2
        [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
        assert "--denominators authors: none of the 2 samples has an image that opens" in line
        assert not (tmp_path / "o").exists()
