# The two commands a newcomer needs (see README):
#   make run    install what is missing, then serve the dashboard on http://127.0.0.1:8501
#   make test   install what is missing (and Chromium), then run the whole test suite
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test setup lint bench lock

run:
	@scripts/setup.sh
	$(PY) -m streamlit run app.py --server.headless true --server.address 127.0.0.1 \
		--server.port 8501 --browser.gatherUsageStats false

test:
	@scripts/setup.sh --browser
	$(PY) -m pytest

setup:
	@scripts/setup.sh

lint:
	$(VENV)/bin/ruff check .

bench:
	$(PY) -m bench

# Refresh requirements.lock (exact versions) from the venv after changing requirements.txt.
lock: setup
	$(PY) scripts/write_lock.py
