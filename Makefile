# gangwarden: build the policies, run the examples, run every test.
#
#   make demo    build the policies and evaluate the requests in examples/
#   make test    fmt check, clippy, unit tests, wasm build, e2e cases, CI benchmark bars,
#                playground browser tests, and (when they are found) the cases through the
#                real kwctl and policy-server
#
# The toolchain (stable, the wasm targets, rustfmt and clippy) comes from rust-toolchain.toml:
# rustup installs what is missing on first use.

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

.PHONY: all policies demo test fmt-check lint unit e2e e2e-kwctl e2e-kwctl-if-found clean sync-corpus bench bench-check baseline-policy fuzz

# The real Kubewarden tools (1.35): on PATH, or named here, e.g.
# `make test KWCTL=/opt/kubewarden/kwctl POLICY_SERVER=/opt/kubewarden/policy-server`.
# Tests that need one run when it is found and say so when it is not.
KWCTL ?= $(shell command -v kwctl 2>/dev/null)
POLICY_SERVER ?= $(shell command -v policy-server 2>/dev/null)
export KWCTL POLICY_SERVER

all: policies

# Cargo decides what to rebuild; wasm-opt shrinks each module (only when cargo rebuilt it, or the
# flags below changed) and the copies put each module next to its metadata.yml.
policies:
	@echo "==> building the policies for wasm32-wasip1 (release)"
	$(CARGO) build --locked --release --target wasm32-wasip1 -p gangwarden $(foreach d,$(POLICY_DIRS),-p $($(notdir $(d))_CRATE))
	$(call optimise,gangwarden,policy.wasm)
	$(foreach d,$(POLICY_DIRS),$(call optimise,$(subst -,_,$($(notdir $(d))_CRATE)),$(d)/policy.wasm))

# --- wasm-opt (issue 11) ---
# Debian's binaryen (108) must be told which wasm features Rust's wasm32-wasip1 output uses.
# --low-memory-unused lets it fold a constant added to an address into the load's or store's
# offset, which differs only where the addition wraps around past 4 GiB into the first 1 KiB.
# Rust never forms an address by wrapping, and its wasm32-wasip1 modules put the stack first
# (data starts at 1 MiB): about 4.6 KB less in each module. (--zero-filled-memory, which
# concerns an imported memory, changes nothing: these modules define their own.)
WASM_OPT ?= wasm-opt
WASM_OPT_FLAGS ?= -Oz --low-memory-unused --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
	--enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue
OPT_DIR := $(WASM_DIR)/wasm-opt
# $(call optimise,<module name>,<destination>): optimise the built module once (again when this
# Makefile, and so maybe its flags, changed), copy it.
define optimise
	@mkdir -p $(OPT_DIR)
	@if [ ! $(OPT_DIR)/$(1).wasm -nt $(WASM_DIR)/$(1).wasm ] || [ Makefile -nt $(OPT_DIR)/$(1).wasm ]; then \
	  echo "$(WASM_OPT) -Oz $(1).wasm"; \
	  $(WASM_OPT) $(WASM_OPT_FLAGS) $(WASM_DIR)/$(1).wasm -o $(OPT_DIR)/$(1).wasm || exit 1; fi
	cp $(OPT_DIR)/$(1).wasm $(2)

endef
# --- end wasm-opt ---

# The first build compiles the e2e host's wasmtime, which takes several minutes: cargo shows
# its progress rather than a silent --quiet.
demo: policies
	@echo "==> building the waPC host that runs the modules (the first time compiles wasmtime: several minutes)"
	$(CARGO) build --locked -p xtask --features host
	@echo "==> every example in examples/ through each policy and the bundle, with default settings"
	$(CARGO_TARGET_DIR)/debug/xtask demo examples

fmt-check:
	$(CARGO) fmt --all -- --check

# --all-features: xtask's jobs that run modules (its `host` feature) too.
lint:
	$(CARGO) clippy --locked --workspace --all-targets --all-features -- -D warnings

