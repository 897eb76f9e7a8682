#!/usr/bin/python3
"""Writes DIR/report.html: one self-contained page for a run, a comparison or
a sweep (plots/sweep_page.py).

For a run directory (`eppsim run`): a summary table (what was simulated, what
the planner decided, step time, throughput, MFU, breakdown, memory), the
timeline, per-rank breakdown, memory and sampled-length plots, and links to
the trace files. For a comparison directory (`eppsim compare`): a table of
the strategies (each with the paper's system it reproduces), the comparison
plot (with the paper's numbers when --paper names a paper.json with a row for
this scenario), the sampled lengths, each strategy's timeline, and links to
each strategy's files. Plots are inline SVG (the timelines, dense with bars,
PNG as data: URIs), so the page needs nothing beside it but the linked traces.
`eppsim run --html`, `eppsim compare --html` and `eppsim sweep --html` run
this script.

    /usr/bin/python3 plots/report.py eppsim-out             # writes eppsim-out/report.html
    /usr/bin/python3 plots/report.py cmp --paper scenarios/infinipipe/paper.json

Needs Debian's python3-matplotlib.
"""
import argparse
import html
import os
import sys

import matplotlib

matplotlib.use("Agg")

from breakdown import breakdown_figure  # noqa: E402
from compare import compare_figure  # noqa: E402
from figure_io import PlotInputError, describe_run, read_json, record_name  # noqa: E402
from html_page import png_figure, svg_figure, table, try_plot, write_page  # noqa: E402
from lengths import lengths_figure  # noqa: E402
from memory import memory_figure  # noqa: E402
from sweep_page import sweep_page  # noqa: E402
from timeline import longest_sliced_sequence, timeline_figure  # noqa: E402

# The files of a run directory worth a link, with what each is.
RUN_FILES = [
    ("trace.json", "Chrome trace: open in https://ui.perfetto.dev"),
    ("trace.pftrace", "Perfetto trace (past a million op events, instead of trace.json): open in https://ui.perfetto.dev"),
    ("trace.pb", "trace (proto/trace.proto)"),
    ("schedule.pb", "the simulated Schedule (proto/schedule.proto)"),
    ("report.json", "report"),
    ("ops.csv", "every op"),
    ("memory.csv", "memory samples"),
    ("ranks.csv", "per-rank breakdown"),
    ("lengths.csv", "sampled lengths"),
    ("scenario.textproto", "effective scenario"),
]

def links(run_dir, prefix=""):
    items = [f'<li><a href="{html.escape(prefix + name)}">{html.escape(prefix + name)}</a>: {html.escape(what)}</li>'
             for name, what in RUN_FILES if os.path.exists(os.path.join(run_dir, name))]
    return "<ul>" + "".join(items) + "</ul>"


def gib(value):
    return f"{float(value) / 2**30:.1f} GiB"


def run_summary(report, what):
    step = float(report.get("step_time_s", 0.0))
    b = report.get("breakdown_s", {})
    peaks = [float(x) for x in report.get("peak_memory_bytes", [])] or [0.0]
    share = (lambda part: f"{100 * float(b.get(part, 0.0)) / step:.1f}%") if step > 0 else (lambda part: "-")
    faults = report.get("faults")
    if faults and not faults.get("step_completed"):
        # A step that simulated faults stopped has no step time, throughput or MFU.
        head, tail = [("step", f"did not complete: stopped at {float(faults.get('stopped_at_s', 0.0)):.4f} s, "
                            f"{100 * float(faults.get('ops_done_fraction', 0.0)):.1f}% of its ops done; "
                            f"{faults.get('stop_reason', '')}")], []
    else:
        head = [("step time", f"{step:.4f} s")]
        tail = [("throughput", f"{float(report.get('tokens_per_s', 0.0)):,.0f} tokens/s"),
                ("MFU", f"{100 * float(report.get('mfu', 0.0)):.1f}%")]
    if faults:
        tail += [(f"fault at {float(f.get('at_s', 0.0)):.4g} s",
                     f["description"] + ("" if f.get("struck") else " (after the step ended: no effect)"))
                    for f in faults.get("injected", [])]
        if faults.get("step_completed"):
            tail.append(("fault impact", f"{float(faults.get('slowdown', 0.0)):.3f}x the healthy step "
                                            f"({float(faults.get('healthy_step_time_s', 0.0)):.4f} s)"))
    rows = [
        ("scenario", what["scenario"]),
        ("strategy", what["strategy"]),
        ("model", what["model"]),
        ("cluster", what["cluster"]),
        ("engine", report.get("engine", "")),
        # Written once, by eppsim (traces/plan_summary.h).
        ("plan", "; ".join(report.get("plan_summary", "").splitlines())),
        *head,
        ("batch", f"{report.get('sequences', 0)} sequences, {float(report.get('tokens', 0)):,.0f} tokens"),
        *tail,
        ("breakdown", f"compute {share('compute')}, recompute {share('recompute')}, "
                      f"exposed communication {share('communication')}, bubble {share('bubble')}"),
        ("peak memory", f"{gib(max(peaks))} on rank {peaks.index(max(peaks))} "
                        f"(limit {gib(report.get('memory_limit_bytes', 0))})"),
    ]
    return table(["", "value"], rows, numeric_from=2)


