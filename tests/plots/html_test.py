#!/usr/bin/python3
"""`eppsim run --html`, `eppsim compare --html` and `eppsim sweep --html` end to end: each writes
DIR/report.html, which headless Chromium (Debian's `chromium`) loads; a
harness page beside it reads what the browser shows: the summary table's
numbers (the step time and MFU of report.json / compare.json, and the plan
line as `eppsim run` prints it, TP and CP included), every <img>
decoded to a non-empty bitmap, every <svg> laid out with a non-empty box
holding text, the links to the trace files, and for the comparison the
paper's numbers (from a paper.json beside the scenario file); for the sweep,
the fastest point's numbers, its plots and the links to its results. Exits 77
(ctest: skipped) with a message when chromium is not installed.

usage: html_test.py EPPSIM_BINARY SOURCE_DIR
"""
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile

eppsim, source = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    print("SKIP html_test: chromium is not installed (scripts/install-deps.sh installs Debian's chromium)")
    sys.exit(77)
failures = []

# Runs in the harness after the report has loaded in its iframe: what the
# browser shows, as JSON in <pre id="result">.
HARNESS = """<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="page" src="report.html" width="1600" height="1200"></iframe>
<script>
document.getElementById("page").addEventListener("load", () => {
  const doc = document.getElementById("page").contentDocument;
  const images = [...doc.querySelectorAll("img")].map(i => ({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}));
  const svgs = [...doc.querySelectorAll("figure svg")].map(s => { const b = s.getBoundingClientRect();
    return {width: b.width, height: b.height, text: s.querySelectorAll("text").length}; });
  const links = [...doc.querySelectorAll("a")].map(a => a.getAttribute("href"));
  document.getElementById("result").textContent = JSON.stringify({title: doc.title, text: doc.body.innerText, images, svgs, links});
});
</script></body></html>"""


def run(argv):
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL {' '.join(argv)} exited {result.returncode}:\n{result.stderr}")
    return result


def shown(directory):
    """What Chromium shows of DIR/report.html, through the harness."""
    harness = os.path.join(directory, "harness.html")
    with open(harness, "w") as f:
        f.write(HARNESS)
    argv = [chromium, "--headless", "--disable-gpu", "--allow-file-access-from-files", "--virtual-time-budget=20000",
            "--dump-dom", "file://" + harness]
    if os.geteuid() == 0:
        argv.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    dom = subprocess.run(argv, capture_output=True, text=True, timeout=120).stdout
    start, end = dom.find('<pre id="result">'), dom.find("</pre>")
    text = dom[start + len('<pre id="result">'):end] if start >= 0 else ""
    try:
        return json.loads(html.unescape(text))
    except json.JSONDecodeError:
        failures.append(f"{directory}/report.html: the harness read nothing from Chromium (got {text[:200]!r})")
        return None


def check_page(name, page, numbers, links, images, svgs):
    if page is None:
        return
    for n in numbers:
        if n not in page["text"]:
            failures.append(f"{name}: the page does not show '{n}'")
    for link in links:
        if link not in page["links"]:
            failures.append(f"{name}: no link to {link}")
    if len(page["images"]) < images or len(page["svgs"]) < svgs:
        failures.append(f"{name}: {len(page['images'])} images and {len(page['svgs'])} SVG plots, "
                        f"expected at least {images} and {svgs}")
    for i, image in enumerate(page["images"]):
        if not image["complete"] or image["width"] < 100 or image["height"] < 100:
            failures.append(f"{name}: image {i} did not decode: {image}")
    for i, svg in enumerate(page["svgs"]):
        if svg["width"] < 100 or svg["height"] < 100 or svg["text"] < 5:
            failures.append(f"{name}: SVG plot {i} shows nothing: {svg}")