# actionlint and zizmor over .github/workflows (installed by scripts/tools.sh).
.PHONY: lint-workflows
lint-workflows:
	scripts/lint-workflows.sh

# --all-features: the harness's waPC host and its tests too.
unit:
	$(CARGO) test --locked --workspace --exclude gangwarden-e2e-tests --all-features

# The e2e crate's own tests, the packaging checks and every case through the built modules.
e2e: policies
	$(CARGO) test --locked -p gangwarden-e2e-tests

test: fmt-check lint lint-workflows unit e2e bench-check playground-test e2e-kwctl-if-found e2e-policy-server

# The same cases through kwctl: requests, settings and replay sessions are exported from the
# case files, each module is annotated (a kwctl warning fails) and run with exactly the
# host capabilities its metadata.yml declares, and kwctl's answers are checked.
# Without kwctl, `make e2e-kwctl` fails; `make test`'s e2e-kwctl-if-found says it skipped, or
# fails when CI is set (`.ci/run` sets CI=true), as every test needing a tool does.
e2e-kwctl:
	@test -n "$(KWCTL)" || { echo "kwctl not found: put it on PATH or set KWCTL"; exit 1; }
	@$(MAKE) --no-print-directory e2e-kwctl-if-found

e2e-kwctl-if-found: policies
	rm -rf $(CARGO_TARGET_DIR)/kwctl-cases
	$(CARGO) run --locked --quiet -p gangwarden-e2e-tests --bin kwctl-cases -- export $(CARGO_TARGET_DIR)/kwctl-cases
	$(CARGO) run --locked --quiet -p gangwarden-e2e-tests --bin kwctl-cases -- run $(CARGO_TARGET_DIR)/kwctl-cases

# A spread of the cases through the real policy-server, behind a fake Kubernetes API server
# that serves the cases' objects (needs policy-server and kwctl, which annotates the modules;
# without either it says it skipped and succeeds, or fails when CI is set).
.PHONY: e2e-policy-server
e2e-policy-server: policies
	$(CARGO) run --locked --quiet -p gangwarden-e2e-tests --bin policy-server-cases -- run

# Refresh the vendored corpus from the project's shared folder. kubernetes-1.37/, controller-made/,
# mpi-operator/ and Kueue's v2beta1 MPIJob are kept here (they are not in the shared folder),
# like expectations.yaml.
sync-corpus:
	rsync -a --delete --exclude expectations.yaml --exclude /kubernetes-1.37/ --exclude /controller-made/ --exclude /mpi-operator/ --exclude /volcano/ --exclude /kubeflow-kueue/sample-mpijob.yaml ../shared/corpus/ e2e-tests/corpus/

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm e2e-tests/baseline-policy/policy.wasm $(addsuffix /policy.wasm,$(POLICY_DIRS)) $(addsuffix /annotated-policy.wasm,$(POLICY_DIRS))

# --- benchmarks (issue 11) ---
# The yardstick: a trivial policy from the same SDK, built and optimised like the policies.
baseline-policy:
	$(CARGO) build --locked --release --target wasm32-wasip1 -p gangwarden-baseline-policy
	$(call optimise,gangwarden_baseline_policy,e2e-tests/baseline-policy/policy.wasm)

# Per-request cost of every policy against the baseline in the e2e host, large and hostile
# payloads, the Node lookup at 500, 5,000 and 15,000 Nodes, module sizes and compile times;
# then the same requests through the real policy-server, with the Node lookup's floor there;
# the native cost comes from criterion. Prints the table and writes it into BENCHMARKS.md;
# fails above a CI bar, like bench-check, and when a policy's throughput in policy-server
# falls below a third of the baseline's.
# The host is built optimised (profile bench-host: the first build compiles wasmtime, which
# takes a long while); BENCH_PROFILE=dev reuses the e2e tests' build, whose unoptimised
# runtime inflates instantiation and compile times.
BENCH_RUNS ?= 1000
BENCH_PROFILE ?= bench-host
XTASK_BENCH := $(CARGO_TARGET_DIR)/$(if $(filter dev,$(BENCH_PROFILE)),debug,$(BENCH_PROFILE))/xtask
bench: policies baseline-policy
	$(CARGO) bench --locked -p gangwarden-core --bench native -- --warm-up-time 1 --measurement-time 3
	$(CARGO) build --locked --profile $(BENCH_PROFILE) -p xtask --features host
	$(XTASK_BENCH) bench --runs $(BENCH_RUNS) --write BENCHMARKS.md $(if $(filter dev,$(BENCH_PROFILE)),,--check)
	$(XTASK_BENCH) policy-server-bench --check --write BENCHMARKS.md

