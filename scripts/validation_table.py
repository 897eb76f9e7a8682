#!/usr/bin/python3
"""docs/guide/runtime.md's table of the model's errors against measurements: one row per
`eppsim testbed` output folder (its validation.json), with the step time and
the compute time (every COMPUTE op's busy time summed over the ranks, forward,
backward and recompute together, then forward and backward alone), simulated
against measured.

    validation_table.py DIR [DIR ...]     (prints Markdown to stdout)

Each DIR is named by its scenario (e.g. OUT/pp2); a folder without a readable
validation.json is an error (exit 2) that names it.
"""
import json
import os
import sys


def fail(message):
    print(f"validation_table: {message}", file=sys.stderr)
    sys.exit(2)


def error_cell(simulated, measured):
    return "—" if measured <= 0 else f"{(simulated - measured) / measured:+.1%}"


def row(folder):
    path = os.path.join(folder, "validation.json")
    try:
        with open(path, encoding="utf-8") as f:
            validation = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")
    if "measured_step_time_s" not in validation:
        fail(f"{path}: no measured_step_time_s (not a validation.json?)")
    kinds = {k["kind"]: k for k in validation.get("kinds", [])}
    compute = [k for name, k in kinds.items() if name.startswith("compute/")]
    sim_compute = sum(k.get("simulated_s", 0.0) for k in compute)
    meas_compute = sum(k.get("measured_s", 0.0) for k in compute)

    def kind_error(name):
        k = kinds.get(name)
        return "—" if k is None else error_cell(k.get("simulated_s", 0.0), k.get("measured_s", 0.0))

    sim_step = validation.get("simulated_step_time_s", 0.0)
    meas_step = validation["measured_step_time_s"]
    return [os.path.basename(os.path.normpath(folder)), f"{sim_step:.3f} s", f"{meas_step:.3f} s",
            error_cell(sim_step, meas_step), f"{sim_compute:.3f} s", f"{meas_compute:.3f} s",
            error_cell(sim_compute, meas_compute), kind_error("compute/forward"), kind_error("compute/backward")]


HEADER = ["scenario", "step simulated", "step measured", "step error", "compute simulated", "compute measured",
          "compute error", "forward error", "backward error"]


def markdown(rows):
    """The Markdown table of `rows` (lists of cells, as row() gives) under HEADER."""
    lines = ["| " + " | ".join(HEADER) + " |", "|---|" + "---:|" * (len(HEADER) - 1)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows])


def main(argv):
    if len(argv) < 2:
        fail("usage: validation_table.py DIR [DIR ...]")
    print(markdown([row(folder) for folder in argv[1:]]))


if __name__ == "__main__":
    main(sys.argv)
