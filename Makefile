# The two set-up commands of the README:
#   make demo   installs rwpost in .venv and runs the whole pipeline on the bundled sample (offline)
#   make test   installs rwpost in .venv and runs lint, format check and the test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test lint bench clean
.DEFAULT_GOAL := demo

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

demo: install
	HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/dvc repro

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

bench: install
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache
