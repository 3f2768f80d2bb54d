# The two set-up commands: `make run` and `make test`. Both need only Python 3.11.
# python3.11 if present, else python3 when it is 3.11; override with `make run PYTHON=/path/to/python3.11`.
ifndef PYTHON
PYTHON := $(shell command -v python3.11 2>/dev/null || { python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' >/dev/null 2>&1 && command -v python3; })
endif
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
# Two stamps: `make run` needs only what the application imports; the tests, linters and benches (Playwright,
# schemathesis, gunicorn...) are installed by the first target that needs them. Half the install time of a
# first `make run` was theirs.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run test install migrate demo worker beat lint bench bench-all clean

# Each re-installs whenever pyproject.toml changes (new dependency), otherwise does nothing.
$(RUN_STAMP): pyproject.toml
	@test -x $(BIN)/python || test -n "$(PYTHON)" || { echo "Python 3.11 is needed: install python3.11 or run 'make PYTHON=/path/to/python3.11 ...'"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing Bringup's dependencies into $(VENV) (a minute or less the first time)..."
	$(BIN)/python -m pip install --progress-bar off --disable-pip-version-check -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	@echo "Installing the test, lint and bench tools into $(VENV)..."
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'
	touch $(STAMP)

install: $(STAMP)

migrate: $(RUN_STAMP)
	@mkdir -p var
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py load_catalogue
	$(BIN)/python manage.py seed_demo

run: demo
	@echo "Bringup on http://127.0.0.1:$(PORT)/ : log in with one of the demo logins above."
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Only needed when CELERY_BROKER_URL is set; without a broker, tasks run inside the web process.
worker: $(RUN_STAMP)
	@test -n "$$CELERY_BROKER_URL" || { echo "make worker needs CELERY_BROKER_URL, e.g. CELERY_BROKER_URL=redis://127.0.0.1:6379/0 make worker"; exit 1; }
	$(BIN)/celery -A bringup worker --loglevel=info --concurrency=2

# Celery beat: sends the soak tick (validation.tasks.soak_tick) every SOAK_TICK_SECONDS and the check-run sweep
# (validation.tasks.check_runs_sweep) every CHECK_SWEEP_SECONDS (bringup/celery.py); run exactly one.
beat: $(RUN_STAMP)
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

# The benches of the 1,024-server table (issue 11): each prints time, queries and peak memory at 72 and 1,024
# servers beside its goal, on the PostgreSQL server of DATABASE_URL (default: postgres@127.0.0.1:5432), in
# databases it keeps (bench/harness.py). The first run builds the two projects (a minute); `make bench-all` adds
# the older benches (labels, report, dashboard, scan, planner), which build their own projects.
TABLE_BENCHES := bench_roce_link_health bench_check_engine bench_plan_fabric bench_import_inventory \
	bench_fabric_view bench_check_run_detail bench_api_ports bench_leaf_page bench_make_run
bench: $(STAMP)
	@for name in $(TABLE_BENCHES); do echo "== bench/$$name.py"; $(BIN)/python bench/$$name.py || exit 1; done

bench-all: bench
	@for f in bench/bench_*.py; do \
		case " $(TABLE_BENCHES) " in *" $$(basename $$f .py) "*) continue;; esac; \
		echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) var/*.sqlite3