# The same in a minute or two on the same optimised host, failing above a CI bar (each
# BENCHMARKS.md target plus the noise margin measured on this machine; a target not met today
# is held to a bar of its own) or when BENCHMARKS.md states other targets; part of `make
# test`. The first build compiles wasmtime optimised (several minutes, once per target dir).
bench-check: policies baseline-policy
	$(CARGO) build --locked --profile bench-host -p xtask --features host
	$(CARGO_TARGET_DIR)/bench-host/xtask bench --runs 300 --check
# --- end benchmarks ---

# --- fuzzing (issue 11) ---
# Each cargo-fuzz target (fuzz/fuzz_targets) runs for FUZZ_SECONDS from a seed corpus made of
# every e2e case, corpus document, benchmark request and hostile payload. cargo-fuzz's coverage
# flags are nightly features; the machine's one toolchain is stable, so RUSTC_BOOTSTRAP enables
# them. No sanitizer: the code is safe Rust, and what the targets look for are panics,
# ill-formed answers and evaluations over 50 ms. 16 codegen units instead of cargo-fuzz's 1 cut
# the instrumented build by about a quarter on two cores.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := request_bytes structured settings
# The capacity rules' soundness property (e2e-tests/tests/capacity_soundness.rs, 512 cases in
# `make test`) runs this many more cases here.
SOUNDNESS_CASES ?= 20000
# Its own target dir: the instrumented build must not block (or be rebuilt by) the others.
FUZZ_TARGET_DIR ?= $(CARGO_TARGET_DIR)/fuzz
fuzz: tools
	$(CARGO) xtask fuzz-seeds fuzz/corpus
	mkdir -p fuzz/corpus/structured
	for t in $(FUZZ_TARGETS); do \
	  (cd fuzz && RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run --sanitizer none --target-dir $(FUZZ_TARGET_DIR) $$t corpus/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10) || exit 1; done
	CAPACITY_SOUNDNESS_CASES=$(SOUNDNESS_CASES) $(CARGO) test --locked -p gangwarden-e2e-tests --test capacity_soundness
# --- end fuzzing ---

# ---- packaging and publishing -------------------------------------------------------------
# `make packaging` rewrites what is generated from metadata.yml, questions-ui.yml and the
# settings types: artifacthub-pkg.yml, the bundle's questions-ui.yml, deploy/*.yaml and the
# READMEs' test_data/ (`make test` fails while one is out of date). Run it after changing a
# metadata.yml, a questions-ui.yml, a setting or a version.
# `make annotate` embeds metadata.yml and README.md into each annotated-policy.wasm, and
# `make publish REGISTRY=ghcr.io/<owner>/policies` copies them into DIST and pushes each as
# <REGISTRY>/<name>:v<version> (<name> is the last part of io.kubewarden.policy.ociUrl),
# printing each immutable reference and collecting kwctl's JSON output in PUBLISHED;
# KWCTL_SOURCES=sources.yml names kwctl's sources file (e.g. a registry in insecure_sources).
# Both need kwctl on PATH. `make release-check [VERSION=x.y.z]` checks that every file states
# one version and prints what a v<version> tag publishes.
#
# A release is these steps, each a target here; .github/workflows/release.yml only calls them
# and `make release-dry-run` runs them all against a local registry:
#   release-modules, sbom, cli-archive  build (unprivileged jobs): DIST holds the modules, their
#                                       SBOMs and the CLI archives
#   release-sums                        SHA256SUMS of what DIST holds
#   push                                kwctl push of DIST's modules (no build), into PUBLISHED
#   sign-published                      sign every pushed module, counted (xtask sign-published)
#   sign-sboms                          sign each SBOM (a cosign bundle beside it)
#   github-release                      the draft GitHub release with DIST's files
#   artifacthub-tree                    this version added to the Artifact Hub tree
.PHONY: packaging annotate publish push sign-published release-check e2e-registry
ANNOTATED_DIRS := . $(POLICY_DIRS)
# How the release's jobs run xtask: `cargo xtask`, or the binary a build job made.
XTASK ?= $(CARGO) xtask
# kwctl push -o json's output for every module `make push` pushed: what sign-published signs.
PUBLISHED ?= $(CARGO_TARGET_DIR)/published.json

