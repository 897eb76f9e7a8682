#!/usr/bin/python3
"""Draws a metric of a sweep against its axes: a line chart over one axis, one
line per value of another (--by), or, with --y, a heatmap over two axes, one
panel per value of --by.

    /usr/bin/python3 plots/sweep.py sweep-out --x global_batch --by plan.strategy
    /usr/bin/python3 plots/sweep.py sweep-out --x global_batch --y plan.strategy --metric mfu -o mfu.svg
    /usr/bin/python3 plots/sweep.py sweep-out --x global_batch --by plan.strategy --where ulysses_sp=8

--metric is any numeric column of results.csv (default tokens_per_s: step_time_s,
mfu, peak_memory_bytes, usd_per_million_tokens, ...; a topo sweep's cost_usd,
alltoall_bandwidth_Bps, alltoall_cost_vs_fat_tree, ..., where `network` is an
axis too). Axes whose values are all
numbers are drawn to scale (logarithmic when they span more than 10x), others
in their sweep order. Every other axis must be fixed by --where AXIS=VALUE (or
take one value): a cell with two points is an error naming the axes to fix,
unless --best draws the best of them (the least time, memory or cost; the
most throughput or MFU) and the title names the axes it chose over.
Failed points are left out. Writes SWEEP_DIR/sweep.png unless -o names a
.png or .svg file. Reads DIR/results.csv and DIR/results.json (written by
`eppsim sweep`). Needs Debian's python3-matplotlib.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import PlotInputError, run_main  # noqa: E402
from sweep_pareto import read_sweep_dir  # noqa: E402


def number_or_none(text):
    try:
        return float(text)
    except ValueError:
        return None


def _ordered(values):
    """Distinct values in sweep order, and whether all are numbers."""
    seen = list(dict.fromkeys(values))
    numeric = all(number_or_none(v) is not None for v in seen)
    return (sorted(seen, key=float) if numeric else seen), numeric


# Metrics where less is better; for the others (tokens_per_s, mfu) more is.
LOWER_IS_BETTER = {"step_time_s", "peak_memory_bytes", "compute_s", "recompute_s", "communication_s", "bubble_s",
                   "capital_usd", "usd_per_million_tokens", "cost_rank", "diameter_hops", "inter_node_diameter_hops",
                   "cost_usd", "cost_per_allreduce_Bps", "cost_per_alltoall_Bps", "allreduce_cost_vs_fat_tree",
                   "alltoall_cost_vs_fat_tree", "fat_tree_usd"}


def better(metric, a, b):
    """Whether value a of metric beats value b."""
    return a < b if metric in LOWER_IS_BETTER else a > b


def sweep_figure(sweep_dir, metric, x, y=None, by=None, where=(), best=False):
    rows, _, name, axes = read_sweep_dir(sweep_dir)
    # A topo sweep's rows are per point and network: its network is one more axis here.
    if "kind" in rows[0] and "network" not in axes:
        axes = axes + ["network"]
    for axis in [x, y, by] + [w.split("=", 1)[0] for w in where]:
        if axis is not None and axis not in axes:
            raise PlotInputError(f"no axis is named '{axis}' (axes: {', '.join(axes)})")
    if metric not in rows[0] or metric in axes:
        raise PlotInputError(f"--metric {metric}: not a column of results.csv")
    fixed = dict(w.split("=", 1) for w in where)
    rows = [r for r in rows if r["status"] == "ok" and all(r[a] == v for a, v in fixed.items())]
    if not rows:
        raise PlotInputError(f"{sweep_dir}: no point that ran matches {', '.join(where) or 'the sweep'}")
    if any(number_or_none(r[metric]) is None for r in rows):
        raise PlotInputError(f"--metric {metric}: not a number in every point that ran")
    used = {a for a in (x, y, by) if a}
    free = [a for a in axes if a not in used and a not in fixed and len({p[a] for p in rows}) > 1]
    cells = {}
    for r in rows:
        key = (r[x], r[y] if y else None, r[by] if by else None)
        if key in cells and not best:
            raise PlotInputError(f"points {cells[key]['index']} and {r['index']} share a cell: fix "
                                 f"{', '.join(free)} with --where AXIS=VALUE, or draw the --best of them")
        if key not in cells or better(metric, float(r[metric]), float(cells[key][metric])):
            cells[key] = r
    groups, _ = _ordered([r[by] for r in rows]) if by else ([None], False)
    xs, x_numeric = _ordered([r[x] for r in rows])
    subject = f"{name}: {metric}" + (f" ({', '.join(where)})" if where else "") + \
        (f", the best over {', '.join(free)}" if best and free else "")

    if y is None:
        fig, ax = plt.subplots(figsize=(10, 5.6))
        for group in groups:
            points = [(v, float(cells[(v, None, group)][metric])) for v in xs if (v, None, group) in cells]
            positions = [float(v) if x_numeric else xs.index(v) for v, _ in points]
            ax.plot(positions, [m for _, m in points], marker="o", label=f"{by} = {group}" if by else metric)
        if x_numeric and max(map(float, xs)) > 10 * max(min(map(float, xs)), 1e-300):
            ax.set_xscale("log")
        if x_numeric:
            ax.set_xticks([float(v) for v in xs], xs)
        else:
            ax.set_xticks(range(len(xs)), xs)
        ax.set_xlabel(x)
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(subject, fontsize=10)
    else:
        ys, _ = _ordered([r[y] for r in rows])
        fig, panels = plt.subplots(1, len(groups), figsize=(max(6.0, 4.5 * len(groups)), 5.0), squeeze=False)
        scale = [float(c[metric]) for c in cells.values()]  # one colour scale: panels compare
        for panel, group in zip(panels[0], groups):
            grid = [[float(cells[(vx, vy, group)][metric]) if (vx, vy, group) in cells else float("nan") for vx in xs]
                    for vy in ys]
            image = panel.imshow(grid, aspect="auto", cmap="viridis", origin="lower", vmin=min(scale), vmax=max(scale))
            for i, row in enumerate(grid):
                for j, value in enumerate(row):
                    if value == value:
                        panel.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=7, color="white")
            panel.set_xticks(range(len(xs)), xs, fontsize=8)
            panel.set_yticks(range(len(ys)), ys, fontsize=8)
            panel.set_xlabel(x)
            panel.set_ylabel(y)
            panel.set_title(f"{by} = {group}" if by else "", fontsize=9)
            fig.colorbar(image, ax=panel, label=metric)
        fig.suptitle(subject, fontsize=10)
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep_dir", help="the output folder of `eppsim sweep`")
    parser.add_argument("--metric", default="tokens_per_s", help="a numeric column of results.csv")
    parser.add_argument("--x", required=True, help="the axis along x")
    parser.add_argument("--y", help="a second axis: a heatmap")
    parser.add_argument("--by", help="one line (or heatmap panel) per value of this axis")
    parser.add_argument("--where", action="append", default=[], help="AXIS=VALUE: only the points with that value")
    parser.add_argument("--best", action="store_true",
                        help="where points share a cell (axes left free), draw the best of them")
    parser.add_argument("-o", "--output", help="image file (.png or .svg; default SWEEP_DIR/sweep.png)")
    args = parser.parse_args()
    for w in args.where:
        if "=" not in w:
            parser.error(f"--where {w}: expected AXIS=VALUE")
    run_main(lambda: (sweep_figure(args.sweep_dir, args.metric, args.x, args.y, args.by, args.where, args.best),
                      args.output or os.path.join(args.sweep_dir, "sweep.png")))


if __name__ == "__main__":
    main()
