# gangwarden: build the policies, run the examples, run every test.
#
#   make demo    build the policies and evaluate the requests in examples/
#   make test    fmt check, clippy, unit tests, wasm build, e2e cases, playground browser tests

SHELL := /bin/bash
CARGO ?= cargo
CARGO_TARGET_DIR ?= $(CURDIR)/target
export CARGO_TARGET_DIR
WASM_DIR := $(CARGO_TARGET_DIR)/wasm32-wasip1/release

# policy folder -> crate name
POLICY_DIRS := policies/gang policies/claims policies/run-policy policies/topology
gang_CRATE := gangwarden-gang-policy
claims_CRATE := gangwarden-claims-policy
run-policy_CRATE := gangwarden-run-policy-policy
topology_CRATE := gangwarden-topology-policy

.PHONY: all policies demo test fmt-check lint unit e2e e2e-kwctl annotate clean sync-corpus bench

all: policies

# Cargo decides what to rebuild; the copies put each module next to its metadata.yml.
policies:
	$(CARGO) build --locked --release --target wasm32-wasip1 -p gangwarden $(foreach d,$(POLICY_DIRS),-p $($(notdir $(d))_CRATE))
	cp $(WASM_DIR)/gangwarden.wasm policy.wasm
	$(foreach d,$(POLICY_DIRS),cp $(WASM_DIR)/$(subst -,_,$($(notdir $(d))_CRATE)).wasm $(d)/policy.wasm;)

demo: policies
	$(CARGO) run --locked --quiet -p gangwarden-e2e-tests --bin demo -- examples

fmt-check:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings

unit:
	$(CARGO) test --locked --workspace --exclude gangwarden-e2e-tests

# The e2e crate's own tests, the packaging checks and every case through the built modules.
e2e: policies
	$(CARGO) test --locked -p gangwarden-e2e-tests

test: fmt-check lint unit e2e playground-test

# The same cases through kwctl, when it is installed: requests, settings and replay
# sessions are exported from the case files, then checked against kwctl's answers.
e2e-kwctl: policies
	@command -v kwctl >/dev/null || { echo "kwctl is not on PATH"; exit 1; }
	rm -rf $(CARGO_TARGET_DIR)/kwctl-cases
	$(CARGO) run --locked --quiet -p gangwarden-e2e-tests --bin kwctl-cases -- export $(CARGO_TARGET_DIR)/kwctl-cases
	$(CARGO) run --locked --quiet -p gangwarden-e2e-tests --bin kwctl-cases -- run $(CARGO_TARGET_DIR)/kwctl-cases

# Embed metadata.yml and README.md into annotated-policy.wasm (needs kwctl).
annotate: policies
	@command -v kwctl >/dev/null || { echo "kwctl is not on PATH"; exit 1; }
	kwctl annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm
	for d in $(POLICY_DIRS); do kwctl annotate -m $$d/metadata.yml -u $$d/README.md -o $$d/annotated-policy.wasm $$d/policy.wasm; done

# Refresh the vendored corpus from the project's shared folder.
sync-corpus:
	rsync -a --delete --exclude expectations.yaml ../shared/corpus/ e2e-tests/corpus/

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm $(addsuffix /policy.wasm,$(POLICY_DIRS)) $(addsuffix /annotated-policy.wasm,$(POLICY_DIRS))

# Median cost of one admission request (fresh instance + validate + lookups) in the e2e host.
# Builds the host in release mode the first time (several minutes).
BENCH_RUNS ?= 300
bench: policies
	$(CARGO) build --locked --release -p gangwarden-e2e-tests --bin bench-case
	$(CARGO_TARGET_DIR)/release/bench-case policies/gang e2e-tests/cases/gang/podgroup-from-template-accepted.yaml $(BENCH_RUNS)
	$(CARGO_TARGET_DIR)/release/bench-case policies/run-policy e2e-tests/cases/run-policy/pytorchjob-minimal-accepted.yaml $(BENCH_RUNS)
	$(CARGO_TARGET_DIR)/release/bench-case policies/topology e2e-tests/cases/topology/podgroup-5000-nodes-gang-larger-than-rack.yaml $(BENCH_RUNS)
	$(CARGO_TARGET_DIR)/release/bench-case . e2e-tests/cases/bundle/claims-pod-claim-mismatch.yaml $(BENCH_RUNS)

# --- Browser playground (playground/): the engine built with wasm-pack for the web, the static
# page around it in playground/dist/, and its browser tests in headless Chromium.
PLAYGROUND_PKG := $(CARGO_TARGET_DIR)/playground-pkg
PLAYGROUND_DATA := $(CARGO_TARGET_DIR)/playground-data
PLAYGROUND_PORT ?= 8123
.PHONY: playground playground-serve playground-test

playground/node_modules/.package-lock.json: playground/package-lock.json
	cd playground && npm ci --no-audit --no-fund

# Size comes from the release profile (opt-level "z", LTO, one codegen unit, strip, abort).
# No wasm-opt pass (playground/Cargo.toml turns wasm-pack's off): Debian's binaryen 108 turns
# wasm-bindgen 0.2.130's externref table into a funcref table even at -O0, so the module
# fails to instantiate; and measured here, -Oz/-Os output gzips to 450 KB against 334 KB
# without it (-O1, which still breaks the module, would save 5 KB).
playground: playground/node_modules/.package-lock.json
	wasm-pack build playground --target web --release --no-typescript --no-pack --out-dir $(PLAYGROUND_PKG) -- --locked
	$(CARGO) run --locked --quiet -p gangwarden-e2e-tests --bin playground-data -- $(PLAYGROUND_DATA)
	node playground/build/build.mjs --pkg $(PLAYGROUND_PKG) --data $(PLAYGROUND_DATA) --out playground/dist

playground-serve: playground
	node playground/serve.mjs playground/dist $(PLAYGROUND_PORT)

playground-test: playground
	PLAYGROUND_SCREENSHOTS=$(CARGO_TARGET_DIR)/playground-screenshots node --test --test-reporter=spec playground/tests/
