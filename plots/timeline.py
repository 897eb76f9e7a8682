#!/usr/bin/python3
"""Draws the pipeline timeline of an eppsim run directory.

One row per SP group: ranks whose compute ops are the same (chunk, stage,
phase, start and end), as the ranks of a sequence-parallel group are, share a
row, labelled with its stage, node(s) and ranks. Forward, backward,
recompute and optimizer compute in distinct colours, communication (send,
receive, collective transfers) as a thinner bar under the compute, idle time
left blank over a grey background. Readable at hundreds of chunks: --window
draws a time window, and bars wide enough are labelled with their chunk id;
--sequence highlights the slices of one long sequence (by its index in the
batch, lengths.csv's sequence column, or `longest`), as the plan's
report.json lists them for epp and seq1f1b: drawn edged and opaque on the
ranks of its pipeline lane while everything else fades; --highlight picks
chunk ids on every rank instead.

    /usr/bin/python3 plots/timeline.py eppsim-out            # writes eppsim-out/timeline.png
    /usr/bin/python3 plots/timeline.py eppsim-out -o t.svg --ranks 0-7 --window 1.2:1.6 --sequence longest

Reads DIR/ops.csv, DIR/ranks.csv, DIR/report.json and DIR/scenario.textproto
(written by `eppsim run`). Needs Debian's python3-matplotlib.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from figure_io import (PlotInputError, describe_run, iter_csv, parse_ids, parse_ranks, parse_window,  # noqa: E402
                       read_csv, run_main, spans_text, title_line)

COMPUTE_COLOURS = {
    "forward": "#4c72b0",
    "backward": "#55a868",
    "recompute": "#dd8452",
    "optimizer": "#8172b3",
}
COMMUNICATION_COLOUR = "#c44e52"
IDLE_COLOUR = "#eeeeee"
COMMUNICATION_KINDS = {"send", "recv", "collective"}


def group_rows(ops, ranks):
    """Rows of ranks with identical compute: [(ranks, representative rank)],
    in rank order."""
    signature = {rank: [] for rank in ranks}
    for r in ops:
        rank = int(r["rank"])
        if rank in signature and r["kind"] == "compute":
            signature[rank].append((r["phase"], r["chunk"], r["stage"], r["start_s"], r["end_s"]))
    rows = {}
    for rank in ranks:
        rows.setdefault(tuple(signature[rank]), []).append(rank)
    return sorted(((members, members[0]) for members in rows.values()), key=lambda row: row[0][0])


def sliced_sequences(run_dir):
    """The plan's split sequences from report.json: {batch index: entry}."""
    path = os.path.join(run_dir, "report.json")
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f).get("plan", {})
    except (OSError, ValueError) as e:
        raise PlotInputError(f"{path}: cannot read the report: {e}") from e
    return {int(s["sequence"]): s for s in plan.get("sliced_sequences", [])}


def longest_sliced_sequence(run_dir):
    """The batch index of the longest split sequence (the first of equals), or None."""
    sequences = sliced_sequences(run_dir)
    if not sequences:
        return None
    return min(sequences, key=lambda i: (-int(sequences[i]["length_tokens"]), i))


def sequence_highlight(run_dir, sequence_text):
    """(predicate on (rank, chunk), description) for --sequence N|longest."""
    sequences = sliced_sequences(run_dir)
    if not sequences:
        raise PlotInputError(f"{run_dir}/report.json: plan.sliced_sequences is empty: "
                             "this plan split no sequence (epp and seq1f1b split the long ones)")
    if sequence_text == "longest":
        index = longest_sliced_sequence(run_dir)
    else:
        try:
            index = int(sequence_text)
        except ValueError:
            raise PlotInputError(f"--sequence: must be a batch index or 'longest', got '{sequence_text}'") from None
        if index not in sequences:
            raise PlotInputError(f"--sequence: sequence {index} was not split (split: {spans_text(sequences)})")
    entry = sequences[index]
    ranks, chunks = set(entry["ranks"]), set(entry["chunks"])
    text = (f"sequence {index} ({int(entry['length_tokens'])} tokens) in {len(chunks)} slices: "
            f"chunks {spans_text(chunks)} of replica {entry.get('replica', 0)}")
    return (lambda rank, chunk: rank in ranks and chunk in chunks), text


