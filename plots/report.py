#!/usr/bin/python3
"""Writes DIR/report.html: one self-contained page for a run or a comparison.

For a run directory (`eppsim run`): a summary table (what was simulated, what
the planner decided, step time, throughput, MFU, breakdown, memory), the
timeline, per-rank breakdown, memory and sampled-length plots, and links to
the trace files. For a comparison directory (`eppsim compare`): a table of
the strategies (each with the paper's system it reproduces), the comparison
plot (with the paper's numbers when --paper names a paper.json with a row for
this scenario), the sampled lengths, each strategy's timeline, and links to
each strategy's files. Plots are inline SVG (the timelines, dense with bars,
PNG as data: URIs), so the page needs nothing beside it but the linked traces.
`eppsim run --html` and `eppsim compare --html` run this script.

    /usr/bin/python3 plots/report.py eppsim-out             # writes eppsim-out/report.html
    /usr/bin/python3 plots/report.py cmp --paper scenarios/infinipipe/paper.json

Needs Debian's python3-matplotlib.
"""
import argparse
import base64
import html
import io
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from breakdown import breakdown_figure  # noqa: E402
from compare import compare_figure  # noqa: E402
from figure_io import PlotInputError, describe_run, figure_svg, read_csv, read_json, record_name  # noqa: E402
from lengths import lengths_figure  # noqa: E402
from memory import memory_figure  # noqa: E402
from timeline import longest_sliced_sequence, timeline_figure  # noqa: E402

# The files of a run directory worth a link, with what each is.
RUN_FILES = [
    ("trace.json", "Chrome trace: open in https://ui.perfetto.dev"),
    ("trace.pb", "trace (proto/trace.proto)"),
    ("schedule.pb", "the simulated Schedule (proto/schedule.proto)"),
    ("report.json", "report"),
    ("ops.csv", "every op"),
    ("memory.csv", "memory samples"),
    ("ranks.csv", "per-rank breakdown"),
    ("lengths.csv", "sampled lengths"),
    ("scenario.textproto", "effective scenario"),
]

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1500px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; }
figure svg, figure img { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
"""


def svg_figure(fig, caption):
    text = figure_svg(fig)
    plt.close(fig)
    return f'<figure>{text}<figcaption>{html.escape(caption)}</figcaption></figure>'


def png_figure(fig, caption):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f'<figcaption>{html.escape(caption)}</figcaption></figure>')


def try_plot(make, render, caption, needs):
    """A plot when its inputs exist, else a line saying which are missing."""
    missing = [n for n in needs if not os.path.exists(n)]
    if missing:
        return f"<p>{html.escape(caption)}: not drawn, {html.escape(', '.join(missing))} not written.</p>"
    try:
        return render(make(), caption)
    except PlotInputError as e:
        return f"<p>{html.escape(caption)}: not drawn, {html.escape(str(e))}.</p>"


def table(header, rows, numeric_from=1):
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = ""
    for row in rows:
        cells = "".join(f'<td class="num">{html.escape(str(c))}</td>' if i >= numeric_from else
                        f"<td>{html.escape(str(c))}</td>" for i, c in enumerate(row))
        body += f"<tr>{cells}</tr>\n"
    return f"<table><tr>{head}</tr>\n{body}</table>"


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


def write_page(directory, title, parts):
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
    output = os.path.join(directory, "report.html")
    temporary = output + f".tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(temporary, output)  # a reader sees the old page or the new one, never half of one
    print(f"wrote {output}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", help="directory written by `eppsim run` or `eppsim compare`")
    parser.add_argument("--paper", help="a reproduction's paper.json (comparisons): the paper's numbers beside ours")
    args = parser.parse_args()
    try:
        if os.path.exists(os.path.join(args.dir, "compare.json")):
            title, parts = compare_page(args.dir, args.paper)
        else:
            title, parts = run_page(args.dir)
        write_page(args.dir, title, parts)
    except PlotInputError as e:
        sys.exit(f"report.py: {e}")


if __name__ == "__main__":
    main()
