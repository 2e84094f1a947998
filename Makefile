# The entry points. `make test` and `make demo` do all their own set-up on a fresh machine:
# a Python virtual environment in .venv and versitygw in .tools (both ignored by git), and
# Debian's PostgreSQL server where it is missing.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BIN := target/release/slipstream

.PHONY: demo test test-hermetic lint bench bench-python fuzz setup venv awscli versitygw minio postgres tinyproxy build python test-with-server test-with-minio

## demo: start a local S3 server, upload through a presigned PUT, presign 1,000,000 URLs, fetch one
## with curl, then move 1 GiB up and down with slipstream cp, then time GETs with slipstream bench
demo: setup build
	scripts/with-s3-server.sh scripts/demo.sh

## test: lint, then every test (unit, vectors, differential, integration, bench smoke) against a
## local S3 server and a throwaway PostgreSQL cluster, then a short run of each fuzz target. All but the set-up runs where nothing
## beside the repository can be read (scripts/hermetic.sh), as in a fresh clone.
test: setup
	scripts/hermetic.sh $(MAKE) --no-print-directory test-hermetic

test-hermetic: lint build
	scripts/with-s3-server.sh scripts/with-postgres.sh $(MAKE) --no-print-directory test-with-server
	SLIPSTREAM_MINIO_TLS=1 scripts/with-minio.sh $(MAKE) --no-print-directory test-with-minio
	scripts/fuzz.sh 20

test-with-server: python
	cargo test --locked --workspace --exclude slipstream-sign-bench --exclude slipstream-python
	$(PY) -m pytest -q tests bindings/python/tests --ignore=tests/sse_c
	cargo bench --locked -q -p slipstream-sign-bench --bench presign -- --test

## test-with-minio: what needs MinIO over TLS (SSE-C: versitygw does not implement it, and S3
## and MinIO take it over HTTPS only); after test-with-server, which builds the Python package
test-with-minio:
	$(PY) -m pytest -q tests/sse_c
	cargo test --locked -q -p slipstream-transfer --test sse_c -- --ignored

## lint: formatting, clippy and rustdoc with warnings as errors, and the pure crates' dependency check
lint:
	cargo fmt --all -- --check
	cargo clippy --locked --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --workspace --quiet
	scripts/check-pure-deps.sh

## bench: Criterion benches of signing with rusty-s3 and aws-sigv4 as anchors, then the CLI rate
bench: build
	cargo bench --locked -p slipstream-sign-bench --bench presign
	scripts/bench-cli.sh

## bench-python: the Python package against boto3, fast-s3-url, libpresign, obstore and awscrt
bench-python: python
	$(VENV)/bin/pip install -q --disable-pip-version-check -r bindings/python/bench/requirements.txt
	$(PY) bindings/python/bench/presign_bench.py

## fuzz: run each cargo-fuzz target for FUZZ_SECONDS (needs the nightly toolchain)
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

setup: venv awscli versitygw minio postgres tinyproxy

venv: $(VENV)/.installed
$(VENV)/.installed: requirements-dev.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@

## awscli: the AWS CLI (v1, from PyPI) in an environment of its own (it vendors its own botocore),
## the reference `sync` plans are compared with (tests/test_cli_sync.py) and a benchmark anchor
AWSCLI_VENV := .tools/awscli-venv
awscli: $(AWSCLI_VENV)/.installed
$(AWSCLI_VENV)/.installed:
	python3 -m venv $(AWSCLI_VENV)
	$(AWSCLI_VENV)/bin/pip install -q --disable-pip-version-check awscli==1.46.3
	touch $@

versitygw:
	scripts/install-versitygw.sh

## minio: MinIO, built once into .tools/bin (about 3 minutes), for the SSE-C tests and the
## long-link upload figures
minio:
	scripts/install-minio.sh

## postgres: Debian's PostgreSQL server programs, for the authority's store tests (a throwaway
## cluster per run: scripts/with-postgres.sh); installed only where missing, nothing started
postgres:
	scripts/install-postgres.sh >/dev/null

## tinyproxy: Debian's tinyproxy, the HTTP proxy the proxy tests go through (tests/test_proxy.py);
## installed only where missing, its service not started (each test starts its own)
tinyproxy:
	scripts/install-tinyproxy.sh >/dev/null

build:
	cargo build --locked --release -p slipstream-cli -p slipstream-wan

## python: build the `slipstream` Python package (PyO3, maturin) and install it into .venv
## (--force-reinstall: pip does not notice changed Rust sources and would keep a stale build)
python: venv
	$(VENV)/bin/pip install -q --disable-pip-version-check --force-reinstall --no-deps ./bindings/python
