#!/usr/bin/env bash
# The test command: installs what eppsim needs, builds it and runs every test;
# then builds again with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs the suite under them. Set EPPSIM_SKIP_SANITIZERS=1 to skip the second pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"

BUILD_DIR="$root/build" bash "$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j"$(nproc)"

if [ "${EPPSIM_SKIP_SANITIZERS:-0}" != 1 ]; then
  BUILD_DIR="$root/build-sanitize" bash "$root/scripts/build.sh" \
    -DEPPSIM_SANITIZE=address,undefined -DEPPSIM_BUILD_BENCHMARKS=OFF
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$root/build-sanitize" --output-on-failure -j"$(nproc)"
fi
