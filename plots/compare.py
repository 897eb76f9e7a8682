#!/usr/bin/python3
"""Draws the step time of each strategy of an `eppsim compare` run as bars.

One bar per strategy, stacked from its mean breakdown over ranks (compute,
recompute, exposed communication, bubble), which adds up to the step time.
Above each bar: the step time and how many times faster the strategy is than
the baseline (speedup[strategy][baseline] from compare.json; the first
strategy unless --baseline names another). Strategies that could not run are
shown as "failed" slots.

With --paper PATH (a reproduction's paper.json, e.g. scenarios/flexsp/paper.json)
and a row for this scenario in it, the paper's numbers stand beside ours: its
step time as a marker on the bar of the strategy it was read for, and a
second panel with each speedup pair the paper reports, ours against the
paper's (the paper's maxima, when it gives only those, as hollow bars).
`eppsim compare --html` passes the paper.json beside the scenario file.

    /usr/bin/python3 plots/compare.py eppsim-out              # writes eppsim-out/compare.png
    /usr/bin/python3 plots/compare.py eppsim-out -o c.svg --baseline packed-1f1b
    /usr/bin/python3 plots/compare.py out --paper scenarios/flexsp/paper.json

Reads DIR/compare.json and DIR/STRATEGY/scenario.textproto (written by `eppsim compare`). Needs Debian's python3-matplotlib.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from figure_io import (PlotInputError, describe, read_json, read_scenario_text, record_name, run_main,  # noqa: E402
                       title_line)

PARTS = [
    ("compute", "compute", "#4c72b0"),
    ("recompute", "recompute", "#dd8452"),
    ("communication", "exposed communication", "#c44e52"),
    ("bubble", "bubble", "#bbbbbb"),
]


def read_comparison(path):
    comparison = read_json(path)
    if not isinstance(comparison.get("records"), list) or not isinstance(comparison.get("speedup"), dict):
        raise PlotInputError(f"{path} lacks records or speedup")
    if not comparison["records"]:
        raise PlotInputError(f"{path} holds no records")
    return comparison


def paper_row(paper, paper_path, scenario):
    """The paper.json row for the scenario named `scenario`, or None. A row
    names a scenario file of the folder that holds paper.json (reproduce.sh
    runs scenarios/SET/ROW.textproto), whose scenarios are named SET_ROW, so
    a row matches SET_ROW or, for a scenario named like its file, ROW."""
    folder = os.path.basename(os.path.dirname(os.path.abspath(paper_path)))
    for row in paper.get("rows", []):
        if scenario in (row.get("scenario"), f"{folder}_{row.get('scenario')}"):
            return row
    return None


def paper_pairs(paper, row, ours):
    """[(label, ours, paper's, is_maximum)] for each pair the paper reports
    for this scenario (or, failing that, states a maximum for) and we ran."""
    out = []
    names = paper.get("names", {})
    for a, b in paper.get("pairs", []):
        key = f"{a}/{b}"
        value, maximum = row.get("speedup", {}).get(key), False
        if value is None and key in paper.get("maxima", {}):
            value, maximum = paper["maxima"][key], True
        if value is None or a not in ours or b not in ours[a]:
            continue
        out.append((f"{names.get(a, a)}\nover {names.get(b, b)}", float(ours[a][b]), float(value), maximum))
    return out


def compare_figure(compare_dir, baseline=None, paper_path=None):
    comparison = read_comparison(os.path.join(compare_dir, "compare.json"))
    records = comparison["records"]
    failures = comparison.get("failures", [])
    names = [record_name(comparison, r) for r in records]
    baseline = baseline or names[0]
    if baseline not in names:
        raise PlotInputError(f"--baseline {baseline} is not among the strategies that ran ({', '.join(names)})")
    first = records[0]
    what = describe(first, read_scenario_text(os.path.join(compare_dir, names[0], "scenario.textproto")))
    paper = read_json(paper_path) if paper_path else None
    row = paper_row(paper, paper_path, first.get("scenario")) if paper else None
    pairs = paper_pairs(paper, row, comparison["speedup"]) if row else []

    labels = names + [record_name(comparison, f) for f in failures]
    width = max(6.0, 1.6 * len(labels) + 2.5)
    if pairs:
        fig, (ax, side) = plt.subplots(1, 2, figsize=(width + 1.3 * len(pairs) + 2.0, 5.4),
                                       gridspec_kw={"width_ratios": [len(labels) + 1, len(pairs) + 1]})
    else:
        fig, ax = plt.subplots(figsize=(width, 5.4))
    bottoms = [0.0] * len(records)
    for field, label, colour in PARTS:
        values = [float(r.get("breakdown_s", {}).get(field, 0.0)) for r in records]
        ax.bar(range(len(records)), values, 0.6, bottom=bottoms, label=label, color=colour)
        bottoms = [b + v for b, v in zip(bottoms, values)]
    top = max(float(r["step_time_s"]) for r in records)
    for i, r in enumerate(records):
        step = float(r["step_time_s"])
        text = f"{step:.3f} s"
        if len(records) > 1:
            text += f"\n{float(comparison['speedup'][record_name(comparison, r)][baseline]):.2f}x vs {baseline}"
        ax.annotate(text, (i, step), ha="center", va="bottom", fontsize=8, xytext=(0, 3), textcoords="offset points")
    if row and row.get("step_time_s") and paper.get("step_time_of") in names:
        i = names.index(paper["step_time_of"])
        paper_step = float(row["step_time_s"])
        ax.plot([i], [paper_step], marker="D", color="black", linestyle="none",
                label=f"paper's step time ({paper_step:g} s)")
        top = max(top, paper_step)
    for k in range(len(failures)):
        ax.annotate("failed", (len(records) + k, 0.02 * top), ha="center", va="bottom", fontsize=9, color="#c44e52")

    xticks = []
    for r in records:
        peak = max((float(b) for b in r.get("peak_memory_bytes", [])), default=0.0)
        system = (r.get("plan") or {}).get("reproduces")
        name = f"{record_name(comparison, r)}\n({system})" if system else record_name(comparison, r)
        xticks.append(f"{name}\nMFU {100 * float(r.get('mfu', 0.0)):.1f}%, peak {peak / 2**30:.1f} GiB")
    xticks += [record_name(comparison, f) for f in failures]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(xticks, fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylabel("step time (s)")
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=len(PARTS) + 1, fontsize=8)
    ax.set_ylim(0.0, 1.18 * top)  # room for the labels above the tallest bar

    if pairs:
        bar = 0.38
        xs = range(len(pairs))
        side.bar([x - bar / 2 for x in xs], [p[1] for p in pairs], bar, color="#4c72b0")
        for x, (_, _, value, maximum) in zip(xs, pairs):
            side.bar(x + bar / 2, value, bar, color="white" if maximum else "#dd8452", edgecolor="#dd8452",
                     hatch="//" if maximum else None)
        legend = [Patch(color="#4c72b0", label="eppsim"), Patch(color="#dd8452", label="paper")]
        if any(p[3] for p in pairs):
            legend.append(Patch(facecolor="white", edgecolor="#dd8452", hatch="//",
                                label="paper's maximum over its settings"))
        for x, (_, ours, value, _) in zip(xs, pairs):
            side.annotate(f"{ours:.2f}", (x - bar / 2, ours), ha="center", va="bottom", fontsize=7)
            side.annotate(f"{value:.2f}", (x + bar / 2, value), ha="center", va="bottom", fontsize=7)
        side.axhline(1.0, color="black", linewidth=0.6)
        side.set_xticks(list(xs))
        side.set_xticklabels([p[0] for p in pairs], fontsize=8)
        side.set_ylabel("speedup (x, step time of B over A)")
        side.set_title(f"against the paper: {row.get('label', first.get('scenario'))}", fontsize=9)
        side.legend(handles=legend, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8)
        side.margins(y=0.15)

    subject = (f"strategies compared on one batch: {float(first.get('tokens', 0)):,.0f} tokens per step, "
               f"{first.get('ranks', 0)} GPUs")
    fig.suptitle(title_line(what | {"strategy": ""}, subject), fontsize=10)
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim compare`")
    parser.add_argument("-o", "--output", help="PNG or SVG file (default RUN_DIR/compare.png)")
    parser.add_argument("--baseline", help="strategy the speedups refer to (default the first)")
    parser.add_argument("--paper", help="a reproduction's paper.json: draw the paper's numbers beside ours")
    args = parser.parse_args()
    run_main(lambda: (compare_figure(args.run_dir, args.baseline, args.paper),
                      args.output or os.path.join(args.run_dir, "compare.png")))


if __name__ == "__main__":
    main()
