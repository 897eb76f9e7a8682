#!/usr/bin/env python3
"""compare_outputs.py names the output directories whose files differ and the
step-time change of each; identical directories are not listed."""
import json
import pathlib
import subprocess
import sys
import tempfile

script = pathlib.Path(__file__).with_name("compare_outputs.py")


def write(root: pathlib.Path, name: str, step: float, extra: str = "") -> None:
    (root / name).mkdir(parents=True)
    (root / name / "report.json").write_text(json.dumps({"step_time_s": step}))
    (root / name / "timings.json").write_text(json.dumps({"plan_time_s": step}))  # never compared
    if extra:
        (root / name / "ops.csv").write_text(extra)


with tempfile.TemporaryDirectory() as tmp:
    before, after = pathlib.Path(tmp, "before"), pathlib.Path(tmp, "after")
    write(before, "same", 1.0)
    write(after, "same", 1.0)
    write(before, "moved", 2.0)
    write(after, "moved", 2.5)
    write(before, "csv-only", 3.0, "a\n")
    write(after, "csv-only", 3.0, "b\n")
    (before / "topo").mkdir()
    (before / "topo" / "topology.json").write_text("{}")
    (after / "topo").mkdir()
    (after / "topo" / "topology.json").write_text("{ }")
    out = subprocess.run([sys.executable, str(script), str(before), str(after)], capture_output=True, text=True,
                         check=True).stdout
    expected = [
        "csv-only: step 3.000000 s -> 3.000000 s (+0.0000%)",
        "moved: step 2.000000 s -> 2.500000 s (+25.0000%)",
        "topo: topology.json differ",
        "3 output directories differ",
    ]
    if out.splitlines() != expected:
        print("FAIL compare_outputs.py printed:\n" + out)
        sys.exit(1)
print("compare_outputs_test: ok")
