# The two set-up commands of the README:
#   make demo   installs what the pipeline runs in .venv and runs it on the bundled sample (offline)
#   make test   installs that and the test and annotation tools, and runs lint, format check and the tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch that this machine kind keeps on disk, in a folder that pip's configuration names
# (find-links; uv is told the same folders); any other release is a multi-GB CUDA download.
TORCH := torch==2.13.0

.PHONY: install install-dev system-deps demo repro test lint bench clean
.DEFAULT_GOAL := demo

# What `dvc repro` runs: rwpost[build,embed] of pyproject.toml (one OpenCV build, no dev tools), from
# wheels only, except antlr4-python3-runtime (dvc -> hydra-core -> omegaconf pins its 4.9 series, published
# as pure-Python source only) and jstyleson (the multi-site reader's extruct needs it; pure-Python source only).
# uv installs it in about 12 s, where pip takes 85 s for the same packages.
install: $(VENV)/.installed

# Each module's bytecode is written (into __pycache__/, which git ignores) by the first process of these
# commands that imports it, and read by the later ones. Where PYTHONDONTWRITEBYTECODE is set, as on this
# project's machines, Python writes none, and every process of a run (each `dvc repro` stage, each command a
# test starts) compiled all it imported from source again: a third of the evaluate stage's CPU time.
# Compiling every installed package at install instead (uv --compile-bytecode) costs more than it saves.
export PYTHONDONTWRITEBYTECODE :=

# uv reads no pip configuration: pip's find-links folders (where this machine keeps torch) are handed to it.
UV_INSTALL = links=""; for folder in $$($(BIN)/python -m pip config get global.find-links 2>/dev/null); do \
	  links="$$links --find-links $$folder"; done; \
	$(BIN)/uv pip install --quiet --python $(BIN)/python $$links
# From wheels only, but the two pure-Python sources named above.
WHEELS_ONLY := --only-binary :all: --no-binary antlr4-python3-runtime --no-binary jstyleson

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(UV_INSTALL) $(WHEELS_ONLY) -e ".[build,embed]" "$(TORCH)"
	touch $@

# Everything the tests and benchmarks need, rwpost[dev] (the pipeline, annotation sync, test tools),
# installed by uv as `make install` does (about a minute, where pip took 4-5); it includes the pipeline's
# packages, so it marks install done too.
install-dev: $(VENV)/.installed-dev

$(VENV)/.installed-dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(UV_INSTALL) $(WHEELS_ONLY) -e ".[dev]" "$(TORCH)"
	# rapidocr pulls opencv-python, label-studio-sdk opencv-python-headless; both write cv2/ (uv installs
	# in parallel, in no set order). Reinstall the headless build last so `import cv2` never depends on the
	# install order or on a system libGL.
	$(UV_INSTALL) --only-binary :all: --reinstall --no-deps "opencv-python-headless>=4.12,<4.13"
	touch $@ $(VENV)/.installed

# Headless Chromium for the Label Studio UI tests (Debian packages; installed only when missing).
system-deps:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/dvc repro
	@echo "Look at what it built: $(BIN)/rwpost view data/rwpost/$$($(BIN)/python -c "import yaml; print(yaml.safe_load(open('params.yaml'))['dataset']['version'])") data/work reports"

# `dvc repro` after a params.yaml change, without activating the venv: the stages' `python -m pipelines.X`
# must be the venv's python (the system one lacks imagehash and the rest), so the venv goes first on PATH.
repro: install
	PATH="$(CURDIR)/$(BIN):$$PATH" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/dvc repro $(ARGS)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

test: lint system-deps
	PATH="$(CURDIR)/$(BIN):$$PATH" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -n 2 --dist loadgroup --durations=30

# The benchmarks, each against its baseline in the same run; `dvc repro` first builds the published sample
# that the evaluate_stage benchmark scores (its goal is stated for that stage on the sample).
bench: install-dev
	PATH="$(CURDIR)/$(BIN):$$PATH" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/dvc repro
	HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache
