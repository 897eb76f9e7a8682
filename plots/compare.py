#!/usr/bin/python3
"""Draws the step time of each strategy of an `eppsim compare` run as bars.

One bar per strategy, stacked from its mean breakdown over ranks (compute,
recompute, exposed communication, bubble), which adds up to the step time.
Above each bar: the step time and how many times faster the strategy is than
the baseline (speedup[strategy][baseline] from compare.json; the first
strategy unless --baseline names another). Strategies that could not run are
shown as "failed" slots.

    /usr/bin/python3 plots/compare.py eppsim-out              # writes eppsim-out/compare.png
    /usr/bin/python3 plots/compare.py eppsim-out -o c.png --baseline packed-1f1b

Reads DIR/compare.json (written by `eppsim compare`). Needs Debian's python3-matplotlib.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import save_figure

PARTS = [
    ("compute", "compute", "#4c72b0"),
    ("recompute", "recompute", "#dd8452"),
    ("communication", "exposed communication", "#c44e52"),
    ("bubble", "bubble", "#bbbbbb"),
]


def read_comparison(path):
    try:
        with open(path) as f:
            comparison = json.load(f)
    except OSError as e:
        sys.exit(f"compare.py: cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"compare.py: {path} is not JSON: {e}")
    if not isinstance(comparison.get("records"), list) or not isinstance(comparison.get("speedup"), dict):
        sys.exit(f"compare.py: {path} lacks records or speedup")
    return comparison


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim compare`")
    parser.add_argument("-o", "--output", help="PNG file (default RUN_DIR/compare.png)")
    parser.add_argument("--baseline", help="strategy the speedups refer to (default the first)")
    args = parser.parse_args()

    comparison = read_comparison(os.path.join(args.run_dir, "compare.json"))
    records = comparison["records"]
    failures = comparison.get("failures", [])
    if not records:
        sys.exit(f"compare.py: {args.run_dir}/compare.json holds no records")
    names = [r["strategy"] for r in records]
    baseline = args.baseline or names[0]
    if baseline not in names:
        sys.exit(f"compare.py: --baseline {baseline} is not among the strategies that ran ({', '.join(names)})")

    labels = names + [f["strategy"] for f in failures]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(labels) + 2.5), 5.0))
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
            text += f"\n{float(comparison['speedup'][r['strategy']][baseline]):.2f}x vs {baseline}"
        ax.annotate(text, (i, step), ha="center", va="bottom", fontsize=8, xytext=(0, 3), textcoords="offset points")
    for k in range(len(failures)):
        ax.annotate("failed", (len(records) + k, 0.02 * top), ha="center", va="bottom", fontsize=9, color="#c44e52")

    xticks = []
    for r in records:
        peak = max((float(b) for b in r.get("peak_memory_bytes", [])), default=0.0)
        xticks.append(f"{r['strategy']}\nMFU {100 * float(r.get('mfu', 0.0)):.1f}%, peak {peak / 2**30:.1f} GiB")
    xticks += [f["strategy"] for f in failures]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(xticks, fontsize=9)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylabel("step time (s)")
    first = records[0]
    ax.set_title(f"{first.get('scenario', '')}: {float(first.get('tokens', 0)):,.0f} tokens per step, "
                 f"{first.get('ranks', 0)} GPUs")
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=len(PARTS))
    ax.set_ylim(0.0, 1.18 * top)  # room for the labels above the tallest bar
    fig.tight_layout()

    save_figure(fig, args.output or os.path.join(args.run_dir, "compare.png"))


if __name__ == "__main__":
    main()
