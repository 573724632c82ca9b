#!/usr/bin/env bash
# Copies the policy-server binary of a Kubewarden release out of its image (policy-server
# ships only as ghcr.io/kubewarden/policy-server; the binary is /policy-server in it) into a
# folder, for the tests that run the real policy-server. Needs docker.
#   scripts/policy-server-from-image.sh v1.35.0 /usr/local/bin
set -euo pipefail
version=${1:?usage: policy-server-from-image.sh <version> <folder>}
folder=${2:?usage: policy-server-from-image.sh <version> <folder>}
mkdir -p "$folder"
id=$(docker create "ghcr.io/kubewarden/policy-server:$version")
trap 'docker rm "$id" >/dev/null' EXIT
docker cp "$id:/policy-server" "$folder/policy-server"
"$folder/policy-server" --version
