#!/usr/bin/env bash
# Installs every Debian package eppsim needs to build, test and plot. Idempotent: packages already
# present are left as they are. Run as root (or with sudo available) on Debian 12.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libsimgrid-dev libboost-dev libboost-graph-dev libboost-program-options-dev
  libprotobuf-dev protobuf-compiler
  libfmt-dev
  libjemalloc-dev   # the allocator of eppsim's programs (CMakeLists.txt EPPSIM_ALLOCATOR)
  clang libclang-rt-14-dev   # the sanitizer and fuzz build: clang's sanitizers and libFuzzer, whose runtimes libclang-rt-14-dev ships
  lld               # clang's programs link with LLVM's linker (CMakeLists.txt)
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  coinor-libcbc-dev coinor-libcgl-dev coinor-libclp-dev coinor-libosi-dev coinor-libcoinutils-dev
  libopenblas-dev   # BLAS for the runtime's kernels; its LAPACK (liblapack.so) for eppsim calibrate's least squares
  python3 python3-matplotlib python3-protobuf
  chromium          # headless, for the test that loads the --html report page (tests/plots/html_test.py)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present" >&2
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
echo "install-deps: installing ${missing[*]}" >&2
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
