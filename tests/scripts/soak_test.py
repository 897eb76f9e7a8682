#!/usr/bin/python3
"""scripts/soak.py in CI: 200 random scenarios of a fixed seed on 2 workers,
then every case of tests/soak/regressions/ replayed; every invariant of
soak.py must hold. The pairs in KNOWN_TO_FAIL are bugs not fixed yet: soak.py
prints them as KNOWN and counts them in its summary without failing; remove
a pair once its bug is fixed. docs/guide/flow-engine.md says why the engines
still differ on these two; a 1,000-case campaign of seed 7, before the analytic
engine stopped stretching latency (ae7131a), also saw engines:ulysses (up to
20%), engines:epp (11%) and engines:packed-1f1b (3%).

usage: soak_test.py EPPSIM SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

KNOWN_TO_FAIL = [
    "engines:flexsp",            # flow vs analytic up to 10.7% on these cases (issue 45, item 6)
    "engines:ulysses-adaptive",  # flow vs analytic up to 10.9% on these cases
]

eppsim, source = sys.argv[1], os.path.realpath(sys.argv[2])
soak = [sys.executable, "-B", os.path.join(source, "scripts", "soak.py"), "--eppsim", eppsim, "--jobs", "2",
        "--known-to-fail", ",".join(KNOWN_TO_FAIL)]
status = 0
with tempfile.TemporaryDirectory() as tmp:
    for name, extra in (("random", ["--cases", "200", "--seed", "1"]),
                        ("regressions", ["--replay", os.path.join(source, "tests", "soak", "regressions")])):
        print(f"soak_test: {name}", flush=True)
        done = subprocess.run(soak + extra + ["--out", os.path.join(tmp, f"{name}.json")])
        status |= done.returncode
sys.exit(1 if status else 0)
