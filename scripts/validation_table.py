#!/usr/bin/python3
"""The validation table (README.md, docs/guide/runtime.md): the model's errors
against measured runs, two rows per `eppsim testbed` output folder: the
simulation calibrated on the machine (DIR/validation.json) and the same
Schedule priced by the scenario's own, uncalibrated model
(DIR/uncalibrated/validation.json, where the folder has one). Each row gives
the step time and the compute time (every COMPUTE op's busy time summed over
the ranks, forward, backward and recompute together, then forward and backward
alone), simulated against measured, and the range of the measured steps whose
median the measured step is. A calibrated row also gives how far the machine
moved between its benchmark and the run (DIR/bench/drift.json, which `eppsim
testbed` writes: the benchmark's largest rows timed again after the run, their
total against the first; "—" where the folder has none): an error smaller than
that cannot be told from the machine's own change.

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


def read_validation(path):
    """`path`, an `eppsim validate` validation.json; ValueError naming it when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            validation = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: {e}")
    if "measured_step_time_s" not in validation:
        raise ValueError(f"{path}: no measured_step_time_s (not a validation.json?)")
    return validation


def drift_cell(folder):
    """`folder`/bench/drift.json's drift as a signed percentage; "—" without one."""
    path = os.path.join(folder, "bench", "drift.json")
    if not os.path.exists(path):
        return "—"
    try:
        with open(path, encoding="utf-8") as f:
            return f"{json.load(f)['drift']:+.1%}"
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        fail(f"{path}: not a drift.json ({e})")


def row(folder, name=None, model="calibrated", drift="—"):
    """The cells of `folder`/validation.json's row, named `name` (default: the folder's)."""
    try:
        validation = read_validation(os.path.join(folder, "validation.json"))
    except ValueError as e:
        fail(str(e))
    kinds = {k["kind"]: k for k in validation.get("kinds", [])}
    compute = [k for name, k in kinds.items() if name.startswith("compute/")]
    sim_compute = sum(k.get("simulated_s", 0.0) for k in compute)
    meas_compute = sum(k.get("measured_s", 0.0) for k in compute)

    def kind_error(kind):
        k = kinds.get(kind)
        return "—" if k is None else error_cell(k.get("simulated_s", 0.0), k.get("measured_s", 0.0))

    sim_step = validation.get("simulated_step_time_s", 0.0)
    meas_step = validation["measured_step_time_s"]
    spread = "—"
    if "measured_step_time_min_s" in validation:
        spread = f"{validation['measured_step_time_min_s']:.3f}–{validation['measured_step_time_max_s']:.3f} s"
    return [name or os.path.basename(os.path.normpath(folder)), validation.get("measured_engine", "—"), model,
            f"{sim_step:.3f} s", f"{meas_step:.3f} s", spread, error_cell(sim_step, meas_step),
            f"{sim_compute:.3f} s", f"{meas_compute:.3f} s", error_cell(sim_compute, meas_compute),
            kind_error("compute/forward"), kind_error("compute/backward"), drift]


def rows(folder):
    """The folder's calibrated row, and its uncalibrated row where it has one."""
    out = [row(folder, drift=drift_cell(folder))]
    uncalibrated = os.path.join(folder, "uncalibrated")
    if os.path.isdir(uncalibrated):
        out.append(row(uncalibrated, os.path.basename(os.path.normpath(folder)), "uncalibrated"))
    return out


HEADER = ["scenario", "backend", "model", "step simulated", "step measured", "measured steps", "step error",
          "compute simulated", "compute measured", "compute error", "forward error", "backward error",
          "machine drift"]


def markdown(table_rows):
    """The Markdown table of `table_rows` (lists of cells, as row() gives) under HEADER."""
    lines = ["| " + " | ".join(HEADER) + " |", "|---|---|---|" + "---:|" * (len(HEADER) - 3)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in table_rows])


def main(argv):
    if len(argv) < 2:
        fail("usage: validation_table.py DIR [DIR ...]")
    print(markdown([r for folder in argv[1:] for r in rows(folder)]))


if __name__ == "__main__":
    main(sys.argv)
