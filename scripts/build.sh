#!/usr/bin/env bash
# Configures and builds eppsim into BUILD_DIR (default ./build). Extra arguments
# go to CMake's configure step, e.g. -DEPPSIM_SANITIZE=address,undefined.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >&2
cmake --build "$build_dir" -j"$(nproc)" >&2
