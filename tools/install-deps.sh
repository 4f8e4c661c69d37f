#!/usr/bin/env bash
# Installs every system package attn needs to build, test and run (Debian 12, as root or with sudo).
# Idempotent: packages already present are left alone, and apt-get runs only when one is missing.
# Usage: tools/install-deps.sh [PACKAGE ...]   (packages given replace the build's list; see
# tools/install-plot-deps.sh)
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libdnnl-dev           # oneDNN 2.6: the compute engine
  ocl-icd-opencl-dev    # only recommended by libdnnl-dev, yet its dnnl-config.cmake requires OpenCL
  libcli11-dev          # command-line flags
  nlohmann-json3-dev    # configs, checkpoint headers, logs
  libspdlog-dev         # logging
  libsentencepiece-dev  # tokenization (library, not the CLI)
  catch2                # unit tests (Catch2 2.13)
  clang-format          # .ci/run checks the formatting (tools/check-format.sh)
  libopenmpi-dev openmpi-bin  # data-parallel training: mpirun -np N attn-train
  curl ca-certificates python3  # tools/get-data.sh downloads the corpus and splits it
  libboost-dev          # attn-serve's HTTP server (Boost.Beast and Asio 1.74, header-only; lib/serve)
  libcpp-httplib-dev    # the serving tests' HTTP client (cpp-httplib 0.11)
  python3-torch         # the gradcheck tests: tools/check-gradients.py replays a step in PyTorch
  python3-numpy         # tools/read-ctranslate2-model.py, which the attn-export tests run
  chromium chromium-driver python3-selenium  # the explorer's browser tests (tests/browser/)
)
# The browser tests install axe-core (accessibility checks) into the build tree with npm: Debian's,
# unless an npm is already there (a Node.js from elsewhere, such as NodeSource's, brings its own
# and conflicts with Debian's package).
command -v npm >/dev/null || packages+=(npm)
[ $# -eq 0 ] || packages=("$@")

# The packages not fully installed (dpkg -s would also accept half-installed ones).
not_installed() {
  local package
  for package in "$@"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ] ||
      echo "$package"
  done
}
mapfile -t missing < <(not_installed "${packages[@]}")
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# apt-get can exit 0 after an interruption: check that every package really is installed.
mapfile -t still_missing < <(not_installed "${missing[@]}")
if [ ${#still_missing[@]} -gt 0 ]; then
  echo "install-deps: error: not installed after apt-get: ${still_missing[*]}" >&2
  exit 1
fi
echo "install-deps: done"
