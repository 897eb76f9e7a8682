"""A sweep's page (DIR/report.html for a folder `eppsim sweep` wrote; plots/report.py
writes it, `eppsim sweep --html` runs that): what was swept, the fastest points
and the cheapest million tokens, the Pareto front of throughput against cost,
throughput along each axis with one line per strategy (or network), a heatmap
over the first two other axes, and every point's row. Where a plot leaves
axes free, it draws the best point over them and says so in its title. A topo
sweep's page (command: "topo") draws each network's cost and bandwidth along
the first axis, one line per network, and lists every point and network.
"""
import html
import os

from html_page import svg_figure, table, try_plot
from sweep import LOWER_IS_BETTER, number_or_none, sweep_figure
from sweep_pareto import pareto_figure, read_sweep_dir

# At most this many rows in the page's table of every point (results.csv has them all).
MAX_TABLE_ROWS = 2000
# At most this many line charts, one per axis.
MAX_LINE_CHARTS = 6


def facet_axis(axes, spec):
    """The axis to draw one line per value of: the strategy axis, else the
    network axis (whichever field of an axis sets plan.strategy or
    cluster.network), else none."""
    for field in ("plan.strategy", "cluster.network"):
        for axis in spec:
            if any(f.get("field") == field for f in axis.get("fields", [])) and axis["name"] in axes:
                return axis["name"]
    return None


def top_rows(rows, metric, count):
    ok = [r for r in rows if r["status"] == "ok" and r.get(metric)]
    sign = 1.0 if metric in LOWER_IS_BETTER else -1.0
    return sorted(ok, key=lambda r: sign * float(r[metric]))[:count]


def point_header(axes):
    return ["#"] + axes + ["status", "network", "step time (s)", "tokens/s", "MFU", "peak memory (GiB)",
                           "USD per M tokens", "cost rank", "plan or error"]


def point_row(row, axes, link):
    gib = f"{float(row['peak_memory_bytes']) / 2**30:.1f}" if row["peak_memory_bytes"] else ""
    cost = f"{float(row['usd_per_million_tokens']):.4g}" if row["usd_per_million_tokens"] else ""
    cells = [f"{float(row[c]):.4g}" if row[c] else "" for c in ("step_time_s", "tokens_per_s")]
    mfu = f"{100 * float(row['mfu']):.1f}%" if row["mfu"] else ""
    return [link] + [row[a] for a in axes] + [row["status"], row["network"], *cells, mfu, gib, cost,
                                               row["cost_rank"], row["plan"] or row["error"]]


def points_table(rows, axes, links):
    head = "".join(f"<th>{html.escape(h)}</th>" for h in point_header(axes))
    body = []
    for row in rows[:MAX_TABLE_ROWS]:
        cells = point_row(row, axes, links.get(row["index"], html.escape(row["index"])))
        first = len(axes) + 3
        body.append("<tr>" + "".join(
            f"<td>{c}</td>" if i == 0 else
            f'<td class="num">{html.escape(str(c))}</td>' if first <= i < len(cells) - 1 else
            f"<td>{html.escape(str(c))}</td>" for i, c in enumerate(cells)) + "</tr>")
    more = (f"<p>The first {MAX_TABLE_ROWS} of {len(rows)} points; results.csv has them all.</p>"
            if len(rows) > MAX_TABLE_ROWS else "")
    return f"<table><tr>{head}</tr>\n" + "\n".join(body) + "</table>" + more


def run_links(sweep_dir, results):
    """Index -> a link to the point's run directory, for the points whose
    runs/KEY/ exists (eppsim sweep --outputs)."""
    links = {}
    for point in results.get("results", []):
        key, index = point.get("key", ""), str(point.get("index", 0))
        run = os.path.join("runs", key)
        if key and os.path.isdir(os.path.join(sweep_dir, run)):
            target = run + "/report.html" if os.path.exists(os.path.join(sweep_dir, run, "report.html")) else run + "/"
            links[index] = f'<a href="{html.escape(target)}">{html.escape(index)}</a>'
    return links


# A topo sweep's plots: each along the first axis, one line per network.
TOPOLOGY_METRICS = [("cost_usd", "network cost (USD)"),
                    ("alltoall_bandwidth_Bps", "all-to-all bandwidth per chip (B/s)"),
                    ("allreduce_cost_vs_fat_tree", "cost per unit of all-reduce bandwidth, against the fat-tree"),
                    ("alltoall_cost_vs_fat_tree", "cost per unit of all-to-all bandwidth, against the fat-tree")]


