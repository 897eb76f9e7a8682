#!/usr/bin/python3
"""The shipped studies (scenarios/studies/NAME/) are what their commands give:

- each study's results file (a reproduction's scenarios/NAME/RESULTS.md, any
  other study's scenarios/studies/NAME/RESULTS.md) is what its shipped
  results.csv renders to (scripts/study.py NAME --render --check);
- a few of its points, rerun now with `eppsim sweep --points`, give the rows
  results.csv holds, every column but cost_rank (which ranks the points a run
  reports). The points: tables.json's "check_points" where it names them, else
  the first and the last point that ran, leaving out the planners that stop at
  a wall-clock limit (flexsp's and epp-flex's MILPs), whose plans a slower
  machine may cut short.

A whole study takes minutes to hours; regenerate one with
`/usr/bin/python3 scripts/study.py NAME`.

usage: studies_test.py EPPSIM_BINARY SOURCE_DIR
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

eppsim, source = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
TIME_LIMITED = {"flexsp", "epp-flex"}
failures = []


def rows_of(path):
    with open(path, newline="") as f:
        return {r["index"]: r for r in csv.DictReader(f)}


def check_points(study, rows):
    tables = os.path.join(study, "tables.json")
    if os.path.exists(tables):
        with open(tables) as f:
            named = json.load(f).get("check_points")
        if named:
            return [str(p) for p in named]
    ran = [r["index"] for r in rows.values() if r["status"] == "ok" and r.get("strategy") not in TIME_LIMITED]
    return sorted({ran[0], ran[-1]}, key=int) if ran else []


studies_dir = os.path.join(source, "scenarios", "studies")
studies = sorted(n for n in os.listdir(studies_dir) if os.path.exists(os.path.join(studies_dir, n, "results.csv")))
if not studies:
    failures.append("no study ships a results.csv")
with tempfile.TemporaryDirectory(prefix="eppsim-studies-") as work:
    for name in studies:
        study = os.path.join(studies_dir, name)
        for needed in ("sweep.textproto", "README.md"):
            if not os.path.exists(os.path.join(study, needed)):
                failures.append(f"{name}: no {needed}")
        render = subprocess.run(["/usr/bin/python3", "-B", os.path.join(source, "scripts", "study.py"), name,
                                 "--render", "--check"], capture_output=True, text=True)
        if render.returncode != 0:
            failures.append(f"{name}: its results file is stale: {render.stderr.strip()}")
        shipped = rows_of(os.path.join(study, "results.csv"))
        points = check_points(study, shipped)
        out = os.path.join(work, name)
        result = subprocess.run([eppsim, "sweep", os.path.join(study, "sweep.textproto"), "-o", out, "--points",
                                 ",".join(points)], capture_output=True, text=True, timeout=1200)
        if result.returncode != 0:
            failures.append(f"{name}: eppsim sweep --points {','.join(points)} exited {result.returncode}: "
                            f"{result.stderr.strip()}")
            continue
        now = rows_of(os.path.join(out, "results.csv"))
        for p in points:
            before = {k: v for k, v in shipped[p].items() if k != "cost_rank"}
            after = {k: v for k, v in now.get(p, {}).items() if k != "cost_rank"}
            if before != after:
                changed = [k for k in before if before[k] != after.get(k)]
                failures.append(f"{name}: point {p} now gives another row ({', '.join(changed)}: "
                                f"{[before[k] for k in changed]} then, {[after.get(k) for k in changed]} now); "
                                f"regenerate it with /usr/bin/python3 scripts/study.py {name}")
        print(f"{name}: results file current, points {','.join(points)} as shipped")

for f in failures:
    print("FAIL", f)
print("studies_test:", "failed" if failures else f"{len(studies)} studies as shipped")
sys.exit(1 if failures else 0)
