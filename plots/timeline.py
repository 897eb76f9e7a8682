#!/usr/bin/python3
"""Draws the pipeline timeline of an eppsim run directory.

One row per rank: forward, backward, recompute and optimizer compute in
distinct colours, communication (send, receive, collective transfers) as a
thinner bar under the compute, idle time left blank over a grey background.

    /usr/bin/python3 plots/timeline.py eppsim-out            # writes eppsim-out/timeline.png
    /usr/bin/python3 plots/timeline.py eppsim-out -o t.png --ranks 0-7

Reads DIR/ops.csv (written by `eppsim run`). Needs Debian's python3-matplotlib.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from figure_io import parse_ranks, save_figure

COMPUTE_COLOURS = {
    "forward": "#4c72b0",
    "backward": "#55a868",
    "recompute": "#dd8452",
    "optimizer": "#8172b3",
}
COMMUNICATION_COLOUR = "#c44e52"
IDLE_COLOUR = "#eeeeee"
COMMUNICATION_KINDS = {"send", "recv", "collective"}


def read_ops(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"timeline.py: cannot read {path}: {e.strerror}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim run`")
    parser.add_argument("-o", "--output", help="PNG file (default RUN_DIR/timeline.png)")
    parser.add_argument("--ranks", help="ranks to draw, e.g. 0-7,12 (default all)")
    args = parser.parse_args()

    rows = read_ops(os.path.join(args.run_dir, "ops.csv"))
    if not rows:
        sys.exit(f"timeline.py: {args.run_dir}/ops.csv holds no ops")
    ranks = parse_ranks(args.ranks, {int(r["rank"]) for r in rows})
    row_of = {rank: i for i, rank in enumerate(ranks)}
    step = max(float(r["end_s"]) for r in rows)

    compute = {phase: {} for phase in COMPUTE_COLOURS}
    communication = {}
    for r in rows:
        rank = int(r["rank"])
        if rank not in row_of:
            continue
        start, end = float(r["start_s"]), float(r["end_s"])
        if end <= start:
            continue
        if r["kind"] == "compute" and r["phase"] in compute:
            compute[r["phase"]].setdefault(rank, []).append((start, end - start))
        elif r["kind"] in COMMUNICATION_KINDS:
            communication.setdefault(rank, []).append((start, end - start))

    height = max(2.5, 0.35 * len(ranks) + 1.2)
    fig, ax = plt.subplots(figsize=(14, height))
    for rank, row in row_of.items():
        ax.broken_barh([(0, step)], (row - 0.4, 0.8), facecolors=IDLE_COLOUR)
        for phase, colour in COMPUTE_COLOURS.items():
            spans = compute[phase].get(rank)
            if spans:
                ax.broken_barh(spans, (row - 0.4, 0.55), facecolors=colour, edgecolor="white", linewidth=0.4)
        spans = communication.get(rank)
        if spans:
            ax.broken_barh(spans, (row + 0.18, 0.22), facecolors=COMMUNICATION_COLOUR, linewidth=0)

    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels([f"rank {r}" for r in ranks])
    ax.invert_yaxis()
    ax.set_xlim(0, step)
    ax.set_xlabel("time (s)")
    title = os.path.basename(os.path.normpath(args.run_dir))
    ax.set_title(f"{title}: step {step:.3f} s")
    legend = [Patch(color=c, label=p) for p, c in COMPUTE_COLOURS.items()]
    legend += [Patch(color=COMMUNICATION_COLOUR, label="communication"), Patch(color=IDLE_COLOUR, label="idle")]
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.12 if len(ranks) > 4 else -0.3),
              ncol=len(legend), frameon=False)
    fig.tight_layout()

    save_figure(fig, args.output or os.path.join(args.run_dir, "timeline.png"))


if __name__ == "__main__":
    main()