packaging: policies
	$(CARGO) xtask-host packaging

# A warning from kwctl (a host capability used but not declared, or declared but unused)
# fails the target.
annotate: policies
	@test -n "$(KWCTL)" || { echo "kwctl not found: put it on PATH or set KWCTL"; exit 1; }
	@for d in $(ANNOTATED_DIRS); do \
	  echo "$(KWCTL) annotate $$d/policy.wasm"; \
	  out=$$($(KWCTL) annotate -m $$d/metadata.yml -u $$d/README.md -o $$d/annotated-policy.wasm $$d/policy.wasm 2>&1) || { echo "$$out"; exit 1; }; \
	  if echo "$$out" | grep -q WARN; then echo "$$out"; echo "kwctl warned about $$d: fix its metadata.yml hostCapabilities or what the module calls"; exit 1; fi; \
	done

publish: release-modules push

# The modules in DIST, as built (no build here: the release's publish job runs it on what the
# build job made).
push:
	@test -n "$(KWCTL)" || { echo "kwctl not found: put it on PATH or set KWCTL"; exit 1; }
	@test -n "$(REGISTRY)" || { echo "usage: make push REGISTRY=ghcr.io/<owner>/policies [DIST=…] [PUBLISHED=…]"; exit 1; }
	@mkdir -p $(dir $(PUBLISHED)) && : > $(PUBLISHED)
	@for d in $(ANNOTATED_DIRS); do \
	  name=$$(if [ "$$d" = . ]; then echo bundle; else basename $$d; fi); \
	  oci=$$(sed -n 's/^  io.kubewarden.policy.ociUrl: *//p' $$d/metadata.yml); \
	  version=$$(sed -n 's/^  io.kubewarden.policy.version: *//p' $$d/metadata.yml); \
	  ref="registry://$(REGISTRY)/$${oci##*/}:v$$version"; \
	  module=$(DIST)/gangwarden-$$name-v$$version.wasm; \
	  echo "kwctl push $$module $$ref"; \
	  out=$$($(KWCTL) push $(if $(KWCTL_SOURCES),--sources-path $(KWCTL_SOURCES)) -o json $$module "$$ref") || exit 1; \
	  echo "$$out"; echo "$$out" >> $(PUBLISHED); \
	done

# Signs every module in PUBLISHED: with COSIGN_KEY=cosign.key (its password in COSIGN_PASSWORD;
# a registry reached over plain HTTP), else keyless with cosign. Fails unless each module was
# pushed once and signed.
sign-published:
	$(XTASK) sign-published $(PUBLISHED) $(if $(COSIGN_KEY),--key $(COSIGN_KEY),--keyless)

