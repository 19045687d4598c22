# The two front-door commands: `make demo` and `make test`. Both build .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo dev scale-demo test lint bench clean

# The packages are byte-compiled on every core (pip does it on one: ~17 s of a ~40 s install).
# Where PYTHONDONTWRITEBYTECODE is set, imports never write .pyc themselves, so this must run;
# a file that does not compile merely imports slower.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[test,gcp,scale]'
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
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

# Tests mostly wait on servers, subprocesses and rate limits: on 2 cores, two workers kept them
# busy 1.3 cores of the time (326 s), three 1.5 (280-305 s) (TEST_WORKERS=auto: one per core;
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
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.run $(BENCH_ARGS)

clean:
	rm -rf data .pytest_cache dagster_home/storage dagster_home/history dagster_home/logs dagster_home/schedules
