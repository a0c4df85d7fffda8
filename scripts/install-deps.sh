#!/usr/bin/env bash
# Installs the Debian packages specsim builds with, when any is missing. Idempotent; needs root
# (or sudo) only when something must be installed.
#   --fuzz  also clang with its sanitizer and libFuzzer runtimes (scripts/sanitize.sh, scripts/fuzz.sh)
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config protobuf-compiler libprotobuf-dev libgtest-dev libgmock-dev
      libbenchmark-dev libfmt-dev libcli11-dev nlohmann-json3-dev libeigen3-dev zlib1g-dev clang-format
      clang-tidy python3-jsonschema)
if [ "${1:-}" = "--fuzz" ]; then pkgs+=(clang libclang-rt-dev llvm); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
