#!/usr/bin/env bash
# Refactoring changes no result: every shipped scenario is run (topology studies
# through `eppsim topo`), every strategy is compared on three of them, and the
# small ones also run on the flow engine; the SHA-256 of every output file
# (timings.json aside, and topology.json without its wall-clock build_time_s)
# must equal tests/cli/golden_outputs.sha256, written by an earlier commit.
# A change that means to move a number rewrites that file (--write) and names
# the change in its commit message.
# usage: golden_outputs_test.sh EPPSIM_BINARY SOURCE_DIR [--write]
# With GOLDEN_KEEP=DIR the outputs are kept under DIR/NAME (to compare two
# builds' numbers with tests/cli/compare_outputs.py).
set -uo pipefail
eppsim=$(realpath "$1")
src=$(realpath "$2")
write=${3:-}
golden="$src/tests/cli/golden_outputs.sha256"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# record NAME ARGS...: runs `eppsim ARGS -o DIR`, then lists DIR's files' digests as NAME/FILE.
record() {
  local name=$1
  shift
  if ! "$eppsim" "$@" -o "$work/$name" --log=warn >/dev/null 2>"$work/err"; then
    echo "FAIL $name: eppsim $* exited non-zero"; cat "$work/err"; failures=$((failures + 1)); return
  fi
  find "$work/$name" -name topology.json -exec sed -i '/"build_time_s": /d' {} +
  (cd "$work" && find "$name" -type f ! -name timings.json -print0 | sort -z | xargs -0 sha256sum) >>"$work/digests"
  if [ -n "${GOLDEN_KEEP:-}" ]; then
    mkdir -p "$GOLDEN_KEEP" && rm -rf "${GOLDEN_KEEP:?}/$name" && mv "$work/$name" "$GOLDEN_KEEP/$name"
  fi
  rm -rf "${work:?}/$name"
}

cd "$src" || exit 1
while IFS= read -r scenario; do
  name=$(echo "${scenario%.textproto}" | tr '/' '_')
  if [ -e "${scenario%.textproto}.topology.expected.textproto" ]; then
    record "$name-topo" topo "$scenario"
  else
    record "$name" run "$scenario"
  fi
done < <(find scenarios -path scenarios/studies -prune -o -name '*.textproto' ! -name '*.expected.textproto' -print | sort)
for scenario in scenarios/quickstart.textproto scenarios/infinipipe/llama13b_48k.textproto \
                scenarios/flexsp/gpt13b_192k.textproto; do
  record "$(echo "${scenario%.textproto}" | tr '/' '_')-compare" compare "$scenario"
done
for scenario in scenarios/quickstart.textproto scenarios/bench/ring8.textproto scenarios/validation/pp2.textproto \
                scenarios/validation/epp4.textproto; do
  record "$(echo "${scenario%.textproto}" | tr '/' '_')-flow" run "$scenario" --engine flow
done

if [ "$write" = --write ]; then
  cp "$work/digests" "$golden"
  echo "golden_outputs_test: wrote $(wc -l <"$golden") digests to $golden"
  exit "$failures"
fi
if ! diff "$golden" "$work/digests" >"$work/diff"; then
  echo "FAIL outputs differ from $golden (< expected, > now):"
  head -40 "$work/diff"
  failures=$((failures + 1))
fi
echo "golden_outputs_test: $(wc -l <"$work/digests") files compared, $failures failures"
[ "$failures" -eq 0 ]
