#!/usr/bin/env bash
# The cargo and npm tools `make test` needs besides the toolchain (rust-toolchain.toml):
# wasm-pack, wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock (wasm-pack cannot
# download it here), cargo-fuzz, and the playground's npm packages from its lock file. Each step
# skips itself when what it installs is already there. Debian packages (binaryen, chromium) are
# not installed here: they need root; .ci/run installs them and the README names them.
set -euo pipefail
cd "$(dirname "$0")/.."

wasm_bindgen_version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $wasm_bindgen_version" ]; then
  # Its lock file pins a crate version the registry no longer offers: fall back to resolving.
  cargo install --locked wasm-bindgen-cli --version "$wasm_bindgen_version" \
    || cargo install wasm-bindgen-cli --version "$wasm_bindgen_version"
fi
command -v wasm-pack >/dev/null || cargo install --locked wasm-pack
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz --version 0.13.2
if [ ! -f playground/node_modules/.package-lock.json ] || [ playground/package-lock.json -nt playground/node_modules/.package-lock.json ]; then
  (cd playground && npm ci --no-audit --no-fund)
fi