def timeline_figure(run_dir, ranks_text=None, window_text=None, highlight_text=None, sequence_text=None):
    """The timeline of `run_dir` as a matplotlib figure."""
    if highlight_text and sequence_text:
        raise PlotInputError("--highlight and --sequence: give one of them")
    # ops.csv is read as it streams, three times: its ranks and step end, the
    # rows of ranks alike, the ops of one rank a row; what is held is the
    # drawn ranks' compute ops.
    ops_path = os.path.join(run_dir, "ops.csv")
    listed, step = set(), None
    for r in iter_csv(ops_path):
        listed.add(int(r["rank"]))
        end = float(r["end_s"])
        step = end if step is None else max(step, end)
    if step is None:
        raise PlotInputError(f"{run_dir}/ops.csv holds no ops")
    node_of = {int(r["rank"]): int(r["node"]) for r in read_csv(os.path.join(run_dir, "ranks.csv"))}
    what = describe_run(run_dir)
    ranks = parse_ranks(ranks_text, listed)
    if not ranks:
        raise PlotInputError(f"none of the ranks {ranks_text} is in {run_dir}/ops.csv")
    low, high = parse_window(window_text) or (0.0, step)
    lit_if, highlighted = None, None
    if sequence_text:
        lit_if, highlighted = sequence_highlight(run_dir, sequence_text)
    elif highlight_text:
        chunks = parse_ids(highlight_text)
        lit_if, highlighted = (lambda rank, chunk: chunk in chunks), f"chunks {spans_text(chunks)}"

    rows = group_rows(iter_csv(ops_path), ranks)
    row_of = {rep: i for i, (_, rep) in enumerate(rows)}
    stage_of = {}
    compute = {}  # (row, phase, highlighted) -> [(start, width)]
    extent = {}  # (row, chunk, phase) -> [start, end]: where a chunk's label (and outline) goes
    lit_extents = set()  # keys of `extent` that are highlighted
    communication = {}
    for r in iter_csv(ops_path):
        rank = int(r["rank"])
        if rank not in row_of:
            continue
        start, end = max(float(r["start_s"]), low), min(float(r["end_s"]), high)
        if r["kind"] == "compute":
            stage_of.setdefault(rank, r["stage"])
        if end <= start:
            continue
        row = row_of[rank]
        if r["kind"] == "compute" and r["phase"] in COMPUTE_COLOURS:
            chunk = int(r["chunk"])
            lit = lit_if is not None and lit_if(rank, chunk)
            compute.setdefault((row, r["phase"], lit), []).append((start, end - start))
            if lit:
                lit_extents.add((row, chunk, r["phase"]))
            span = extent.setdefault((row, chunk, r["phase"]), [start, end])
            span[0], span[1] = min(span[0], start), max(span[1], end)
        elif r["kind"] in COMMUNICATION_KINDS:
            communication.setdefault(row, []).append((start, end - start))

    height = max(3.0, 0.32 * len(rows) + 1.8)
    fig, ax = plt.subplots(figsize=(14, height))
    for row in range(len(rows)):
        ax.broken_barh([(low, high - low)], (row - 0.4, 0.8), facecolors=IDLE_COLOUR)
    for (row, phase, lit), spans in sorted(compute.items()):
        faded = lit_if is not None and not lit
        ax.broken_barh(spans, (row - 0.4, 0.55), facecolors=COMPUTE_COLOURS[phase], alpha=0.3 if faded else 1.0,
                       linewidth=0)
    # One outline per highlighted chunk pass (its layer pieces are many bars).
    for key in sorted(lit_extents):
        row, _, _ = key
        start, end = extent[key]
        ax.broken_barh([(start, end - start)], (row - 0.4, 0.55), facecolors="none", edgecolor="black", linewidth=1.2)
    for row, spans in communication.items():
        ax.broken_barh(spans, (row + 0.18, 0.22), facecolors=COMMUNICATION_COLOUR, linewidth=0)
    for (row, chunk, _), (start, end) in sorted(extent.items()):
        if end - start > 0.015 * (high - low):  # wide enough to read
            ax.text((start + end) / 2, row - 0.12, str(chunk), ha="center", va="center", fontsize=6, color="black")

    tick_labels = []
    for members, rep in rows:
        nodes = spans_text({node_of.get(m, 0) for m in members})
        who = f"rank {members[0]}" if len(members) == 1 else f"ranks {spans_text(members)}"
        tick_labels.append(f"stage {stage_of.get(rep, '-')}, node {nodes}: {who}")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(tick_labels, fontsize=8 if len(rows) > 24 else 9)
    ax.invert_yaxis()
    ax.set_xlim(low, high)
    ax.set_xlabel("time since the step began (s)")
    subject = f"pipeline timeline, step {step:.3f} s"
    if window_text:
        subject += f", window {low:.3f}-{high:.3f} s"
    if len(rows) < len(ranks):
        subject += f", {len(ranks)} ranks in {len(rows)} rows (ranks with identical compute share a row)"
    if highlighted:
        subject += f"\n{highlighted} highlighted"
    ax.set_title(title_line(what, subject), fontsize=10)
    legend = [Patch(color=c, label=p) for p, c in COMPUTE_COLOURS.items()]
    legend += [Patch(color=COMMUNICATION_COLOUR, label="communication"), Patch(color=IDLE_COLOUR, label="idle")]
    if highlighted:
        legend.append(Patch(facecolor="white", edgecolor="black", label="highlighted"))
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.5 / height - 0.06),
              ncol=len(legend), frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", help="directory written by `eppsim run`")
    parser.add_argument("-o", "--output", help="PNG or SVG file (default RUN_DIR/timeline.png)")
    parser.add_argument("--ranks", help="ranks to draw, e.g. 0-7,12 (default all)")
    parser.add_argument("--window", help="time window START:END in seconds, e.g. 1.2:1.6 (default the whole step)")
    parser.add_argument("--sequence", help="a split sequence to highlight: its batch index or 'longest'")
    parser.add_argument("--highlight", help="chunk ids to highlight on every rank, e.g. 40-43 (ops.csv's chunk column)")
    args = parser.parse_args()
    run_main(lambda: (timeline_figure(args.run_dir, args.ranks, args.window, args.highlight, args.sequence),
                      args.output or os.path.join(args.run_dir, "timeline.png")))


if __name__ == "__main__":
    main()
