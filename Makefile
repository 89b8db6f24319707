# make run: start the dashboard at http://localhost:8501, for this machine only.  make test: every test, with lint.
# make share: serve it to the room (every interface): prints a viewer URL and a presenter URL with a token.
# make test-fast: everything but the real-browser test, for quick loops.
# make catalogs: the page's sentences extracted from the code into every language's .po (then translate, commit).
# make gpu-check: on a machine with an NVIDIA GPU, the gpu tests, comparisons and benchmarks into artifacts/gpu-check/.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: install system-deps run share test test-fast lint bench catalogs gpu-check clean

# uv installs the same packages as pip in 20 s where pip took 44 s; --no-cache leaves no 2.8 GB copy in ~/.cache.
$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "uv>=0.13,<0.14"
	$(VENV)/bin/uv pip install --quiet --no-cache --compile-bytecode --python $(PY) -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

# Debian/Ubuntu packages the tests need: Chromium for the browser test, CJK fonts for its Chinese page, and
# the real Fashion-MNIST files (the tests must not depend on the internet).
system-deps:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	[ -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || missing="$$missing fonts-noto-cjk"; \
	[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || missing="$$missing dataset-fashion-mnist"; \
	if [ -n "$$missing" ]; then \
		echo "Installing$$missing with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

# 127.0.0.1 only (as .streamlit/config.toml says too): nobody else on the network can start, stop or delete.
run: install
	$(VENV)/bin/streamlit run app.py --server.address 127.0.0.1 --server.port 8501

# Every IPv4 interface; the presenter's token goes to the server in its environment, never on a command line.
share: install
	$(PY) -m ui.share --port 8501

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

# Two pytest-xdist workers: a serial run kept 2 cores only 69% busy (TensorFlow imports and page scripts run on one
# thread), and three overloaded them (slower, and a test's timeouts ran out). The groups keep each module, the browser
# tests and the Ray tests whole (tests/conftest.py); PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup

test: install system-deps lint
	$(PYTEST)

test-fast: install system-deps lint
	$(PYTEST) -m "not browser"

bench: install
	$(PY) bench/train_speed.py
	$(PY) bench/sweep_cpu.py

# The page's words (core.language.i18n): extracted with Babel into locale/tfdash.pot, merged into each locale's .po. The
# page compiles a .po when it first speaks that language; tests/test_i18n.py checks every msgid is translated.
catalogs: install
	$(VENV)/bin/pybabel -q extract -F babel.cfg --no-location --sort-by-file -o locale/tfdash.pot .
	$(VENV)/bin/pybabel -q update -i locale/tfdash.pot -d locale -D tfdash --no-fuzzy-matching --ignore-obsolete

# Needs only this repository and pip install "tensorflow[and-cuda]"; without a GPU it stops at once, in one sentence.
gpu-check: install
	$(PY) bench/gpu_check.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache artifacts
