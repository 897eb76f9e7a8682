#!/usr/bin/python3
"""Draws each rank's allocated memory over the step against the GPU's limit.

One step line per rank (coloured by pipeline stage when the ranks are many,
so that a stage's ranks read as one band), the memory limit as a dashed red
line, and the highest peak marked.

    /usr/bin/python3 plots/memory.py eppsim-out             # writes eppsim-out/memory.png
    /usr/bin/python3 plots/memory.py eppsim-out -o m.svg --ranks 0-7

Reads DIR/memory.csv, DIR/ops.csv (for each rank's stage), DIR/report.json and
DIR/scenario.textproto (written by `eppsim run`). Needs Debian's python3-matplotlib.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import (PlotInputError, describe_run, iter_csv, parse_ranks, read_csv, read_json, run_main,  # noqa: E402
                       title_line)

GIB = 2.0 ** 30


def memory_figure(run_dir, ranks_text=None):
    samples = read_csv(os.path.join(run_dir, "memory.csv"))
    if not samples:
        raise PlotInputError(f"{run_dir}/memory.csv holds no samples")
    report = read_json(os.path.join(run_dir, "report.json"))
    step = float(report.get("step_time_s", 0.0))
    limit = float(report.get("memory_limit_bytes", 0.0))
    series = {}
    for s in samples:
        series.setdefault(int(s["rank"]), []).append((float(s["time_s"]), float(s["bytes"])))
    ranks = parse_ranks(ranks_text, series)
    if not ranks:
        raise PlotInputError(f"none of the ranks {ranks_text} is in {run_dir}/memory.csv")
    stage_of = {}
    ops_path = os.path.join(run_dir, "ops.csv")
    if os.path.exists(ops_path):
        for r in iter_csv(ops_path):
            if r["kind"] == "compute":
                stage_of.setdefault(int(r["rank"]), int(r["stage"]))

    by_stage = len(ranks) > 8
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(11, 5))
    labelled = set()
    peak_rank, peak = ranks[0], -1.0
    for rank in ranks:
        points = series[rank]
        times = [t for t, _ in points] + [max(step, points[-1][0])]
        values = [b / GIB for _, b in points] + [points[-1][1] / GIB]
        stage = stage_of.get(rank, 0)
        key = stage if by_stage else rank
        label = (f"stage {stage}" if by_stage else f"rank {rank}") if key not in labelled else None
        labelled.add(key)
        ax.step(times, values, where="post", color=colours(key % 10), linewidth=0.9, alpha=0.8, label=label)
        top = max(b for _, b in points)
        if top > peak:
            peak_rank, peak = rank, top
    if limit > 0:
        ax.axhline(limit / GIB, color="#c44e52", linestyle="--", linewidth=1.2, label=f"limit {limit / GIB:.1f} GiB")
    ax.annotate(f"peak {peak / GIB:.1f} GiB (rank {peak_rank})", (0.01, peak / GIB), xycoords=("axes fraction", "data"),
                va="bottom", fontsize=8)
    ax.set_xlabel("time since the step began (s)")
    ax.set_ylabel("allocated memory (GiB)")
    ax.set_ylim(0, 1.1 * max(limit, peak) / GIB)
    if step > 0:
        ax.set_xlim(0, step)
    subject = f"memory per rank over the step ({len(ranks)} ranks{', coloured by stage' if by_stage else ''})"
    ax.set_title(title_line(describe_run(run_dir), subject), fontsize=10)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim run`")
    parser.add_argument("-o", "--output", help="PNG or SVG file (default RUN_DIR/memory.png)")
    parser.add_argument("--ranks", help="ranks to draw, e.g. 0-7,12 (default all)")
    args = parser.parse_args()
    run_main(lambda: (memory_figure(args.run_dir, args.ranks), args.output or os.path.join(args.run_dir, "memory.png")))


if __name__ == "__main__":
    main()
