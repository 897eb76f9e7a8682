#!/usr/bin/python3
"""scripts/reproduction_table.py on small hand-made runs: the speedup tables
and the ablation tables hold the ratios of the runs' step times in the right
cells, a strategy that did not run shows as a dash, the same runs give the
same file byte for byte, and a missing run is an error (exit 2) that names it.

usage: reproduction_table_test.py SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

source = os.path.realpath(sys.argv[1])
script = os.path.join(source, "scripts", "reproduction_table.py")
failures = []

paper = {
    "title": "Test set", "source": "a test", "strategies": ["a", "b"], "names": {"a": "Ours", "b": "Theirs"},
    "pairs": [["a", "b"]], "step_time_of": "a",
    "ablation": {
        "strategies": ["a", "b"], "pairs": [["a", "b"]],
        "steps": [{"label": "nothing", "set": ["x=1"]}, {"label": "+ effect", "set": ["x=2"]}],
    },
    "rows": [{"scenario": "s1", "label": "Setting 1", "speedup": {"a/b": 1.5}},
             {"scenario": "s2", "label": "Setting 2", "speedup": {}}],
}
# Step times: main runs, ablation step 0, step 1 (b missing in step 1 of s2).
runs = {
    "s1": {"a": 10.0, "b": 15.0}, "s2": {"a": 4.0, "b": 4.0},
    "ablation/0/s1": {"a": 10.0, "b": 10.0}, "ablation/0/s2": {"a": 2.0, "b": 3.0},
    "ablation/1/s1": {"a": 5.0, "b": 10.0}, "ablation/1/s2": {"a": 2.0},
}


def write_runs(root):
    for path, steps in runs.items():
        os.makedirs(os.path.join(root, path))
        records = [{"strategy": s, "step_time_s": t} for s, t in steps.items()]
        with open(os.path.join(root, path, "compare.json"), "w") as f:
            json.dump({"records": records}, f)


def table_after(text, heading):
    """The rows of the first table after `heading`, as lists of cells."""
    lines = text.split("\n")
    start = lines.index(heading)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows


work = tempfile.mkdtemp(prefix="reproduction-table-")
try:
    paper_path = os.path.join(work, "paper.json")
    with open(paper_path, "w") as f:
        json.dump(paper, f)
    runs_dir = os.path.join(work, "runs")
    write_runs(runs_dir)
    out = os.path.join(work, "RESULTS.md")
    subprocess.run(["/usr/bin/python3", "-B", script, paper_path, runs_dir, out], check=True)
    text = open(out, encoding="utf-8").read()
    speedups = table_after(text, "## Speedups")
    if speedups[2] != ["Setting 1", "1.50× · 1.50×"] or speedups[3] != ["Setting 2", "— · 1.00×"]:
        failures.append(f"speedup table: {speedups}")
    ablation = table_after(text, "### Ours over Theirs")
    expected = [["effects on", "Setting 1", "Setting 2"], ["---", "---", "---"],
                ["0. nothing", "1.00×", "1.50×"], ["1. + effect", "2.00×", "—"], ["paper", "1.50×", "—"]]
    if ablation[:1] + ablation[2:] != expected[:1] + expected[2:]:
        failures.append(f"ablation table: {ablation}")
    if "1. + effect: `x=2`" not in text:
        failures.append("the ablation steps are not listed with their overrides")
    again = os.path.join(work, "RESULTS-again.md")
    subprocess.run(["/usr/bin/python3", "-B", script, paper_path, runs_dir, again], check=True)
    if open(again, "rb").read() != open(out, "rb").read():
        failures.append("the same runs gave a different file")
    shutil.rmtree(os.path.join(runs_dir, "ablation", "1", "s1"))
    result = subprocess.run(["/usr/bin/python3", "-B", script, paper_path, runs_dir, os.path.join(work, "x.md")],
                            capture_output=True, text=True)
    if result.returncode != 2 or os.path.join("ablation", "1", "s1", "compare.json") not in result.stderr:
        failures.append(f"a missing ablation run: exit {result.returncode}, {result.stderr!r}")
    if os.path.exists(os.path.join(work, "x.md")):
        failures.append("a failed run left its output file")
finally:
    shutil.rmtree(work)

for f in failures:
    print("FAIL", f)
print("reproduction_table_test:", "failed" if failures else "passed")
sys.exit(1 if failures else 0)