# Signs each SBOM in DIST keyless with cosign, its bundle beside it (<sbom>.sigstore.json).
.PHONY: sign-sboms
sign-sboms:
	@ls $(DIST)/*.cdx.json >/dev/null || { echo "no SBOMs in $(DIST): make sbom"; exit 1; }
	@for f in $(DIST)/*.cdx.json; do \
	  echo "cosign sign-blob $$f"; \
	  cosign sign-blob --yes --bundle $$f.sigstore.json $$f || exit 1; \
	done

release-check:
	$(XTASK) release-check $(if $(VERSION),--version $(VERSION))

# What a release attaches, in DIST: each annotated module as gangwarden-<name>-v<version>.wasm,
# its SBOM as gangwarden-<name>-v<version>.cdx.json, the CLI for TARGET (default: this
# machine's) as gangwarden-<version>-<target>.tar.gz, and SHA256SUMS of them all. The release
# workflow builds the CLI archives on one runner per target.
DIST ?= $(CARGO_TARGET_DIR)/dist
PROJECT_VERSION = $(shell sed -n 's/^  io.kubewarden.policy.version: *//p' metadata.yml)
CLI_TARGET = $(or $(TARGET),$(shell rustc -vV | sed -n 's/^host: //p'))
.PHONY: cli-archive release-modules sbom release-sums release-assets github-release
cli-archive:
	$(CARGO) build --locked --release -p gangwarden-cli $(if $(TARGET),--target $(TARGET))
	mkdir -p $(DIST)
	tar -C $(CARGO_TARGET_DIR)/$(if $(TARGET),$(TARGET)/)release -czf $(DIST)/gangwarden-$(PROJECT_VERSION)-$(CLI_TARGET).tar.gz gangwarden

release-modules: annotate
	@mkdir -p $(DIST)
	@for d in $(ANNOTATED_DIRS); do \
	  name=$$(if [ "$$d" = . ]; then echo bundle; else basename $$d; fi); \
	  echo "cp $$d/annotated-policy.wasm $(DIST)/gangwarden-$$name-v$(PROJECT_VERSION).wasm"; \
	  cp $$d/annotated-policy.wasm $(DIST)/gangwarden-$$name-v$(PROJECT_VERSION).wasm || exit 1; \
	done

# What each module is built from: cargo-cyclonedx (scripts/tools.sh) writes a CycloneDX SBOM
# for every workspace crate, resolved for wasm32-wasip1 without build-time dependencies; the
# policy crates' go to DIST, the others are removed, and `cargo xtask sbom-check` checks that
# each lists exactly the crates its module is built from, with Cargo.lock's versions.
SBOM_NAME := gangwarden-sbom-tmp
sbom:
	@mkdir -p $(DIST)
	$(CARGO) cyclonedx --format json --spec-version 1.5 --target wasm32-wasip1 --no-build-deps --override-filename $(SBOM_NAME) -qq
	@for d in $(ANNOTATED_DIRS); do \
	  name=$$(if [ "$$d" = . ]; then echo bundle; else basename $$d; fi); \
	  mv $$d/$(SBOM_NAME).json $(DIST)/gangwarden-$$name-v$(PROJECT_VERSION).cdx.json || exit 1; \
	done
	@find . -name $(SBOM_NAME).json -not -path './target/*' -delete
	$(XTASK) sbom-check $(DIST)

release-sums:
	cd $(DIST) && sha256sum $$(ls *.wasm *.cdx.json *.tar.gz 2>/dev/null) > SHA256SUMS && cat SHA256SUMS

release-assets: release-modules sbom cli-archive
	@$(MAKE) --no-print-directory release-sums