def topology_parts(sweep_dir, rows, axes):
    parts = [try_plot(lambda metric=metric: sweep_figure(sweep_dir, metric, axes[0], by="network", best=True),
                      svg_figure, f"{caption} along {axes[0]}, one line per network", [])
             for metric, caption in TOPOLOGY_METRICS if axes]
    columns = [c for c in rows[0] if c != "index"]
    cell = lambda r, c: f"{float(r[c]):.4g}" if c not in axes and number_or_none(r[c]) is not None else r[c]  # noqa: E731
    shown = [[r["index"]] + [cell(r, c) for c in columns] for r in rows[:MAX_TABLE_ROWS]]
    return parts + ["<h2>Every point and network</h2>", table(["#"] + columns, shown, numeric_from=len(axes) + 4),
                    "<h2>Files</h2>", '<ul><li><a href="results.csv">results.csv</a>: a row per point and network</li>'
                    '<li><a href="results.json">results.json</a>: every point whole, with its networks</li></ul>']


def sweep_page(sweep_dir):
    rows, results, name, axes = read_sweep_dir(sweep_dir)
    spec = results.get("axes", [])
    points = {r["index"]: r["status"] for r in rows}  # a topo sweep has a row per point and network
    failed = sum(1 for status in points.values() if status != "ok")
    title = f"sweep {name}: {len(points)} points"
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p>{len(points) - failed} points ran, {failed} failed. Axes, the first slowest:</p>"]
    axis_rows = []
    for axis in axes:
        fields = next((a.get("fields", []) for a in spec if a.get("name") == axis), [])
        values = list(dict.fromkeys(r[axis] for r in rows))
        axis_rows.append((axis, ", ".join(f.get("field", "") for f in fields) or axis, len(values),
                          ", ".join(values[:12]) + (", ..." if len(values) > 12 else "")))
    parts.append(table(["axis", "fields", "values", ""], axis_rows, numeric_from=2))

    fastest = top_rows(rows, "tokens_per_s", 10)
    cheapest = top_rows(rows, "usd_per_million_tokens", 10)
    header = point_header(axes)
    if fastest:
        parts += ["<h2>The fastest points</h2>",
                  table(header, [point_row(r, axes, r["index"]) for r in fastest], numeric_from=len(axes) + 3)]
    if cheapest:
        parts += ["<h2>The cheapest million tokens</h2>",
                  table(header, [point_row(r, axes, r["index"]) for r in cheapest], numeric_from=len(axes) + 3)]

    parts.append("<h2>Plots</h2>")
    if cheapest:
        parts.append(try_plot(lambda: pareto_figure(sweep_dir), svg_figure,
                              "throughput against cost per million tokens, with the Pareto front", []))
    if "kind" in rows[0]:  # a topo sweep: a row per point and network
        return title, parts + topology_parts(sweep_dir, rows, axes)
    facet = facet_axis(axes, spec)
    ok = [r for r in rows if r["status"] == "ok"]
    varying = [a for a in axes if a != facet and len({r[a] for r in ok}) > 1]
    for axis in varying[:MAX_LINE_CHARTS]:
        parts.append(try_plot(lambda axis=axis: sweep_figure(sweep_dir, "tokens_per_s", axis, by=facet, best=True),
                              svg_figure, f"throughput along {axis}" + (f", one line per {facet}" if facet else ""),
                              []))
    if len(varying) >= 2:
        x, y = varying[0], varying[1]
        parts.append(try_plot(lambda: sweep_figure(sweep_dir, "tokens_per_s", x, y=y, by=facet, best=True),
                              svg_figure, f"throughput over {x} and {y}" + (f", one panel per {facet}" if facet else ""),
                              []))
    if not ok:
        parts.append("<p>No point ran: nothing to draw.</p>")

    parts += ["<h2>Every point</h2>", points_table(rows, axes, run_links(sweep_dir, results)),
              "<h2>Files</h2>", '<ul><li><a href="results.csv">results.csv</a>: a row per point</li>'
              '<li><a href="results.json">results.json</a>: every point whole, with its report</li></ul>']
    return title, parts
