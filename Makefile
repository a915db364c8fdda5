# The two commands a newcomer needs (see README):
#   make run    install what is missing, then serve the dashboard on http://127.0.0.1:8501
#   make test   install what is missing (and Chromium), then run the whole test suite
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test test-fast setup lint bench lock

run:
	@scripts/setup.sh
	$(PY) -m ui.serve --server.headless true --server.address 127.0.0.1 \
		--server.port 8501 --browser.gatherUsageStats false

# The suite runs on several workers (pytest-xdist): a test file is one unit (its module fixtures are built once), each
# field of the browser bad-input battery is one; the browser tests mostly wait, so there are more workers than cores.
# Budget: 20 minutes from a fresh clone on the 2-core machine, set-up included (docs/testing.md). The numeric pins
# run a second time on another kernel path (one thread, oneDNN limited to AVX2) inside the same pass, as one unit:
# tests/test_second_numeric_pass.py (issue 18).
PYTEST_WORKERS ?= 4
XDIST := -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder

test:
	@scripts/setup.sh --browser
	$(PY) -m pytest $(XDIST)

# The contributors' inner loop: everything but the real-browser tests and the tests marked slow (a real model, a
# server), on two workers: under 5 minutes on the 2-core machine (4 min 41 s). CI still runs everything (`make test`).
test-fast:
	@scripts/setup.sh
	$(PY) -m pytest -n 2 --dist loadgroup --no-loadscope-reorder -m "not browser and not slow" -p no:cacheprovider

setup:
	@scripts/setup.sh

lint:
	$(VENV)/bin/ruff check .

bench:
	$(PY) -m bench

# Refresh requirements.lock (exact versions) from the venv after changing requirements.txt.
lock: setup
	$(PY) scripts/write_lock.py