# The draft GitHub release of TAG with every file in DIST (gh, GH_TOKEN); its notes are what
# release-check says the tag publishes.
RELEASE_NOTES ?= $(CARGO_TARGET_DIR)/release-notes.txt
github-release:
	@test -n "$(TAG)" || { echo "usage: make github-release TAG=v<version> [DIST=…]"; exit 1; }
	$(XTASK) release-check --version $(TAG) > $(RELEASE_NOTES)
	gh release create "$(TAG)" --draft --verify-tag --title "gangwarden $(TAG)" --notes-file $(RELEASE_NOTES) $(DIST)/*

# The tree the release puts on the artifacthub branch, in ARTIFACTHUB_TREE (the branch's
# checkout): this version of each package added as <package>/<version>/ (its
# artifacthub-pkg.yml and README), older versions kept, and artifacthub-repo.yml.
ARTIFACTHUB_TREE ?= $(CARGO_TARGET_DIR)/artifacthub
.PHONY: artifacthub-tree
artifacthub-tree:
	$(XTASK) artifacthub $(ARTIFACTHUB_TREE)

# The publish path for real: Debian's docker-registry on a free 127.0.0.1 port, `make publish`
# into it, kwctl pull/inspect, policy-server loading deploy/ from it, and cosign-key signatures
# checked by kwctl verify and policy-server's verification config (e2e-tests/tests/registry.rs).
# Says `skipped:` without docker-registry, kwctl or policy-server, or fails when CI is set.
e2e-registry: policies
	$(CARGO) test --locked -p gangwarden-e2e-tests --test registry -- --ignored --nocapture

# Every release step against Debian's docker-registry on 127.0.0.1 (e2e-tests/tests/
# release_dry_run.rs): build and annotate, SBOMs checked, push, sign with a cosign key and
# `kwctl verify -k` each module, sign keyless through a stand-in cosign, the draft release
# through a stand-in gh, and an Artifact Hub tree holding the previous release and this one.
# Says `skipped:` without docker-registry or kwctl, or fails when CI is set.
.PHONY: release-dry-run
release-dry-run: policies
	$(CARGO) test --locked -p gangwarden-e2e-tests --test release_dry_run -- --ignored --nocapture

test: e2e-registry release-dry-run

# --- gangwarden CLI (cli/) and the manifest engine (manifests/) ---
.PHONY: cli docs bench-cli manifests-wasm

# The manifest engine also runs in the browser playground.
manifests-wasm:
	$(CARGO) check --locked -p gangwarden-manifests --target wasm32-unknown-unknown

test: manifests-wasm

cli:
	$(CARGO) build --locked --release -p gangwarden-cli

# The rule reference; `cargo test -p gangwarden-cli` fails when the checked-in copy drifts.
docs:
	$(CARGO) run --locked --quiet -p gangwarden-cli -- rules --output markdown > docs/rules.md

# Time to check 1,000 manifests: the engine in-process and the release binary (medians).
bench-cli: cli
	GANGWARDEN_BIN=$(CARGO_TARGET_DIR)/release/gangwarden $(CARGO) bench --locked -p gangwarden-manifests --bench check

bench: bench-cli

# --- Browser playground (playground/): the engine built with wasm-pack for the web, the static
# page around it in playground/dist/, and its browser tests in headless Chromium.
PLAYGROUND_PKG := $(CARGO_TARGET_DIR)/playground-pkg
PLAYGROUND_DATA := $(CARGO_TARGET_DIR)/playground-data
PLAYGROUND_PORT ?= 8123
.PHONY: playground playground-serve playground-test

# wasm-pack, wasm-bindgen-cli, cargo-fuzz and the npm packages, each installed only when missing.
.PHONY: tools
tools:
	scripts/tools.sh

# Size comes from the release profile (opt-level "z", LTO, one codegen unit, strip, abort).
# No wasm-opt pass (playground/Cargo.toml turns wasm-pack's off): Debian's binaryen 108 turns
# wasm-bindgen 0.2.130's externref table into a funcref table even at -O0, so the module
# fails to instantiate; and measured here, -Oz/-Os output gzips to 450 KB against 334 KB
# without it (-O1, which still breaks the module, would save 5 KB).
playground: tools
	wasm-pack build playground --target web --release --no-typescript --no-pack --out-dir $(PLAYGROUND_PKG) -- --locked
	$(CARGO) xtask playground-data $(PLAYGROUND_DATA)
	node playground/build/build.mjs --pkg $(PLAYGROUND_PKG) --data $(PLAYGROUND_DATA) --out playground/dist

playground-serve: playground
	node playground/serve.mjs playground/dist $(PLAYGROUND_PORT)

playground-test: playground
	PLAYGROUND_SCREENSHOTS=$(CARGO_TARGET_DIR)/playground-screenshots node --test --test-reporter=spec playground/tests/
