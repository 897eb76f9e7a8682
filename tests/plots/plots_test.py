#!/usr/bin/python3
"""Renders every plot of plots/ from small fixtures that eppsim writes (a
quickstart run of 32 sequences, a two-strategy comparison with a paper.json
row for it, the RailX-with-failures topology study, the shipped quickstart study's sweep) as PNG and as SVG, and
checks each file: it exists, is a valid PNG (signature, IHDR of a sensible
size) or SVG (well-formed XML whose text holds the title's scenario, strategy,
model and cluster), and is not trivially small.

usage: plots_test.py EPPSIM_BINARY SOURCE_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

eppsim, source = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
plots = os.path.join(source, "plots")
failures = []
rendered = []


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"FAIL fixture: {' '.join(argv)} exited {result.returncode}:\n{result.stderr}")
    return result


def check_png(path, name):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        failures.append(f"{name}: {path} is not a PNG")
        return
    width, height = struct.unpack(">II", data[16:24])
    if width < 400 or height < 200 or len(data) < 10_000:
        failures.append(f"{name}: {path} is {width}x{height}, {len(data)} bytes: too small to hold the plot")


def check_svg(path, name, title_words):
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as e:
        failures.append(f"{name}: {path} is not well-formed SVG: {e}")
        return
    if not root.tag.endswith("svg"):
        failures.append(f"{name}: {path}'s root is {root.tag}, not svg")
    text = " ".join(t for t in root.itertext())
    for word in title_words:
        if word not in text:
            failures.append(f"{name}: {path}'s text lacks '{word}'")
    if os.path.getsize(path) < 10_000:
        failures.append(f"{name}: {path} is {os.path.getsize(path)} bytes: too small to hold the plot")


def render(name, script, args, title_words, default=None):
    """Renders to NAME.png and NAME.svg and, with `default`, once without -o
    (the script's default file, beside its input)."""
    rendered.append(name)
    if default:
        result = subprocess.run(["/usr/bin/python3", "-B", os.path.join(plots, script)] + args,
                                capture_output=True, text=True)
        if result.returncode != 0 or not os.path.isfile(default):
            failures.append(f"{name}: {script} {' '.join(args)} did not write {default}: {result.stderr}")
        else:
            check_png(default, name)
    for extension in ("png", "svg"):
        output = os.path.join(work, f"{name}.{extension}")
        result = subprocess.run(["/usr/bin/python3", "-B", os.path.join(plots, script)] + args + ["-o", output],
                                capture_output=True, text=True)
        if result.returncode != 0 or not os.path.isfile(output):
            failures.append(f"{name}: {script} {' '.join(args)} -o {output} exited {result.returncode}: {result.stderr}")
            continue
        check_png(output, name) if extension == "png" else check_svg(output, name, title_words)


work = tempfile.mkdtemp()
try:
    small = ["--set", "workload.global_batch=32"]
    quickstart = os.path.join(source, "scenarios", "quickstart.textproto")
    run_dir, compare_dir, topo_dir = (os.path.join(work, d) for d in ("run", "compare", "topo"))
    # Two slices a long sequence, so that the timeline has a sliced sequence to highlight.
    run([eppsim, "run", quickstart, "-o", run_dir, "--strategy", "epp", "--set", "plan.epp.slice_counts=[2]"] + small)
    run([eppsim, "compare", quickstart, "--strategies", "packed-1f1b,epp", "-o", compare_dir] + small)
    run([eppsim, "topo", os.path.join(source, "scenarios", "railx_failures.textproto"), "-o", topo_dir])
    # A paper.json in the reproductions' format with a row for the quickstart.
    paper = os.path.join(work, "paper.json")
    with open(paper, "w") as f:
        json.dump({"names": {"epp": "InfiniPipe", "packed-1f1b": "Megatron-LM"}, "pairs": [["epp", "packed-1f1b"]],
                   "step_time_of": "epp", "rows": [{"scenario": "quickstart", "label": "quickstart",
                                                    "step_time_s": 0.5, "speedup": {"epp/packed-1f1b": 1.3}}]}, f)

    run_title = ["quickstart", "epp (InfiniPipe)", "llama2-7b", "16 x A100-80GB"]
    render("timeline", "timeline.py", [run_dir], run_title + ["pipeline timeline"],
           default=os.path.join(run_dir, "timeline.png"))
    render("timeline-window", "timeline.py", [run_dir, "--window", "0.1:0.3", "--highlight", "2-3"],
           run_title + ["window 0.100-0.300 s", "chunks 2-3 highlighted"])
    # The longest split sequence's slices, as report.json's plan lists them.
    with open(os.path.join(run_dir, "report.json")) as f:
        sliced = json.load(f)["plan"]["sliced_sequences"]
    longest = min(sliced, key=lambda s: (-int(s["length_tokens"]), int(s["sequence"])))
    slices = len(longest["chunks"])
    render("timeline-sequence", "timeline.py", [run_dir, "--sequence", "longest"],
           run_title + [f"sequence {longest['sequence']} ({longest['length_tokens']} tokens) in {slices} slices",
                        "highlighted"])
    result = subprocess.run(["/usr/bin/python3", "-B", os.path.join(plots, "timeline.py"), run_dir, "--sequence", "100000",
                             "-o", os.path.join(work, "never.png")], capture_output=True, text=True)
    if result.returncode != 2 or "--sequence: sequence 100000 was not split" not in result.stderr:
        failures.append(f"timeline --sequence 100000: exit {result.returncode}, {result.stderr}")
    render("breakdown", "breakdown.py", [run_dir], run_title + ["per-rank time breakdown", "bubble"],
           default=os.path.join(run_dir, "breakdown.png"))
    render("memory", "memory.py", [run_dir], run_title + ["memory per rank", "limit 80.0 GiB", "GiB"],
           default=os.path.join(run_dir, "memory.png"))
    render("lengths", "lengths.py", [run_dir], ["quickstart", "llama2-7b", "16 x A100-80GB", "32 sequences"],
           default=os.path.join(run_dir, "lengths.png"))
    render("compare", "compare.py", [compare_dir, "--paper", paper],
           ["quickstart", "llama2-7b", "16 x A100-80GB", "packed-1f1b", "Megatron-LM", "against the paper",
            "paper's step time (0.5 s)", "1.30"])
    # A sweep: the shipped study, its throughput against cost and the Pareto front.
    sweep_dir = os.path.join(work, "sweep")
    run([eppsim, "sweep", os.path.join(source, "scenarios", "studies", "quickstart_strategies.textproto"),
         "-o", sweep_dir])
    render("pareto", "sweep_pareto.py", [sweep_dir], ["quickstart-strategies", "Pareto front", "15 of 15 points"],
           default=os.path.join(sweep_dir, "pareto.png"))
    render("sweep-lines", "sweep.py", [sweep_dir, "--x", "global_batch", "--by", "plan.strategy", "--where",
                                        "ulysses_sp=8"],
           ["quickstart-strategies", "tokens_per_s", "ulysses_sp=8", "plan.strategy = epp", "global_batch"],
           default=os.path.join(sweep_dir, "sweep.png"))
    render("sweep-heatmap", "sweep.py", [sweep_dir, "--x", "global_batch", "--y", "plan.strategy", "--metric", "mfu",
                                          "--where", "ulysses_sp=8"],
           ["quickstart-strategies", "mfu", "packed-1f1b", "global_batch"])
    result = subprocess.run(["/usr/bin/python3", "-B", os.path.join(plots, "sweep.py"), sweep_dir, "--x", "global_batch",
                             "--by", "plan.strategy", "-o", os.path.join(work, "never.png")], capture_output=True,
                            text=True)
    if result.returncode != 2 or "share a cell: fix ulysses_sp with --where" not in result.stderr:
        failures.append(f"sweep.py without --where: exit {result.returncode}, {result.stderr}")
    sys.path.insert(0, plots)
    from sweep_pareto import pareto_front
    hand = [(1.0, 10, "a"), (2.0, 20, "b"), (1.5, 5, "c"), (3.0, 20, "d"), (0.5, 1, "e"), (2.0, 15, "f")]
    if [row for _, _, row in pareto_front(hand)] != ["e", "a", "b"]:
        failures.append(f"pareto: the front of {hand} is {pareto_front(hand)}, expected e, a, b")
    render("topology", "topology_cost.py", [topo_dir],
           ["railx_failures", "648 chips", "what the failures removed", "chips lost: 8", "$ per GB/s"])
finally:
    shutil.rmtree(work)

for f in failures:
    print("FAIL", f)
print(f"plots_test: {len(rendered) - len({f.split(':')[0] for f in failures})} of {len(rendered)} plots passed")
sys.exit(1 if failures else 0)
