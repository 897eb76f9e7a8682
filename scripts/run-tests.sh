#!/usr/bin/env bash
# The test command: installs what eppsim needs, builds it and runs every test;
# then builds again with clang, AddressSanitizer, UndefinedBehaviorSanitizer
# and libFuzzer's coverage, and runs the suite under them; then builds the
# tests that run threads with ThreadSanitizer and runs them (ctest -L threads);
# then fuzzes each libFuzzer target of the clang build briefly, after replaying
# its regression inputs (scripts/fuzz.sh). Set EPPSIM_SKIP_SANITIZERS=1 to skip
# the sanitizer passes, EPPSIM_FUZZ_SECONDS to fuzz each target longer (default 20).
# Each stage ends with a line on stderr giving its wall time, so that a CI log
# shows where the time went.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stage_start=$SECONDS
stage_done() {
  echo "run-tests: $1 took $((SECONDS - stage_start)) s (${SECONDS} s in all)" >&2
  stage_start=$SECONDS
}
bash "$root/scripts/install-deps.sh"
stage_done "installing packages"

BUILD_DIR="$root/build" bash "$root/scripts/build.sh"
stage_done "the plain build"
ctest --test-dir "$root/build" --output-on-failure -j"$(nproc)"
stage_done "the plain suite"

if [ "${EPPSIM_SKIP_SANITIZERS:-0}" != 1 ]; then
  # The instrumented builds compile at -O1 with line tables only (-g1: enough for the
  # sanitizers' stack traces) rather than RelWithDebInfo's -O2 -g: these builds were most
  # of this script's time, which fell from 67 to 50 minutes on a 2-core machine.
  instrumented_flags="-O1 -g1 -DNDEBUG"
  # One build, with clang, serves the suite under AddressSanitizer and UndefinedBehaviorSanitizer
  # and the libFuzzer targets: EPPSIM_FUZZ compiles everything with both sanitizers and the
  # fuzzer's coverage. It replaced a GCC build for the suite and a clang one for the fuzz targets
  # (1,054 s and 242 s on a 2-core machine): clang compiles sanitized code faster. Its
  # UndefinedBehaviorSanitizer also checks float-to-integer conversions, which GCC's leaves out.
  # Without CUDA: the plain build above compiles the CUDA/NCCL backend, and with no GPU its
  # tests skip, so sanitizing it would only cost nvcc time.
  BUILD_DIR="$root/build-sanitize" bash "$root/scripts/build.sh" \
    -DCMAKE_CXX_COMPILER=clang++ -DEPPSIM_FUZZ=ON -DEPPSIM_BUILD_BENCHMARKS=OFF -DWITH_CUDA=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$instrumented_flags"
  stage_done "the ASan and UBSan build (clang, with the fuzz targets)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$root/build-sanitize" --output-on-failure -j"$(nproc)"
  stage_done "the suite under ASan and UBSan"

  # ThreadSanitizer: only the tests labelled "threads" (tests/runtime/CMakeLists.txt says which and why).
  cmake -S "$root" -B "$root/build-tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEPPSIM_SANITIZE=thread \
    -DEPPSIM_BUILD_BENCHMARKS=OFF -DWITH_CUDA=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$instrumented_flags" >&2
  cmake --build "$root/build-tsan" -j"$(nproc)" --target eppsim_threads_tests >&2
  stage_done "the TSan build"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/tests/runtime/tsan_suppressions.txt" \
    ctest --test-dir "$root/build-tsan" --output-on-failure -j"$(nproc)" -L threads
  stage_done "the threads tests under TSan"

  # Fuzzing: the libFuzzer targets of the clang build above.
  BUILD_DIR="$root/build-sanitize" bash "$root/scripts/fuzz.sh" "${EPPSIM_FUZZ_SECONDS:-20}"
  stage_done "fuzzing"
fi
