#!/usr/bin/python3
"""Draws a simulated timeline against a measured one (`eppsim validate`).

Two figures into DIR/plots/:
  timeline.png  one pair of rows per rank, the simulated timeline above the
                measured one (each from its trace's first op), compute by
                phase and communication in the colours of timeline.py
  kinds.png     summed busy time per kind of op, simulated and measured bars
                side by side, each pair labelled with its relative error; the
                title gives both step times and the step-time error

    /usr/bin/python3 plots/validation.py eppsim-out       # writes eppsim-out/plots/*.png
    /usr/bin/python3 plots/validation.py eppsim-out --ranks 0-3

Reads DIR/validation.json and DIR/timeline.csv (written by `eppsim validate`).
Needs Debian's python3-matplotlib.
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from figure_io import describe_run, parse_ranks, save_figure, title_line

COMPUTE_COLOURS = {
    "compute/forward": "#4c72b0",
    "compute/backward": "#55a868",
    "compute/recompute": "#dd8452",
    "compute/optimizer": "#8172b3",
    "compute": "#64b5cd",
}
COMMUNICATION_COLOUR = "#c44e52"
IDLE_COLOUR = "#eeeeee"
SIDES = (("simulated", "#4c72b0"), ("measured", "#dd8452"))


def read_inputs(directory):
    validation_path = os.path.join(directory, "validation.json")
    timeline_path = os.path.join(directory, "timeline.csv")
    try:
        with open(validation_path) as f:
            validation = json.load(f)
        with open(timeline_path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"validation.py: cannot read {e.filename}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"validation.py: {validation_path} is not JSON: {e}")
    if "step_time_error" not in validation or not isinstance(validation.get("kinds"), list):
        sys.exit(f"validation.py: {validation_path} lacks step_time_error or kinds")
    return validation, rows


def describe_validation(directory, validation):
    """Scenario, strategy, model and cluster of the simulated side, for titles: from
    its run directory (the simulated trace's folder, or DIR/simulated as `eppsim
    testbed` lays it out); None when neither holds a report."""
    simulated = validation.get("simulated_file", "")
    candidates = [os.path.join(directory, "simulated")]
    if simulated:
        folder = simulated if os.path.isdir(simulated) else os.path.dirname(simulated)
        candidates.insert(0, folder or ".")
    for run_dir in candidates:
        if os.path.isfile(os.path.join(run_dir, "report.json")):
            return describe_run(run_dir)
    return None


def titled(what, validation, subject):
    if what is not None:
        return title_line(what, subject)
    return f"{validation.get('simulated_file', 'simulated')} vs {validation.get('measured_file', 'measured')}\n{subject}"


def draw_timeline(validation, rows, ranks, output, what=None):
    row_of = {}
    for i, rank in enumerate(ranks):
        for j, (side, _) in enumerate(SIDES):
            row_of[(rank, side)] = 2 * i + j
    step = max(float(validation["simulated_step_time_s"]), float(validation["measured_step_time_s"]))
    spans = {}  # (row, colour) -> [(start, width)]
    for r in rows:
        rank = int(r["rank"])
        if rank not in ranks or r["kind"] == "memory":
            continue
        colour = COMPUTE_COLOURS.get(r["kind"], COMMUNICATION_COLOUR)
        for side, _ in SIDES:
            start, end = float(r[f"{side}_start_s"]), float(r[f"{side}_end_s"])
            if end > start:
                spans.setdefault((row_of[(rank, side)], colour), []).append((start, end - start))
            step = max(step, end)

    height = max(2.5, 0.3 * len(row_of) + 1.4)
    fig, ax = plt.subplots(figsize=(14, height))
    for (rank, side), row in row_of.items():
        ax.broken_barh([(0, step)], (row - 0.4, 0.8), facecolors=IDLE_COLOUR)
    for (row, colour), bars in sorted(spans.items()):
        communication = colour == COMMUNICATION_COLOUR
        y, h = (row + 0.15, 0.25) if communication else (row - 0.4, 0.55)
        ax.broken_barh(bars, (y, h), facecolors=colour, edgecolor="white", linewidth=0 if communication else 0.4)
    ax.set_yticks(range(len(row_of)))
    ax.set_yticklabels([f"rank {rank} {side}" for (rank, side) in row_of])
    ax.invert_yaxis()
    ax.set_xlim(0, step)
    ax.set_xlabel("time from the first op (s)")
    ax.set_title(titled(what, validation,
        f"simulated {validation['simulated_step_time_s']:.4f} s vs measured "
        f"{validation['measured_step_time_s']:.4f} s: step-time error {100 * validation['step_time_error']:+.1f}%"
    ))
    present = {colour for (_, colour) in spans}
    legend = [Patch(color=c, label=k) for k, c in COMPUTE_COLOURS.items() if c in present]
    legend += [Patch(color=COMMUNICATION_COLOUR, label="communication"), Patch(color=IDLE_COLOUR, label="idle")]
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.12 if len(row_of) > 8 else -0.45), ncol=len(legend), frameon=False)
    fig.tight_layout()
    save_figure(fig, output)
    plt.close(fig)


def draw_kinds(validation, output, what=None):
    kinds = validation["kinds"]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(kinds) + 2), 4.5))
    width = 0.38
    positions = range(len(kinds))
    for j, (side, colour) in enumerate(SIDES):
        values = [float(k[f"{side}_s"]) for k in kinds]
        ax.bar([p + (j - 0.5) * width for p in positions], values, width, color=colour, label=side)
    for p, k in zip(positions, kinds):
        top = max(float(k["simulated_s"]), float(k["measured_s"]))
        label = f"{100 * k['error']:+.1f}%" if "error" in k else "n/a"
        ax.annotate(label, (p, top), ha="center", va="bottom", xytext=(0, 3), textcoords="offset points", fontsize=8)
    ax.set_xticks(list(positions))
    ax.set_xticklabels([k["kind"] for k in kinds], rotation=30, ha="right")
    ax.margins(y=0.12)
    ax.set_ylabel("busy time, all ranks (s)")
    ax.set_title(titled(what, validation, f"per-kind busy time; step-time error {100 * validation['step_time_error']:+.1f}%"))
    ax.legend(frameon=False)
    fig.tight_layout()
    save_figure(fig, output)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("validation_dir", help="directory written by `eppsim validate`")
    parser.add_argument("--ranks", help="ranks to draw, e.g. 0-7,12 (default all)")
    args = parser.parse_args()

    validation, rows = read_inputs(args.validation_dir)
    if not rows:
        sys.exit(f"validation.py: {args.validation_dir}/timeline.csv holds no ops")
    ranks = parse_ranks(args.ranks, {int(r["rank"]) for r in rows})
    if not ranks:
        sys.exit(f"validation.py: none of the ranks {args.ranks} is in {args.validation_dir}/timeline.csv")
    plots = os.path.join(args.validation_dir, "plots")
    os.makedirs(plots, exist_ok=True)
    what = describe_validation(args.validation_dir, validation)
    draw_timeline(validation, rows, ranks, os.path.join(plots, "timeline.png"), what)
    draw_kinds(validation, os.path.join(plots, "kinds.png"), what)


if __name__ == "__main__":
    main()
