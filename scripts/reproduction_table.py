#!/usr/bin/python3
"""Sets a reproduction's measured speedups beside the paper's.

    reproduction_table.py PAPER_JSON RESULTS_CSV OUT_MD

PAPER_JSON (scenarios/SET/paper.json) lists the strategies, the pairs to
compare and, per scenario, the paper's speedups ("a/b": how many times faster a
is than b) and the step time of one strategy. RESULTS_CSV is the results.csv of
the reproduction's sweep (scenarios/studies/SET/sweep.textproto; scripts/study.py
runs it), whose axes are `setting` (a scenario of scenarios/SET/ by name),
`strategy` and, with an ablation, `effects`. OUT_MD is written atomically; the
same results give the same file, byte for byte.

With an "ablation" in PAPER_JSON (the `effects` steps in order, each switching
one more modelling effect on, the step the scenarios ship as, and the pairs to
follow), OUT_MD gains a table per pair: how the speedup moves as each effect is
switched on. The step times of the main tables are those at the shipped step.
"""
import csv
import json
import os
import sys

from doc_output import write_text_atomically


def fail(message):
    print(f"reproduction_table: {message}", file=sys.stderr)
    sys.exit(2)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")


def fmt_x(value):
    return "—" if value is None else f"{value:.2f}×"


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def load_results(path):
    """results.csv's step times: (effects, setting) -> {strategy: step time},
    and (effects, setting, strategy) -> error for the points that failed."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e}")
    if rows and not {"setting", "strategy", "status", "step_time_s"} <= set(rows[0]):
        fail(f"{path}: not a reproduction sweep's results (axes setting and strategy expected)")
    steps, errors = {}, {}
    for r in rows:
        key = (r.get("effects", ""), r["setting"])
        steps.setdefault(key, {})
        if r["status"] == "ok":
            steps[key][r["strategy"]] = float(r["step_time_s"])
        else:
            errors[key + (r["strategy"],)] = r["error"]
    return steps, errors


def steps_of(results, path, effects, setting):
    if (effects, setting) not in results:
        fail(f"{path}: no point of setting {setting}" + (f" at effects {effects}" if effects else ""))
    return results[(effects, setting)]


def ablation_lines(paper, results, path, set_name):
    """The ablation section: per pair, one row per step (effects switched on
    cumulatively), one column per setting, the paper's speedups last."""
    ablation = paper["ablation"]
    for key in ("steps", "pairs", "strategies", "shipped"):
        if key not in ablation:
            fail(f"ablation: missing field '{key}'")
    names = paper["names"]
    rows = paper["rows"]
    lines = ["## Which modelling effects make the gaps", ""]
    lines.append("Each row switches one more effect of the model on (the `effects` axis of "
                 f"`scenarios/studies/{set_name}/sweep.textproto` gives each step's overrides), from the simplest "
                 "model to the one the scenarios ship with, and then asks what-ifs; speedups of "
                 f"{', '.join(f'`{s}`' for s in ablation['strategies'])} on each setting. "
                 "A strategy that could not run shows as —.")
    lines.append("")
    for i, step in enumerate(ablation["steps"]):
        lines.append(f"{i}. {step['label']} (`{step['value']}`)")
    lines.append("")
    for a, b in ablation["pairs"]:
        lines.append(f"### {names[a]} over {names[b]}")
        lines.append("")
        header = ["effects on"] + [row["label"] for row in rows]
        table_rows = []
        for i, step in enumerate(ablation["steps"]):
            cells = [f"{i}. {step['label']}"]
            for row in rows:
                t = steps_of(results, path, step["value"], row["scenario"])
                cells.append(fmt_x(t[b] / t[a] if a in t and b in t else None))
            table_rows.append(cells)
        table_rows.append(["paper"] + [fmt_x(row["speedup"].get(f"{a}/{b}")) for row in rows])
        lines += markdown_table(header, table_rows)
        lines.append("")
    return lines


