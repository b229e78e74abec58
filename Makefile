# The two set-up commands of the README:
#   make demo   installs rwpost in .venv and runs the whole pipeline on the bundled sample (offline)
#   make test   installs rwpost in .venv and runs lint, format check and the test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install system-deps demo test lint bench clean
.DEFAULT_GOAL := demo

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	# rapidocr pulls opencv-python, label-studio-sdk opencv-python-headless; both write cv2/. Reinstall the
	# headless build last so `import cv2` never depends on the install order or on a system libGL.
	$(BIN)/python -m pip install --quiet --force-reinstall --no-deps "opencv-python-headless>=4.12,<4.13"
	touch $@

# Headless Chromium for the Label Studio UI tests (Debian packages; installed only when missing).
system-deps:
	@command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }

demo: install
	PATH="$(CURDIR)/$(BIN):$$PATH" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/dvc repro

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

test: lint system-deps
	PATH="$(CURDIR)/$(BIN):$$PATH" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

bench: install
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache
