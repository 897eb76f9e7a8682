#!/usr/bin/python3
"""Draws cost per unit of bandwidth, and bandwidth, across the networks of an
`eppsim topo` study, and what a failure removed.

Left panel: grouped bars, one group per network (the scenario's topology first, then its
compare_topologies, then the closed-form non-blocking fat-tree of the same
chips and injection bandwidth that the ratios refer to): dollars per GB/s of injection bandwidth and of bisection
bandwidth (per direction), on a log scale when they span more than a factor of
20. Each bar is labelled with its value; the network's total cost and its cost
per unit of bandwidth against a non-blocking fat-tree of the same chips
(cost_per_*_vs_fat_tree) go under its name.

Right panel: each network's bandwidth (total injection and bisection, and the
all-reduce and all-to-all bandwidth per chip, log scale). When the scenario
fails nodes or links (topology.json's `failures`), the healthy network is drawn
beside the failed one and a box lists what the failure removed: the failed
nodes and links, the chips lost and the bandwidth lost.

    /usr/bin/python3 plots/topology_cost.py eppsim-out          # writes eppsim-out/topology_cost.png
    /usr/bin/python3 plots/topology_cost.py eppsim-out -o cost.svg

Reads DIR/topology.json (written by `eppsim topo`). Needs Debian's python3-matplotlib.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import PlotInputError, read_json, run_main  # noqa: E402

SERIES = [
    ("cost_per_injection_Bps", "injection", "#4c72b0"),
    ("cost_per_bisection_Bps", "bisection", "#dd8452"),
]
BANDWIDTHS = [
    ("injection_bandwidth_Bps", "injection (total)", "#4c72b0"),
    ("bisection_bandwidth_Bps", "bisection (total)", "#dd8452"),
    ("allreduce_bandwidth_Bps", "all-reduce (per chip)", "#55a868"),
    ("alltoall_bandwidth_Bps", "all-to-all (per chip)", "#8172b3"),
]


def networks(report):
    """The top-level network, its comparisons, then the reference fat-tree."""
    found = [report] + list(report.get("comparisons", []))
    for n in found:
        for field, _, _ in SERIES:
            if field not in n:
                raise PlotInputError(f"a network in topology.json lacks {field}")
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


def rate(bps):
    for scale, suffix in ((1e15, "PB/s"), (1e12, "TB/s"), (1e9, "GB/s")):
        if bps >= scale:
            return f"{bps / scale:.3g} {suffix}"
    return f"{bps / 1e6:.3g} MB/s"


def failure_text(failures):
    """What the failures removed, as a few lines."""
    lines = [f"failed: {len(failures.get('nodes', []))} node(s) {failures.get('nodes', [])}, "
             f"{failures.get('failed_links', 0)} link(s)"]
    if failures.get("links"):
        lines.append(f"cut circuits: {', '.join(failures['links'][:4])}{' ...' if len(failures['links']) > 4 else ''}")
    lines.append(f"chips lost: {failures.get('chips_lost', 0)}")
    lines.append("lost: " + ",\n      ".join(f"{rate(float(failures.get(k, 0)))} {name}" for k, name in (
        ("injection_lost_Bps", "injection"), ("bisection_lost_Bps", "bisection"),
        ("allreduce_lost_Bps", "all-reduce/chip"), ("alltoall_lost_Bps", "all-to-all/chip"))))
    return "\n".join(lines)


def topology_figure(run_dir):
    report = read_json(os.path.join(run_dir, "topology.json"))
    nets = networks(report)
    failures = report.get("failures")
    # Dollars per GB/s: the per-B/s figures times 1e9.
    values = {field: [float(n[field]) * 1e9 for n in nets] for field, _, _ in SERIES}
    positive = [v for series in values.values() for v in series if v > 0]
    log_scale = bool(positive) and max(positive) / min(positive) > 20

    measured = [n for n in nets if "injection_bandwidth_Bps" in n and "alltoall_bandwidth_Bps" in n]
    if failures and failures.get("healthy"):
        measured = [dict(measured[0], name=f"{measured[0].get('name', '?')}\nwith failures"),
                    dict(failures["healthy"], name=f"{failures['healthy'].get('name', '?')}\nhealthy")] + measured[1:]
    width = max(6.0, 2.2 * len(nets) + 2.0)
    fig, (ax, bw) = plt.subplots(1, 2, figsize=(width + max(6.0, 2.4 * len(measured) + 2.0), 5.6),
                                 gridspec_kw={"width_ratios": [width, max(6.0, 2.4 * len(measured) + 2.0)]})
    bar = 0.38
    for i, (field, label, colour) in enumerate(SERIES):
        xs = [k + (i - 0.5) * bar for k in range(len(nets))]
        bars = ax.bar(xs, values[field], bar, label=f"$ per GB/s of {label} bandwidth", color=colour)
        for b, value in zip(bars, values[field]):
            if value > 0:
                ax.annotate(f"{value:,.0f}" if value >= 10 else f"{value:.2f}",
                            (b.get_x() + b.get_width() / 2, value), ha="center", va="bottom", fontsize=8,
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
    ax.set_title("cost per unit of bandwidth", fontsize=10)
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, fontsize=8)
    ax.margins(y=0.15)

    bar = 0.8 / len(BANDWIDTHS)
    for i, (field, label, colour) in enumerate(BANDWIDTHS):
        xs = [k + (i - 1.5) * bar for k in range(len(measured))]
        bw.bar(xs, [float(n.get(field, 0.0)) / 1e9 for n in measured], bar, label=label, color=colour)
    bw.set_yscale("log")
    bw.set_xticks(range(len(measured)))
    bw.set_xticklabels([n.get("name") or n.get("kind", "?") for n in measured], fontsize=9)
    bw.set_ylabel("bandwidth (GB/s per direction, log scale)")
    bw.set_title("bandwidth" + (" and what the failures removed" if failures else ""), fontsize=10)
    bw.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)
    if failures:
        bw.text(0.02, 0.98, failure_text(failures), transform=bw.transAxes, va="top", fontsize=8,
                bbox={"facecolor": "#fff4f4", "edgecolor": "#c44e52"})
    peak = max(float(n.get(field, 0.0)) / 1e9 for n in measured for field, _, _ in BANDWIDTHS)
    if failures and peak > 0:
        bw.set_ylim(top=peak * 1e3)  # room for the box above the bars

    chips = float(report.get("chips", 0))
    per_chip = float(report.get("injection_bandwidth_per_chip_Bps", 0)) / 1e9
    # A topology study has no model or strategy: the scenario and its cluster.
    scenario = report.get("scenario") or os.path.basename(os.path.normpath(run_dir))
    fig.suptitle(f"{scenario}, cluster of {chips:,.0f} chips ({report.get('name') or report.get('kind', '?')})\n"
                 f"network cost and bandwidth: {per_chip:,.1f} GB/s injection per chip", fontsize=10)
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim topo`")
    parser.add_argument("-o", "--output", help="PNG or SVG file (default RUN_DIR/topology_cost.png)")
    args = parser.parse_args()
    run_main(lambda: (topology_figure(args.run_dir), args.output or os.path.join(args.run_dir, "topology_cost.png")))


if __name__ == "__main__":
    main()
