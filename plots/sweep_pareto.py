#!/usr/bin/python3
"""Draws a sweep's throughput against its cost per million tokens, and the
Pareto front: the points no other point beats on both (cheaper and at least as
fast, or faster and at most as dear).

One marker per point that ran and has a cost (results.csv's tokens_per_s and
usd_per_million_tokens; a point whose GPUs have no price has none), coloured by
the sweep's first axis; the front is joined by a line and its points are
labelled with their index (the row of results.csv) and their axis values.

    /usr/bin/python3 plots/sweep_pareto.py sweep-out            # writes sweep-out/pareto.png
    /usr/bin/python3 plots/sweep_pareto.py sweep-out -o p.svg

Reads DIR/results.csv and DIR/results.json (written by `eppsim sweep`). Needs
Debian's python3-matplotlib.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import PlotInputError, read_csv, read_json, run_main  # noqa: E402

# results.csv's columns that are not axes (sim/sweep/sweep_runner.h).
_RESULT_COLUMNS = ["status", "network", "step_time_s", "tokens_per_s", "mfu", "peak_memory_bytes", "compute_s",
                   "recompute_s", "communication_s", "bubble_s", "capital_usd", "usd_per_million_tokens", "cost_rank",
                   "micro_batches", "pipeline_stages", "data_parallel", "plan", "error"]


def sweep_axes(results, rows):
    """The sweep's axis names: results.json's axes, else the columns of
    results.csv that are not results (a training sweep's)."""
    names = [a.get("name", "") for a in results.get("axes", [])]
    return names if names else [c for c in rows[0].keys() if c not in _RESULT_COLUMNS and c != "index"]


def read_sweep_dir(sweep_dir):
    """A sweep's output folder: (results.csv's rows, results.json, the sweep's
    name, its axes). PlotInputError when results.csv holds no points."""
    rows = read_csv(os.path.join(sweep_dir, "results.csv"))
    if not rows:
        raise PlotInputError(f"{sweep_dir}/results.csv holds no points")
    results = read_json(os.path.join(sweep_dir, "results.json"))
    name = results.get("sweep", "") or os.path.basename(os.path.abspath(sweep_dir))
    return rows, results, name, sweep_axes(results, rows)


def pareto_front(points):
    """The (cost, throughput, row) points that no other beats: cheaper first."""
    front, best = [], -1.0
    for cost, rate, row in sorted(points, key=lambda p: (p[0], -p[1])):
        if rate > best:
            front.append((cost, rate, row))
            best = rate
    return front


def pareto_figure(sweep_dir):
    rows, _, name, axes = read_sweep_dir(sweep_dir)
    points = [(float(r["usd_per_million_tokens"]), float(r["tokens_per_s"]), r)
              for r in rows if r["status"] == "ok" and r.get("usd_per_million_tokens")]
    if not points:
        raise PlotInputError(f"{sweep_dir}/results.csv has no point with a cost per token (set cluster.capital.gpu_usd "
                             "for GPUs without a price)")
    front = pareto_front(points)

    fig, ax = plt.subplots(figsize=(10, 6))
    groups = {}
    for cost, rate, row in points:
        groups.setdefault(row[axes[0]] if axes else "points", []).append((cost, rate))
    for label, members in groups.items():
        ax.scatter([c for c, _ in members], [t for _, t in members], s=36, alpha=0.8,
                   label=f"{axes[0]} = {label}" if axes else label)
    ax.plot([c for c, _, _ in front], [t for _, t, _ in front], color="#333333", linewidth=1, zorder=0,
            label="Pareto front")
    for cost, rate, row in front:
        text = f"#{row['index']} " + ", ".join(row[a] for a in axes)
        ax.annotate(text, (cost, rate), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("cost per million tokens (USD, capital only)")
    ax.set_ylabel("throughput (tokens/s)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f"{name}: throughput against cost, {len(points)} of {len(rows)} points priced, "
                 f"{len(front)} on the Pareto front", fontsize=10)
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep_dir", help="the output folder of `eppsim sweep`")
    parser.add_argument("-o", "--output", help="image file (.png or .svg; default SWEEP_DIR/pareto.png)")
    args = parser.parse_args()
    run_main(lambda: (pareto_figure(args.sweep_dir), args.output or os.path.join(args.sweep_dir, "pareto.png")))


if __name__ == "__main__":
    main()
