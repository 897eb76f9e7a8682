#!/usr/bin/python3
"""scripts/reproduction_table.py on a small hand-made sweep's results.csv: the
speedup tables and the ablation tables hold the ratios of the step times in
the right cells, a strategy that did not run shows as a dash and is listed
with its error, the same rows give the same file byte for byte, and a missing
setting is an error (exit 2) that names it.

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
        "shipped": "on",
        "steps": [{"value": "off", "label": "nothing"}, {"value": "on", "label": "+ effect"}],
    },
    "rows": [{"scenario": "s1", "label": "Setting 1", "speedup": {"a/b": 1.5}},
             {"scenario": "s2", "label": "Setting 2", "speedup": {}}],
}
# Step times per (effects, setting): the shipped step "on" is the main table's (b fails in s2 there).
runs = {
    ("off", "s1"): {"a": 10.0, "b": 10.0}, ("off", "s2"): {"a": 2.0, "b": 3.0},
    ("on", "s1"): {"a": 10.0, "b": 20.0}, ("on", "s2"): {"a": 2.0},
}


def write_results(path, drop=()):
    lines = ["index,effects,setting,strategy,status,network,step_time_s,error"]
    for (effects, setting), steps in runs.items():
        for strategy in ["a", "b"]:
            if (effects, setting) in drop:
                continue
            if strategy in steps:
                lines.append(f"{len(lines) - 1},{effects},{setting},{strategy},ok,simple,{steps[strategy]},")
            else:
                lines.append(f"{len(lines) - 1},{effects},{setting},{strategy},failed,,,b does not fit")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


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
    results = os.path.join(work, "results.csv")
    write_results(results)
    out = os.path.join(work, "RESULTS.md")
    subprocess.run(["/usr/bin/python3", "-B", script, paper_path, results, out], check=True)
    text = open(out, encoding="utf-8").read()
    speedups = table_after(text, "## Speedups")
    if speedups[2] != ["Setting 1", "1.50× · 2.00×"] or speedups[3] != ["Setting 2", "— · —"]:
        failures.append(f"speedup table: {speedups}")
    ablation = table_after(text, "### Ours over Theirs")
    expected = [["effects on", "Setting 1", "Setting 2"], ["---", "---", "---"],
                ["0. nothing", "1.00×", "1.50×"], ["1. + effect", "2.00×", "—"], ["paper", "1.50×", "—"]]
    if ablation[:1] + ablation[2:] != expected[:1] + expected[2:]:
        failures.append(f"ablation table: {ablation}")
    if "1. + effect (`on`)" not in text:
        failures.append("the ablation steps are not listed with their values")
    if "- Setting 2, `b`: b does not fit" not in text:
        failures.append("the failed point is not listed with its error")
    again = os.path.join(work, "RESULTS-again.md")
    subprocess.run(["/usr/bin/python3", "-B", script, paper_path, results, again], check=True)
    if open(again, "rb").read() != open(out, "rb").read():
        failures.append("the same rows gave a different file")
    write_results(results, drop=[("off", "s1")])
    result = subprocess.run(["/usr/bin/python3", "-B", script, paper_path, results, os.path.join(work, "x.md")],
                            capture_output=True, text=True)
    if result.returncode != 2 or "no point of setting s1 at effects off" not in result.stderr:
        failures.append(f"a missing setting: exit {result.returncode}, {result.stderr!r}")
    if os.path.exists(os.path.join(work, "x.md")):
        failures.append("a failed run left its output file")
finally:
    shutil.rmtree(work)

for f in failures:
    print("FAIL", f)
print("reproduction_table_test:", "failed" if failures else "passed")
sys.exit(1 if failures else 0)
