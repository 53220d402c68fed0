# dbscale's developer commands. `make help` lists them. A fresh machine needs only Rust, Python 3.11
# and pip: Python packages go into .venv, Debian packages (PostgreSQL, MariaDB, sysbench, openssl)
# are installed when missing.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_ENV := .cache/test-servers.env
export CARGO_TERM_COLOR ?= never

ifeq ($(CI),true)
export DBSCALE_REQUIRE_SERVERS := 1
endif

.PHONY: help venv system-deps peers build demo test test-python servers-start servers-stop lint fmt bench soak clean

help: ## Show this help
	@grep -hE '^[a-zA-Z_.-]+:.*?## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}'

$(STAMP): pyproject.toml scripts/pyproject-deps.py
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	@echo "installing dbscale's Python dependencies into $(VENV) (about a minute the first time)"
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) scripts/pyproject-deps.py dev | xargs $(VPY) -m pip install --quiet
	touch $@

venv: $(STAMP) ## Create .venv with the Python dependencies (dev tools included)

system-deps: ## Install missing Debian packages (PostgreSQL, MariaDB, sysbench, openssl, chromium)
	bash scripts/install-system-deps.sh

peers: ## Install go-tpc v1.0.7 into .cache/bin (TPC-C interop tests, bench/vs_gotpc.sh)
	bash scripts/install-go-tpc.sh

build: $(STAMP) ## Build the native module into .venv (maturin develop --release)
	@echo "building the native core (release; the first build takes most of a fresh make demo's 7.5 minutes on 2 cores, cargo's progress follows)"
	VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(VENV)/bin:$$PATH \
		$(VENV)/bin/maturin develop --release
	@# Bytecode ahead of time: read even where PYTHONDONTWRITEBYTECODE stops Python writing it
	@# (compiling dbscale's modules on every start cost each command line about 80 ms).
	$(VENV)/bin/python -m compileall -q -j 0 python/dbscale

demo: build system-deps ## Build, then run the demo (`dbscale run`) on embedded PostgreSQL
	$(VENV)/bin/dbscale run

servers-start: $(STAMP) system-deps ## Start the private test servers; env in .cache/test-servers.env
	bash scripts/test-servers.sh start $(TEST_ENV)

servers-stop: ## Stop the private test servers
	bash scripts/test-servers.sh stop $(TEST_ENV)

test: build system-deps peers ## Build, start test servers, cargo test + pytest, stop servers
	trap 'bash scripts/test-servers.sh stop $(TEST_ENV) || true' EXIT; \
	bash scripts/test-servers.sh start $(TEST_ENV); \
	set -a; . $(TEST_ENV); set +a; \
	status=0; \
	cargo test --workspace --release --no-fail-fast || status=$$?; \
	$(VENV)/bin/pytest || status=$$?; \
	exit $$status

test-python: $(STAMP) system-deps peers ## Only the Python tests (servers started and stopped around them)
	trap 'bash scripts/test-servers.sh stop $(TEST_ENV) || true' EXIT; \
	bash scripts/test-servers.sh start $(TEST_ENV); \
	set -a; . $(TEST_ENV); set +a; \
	$(VENV)/bin/pytest

lint: $(STAMP) ## cargo fmt --check, clippy -D warnings (bench's floor client too), ruff, mypy, the core/Python contract
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	rustfmt --check --edition 2021 bench/round_trip_floor.rs
	clippy-driver --edition 2021 -D warnings -o $(CURDIR)/target/round_trip_floor.lint bench/round_trip_floor.rs
	$(VENV)/bin/ruff check python tests scripts bench
	$(VENV)/bin/ruff format --check python tests scripts bench
	$(VENV)/bin/mypy python/dbscale
	$(VENV)/bin/python -m mypy.stubtest dbscale._core
	$(VPY) -m dbscale.core.contract

fmt: $(STAMP) ## Format Rust and Python code in place
	cargo fmt --all
	$(VENV)/bin/ruff format python tests scripts
	$(VENV)/bin/ruff check --fix python tests scripts

bench: build system-deps peers ## Run the side-by-side benchmarks in bench/*.sh
	@shopt -s nullglob; scripts=($$(ls bench/*.sh | grep -v '/soak.sh$$')); \
	if [ $${#scripts[@]} -eq 0 ]; then echo "no bench/*.sh yet"; fi; \
	for script in "$${scripts[@]}"; do echo "== $$script"; PATH=$(CURDIR)/$(VENV)/bin:$$PATH bash "$$script"; done

soak: build system-deps ## An hour of TPC-B with dbscale's memory, files and threads sampled (bench/soak.sh)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH bash bench/soak.sh

clean: servers-stop ## Remove build outputs, .venv and test-server state (results/ is kept)
	rm -rf target $(VENV) .cache/test-servers .pytest_cache .mypy_cache .ruff_cache dist build
	find python -name '_core*.so' -delete
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
