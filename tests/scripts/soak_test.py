#!/usr/bin/python3
"""scripts/soak.py in CI: 200 random scenarios of a fixed seed on 2 workers,
then every case of tests/soak/regressions/ replayed; every invariant of
soak.py must hold. The engines must agree within 2%, except the strategies in
ENGINE_TOLERANCE_OF, whose gaps docs/guide/flow-engine.md ("Where the engines
differ, effect by effect") explains: theirs is pinned at the bound given, so a
wider gap still fails. KNOWN_TO_FAIL lists INVARIANT:STRATEGY pairs of bugs
not fixed yet (none now): soak.py prints them as KNOWN and counts them without
failing.

usage: soak_test.py EPPSIM SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

ENGINE_TOLERANCE_OF = {
    "flexsp": 0.12,            # up to 10.7% on these cases: effects 1-3 of the guide
    "ulysses-adaptive": 0.12,  # up to 10.9%
}
KNOWN_TO_FAIL = []

eppsim, source = sys.argv[1], os.path.realpath(sys.argv[2])
soak = [sys.executable, "-B", os.path.join(source, "scripts", "soak.py"), "--eppsim", eppsim, "--jobs", "2",
        "--known-to-fail", ",".join(KNOWN_TO_FAIL),
        "--engine-tolerance-of", ",".join(f"{k}={v}" for k, v in ENGINE_TOLERANCE_OF.items())]
status = 0
with tempfile.TemporaryDirectory() as tmp:
    for name, extra in (("random", ["--cases", "200", "--seed", "1"]),
                        ("regressions", ["--replay", os.path.join(source, "tests", "soak", "regressions")])):
        print(f"soak_test: {name}", flush=True)
        done = subprocess.run(soak + extra + ["--out", os.path.join(tmp, f"{name}.json")])
        status |= done.returncode
sys.exit(1 if status else 0)
