#!/usr/bin/env bash
# `cmake --install` puts the commands on PREFIX/bin and the scenarios and plot
# scripts under PREFIX/share/eppsim; the installed eppsim runs from anywhere.
# usage: install_test.sh BUILD_DIR
set -uo pipefail
build=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
source "$(dirname "${BASH_SOURCE[0]}")/check.sh"

check "cmake --install" 0 "" -- cmake --install "$build" --prefix "$work/prefix"
for f in bin/eppsim bin/eppsim-sweep-mpi bin/eppsim-run bin/eppsim-bench share/eppsim/scenarios/showcase.textproto \
         share/eppsim/scenarios/quickstart.textproto share/eppsim/plots/timeline.py; do
  [ -e "$work/prefix/$f" ] || { echo "FAIL not installed: $f"; failures=$((failures + 1)); }
done
mkdir -p "$work/elsewhere"
check "installed eppsim on the PATH" 0 "" -- env PATH="$work/prefix/bin:$PATH" bash -c \
  "cd '$work/elsewhere' && eppsim run '$work/prefix/share/eppsim/scenarios/quickstart.textproto' -o out --outputs none"
[ -s "$work/elsewhere/out/report.json" ] || { echo "FAIL installed eppsim wrote no report"; failures=$((failures + 1)); }

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
