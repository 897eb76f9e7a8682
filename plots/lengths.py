#!/usr/bin/python3
"""Draws the distribution of the sequence lengths the run sampled.

A histogram of the batch's sequences over logarithmic length bins (a
long-context mix spans 100 to 100K+ tokens), and on a second axis the share of
the batch's tokens held by sequences up to each length: a few long sequences
usually hold most tokens, which is why the strategies differ. The scenario's
max_length is drawn when it is set.

    /usr/bin/python3 plots/lengths.py eppsim-out             # writes eppsim-out/lengths.png
    /usr/bin/python3 plots/lengths.py eppsim-out -o l.svg

Reads DIR/lengths.csv, DIR/report.json and DIR/scenario.textproto (written by
`eppsim run` and by each strategy of `eppsim compare`). Needs Debian's python3-matplotlib.
"""
import argparse
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import PlotInputError, describe_run, read_csv, read_scenario_text, run_main, title_line  # noqa: E402


def lengths_figure(run_dir):
    rows = read_csv(os.path.join(run_dir, "lengths.csv"))
    lengths = sorted(int(r["length_tokens"]) for r in rows)
    if not lengths:
        raise PlotInputError(f"{run_dir}/lengths.csv holds no sequences (the run sampled no batch)")
    scenario = read_scenario_text(os.path.join(run_dir, "scenario.textproto"))
    low, high = max(1, lengths[0]), max(2, lengths[-1])
    bins = [math.exp(math.log(low) + (math.log(high) - math.log(low)) * i / 40) for i in range(41)]
    bins[-1] = high + 1

    fig, ax = plt.subplots(figsize=(10, 4.8))
    ax.hist(lengths, bins=bins, color="#4c72b0", label="sequences")
    ax.set_xscale("log")
    ax.set_xlabel("sequence length (tokens, log scale)")
    ax.set_ylabel("sequences")
    total = sum(lengths)
    share = ax.twinx()
    running, xs, ys = 0, [], []
    for x in lengths:
        running += x
        xs.append(x)
        ys.append(100.0 * running / total)
    share.step(xs, ys, where="post", color="#dd8452", label="share of tokens in sequences up to this length")
    share.set_ylabel("share of the batch's tokens (%)")
    share.set_ylim(0, 100)
    limit = int(scenario.get("workload.max_length", 0) or 0)
    if limit:
        ax.axvline(limit, color="#c44e52", linestyle="--", linewidth=1, label=f"max_length {limit}")
    median = lengths[len(lengths) // 2]
    subject = (f"sampled lengths: {len(lengths)} sequences, {total:,} tokens; median {median:,}, "
               f"mean {total / len(lengths):,.0f}, longest {lengths[-1]:,} tokens")
    ax.set_title(title_line(describe_run(run_dir) | {"strategy": ""}, subject), fontsize=10)
    handles = ax.get_legend_handles_labels()
    more = share.get_legend_handles_labels()
    ax.legend(handles[0] + more[0], handles[1] + more[1], frameon=False, loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim run`")
    parser.add_argument("-o", "--output", help="PNG or SVG file (default RUN_DIR/lengths.png)")
    args = parser.parse_args()
    run_main(lambda: (lengths_figure(args.run_dir), args.output or os.path.join(args.run_dir, "lengths.png")))


if __name__ == "__main__":
    main()
