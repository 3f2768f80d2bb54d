# The two set-up commands: `make run` and `make test`. Both need only Python 3.11.
# python3.11 if present, else python3 when it is 3.11; override with `make run PYTHON=/path/to/python3.11`.
ifndef PYTHON
PYTHON := $(shell command -v python3.11 2>/dev/null || { python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' >/dev/null 2>&1 && command -v python3; })
endif
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: run test install migrate demo worker beat lint bench clean

# Re-installs whenever pyproject.toml changes (new dependency), otherwise does nothing.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || test -n "$(PYTHON)" || { echo "Python 3.11 is needed: install python3.11 or run 'make PYTHON=/path/to/python3.11 ...'"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

install: $(STAMP)

migrate: $(STAMP)
	@mkdir -p var
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py load_catalogue
	$(BIN)/python manage.py seed_demo

run: demo
	@echo "Bringup on http://127.0.0.1:$(PORT)/ : log in with one of the demo logins above."
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Only needed when CELERY_BROKER_URL is set; without a broker, tasks run inside the web process.
worker: $(STAMP)
	@test -n "$$CELERY_BROKER_URL" || { echo "make worker needs CELERY_BROKER_URL, e.g. CELERY_BROKER_URL=redis://127.0.0.1:6379/0 make worker"; exit 1; }
	$(BIN)/celery -A bringup worker --loglevel=info --concurrency=2

# Celery beat: sends the soak tick (validation.tasks.soak_tick) every SOAK_TICK_SECONDS; run exactly one.
beat: $(STAMP)
	@test -n "$$CELERY_BROKER_URL" || { echo "make beat needs CELERY_BROKER_URL, e.g. CELERY_BROKER_URL=redis://127.0.0.1:6379/0 make beat"; exit 1; }
	@mkdir -p var
	$(BIN)/celery -A bringup beat --loglevel=info --schedule=var/celerybeat-schedule

# Two workers (CI has 2 cores); --dist loadfile keeps a module's one-time fixtures (the demo, the access
# matrix's world) on one worker.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -n 2 --dist loadfile $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) var/*.sqlite3
