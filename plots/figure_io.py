"""Shared by the plot scripts: reading a run directory, naming what a figure
shows (scenario, strategy, model, cluster), writing a figure atomically and
deterministically (PNG or SVG by the file's extension), choosing ranks."""
import csv
import io
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
# SVG text stays text (titles searchable, files small) and ids do not depend on
# a random salt, so the same inputs give the same bytes.
matplotlib.rcParams["svg.fonttype"] = "none"
matplotlib.rcParams["svg.hashsalt"] = "eppsim"

# No creation date or software version in the files: same inputs, same bytes.
_METADATA = {".png": {"Software": None}, ".svg": {"Date": None, "Creator": None}}


class PlotInputError(Exception):
    """An input file is missing or malformed; the message names it."""


def save_figure(fig, output):
    """Writes `fig` to `output` (PNG at 120 dpi, or SVG when the name ends in
    .svg) through a temporary file and a rename, so a reader never sees half a
    file, and says so on stderr."""
    extension = os.path.splitext(output)[1].lower()
    if extension not in _METADATA:
        raise PlotInputError(f"{output}: the output must end in .png or .svg")
    temporary = output + ".tmp" + extension
    fig.savefig(temporary, dpi=120, metadata=_METADATA[extension])
    os.replace(temporary, output)
    print(f"wrote {output}", file=sys.stderr)


def figure_svg(fig):
    """The figure as an <svg> element (no XML prologue), for inlining in HTML."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=_METADATA[".svg"])
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def run_main(draw):
    """The shared tail of a script's main: draw, write, and turn a
    PlotInputError into a message and exit status 2."""
    import matplotlib.pyplot as plt
    try:
        fig, output = draw()
        save_figure(fig, output)
        plt.close(fig)
    except PlotInputError as e:
        print(f"{os.path.basename(sys.argv[0])}: {e}", file=sys.stderr)
        sys.exit(2)


def read_csv(path):
    return list(iter_csv(path))


def iter_csv(path):
    """The rows of a CSV file as dicts, one at a time (a run's ops.csv may hold millions)."""
    try:
        with open(path, newline="") as f:
            yield from csv.DictReader(f)
    except OSError as e:
        raise PlotInputError(f"cannot read {path}: {e.strerror}") from None


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise PlotInputError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise PlotInputError(f"{path} is not JSON: {e}") from None


_TOKEN = re.compile(r'\s*(?:#[^\n]*|([A-Za-z_][\w.]*)\s*:?\s*(\{|"(?:[^"\\]|\\.)*"|[^\s{}"#]+)|(\}))')


def read_scenario_text(path):
    """The scalar fields of a scenario.textproto (as eppsim writes it) as a flat
    dict of dotted paths, e.g. {"model.preset": "llama2-7b", "cluster.nodes": "2"};
    the first value of a repeated field. {} when the file is absent."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return {}
    fields, stack, position = {}, [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            break
        position = match.end()
        name, value, close = match.groups()
        if close:
            if stack:
                stack.pop()
        elif name and value == "{":
            stack.append(name)
        elif name:
            if value.startswith('"'):
                value = value[1:-1]
            fields.setdefault(".".join(stack + [name]), value)
    return fields


def record_name(comparison, record):
    """A compared record's name (sim/compare.h): its strategy, or STRATEGY@NETWORK
    when compare.json compares several networks. Failures name theirs the same way."""
    if len(comparison.get("networks", [])) > 1:
        return f"{record['strategy']}@{record.get('network', '')}"
    return record["strategy"]


def describe_run(run_dir):
    """What a run directory simulated, for titles: scenario, strategy, model and
    cluster, from report.json and scenario.textproto."""
    report = read_json(os.path.join(run_dir, "report.json"))
    return describe(report, read_scenario_text(os.path.join(run_dir, "scenario.textproto")))


def describe(report, scenario):
    model = scenario.get("model.preset") or scenario.get("model.name") or "custom model"
    gpus = int(scenario.get("cluster.nodes", 0) or 0) * int(scenario.get("cluster.gpus_per_node", 0) or 0)
    gpu = scenario.get("cluster.gpu.preset") or scenario.get("cluster.gpu.name") or "GPU"
    cluster = f"{gpus} x {gpu}" if gpus else gpu
    if scenario.get("cluster.topology.name"):
        cluster += f", {scenario['cluster.topology.name']}"
    strategy = report.get("strategy", "")
    system = (report.get("plan") or {}).get("reproduces")
    return {
        "scenario": report.get("scenario") or scenario.get("name", ""),
        "strategy": f"{strategy} ({system})" if system else strategy,
        "model": model,
        "cluster": cluster,
    }


def title_line(what, subject):
    """'quickstart, packed-1f1b (Megatron-LM), llama2-7b on 16 x A100-80GB: SUBJECT'."""
    head = f"{what['scenario']}, {what['strategy']}" if what.get("strategy") else what["scenario"]
    return f"{head}, {what['model']} on {what['cluster']}\n{subject}"


def parse_ranks(text, available):
    """'0-3,8' -> [0, 1, 2, 3, 8], kept to ranks present in the trace."""
    return sorted(parse_ids(text) & set(available)) if text else sorted(available)


def parse_ids(text):
    """'0-3,8' -> {0, 1, 2, 3, 8}."""
    chosen = set()
    for part in text.split(","):
        try:
            if "-" in part:
                low, high = part.split("-", 1)
                chosen.update(range(int(low), int(high) + 1))
            elif part:
                chosen.add(int(part))
        except ValueError:
            raise PlotInputError(f"'{text}' is not a list of ids like 0-3,8") from None
    return chosen


def parse_window(text):
    """'1.5:2.25' -> (1.5, 2.25) seconds; None for no window."""
    if not text:
        return None
    try:
        low, high = (float(x) for x in text.split(":", 1))
    except ValueError:
        raise PlotInputError(f"--window '{text}' is not START:END in seconds") from None
    if not high > low:
        raise PlotInputError(f"--window '{text}': END must be after START")
    return low, high


def spans_text(ids):
    """[0, 1, 2, 5] -> '0-2,5'."""
    ids = sorted(ids)
    parts, start = [], None
    for i, x in enumerate(ids):
        if start is None:
            start = x
        if i + 1 == len(ids) or ids[i + 1] != x + 1:
            parts.append(f"{start}-{x}" if x != start else f"{x}")
            start = None
    return ",".join(parts)