work = tempfile.mkdtemp()
try:
    small = ["--set", "workload.global_batch=32"]
    # The quickstart scenario with a paper.json beside it, as a reproduction has.
    scenario = os.path.join(work, "quickstart.textproto")
    shutil.copy(os.path.join(source, "scenarios", "quickstart.textproto"), scenario)
    with open(os.path.join(work, "paper.json"), "w") as f:
        json.dump({"names": {"epp": "InfiniPipe", "packed-1f1b": "Megatron-LM"}, "pairs": [["epp", "packed-1f1b"]],
                   "rows": [{"scenario": "quickstart", "label": "quickstart", "speedup": {"epp/packed-1f1b": 1.37}}]}, f)

    run_dir = os.path.join(work, "run")
    # With TP and CP, which the plan line must show as `eppsim run` prints it.
    megatron = ["--set", "plan.packed_1f1b.tensor_parallel=2", "--set", "plan.packed_1f1b.context_parallel=2"]
    out = run([eppsim, "run", scenario, "-o", run_dir, "--html"] + small + megatron).stdout
    if f"page         {run_dir}/report.html" not in out:
        failures.append(f"run --html: stdout does not name the page:\n{out}")
    with open(os.path.join(run_dir, "report.json")) as f:
        report = json.load(f)
    check_page("run", shown(run_dir),
               [f"{report['step_time_s']:.4f} s", f"{100 * report['mfu']:.1f}%", "llama2-7b", "16 x A100-80GB",
                "packed-1f1b (Megatron-LM)", "x 2 TP x 2 CP x", "; ".join(report["plan_summary"].splitlines())],
               ["trace.json", "trace.pb", "ops.csv", "lengths.csv", "report.json"], images=1, svgs=3)

    compare_dir = os.path.join(work, "compare")
    run([eppsim, "compare", scenario, "--strategies", "packed-1f1b,epp", "-o", compare_dir, "--html"] + small)
    with open(os.path.join(compare_dir, "compare.json")) as f:
        comparison = json.load(f)
    page = shown(compare_dir)
    check_page("compare", page,
               [f"{r['step_time_s']:.4f}" for r in comparison["records"]] + ["InfiniPipe", "Megatron-LM"],
               ["compare.json", "epp/trace.json", "packed-1f1b/trace.json"], images=2, svgs=2)
    # The paper's 1.37x, drawn in the comparison plot (inline SVG, text kept as text).
    with open(os.path.join(compare_dir, "report.html")) as f:
        if ">1.37<" not in f.read():
            failures.append("compare: the paper's 1.37x is not on the page")

    # A sweep's page: the shipped study with its cost (Pareto front), lines per strategy and a heatmap.
    sweep_dir = os.path.join(work, "sweep")
    out = run([eppsim, "sweep", os.path.join(source, "scenarios", "studies", "quickstart_strategies.textproto"),
               "-o", sweep_dir, "--html", "--outputs", "csv"]).stdout
    if f"page         {sweep_dir}/report.html" not in out:
        failures.append(f"sweep --html: stdout does not name the page:\n{out}")
    with open(os.path.join(sweep_dir, "results.csv")) as f:
        rows = [line.split(",") for line in f.read().splitlines()[1:]]
    fastest = max(rows, key=lambda r: float(r[7]))  # index, 3 axes, status, network, step_time_s, tokens_per_s
    check_page("sweep", shown(sweep_dir),
               ["sweep quickstart-strategies: 15 points", "15 points ran, 0 failed", "The fastest points",
                "The cheapest million tokens", f"{float(fastest[6]):.4g}", f"{float(fastest[7]):.4g}"],
               ["results.csv", "results.json"], images=0, svgs=4)
    with open(os.path.join(sweep_dir, "report.html")) as f:
        page_text = f.read()
    for caption in ["Pareto front", "throughput along global_batch, one line per plan.strategy",
                    "one panel per plan.strategy", "the best over"]:
        if caption not in page_text:
            failures.append(f"sweep: the page lacks '{caption}'")
    if 'href="runs/' not in page_text:
        failures.append("sweep: no link to a point's run directory (--outputs csv)")

    # A topo sweep's page: a row per point and network, its plots one line per network.
    topo_dir = os.path.join(work, "topo-sweep")
    run([eppsim, "sweep", os.path.join(source, "scenarios", "studies", "railx_claims", "sweep.textproto"),
         "-o", topo_dir, "--points", "0,1", "--html"])
    check_page("topo sweep", shown(topo_dir),
               ["sweep railx_claims: 2 points", "2 points ran, 0 failed", "railx_23x23", "rail-only", "torus-3d"],
               ["results.csv", "results.json"], images=0, svgs=4)
finally:
    shutil.rmtree(work)

for f in failures:
    print("FAIL", f)
print("html_test:", "failed" if failures else "the run, compare and sweep pages show their numbers, plots and links")
sys.exit(1 if failures else 0)
