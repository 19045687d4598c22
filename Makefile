# The two front-door commands: `make demo` and `make test`. Both build .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo dev scale-demo test lint bench clean

# uv installs the versions pip would pick (the same `pip freeze`) and byte-compiles them on every
# core in ~17 s, where pip took ~33 s; byte-compiled here since, where PYTHONDONTWRITEBYTECODE is
# set, imports never write .pyc themselves.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[test,gcp,scale]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/ces-pipeline demo

# dev: the simulator and the Dagster UI (http://127.0.0.1:3000) together, on the demo's data.
dev: $(STAMP)
	DAGSTER_HOME=$(CURDIR)/dagster_home $(BIN)/ces-pipeline dev

# scale-demo: PostgreSQL, an S3-compatible server, the simulator and a Dagster daemon, all local;
# queued runs side by side into the object-store lake and a DuckLake warehouse, then stopped.
scale-demo: $(STAMP)
	$(BIN)/python -m scale.demo

# Tests often wait on servers and subprocesses: on 2 cores, three workers keep both cores busy
# most of the time (876 tests: 360-690 s; four workers took as long) (TEST_WORKERS=auto: one per core;
# 0: in this process, e.g. for a debugger).
TEST_WORKERS ?= 3
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# bench: the rebuild and ingest paths against DuckDB read_json and dlt on one corpus
# (BENCH_ARGS="--conversations 200000" for the large run); results in bench/results/.
# BENCH_ARGS="--scale [--sizes 20000,200000]": the commands as the warehouse grows to 2M (bench/scale.py).
bench: $(STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[bench]'
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf data .pytest_cache dagster_home/storage dagster_home/history dagster_home/logs dagster_home/schedules