def main(argv):
    if len(argv) != 4:
        fail("usage: reproduction_table.py PAPER_JSON RESULTS_CSV OUT_MD")
    paper_path, results_path, out_path = argv[1:]
    paper = load_json(paper_path)
    for key in ("title", "source", "strategies", "names", "pairs", "rows", "step_time_of"):
        if key not in paper:
            fail(f"{paper_path}: missing field '{key}'")
    names = paper["names"]
    pairs = paper["pairs"]
    strategies = paper["strategies"]
    set_name = os.path.basename(os.path.dirname(os.path.abspath(paper_path)))

    lines = [f"# {paper['title']}", ""]
    lines.append(f"Written by `/usr/bin/python3 scripts/study.py {set_name}` from the sweep "
                 f"`scenarios/studies/{set_name}/sweep.textproto` over each scenario of `scenarios/{set_name}/` "
                 "(one sampled global batch, the scenario's seed, analytic engine; its rows are "
                 f"`scenarios/studies/{set_name}/results.csv`). "
                 f"Paper numbers: {paper['source']}. "
                 "Why ours differ is in this folder's README.md.")
    lines.append("")
    lines.append("Strategies: " + ", ".join(f"`{s}` = {names.get(s, s)}" for s in strategies) + ".")
    lines.append("")

    has_paper_steps = any("step_time_s" in row for row in paper["rows"])
    header_steps = ["setting"] + ([f"paper {names[paper['step_time_of']]} (s)"] if has_paper_steps else [])
    header_steps += [f"`{s}` (s)" for s in strategies]
    step_rows = []
    header_x = ["setting"] + [f"{names[a]} / {names[b]}: paper · ours" for a, b in pairs]
    x_rows = []
    failures = []
    deviations = {f"{a}/{b}": [] for a, b in pairs}
    ours_all = {f"{a}/{b}": [] for a, b in pairs}
    results, errors = load_results(results_path)
    shipped = paper["ablation"]["shipped"] if "ablation" in paper else ""
    for row in paper["rows"]:
        steps = steps_of(results, results_path, shipped, row["scenario"])
        for s in strategies:
            if (shipped, row["scenario"], s) in errors:
                failures.append((row["label"], s, errors[(shipped, row["scenario"], s)]))
        step_cells = [row["label"]]
        if has_paper_steps:
            step_cells.append(f"{row['step_time_s']:g}" if "step_time_s" in row else "—")
        for s in strategies:
            step_cells.append(f"{steps[s]:.2f}" if s in steps else "failed")
        step_rows.append(step_cells)
        cells = [row["label"]]
        for a, b in pairs:
            key = f"{a}/{b}"
            ours = steps[b] / steps[a] if a in steps and b in steps else None
            theirs = row["speedup"].get(key)
            cells.append(f"{fmt_x(theirs)} · {fmt_x(ours)}")
            if ours is not None:
                ours_all[key].append(ours)
            if ours is not None and theirs is not None:
                deviations[key].append(ours / theirs - 1.0)
        x_rows.append(cells)
    if "maxima" in paper:
        cells = ["largest over the settings"]
        for a, b in pairs:
            key = f"{a}/{b}"
            mine = max(ours_all[key]) if ours_all[key] else None
            cells.append(f"{fmt_x(paper['maxima'].get(key))} · {fmt_x(mine)}")
        x_rows.append(cells)

    table = markdown_table
    lines.append("## Step time")
    lines.append("")
    lines += table(header_steps, step_rows)
    lines.append("")
    lines.append("## Speedups")
    lines.append("")
    lines += table(header_x, x_rows)
    lines.append("")
    lines.append("Mean deviation of our speedup from the paper's (ours / paper − 1, over the settings where both exist):")
    lines.append("")
    for a, b in pairs:
        d = deviations[f"{a}/{b}"]
        if d:
            mean = sum(d) / len(d)
            worst = max(d, key=abs)
            settings = "setting" if len(d) == 1 else "settings"
            lines.append(f"- {names[a]} over {names[b]}: mean {mean:+.1%}, largest {worst:+.1%} ({len(d)} {settings})")
        else:
            lines.append(f"- {names[a]} over {names[b]}: no setting with both numbers")
    if "ablation" in paper:
        lines.append("")
        lines += ablation_lines(paper, results, results_path, set_name)[:-1]
    if failures:
        lines.append("")
        lines.append("## Strategies that could not run")
        lines.append("")
        for label, strategy, message in failures:
            lines.append(f"- {label}, `{strategy}`: {message}")
    text = "\n".join(lines) + "\n"

    write_text_atomically(out_path, text)


if __name__ == "__main__":
    main(sys.argv)