def plan_timeline(run_dir):
    """The timeline, with the longest split sequence's slices highlighted when
    the plan split any."""
    longest = longest_sliced_sequence(run_dir)
    return timeline_figure(run_dir, sequence_text=None if longest is None else str(longest))


def run_page(run_dir):
    report = read_json(os.path.join(run_dir, "report.json"))
    what = describe_run(run_dir)
    title = f"{what['scenario']}: {what['strategy']}, {what['model']} on {what['cluster']}"
    at = lambda name: os.path.join(run_dir, name)  # noqa: E731
    parts = [f"<h1>{html.escape(title)}</h1>", run_summary(report, what), "<h2>Plots</h2>",
             try_plot(lambda: plan_timeline(run_dir), png_figure, "pipeline timeline",
                      [at("ops.csv"), at("ranks.csv")]),
             try_plot(lambda: breakdown_figure(run_dir), svg_figure, "per-rank time breakdown", [at("ranks.csv")]),
             try_plot(lambda: memory_figure(run_dir), svg_figure, "memory per rank over the step", [at("memory.csv")]),
             try_plot(lambda: lengths_figure(run_dir), svg_figure, "sampled sequence lengths", [at("lengths.csv")]),
             "<h2>Files</h2>", links(run_dir)]
    return title, parts


def compare_page(compare_dir, paper):
    comparison = read_json(os.path.join(compare_dir, "compare.json"))
    records = comparison.get("records", [])
    if not records:
        raise PlotInputError(f"{compare_dir}/compare.json holds no records")
    first = record_name(comparison, records[0])
    what = describe_run(os.path.join(compare_dir, first))
    title = f"{what['scenario']}: strategies compared, {what['model']} on {what['cluster']}"
    rows = []
    for r in records:
        step = float(r["step_time_s"])
        b = r.get("breakdown_s", {})
        rows.append((record_name(comparison, r), (r.get("plan") or {}).get("reproduces", ""), f"{step:.4f}",
                     f"{float(r.get('tokens_per_s', 0.0)):,.0f}", f"{100 * float(r.get('mfu', 0.0)):.1f}%",
                     gib(max([float(x) for x in r.get("peak_memory_bytes", [])] or [0.0])),
                     f"{100 * float(b.get('bubble', 0.0)) / step:.1f}%",
                     f"{100 * float(b.get('communication', 0.0)) / step:.1f}%",
                     f"{float(comparison['speedup'][record_name(comparison, r)][first]):.2f}x"))
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p>One sampled batch: {records[0].get('sequences', 0)} sequences, "
             f"{float(records[0].get('tokens', 0)):,.0f} tokens, on {records[0].get('ranks', 0)} GPUs.</p>",
             table(["strategy", "system", "step time (s)", "tokens/s", "MFU", "peak memory", "bubble",
                    "exposed communication", f"speedup over {first}"], rows, numeric_from=2)]
    for f in comparison.get("failures", []):
        parts.append(f"<p>{html.escape(record_name(comparison, f))} failed: {html.escape(f.get('message', ''))}</p>")
    parts += ["<h2>Plots</h2>",
              try_plot(lambda: compare_figure(compare_dir, None, paper), svg_figure,
                       "step time per strategy" + (" beside the paper's numbers" if paper else ""), []),
              try_plot(lambda: lengths_figure(os.path.join(compare_dir, first)), svg_figure,
                       "sampled sequence lengths (the same batch for every strategy)",
                       [os.path.join(compare_dir, first, "lengths.csv")])]
    for r in records:
        name = record_name(comparison, r)
        run_dir = os.path.join(compare_dir, name)
        parts.append(f"<h2>{html.escape(name)}</h2>")
        parts.append(try_plot(lambda: plan_timeline(run_dir), png_figure, f"{name}: pipeline timeline",
                              [os.path.join(run_dir, "ops.csv")]))
        parts.append(links(run_dir, prefix=name + "/"))
    parts += ["<h2>Files</h2>", '<ul><li><a href="compare.json">compare.json</a></li>'
              '<li><a href="compare.csv">compare.csv</a></li></ul>']
    return title, parts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", help="directory written by `eppsim run`, `eppsim compare` or `eppsim sweep`")
    parser.add_argument("--paper", help="a reproduction's paper.json (comparisons): the paper's numbers beside ours")
    args = parser.parse_args()
    try:
        if os.path.exists(os.path.join(args.dir, "results.json")):
            title, parts = sweep_page(args.dir)
        elif os.path.exists(os.path.join(args.dir, "compare.json")):
            title, parts = compare_page(args.dir, args.paper)
        else:
            title, parts = run_page(args.dir)
        write_page(args.dir, title, parts)
    except PlotInputError as e:
        sys.exit(f"report.py: {e}")


if __name__ == "__main__":
    main()
