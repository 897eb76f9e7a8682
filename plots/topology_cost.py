#!/usr/bin/python3
"""Draws cost per unit of bandwidth across the networks of an `eppsim topo` study.

Grouped bars, one group per network (the scenario's topology first, then its
compare_topologies, then the closed-form non-blocking fat-tree of the same
chips and injection bandwidth that the ratios refer to): dollars per GB/s of injection bandwidth and of bisection
bandwidth (per direction), on a log scale when they span more than a factor of
20. Each bar is labelled with its value; the network's total cost and its cost
per unit of bandwidth against a non-blocking fat-tree of the same chips
(cost_per_*_vs_fat_tree) go under its name.

    /usr/bin/python3 plots/topology_cost.py eppsim-out          # writes eppsim-out/topology_cost.png
    /usr/bin/python3 plots/topology_cost.py eppsim-out -o cost.png

Reads DIR/topology.json (written by `eppsim topo`). Needs Debian's python3-matplotlib.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import save_figure

SERIES = [
    ("cost_per_injection_Bps", "injection", "#4c72b0"),
    ("cost_per_bisection_Bps", "bisection", "#dd8452"),
]


def read_report(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"topology_cost.py: cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"topology_cost.py: {path} is not JSON: {e}")


def networks(report):
    """The top-level network, its comparisons, then the reference fat-tree."""
    found = [report] + list(report.get("comparisons", []))
    for n in found:
        for field, _, _ in SERIES:
            if field not in n:
                sys.exit(f"topology_cost.py: a network in topology.json lacks {field}")
    ft = report.get("fat_tree") or {}
    if ft.get("cost_usd") and ft.get("injection_bandwidth_Bps") and ft.get("bisection_bandwidth_Bps"):
        found.append({
            "name": f"non-blocking fat-tree\n(closed form, {ft.get('levels', 0):.0f} levels)",
            "cost_usd": ft["cost_usd"],
            "cost_per_injection_Bps": ft["cost_usd"] / ft["injection_bandwidth_Bps"],
            "cost_per_bisection_Bps": ft["cost_usd"] / ft["bisection_bandwidth_Bps"],
        })
    return found


def money(usd):
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if usd >= scale:
            return f"${usd / scale:.2f}{suffix}"
    return f"${usd:.0f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim topo`")
    parser.add_argument("-o", "--output", help="PNG file (default RUN_DIR/topology_cost.png)")
    args = parser.parse_args()

    report = read_report(os.path.join(args.run_dir, "topology.json"))
    nets = networks(report)
    # Dollars per GB/s: the per-B/s figures times 1e9.
    values = {field: [float(n[field]) * 1e9 for n in nets] for field, _, _ in SERIES}
    positive = [v for series in values.values() for v in series if v > 0]
    log_scale = bool(positive) and max(positive) / min(positive) > 20

    width = 0.38
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 * len(nets) + 2.0), 5.0))
    for i, (field, label, colour) in enumerate(SERIES):
        xs = [k + (i - 0.5) * width for k in range(len(nets))]
        bars = ax.bar(xs, values[field], width, label=f"$ per GB/s of {label} bandwidth", color=colour)
        for bar, value in zip(bars, values[field]):
            if value > 0:
                ax.annotate(f"{value:,.0f}" if value >= 10 else f"{value:.2f}",
                            (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom", fontsize=8,
                            xytext=(0, 2), textcoords="offset points")
    labels = []
    for n in nets:
        label = f"{n.get('name') or n.get('kind', '?')}\n{money(float(n.get('cost_usd', 0.0)))}"
        inj, bis = n.get("cost_per_injection_vs_fat_tree"), n.get("cost_per_bisection_vs_fat_tree")
        if inj is not None and bis is not None:
            label += f"\nvs fat-tree: inj {100 * float(inj):.1f}%, bis {100 * float(bis):.1f}%"
        labels.append(label)
    ax.set_xticks(range(len(nets)))
    ax.set_xticklabels(labels, fontsize=9)
    if log_scale:
        ax.set_yscale("log")
    ax.set_ylabel("network cost per unit of bandwidth ($ per GB/s, per direction)")
    chips = float(report.get("chips", 0))
    per_chip = float(report.get("injection_bandwidth_per_chip_Bps", 0)) / 1e9
    title = report.get("scenario") or os.path.basename(os.path.normpath(args.run_dir))
    ax.set_title(f"{title}: {chips:,.0f} chips, {per_chip:,.1f} GB/s injection per chip")
    ax.legend(frameon=False, loc="upper left")
    ax.margins(y=0.15)
    fig.tight_layout()

    save_figure(fig, args.output or os.path.join(args.run_dir, "topology_cost.png"))


if __name__ == "__main__":
    main()
