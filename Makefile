# OpenGlue. `make demo` and `make test` do all set-up on a fresh Debian 12 machine.
PYTHON ?= python3
BUILD ?= build
JOBS ?= $(shell nproc)
APT_PACKAGES = cmake ninja-build g++ make libsqlite3-dev libssl-dev nlohmann-json3-dev \
               libgtest-dev googletest wrk procps libre2-dev
STAMP = $(BUILD)/.deps-stamp

.PHONY: all deps build test unit-test e2e-test demo bench bench-deps bench-jobs docs clean help

all: build

help:
	@echo "make demo    install what is missing, build, start a server, run an example, stop it"
	@echo "make test    install what is missing, build, run every test (unit + end-to-end)"
	@echo "make build   build build/openglue"
	@echo "make bench   run the catalog benchmark against OpenGlue and moto (docs/benchmarks.md)"
	@echo "make bench-jobs  run the jobs benchmark: job-run latency, queued runs (docs/benchmarks.md)"

# System packages from Debian, Python packages from PyPI (requirements.txt). Idempotent.
deps: $(STAMP)
$(STAMP): requirements.txt Makefile
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "== installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@echo "== installing Python packages (requirements.txt)"
	@$(PYTHON) -m pip install -q --disable-pip-version-check -r requirements.txt
	@mkdir -p $(BUILD) && touch $(STAMP)

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

unit-test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

e2e-test: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) -m pytest -q tests python/tests

test: unit-test e2e-test

demo: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue bash examples/demo.sh

bench-deps: deps
	@$(PYTHON) -m pip install -q --disable-pip-version-check -r bench/requirements.txt

bench: build bench-deps
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) bench/catalog/run.py

bench-jobs: build
	@OPENGLUE_BIN=$(CURDIR)/$(BUILD)/openglue $(PYTHON) bench/jobs/run.py

docs: build
	@$(PYTHON) tools/compatibility.py $(BUILD)/openglue

clean:
	rm -rf $(BUILD)
