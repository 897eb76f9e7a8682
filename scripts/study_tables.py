#!/usr/bin/python3
"""Writes a study's RESULTS.md from its results.csv, as its tables.json asks.

    study_tables.py TABLES_JSON RESULTS_CSV OUT_MD

TABLES_JSON (scenarios/studies/NAME/tables.json):
  {"title": "...", "note": "a paragraph under the title (optional)",
   "tables": [TABLE, ...], "check_points": [indices tests/cli/studies_test.py reruns]}
A TABLE has a "title", an optional "note", a "kind" and:
  - "value": "rows" (axes: one row per combination of their values, in sweep
    order), "columns" (an axis), "metric" (a results.csv column) and "format"
    (a Python format for the number, default "{:.4g}", applied to the metric
    times "scale", default 1): each cell the metric of the row's point at that
    column. "columns" may also be a column that is not an axis: a topo sweep's
    network. Optional "where": {axis: value} keeps
    only those points; a cell with no point, or with two, is an error.
  - "ratio": as "value", with "of" and "over" (two values of the "columns"
    axis) in place of "columns": each cell metric(of) / metric(over), so for
    tokens_per_s how many times faster `of` is; columns are the values of "by"
    (an axis).
  - "list": every point (after "where"), sorted by "sort" (a column, least
    first), with "show" columns; "limit" keeps the first N.
"paper": {"CELL KEY": number} beside a table sets the paper's number under
ours in a "value" or "ratio" table (key: the row's values joined by ", ",
then " / " and the column). A failed point's cell is "failed"; its error is
listed under the tables. OUT_MD is written atomically; the same rows give the
same file, byte for byte.
"""
import csv
import itertools
import json
import os
import sys

from doc_output import write_text_atomically


def fail(message):
    print(f"study_tables: {message}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return json.load(f) if path.endswith(".json") else list(csv.DictReader(f))
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")


def ordered(rows, axis):
    """An axis's values in sweep order (the order points first show them)."""
    return list(dict.fromkeys(r[axis] for r in rows))


def markdown(header, body):
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in body]


class Cells:
    """The points of a table, by their axis values."""

    def __init__(self, rows, table, axes_used):
        self.rows = [r for r in rows if all(r[a] == v for a, v in table.get("where", {}).items())]
        self.scale = table.get("scale", 1.0)
        self.by_key = {}
        for r in self.rows:
            key = tuple(r[a] for a in axes_used)
            if key in self.by_key:
                fail(f"table '{table['title']}': points {self.by_key[key]['index']} and {r['index']} share a cell; "
                     "fix the other axes with \"where\"")
            self.by_key[key] = r

    def metric(self, key, metric):
        r = self.by_key.get(key)
        if r is None:
            return None, "—"
        if r["status"] != "ok" or not r[metric]:
            return None, "failed"
        return float(r[metric]) * self.scale, None


def table_lines(rows, table):
    kind = table.get("kind", "value")
    fmt = table.get("format", "{:.4g}")
    paper = table.get("paper", {})
    out = [f"## {table['title']}", ""]
    if table.get("note"):
        out += [table["note"], ""]
    if kind == "list":
        cells = Cells(rows, table, ["index"])
        points = sorted(cells.rows, key=lambda r: (r["status"] != "ok" or not r[table["sort"]],
                                                   float(r[table["sort"]] or 0.0), int(r["index"])))
        points = points[:table.get("limit", len(points))]
        body = [[r[c] if c not in table.get("formats", {}) or not r[c] else table["formats"][c].format(float(r[c]))
                 for c in table["show"]] for r in points]
        return out + markdown(table["show"], body) + [""]
    row_axes = table["rows"]
    column_axis = table["by"] if kind == "ratio" else table["columns"]
    used = row_axes + [column_axis] + ([table["columns"]] if kind == "ratio" else [])
    cells = Cells(rows, table, used)
    columns = ordered(cells.rows, column_axis)
    body = []
    for values in itertools.product(*[ordered(cells.rows, a) for a in row_axes]):
        line = [", ".join(values)]
        for column in columns:
            if kind == "ratio":
                of, why_of = cells.metric(values + (column, table["of"]), table["metric"])
                over, why_over = cells.metric(values + (column, table["over"]), table["metric"])
                text = (fmt.format(of / over) if of is not None and over is not None
                        else (why_of or why_over))
            else:
                number, why = cells.metric(values + (column,), table["metric"])
                text = fmt.format(number) if number is not None else why
            theirs = paper.get(f"{', '.join(values)} / {column}")
            line.append(text if theirs is None else f"{text} (paper {fmt.format(theirs)})")
        body.append(line)
    header = [", ".join(row_axes)] + [f"{column_axis} = {c}" for c in columns]
    return out + markdown(header, body) + [""]


def main(argv):
    if len(argv) != 4:
        fail("usage: study_tables.py TABLES_JSON RESULTS_CSV OUT_MD")
    tables_path, results_path, out_path = argv[1:]
    spec, rows = load(tables_path), load(results_path)
    for key in ("title", "tables"):
        if key not in spec:
            fail(f"{tables_path}: missing field '{key}'")
    name = os.path.basename(os.path.dirname(os.path.abspath(tables_path)))
    lines = [f"# {spec['title']}", "",
             f"Written by `/usr/bin/python3 scripts/study.py {name}` from the sweep `sweep.textproto` "
             f"({len(rows)} points; every row in [`results.csv`](results.csv)).", ""]
    if spec.get("note"):
        lines += [spec["note"], ""]
    for table in spec["tables"]:
        lines += table_lines(rows, table)
    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        lines += ["## Points that could not run", ""]
        columns = list(rows[0])
        axes = columns[1:columns.index("status")]  # results.csv: index, the axes, then status
        for r in failed:
            lines.append(f"- point {r['index']} ({', '.join(r[a] for a in axes)}): {r['error']}")
        lines.append("")
    text = "\n".join(lines[:-1]) + "\n"
    write_text_atomically(out_path, text)


if __name__ == "__main__":
    main(sys.argv)
