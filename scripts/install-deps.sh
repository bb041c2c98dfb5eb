#!/usr/bin/env bash
# Installs every Debian package the project needs. Idempotent: does nothing when all are present, and runs
# `apt-get update` only when a package is missing. Usage: scripts/install-deps.sh [--check] [--browser]
#   --check   exit 0 when everything is installed, 1 otherwise; installs nothing.
#   --browser also chromium, for the headless-browser test of the HTML report (skipped without it).
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache lld pkg-config git clang-format-14 clang-16 mypy
  # libFuzzer (make fuzz): clang-14 with its runtime libraries
  clang-14 libclang-rt-14-dev
  # C++ libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libboost-dev libssl-dev librocksdb-dev prometheus-cpp-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
  # runtime: kernel sandbox, Python for NKI kernels, Prometheus for the metrics test
  bubblewrap python3-numpy python3-yaml libopenblas0-pthread prometheus procps curl
  # multi-host test (network namespaces)
  iproute2
)

for arg in "$@"; do
  if [[ "$arg" == "--browser" ]]; then PACKAGES+=(chromium); fi
done

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ " $* " == *" --check "* ]]; then
  if ((${#missing[@]})); then echo "missing packages: ${missing[*]}"; exit 1; fi
  exit 0
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
