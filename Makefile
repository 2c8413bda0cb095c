# The two commands: `make install` (everything, into .venv) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install test bench browser

install:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	$(MAKE) --no-print-directory browser

# Debian's Chromium for the browser tests (Playwright drives it; its own browser download cannot work offline).
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || echo "chromium not installed: browser tests will be skipped"; \
	  else echo "run as root or 'sudo apt-get install chromium' for the browser tests"; fi; \
	fi

# Test files spread over the cores (at most 4 workers: each imports torch); a file stays on one
# worker so its module fixtures are built once. Plain `pytest` still runs serially.
test:
	$(PY) -m pytest -q -n auto --maxprocesses=4 --dist loadfile

# Benchmarks report figures (wall time, plans/s); they assert nothing.
bench:
	$(PY) benchmarks/bench_search.py
	$(PY) benchmarks/bench_step_time.py
	$(PY) benchmarks/bench_memory.py
	$(PY) benchmarks/bench_chat.py
	$(PY) benchmarks/bench_serve_load.py
