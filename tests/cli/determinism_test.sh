#!/usr/bin/env bash
# Same scenario and seed, same bytes: every shipped scenario is run twice, the
# second time from another working directory, with a relative scenario path,
# another locale and time zone, glibc's malloc filling fresh memory with a
# pattern (MALLOC_PERTURB_) and another BLAS thread count, and every output
# but timings.json (wall-clock facts) must be byte-identical (and but
# topology.json's build_time_s, the wall-clock figure docs/architecture.md, "Outputs", puts there). Topology studies
# (a .topology.expected.textproto beside them) are compared through
# `eppsim topo`; small scenarios also through the flow engine (SimGrid).
# The engines and planners run on one thread, so no thread count can change a
# result; the expected values of tests/sim/scenarios_test.cpp check the
# numbers on every machine CI runs on.
# usage: determinism_test.sh EPPSIM_BINARY SOURCE_DIR
set -uo pipefail
eppsim=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
compared=0
mkdir -p "$work/first" "$work/other/cwd"

# run_twice NAME ARGS...: runs `eppsim ARGS -o DIR` plainly and perturbed, then compares.
# ARGS hold the scenario as @SCENARIO@, given absolute to the first run and relative to the second.
run_twice() {
  local name=$1 scenario=$2
  shift 2
  local first=("${@//@SCENARIO@/$src/$scenario}")
  local second=("${@//@SCENARIO@/../../src-link/$scenario}")
  if ! "$eppsim" "${first[@]}" -o "$work/first/$name" --log=warn >/dev/null 2>"$work/err"; then
    echo "FAIL $name: eppsim ${first[*]} exited $?"; cat "$work/err"; failures=$((failures + 1)); return
  fi
  if ! (cd "$work/other/cwd" && LC_ALL=C.UTF-8 TZ=Asia/Kolkata MALLOC_PERTURB_=165 OPENBLAS_NUM_THREADS=2 \
        "$eppsim" "${second[@]}" -o "../$name" --log=warn >/dev/null 2>"$work/err"); then
    echo "FAIL $name (perturbed): eppsim ${second[*]} exited"; cat "$work/err"; failures=$((failures + 1)); return
  fi
  # topology.json's build_time_s is the one wall-clock figure there (docs/architecture.md, "Outputs").
  for json in "$work/first/$name/topology.json" "$work/other/$name/topology.json"; do
    [ -e "$json" ] && sed -i '/"build_time_s": /d' "$json"
  done
  if ! diff -r --exclude=timings.json "$work/first/$name" "$work/other/$name" >"$work/diff" 2>&1; then
    echo "FAIL $name: outputs differ between identical runs:"; head -20 "$work/diff"; failures=$((failures + 1))
  fi
  compared=$((compared + 1))
  rm -rf "$work/first/$name" "$work/other/$name"
}

ln -s "$src" "$work/src-link"
while IFS= read -r scenario; do
  name=$(echo "$scenario" | tr '/' '_')
  if [ -e "$src/${scenario%.textproto}.topology.expected.textproto" ]; then
    run_twice "$name-topo" "$scenario" topo @SCENARIO@
  else
    run_twice "$name" "$scenario" run @SCENARIO@
  fi
done < <(cd "$src" && find scenarios -path scenarios/studies -prune -o -name '*.textproto' ! -name '*.expected.textproto' -print | sort)

for scenario in scenarios/quickstart.textproto scenarios/bench/ring8.textproto scenarios/validation/pp2.textproto \
                scenarios/validation/epp4.textproto; do
  run_twice "$(echo "$scenario" | tr '/' '_')-flow" "$scenario" run @SCENARIO@ --engine flow
done

if [ "$compared" -lt 25 ]; then echo "FAIL only $compared scenarios compared"; failures=$((failures + 1)); fi
echo "determinism_test: $compared runs compared, $failures failures"
[ "$failures" -eq 0 ]
