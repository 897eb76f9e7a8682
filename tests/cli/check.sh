# Sourced by the command-line test scripts. check NAME EXPECTED_STATUS
# EXPECTED_STDERR_SUBSTRING -- COMMAND...: runs COMMAND with its stdout and
# stderr in $work/out and $work/err and counts it in $passes or $failures (the
# caller sets work, passes=0 and failures=0).
check() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; cat "$work/err"; failures=$((failures + 1)); return
  fi
  if [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$work/err"; then
    echo "FAIL $name: stderr lacks '$pattern'"; cat "$work/err"; failures=$((failures + 1)); return
  fi
  passes=$((passes + 1))
}
