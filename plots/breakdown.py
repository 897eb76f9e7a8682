#!/usr/bin/python3
"""Draws each rank's step as compute, recompute, exposed communication and
bubble (idle), stacked so that each bar adds up to the step time.

    /usr/bin/python3 plots/breakdown.py eppsim-out          # writes eppsim-out/breakdown.png
    /usr/bin/python3 plots/breakdown.py eppsim-out -o b.svg

Reads DIR/ranks.csv, DIR/report.json and DIR/scenario.textproto (written by
`eppsim run`). Needs Debian's python3-matplotlib.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import PlotInputError, describe_run, read_csv, read_json, run_main, title_line  # noqa: E402

PARTS = [
    ("compute_s", "compute", "#4c72b0"),
    ("recompute_s", "recompute", "#dd8452"),
    ("communication_s", "exposed communication", "#c44e52"),
    ("bubble_s", "bubble (idle)", "#bbbbbb"),
]


def breakdown_figure(run_dir):
    rows = read_csv(os.path.join(run_dir, "ranks.csv"))
    if not rows:
        raise PlotInputError(f"{run_dir}/ranks.csv holds no ranks")
    report = read_json(os.path.join(run_dir, "report.json"))
    ranks = [int(r["rank"]) for r in rows]
    fig, ax = plt.subplots(figsize=(max(7.0, 0.28 * len(ranks) + 3.0), 4.8))
    bottoms = [0.0] * len(rows)
    for field, label, colour in PARTS:
        values = [float(r[field]) for r in rows]
        ax.bar(range(len(rows)), values, 0.8, bottom=bottoms, label=label, color=colour)
        bottoms = [b + v for b, v in zip(bottoms, values)]
    step = float(report.get("step_time_s", max(bottoms)))
    ax.axhline(step, color="black", linestyle="--", linewidth=0.8, label=f"step time {step:.3f} s")
    every = max(1, len(ranks) // 32)
    ax.set_xticks(range(0, len(ranks), every))
    ax.set_xticklabels([f"{ranks[i]}\nn{rows[i]['node']}" for i in range(0, len(ranks), every)], fontsize=7)
    ax.set_xlim(-0.6, len(ranks) - 0.4)
    ax.set_xlabel("rank (nN: node)")
    ax.set_ylabel("time in the step (s)")
    b = report.get("breakdown_s", {})
    shares = ", ".join(f"{label.split(' ')[0]} {100 * float(b.get(field[:-2], 0.0)) / step:.1f}%"
                       for field, label, _ in PARTS) if step > 0 else ""
    ax.set_title(title_line(describe_run(run_dir), f"per-rank time breakdown (mean: {shares})"), fontsize=10)
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=len(PARTS) + 1, fontsize=8)
    ax.set_ylim(0, 1.08 * max(max(bottoms), step))
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim run`")
    parser.add_argument("-o", "--output", help="PNG or SVG file (default RUN_DIR/breakdown.png)")
    args = parser.parse_args()
    run_main(lambda: (breakdown_figure(args.run_dir), args.output or os.path.join(args.run_dir, "breakdown.png")))


if __name__ == "__main__":
    main()
