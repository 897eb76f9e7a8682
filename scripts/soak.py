"""Invariants of eppsim over random valid scenarios (issue 45, item 7).

usage: soak.py --eppsim PATH [--cases N] [--seed S] [--jobs J] [--out FILE]
               [--regressions DIR] [--case K [--print-case]] [--replay DIR]
               [--engine-tolerance F] [--engine-tolerance-of STRATEGY=F,...] [--metamorphic-tolerance F]
               [--known-to-fail INVARIANT:STRATEGY,...]

Case K of seed S is drawn by random.Random(S * 1000003 + K): a model, a cluster
(simple network or a small fat-tree, rail-optimized, torus or RailX), a
workload, a strategy with its options, a cost model and sometimes faults. For
each case, in a fresh folder, `eppsim run` must:
  exit      exit 0, or exit 2 with one line "eppsim: error: ..." on stderr;
  memory    every rank's peak memory within memory_limit_bytes;
  compute   the step at least the busiest rank's compute + recompute;
  breakdown every rank's compute + recompute + communication + bubble equal
            the step (the per-rank contract of report.json);
  reproduce rerunning out/scenario.textproto gives byte-identical
            report.json and schedule.pb;
  schedule  `eppsim sim out/schedule.pb --cluster CASE` accepts the Schedule
            and gives the same step time;
  engines   without faults, interference, a topology or unshared endpoints, and
            with <= 16 ranks,
            the flow engine within --engine-tolerance of the analytic one;
  metamorphic the Schedule on the cluster with every network bandwidth doubled,
            or with the GPU's peak FLOP/s doubled, no slower beyond
            --metamorphic-tolerance.
A failure prints one line and, with --regressions, copies the case there as
soak-SEED-CASE.textproto; --replay DIR runs every *.textproto of DIR instead.
Exit status 1 when any invariant failed, else 0. Stdlib only.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from doc_output import write_text_atomically

TIMEOUT_S = 60
ADDRESS_SPACE_BYTES = 4 << 30
# Tolerances, the INVARIANT:STRATEGY pairs known to fail and what `eppsim presets` lists
# (GPU presets' TFLOP/s, model presets' shapes, strategies), set by main() before the workers fork.
OPTIONS = {}
# The model presets a case may draw (`eppsim presets` lists larger ones too).
MODEL_PRESETS = ["llama2-7b", "llama2-13b", "llama3-8b", "gpt-6.7b", "gpt-13b", "llama2-70b"]


class Sym(str):
    """An enum value, written bare in a textproto."""


def textproto(message, indent=0):
    """Renders nested dicts (lists for repeated fields) as textproto lines."""
    pad, lines = "  " * indent, []
    for key, value in message.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                lines += [f"{pad}{key} {{"] + textproto(item, indent + 1) + [f"{pad}}}"]
            elif isinstance(item, bool):
                lines.append(f"{pad}{key}: {'true' if item else 'false'}")
            elif isinstance(item, Sym):
                lines.append(f"{pad}{key}: {item}")
            elif isinstance(item, str):
                lines.append(f'{pad}{key}: "{item}"')
            else:
                lines.append(f"{pad}{key}: {round(item, 4) if isinstance(item, float) else item}")
    return lines


def divisors(n):
    """The divisors of n, ascending."""
    return [d for d in range(1, n + 1) if n % d == 0]


def gen_model(r):
    """A model: a preset (sometimes cut to a few layers) or a small custom one.
    Returns the message and (heads, kv_heads, layers)."""
    if r.random() < 0.3:
        preset = r.choice(MODEL_PRESETS)
        heads, kv, layers = OPTIONS["models"][preset]
        model = {"preset": preset}
        if r.random() < 0.7:
            layers = model["layers"] = r.randint(1, 8)
        return model, (heads, kv, layers)
    heads = r.choice([1, 2, 4, 8, 16])
    kv = r.choice(divisors(heads))
    hidden = heads * 8 * r.randint(1, 16)
    model = {"layers": r.randint(1, 8), "hidden_size": hidden, "attention_heads": heads,
             "kv_heads": kv, "ffn_hidden_size": 8 * max(1, hidden * r.choice([2, 3, 4]) // 8),
             "vocab_size": r.choice([1000, 8192, 32000]), "ffn_kind": Sym(r.choice(["SWIGLU", "GELU"])),
             "bytes_per_element": r.choice([2, 2, 4])}
    return model, (heads, kv, model["layers"])


def gen_topology(r, nodes, gpn):
    """A small network over nodes x gpn chips: fat-tree, rail-optimized, torus or RailX."""
    chips, kind = nodes * gpn, r.choice(["fat_tree", "rail_optimized", "torus", "railx"])
    link = {"bandwidth": f"{r.choice([25, 50, 100])}GB/s", "latency": f"{r.choice([300, 600, 1000])}ns"}
    if kind == "fat_tree":
        radix = r.choice([k for k in (4, 8, 16) if k ** 3 // 4 >= chips])
        levels = 2 if radix * radix // 2 >= chips and r.random() < 0.5 else 3
        net = {"radix": radix, "levels": levels, "oversubscription": r.choice(["1:1", "2:1"]), "link": link}
    elif kind == "rail_optimized":
        radix = r.choice([8, 16])
        net = {"radix": radix, "scalable_unit_nodes": r.randint(1, min(nodes, radix // 2)),
               "rail_only": r.random() < 0.3, "link": link}
    elif kind == "torus":
        first = gpn * r.choice(divisors(nodes))
        net = {"dims": [first] + ([chips // first] if chips > first else []), "link": link}
    else:
        nx = r.choice(divisors(nodes))
        net = {"nx": nx, "ny": nodes // nx, "mode": Sym(r.choice(["RAIL_RING", "RAIL_ALL_TO_ALL"])),
               "link": link}
    return {kind: net}


def gen_cluster(r):
    """A cluster of at most 64 GPUs, mostly far fewer, on the simple network or a topology."""
    gpn = r.choice([1, 2, 2, 4, 4, 8])
    nodes = r.choice([n for n in (1, 1, 2, 2, 2, 3, 4, 4, 8) if n * gpn <= 64 and (n * gpn <= 16 or r.random() < 0.3)])
    cluster = {"nodes": nodes, "gpus_per_node": gpn, "gpu": {"preset": r.choice(list(OPTIONS["tflops"]))},
               "intra_node": {"bandwidth": f"{r.choice([50, 100, 200, 300, 450, 900])}GB/s",
                              "latency": f"{r.choice([1, 2, 3])}us"},
               "inter_node": {"bandwidth": f"{r.choice([25, 50, 100, 200, 400, 800])}Gbps",
                              "latency": f"{r.choice([2, 5, 10])}us"}}
    if r.random() < 0.3:
        cluster["topology"] = gen_topology(r, nodes, gpn)
    return cluster


def gen_workload(r):
    """Lengths (fixed, wikipedia, longtail or log-normal), a global batch and a max length."""
    max_length = r.choice([256, 512, 1024, 2048, 4096, 8192, 16384, 32768])
    lengths = r.choice([{"fixed": r.randint(16, max_length)}, {"distribution": "wikipedia"},
                        {"distribution": "longtail"},
                        {"lognormal": {"median_tokens": float(r.randint(64, 4096)), "sigma": r.uniform(0, 2)}}])
    return {"lengths": lengths, "global_batch": r.randint(1, 64), "max_length": max_length,
            "over_max_length": Sym(r.choice(["TRUNCATE", "DROP"]))}


def gen_plan(r, strategy, shape, nodes, gpn, max_length):
    """The strategy's options, chosen so that degrees usually divide what they must."""
    heads, kv, layers = shape
    gpus = nodes * gpn
    sp_ok = [d for d in divisors(gpn) if heads % d == 0 and kv % d == 0]
    plan = {"strategy": strategy, "zero_stage": r.choice([0, 1, 2])}
    if r.random() < 0.3:
        plan["memory_fraction"] = r.uniform(0.5, 1)
    if strategy == "packed-1f1b":
        tp = r.choice([d for d in divisors(gpn) if heads % d == 0 and kv % d == 0])
        cp = r.choice([c for c in (1, 1, 2) if gpus % (tp * c) == 0])
        plan["packed_1f1b"] = {
            "pipeline_stages": r.choice([p for p in divisors(gpus // (tp * cp)) if p <= layers]),
            "micro_batch_tokens": max_length * r.choice([1, 1, 2, 4]), "full_recompute": r.random() < 0.3,
            "tensor_parallel": tp, "context_parallel": cp}
    elif strategy.startswith("ulysses"):
        sp = r.choice([d for d in divisors(gpus) if d & (d - 1) == 0 and heads % d == 0 and kv % d == 0])
        plan["ulysses"] = {"sp_degree": sp, "packing_fill": r.uniform(0.5, 1), "full_recompute": r.random() < 0.3}
    elif strategy == "seq1f1b":
        stages = r.choice([p for p in divisors(nodes) if p <= layers])
        plan["seq1f1b"] = {"pipeline_stages": stages, "slices": r.randint(1, 8), "sp_degree": r.choice(sp_ok),
                           "checkpointed_layers": r.randint(0, layers // stages)}
    elif strategy == "flexsp":
        plan["flexsp"] = {"solver_time_limit_s": 0.5, "extra_micro_batch_counts": r.randint(0, 4),
                          "max_buckets": r.choice([4, 8, 16]), "solver_node_limit": r.choice([50, 200, 500])}
    else:
        plan["epp"] = {"pipeline_stages": r.choice([p for p in divisors(nodes) if p <= layers]),
                       "sp_degree": r.choice(sp_ok), "solver_time_limit_s": 0.5,
                       "slice_counts": sorted(r.sample([1, 2, 3, 4, 6, 8], r.randint(1, 3))),
                       "checkpoint_gap": r.choice([0.02, 0.05, 0.1])}
    if strategy in ("ulysses", "ulysses-adaptive", "flexsp") and r.random() < 0.4:
        plan["zero3"] = {"prefetch_depth": r.randint(0, 2)}
    return plan


def gen_faults(r, cluster):
    """One or two faults: a straggler, or a degraded link at a chip (its NIC on the
    simple network, its port into a switched node otherwise)."""
    nodes, gpn = cluster["nodes"], cluster["gpus_per_node"]
    topology = cluster.get("topology", {})
    links = []
    if gpn > 1 and "torus" not in topology:
        links += [f"chip{c}-nodeswitch{c // gpn}" for c in range(nodes * gpn)]
    if not topology:
        links += [f"chip{c}-leaf0" for c in range(nodes * gpn)]
    faults = []
    for _ in range(r.randint(1, 2)):
        at = r.choice(["0s", "0s", "1ms"])
        if links and r.random() < 0.5:
            faults.append({"at": at, "link_degraded": {"link": r.choice(links),
                                                       "bandwidth_factor": r.uniform(0.1, 1)}})
        else:
            faults.append({"at": at, "straggler": {"rank": r.randrange(nodes * gpn),
                                                   "slowdown": r.uniform(1, 4)}})
    return faults


def generate(seed, case):
    """The textproto of case `case` of seed `seed` (deterministic)."""
    r = random.Random(seed * 1000003 + case)
    model, shape = gen_model(r)
    cluster = gen_cluster(r)
    workload = gen_workload(r)
    strategy = r.choice(OPTIONS["strategies"])
    cost = {"compute": Sym(r.choice(["ROOFLINE", "SHAPED"]))}
    if r.random() < 0.25:
        cost["interference"] = {"enabled": True}
    scenario = {"name": f"soak-{seed}-{case}", "seed": r.randint(0, 1000), "model": model, "cluster": cluster,
                "workload": workload,
                "plan": gen_plan(r, strategy, shape, cluster["nodes"], cluster["gpus_per_node"],
                                 workload["max_length"]),
                "cost_model": cost, "simulation": {"engine": "analytic", "shared_endpoints": r.random() < 0.8}}
    if r.random() < 0.2:
        scenario["faults"] = gen_faults(r, cluster)
    return "\n".join(textproto(scenario)) + "\n"


def eppsim(binary, args, cwd):
    """Runs eppsim under the address-space limit and timeout: (exit status, stderr);
    status None on a timeout."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    try:
        done = subprocess.run([binary, *args, "--log", "error"], cwd=cwd, capture_output=True, text=True,
                              timeout=TIMEOUT_S, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return done.returncode, done.stderr


def sim_step(binary, cwd, scenario, name, engine="analytic"):
    """Simulates out/schedule.pb on `scenario`'s cluster: (step time or None, failure detail or None)."""
    code, err = eppsim(binary, ["sim", "out/schedule.pb", "--cluster", scenario, "-o", name, "--outputs", "none",
                                "--engine", engine], cwd)
    if code != 0:
        return None, f"sim on {scenario} ({engine}) exit {code}: {err.strip()[:200]}"
    return json.loads((Path(cwd) / name / "report.json").read_text()).get("step_time_s"), None


def scaled(text, key_pattern, factor):
    """The textproto with every quoted quantity of a key matching key_pattern times factor."""
    def scale(m):
        return f'{m[1]}{float(m[2]) * factor:g}{m[3]}"'
    return re.sub(rf'(\b(?:{key_pattern})\s*:\s*")([0-9.eE+]+)\s*([^"]*)"', scale, text)


def faster_gpu(text, tflops):
    """The textproto with the GPU's peak FLOP/s set to twice its value."""
    if "peak_flops" in text:
        return scaled(text, "peak_flops", 2)
    preset = re.search(r'gpu\s*\{[^}]*preset:\s*"([^"]+)"', text)[1]
    return re.sub(r"gpu\s*\{", f'gpu {{ peak_flops: "{2 * tflops[preset]:g}TFLOPS"', text, count=1)


def relative(a, b):
    """|a - b| relative to b."""
    return abs(a - b) / max(abs(b), 1e-300)


def check_report(report, fail):
    """Invariants memory, compute and breakdown of one report.json."""
    limit = report["memory_limit_bytes"]
    for rank, peak in enumerate(report["peak_memory_bytes"]):
        if peak > limit:
            fail("memory", f"rank {rank} peak {peak} > limit {limit}")
    step = report.get("step_time_s")
    if step is None:
        return
    busiest = max(p["breakdown_s"]["compute"] + p["breakdown_s"]["recompute"] for p in report["per_rank"])
    if step < busiest * (1 - 1e-9):
        fail("compute", f"step {step} < busiest rank's compute {busiest}")
    for p in report["per_rank"]:
        total = sum(p["breakdown_s"][k] for k in ("compute", "recompute", "communication", "bubble"))
        if relative(total, step) > 1e-6:
            fail("breakdown", f"rank {p['rank']} breakdown sums to {total}, step {step}")
            break


def check_rerun(binary, cwd, fail):
    """Invariant reproduce: out/scenario.textproto run again gives the same bytes."""
    code, err = eppsim(binary, ["run", "out/scenario.textproto", "-o", "out2", "--outputs", "all"], cwd)
    if code != 0:
        fail("reproduce", f"rerun exit {code}: {err.strip()[:200]}")
        return
    for name in ("report.json", "schedule.pb"):
        if Path(cwd, "out", name).read_bytes() != Path(cwd, "out2", name).read_bytes():
            fail("reproduce", f"{name} differs on rerun")


def engine_tolerance(strategy):
    """--engine-tolerance, or the strategy's own from --engine-tolerance-of."""
    return OPTIONS["engine_tolerance_of"].get(strategy, OPTIONS["engine_tolerance"])


def check_engines(binary, cwd, step, fail, strategy):
    """Invariant engines: the flow engine's step within the strategy's tolerance of
    the analytic one. Returns the relative difference, or None when the flow run failed."""
    flow, detail = sim_step(binary, cwd, "case.textproto", "flow", "flow")
    if detail or flow is None:
        fail("engines", detail or "the flow engine's step did not complete")
        return None
    diff = relative(flow, step)
    if diff > engine_tolerance(strategy):
        fail("engines", f"flow {flow} vs analytic {step}: {diff:.1%} (tolerance {engine_tolerance(strategy):.0%})")
    return diff


def check_metamorphic(binary, cwd, text, step, fail):
    """Invariant metamorphic: twice the network bandwidth, or twice the GPU's peak
    FLOP/s, never makes the Schedule's step slower beyond the tolerance."""
    variants = {"faster-network": scaled(text, "bandwidth|nvlink_bandwidth", 2),
                "faster-gpu": faster_gpu(text, OPTIONS["tflops"])}
    for name, variant in variants.items():
        Path(cwd, f"{name}.textproto").write_text(variant)
        faster, detail = sim_step(binary, cwd, f"{name}.textproto", name)
        if detail or faster is None:
            fail("metamorphic", detail or f"{name}: the step did not complete")
        elif faster > step * (1 + OPTIONS["metamorphic_tolerance"]):
            fail("metamorphic", f"{name}: step {faster} > {step} (+{faster / step - 1:.2%})")


def run_case(job):
    """Runs one case (job: binary, case id, scenario text) and checks every
    invariant. Returns a result dict."""
    binary, case_id, text = job
    strategy = re.search(r'strategy:\s*"([^"]+)"', text)
    result = {"case": case_id, "failures": [], "known": [], "status": "ok", "engine_diff": None,
              "strategy": strategy[1] if strategy else "packed-1f1b"}

    def fail(invariant, detail):
        known = f"{invariant}:{result['strategy']}" in OPTIONS["known"]
        result["known" if known else "failures"].append((invariant, detail))

    with tempfile.TemporaryDirectory(prefix="soak-") as cwd:
        Path(cwd, "case.textproto").write_text(text)
        code, err = eppsim(binary, ["run", "case.textproto", "-o", "out", "--outputs", "all"], cwd)
        lines = err.strip().splitlines()
        if code == 2 and len(lines) == 1 and lines[0].startswith("eppsim: error:"):
            result.update(status="refused", message=lines[0])
            return result
        if code != 0:
            fail("exit", f"exit {code}, stderr: {' | '.join(lines)[:300]}")
            return result
        report = json.loads(Path(cwd, "out", "report.json").read_text())
        check_report(report, fail)
        check_rerun(binary, cwd, fail)
        step = report.get("step_time_s")
        simulated, detail = sim_step(binary, cwd, "case.textproto", "sim")
        if detail:
            fail("schedule", detail)
        elif simulated != step and (None in (simulated, step) or relative(simulated, step) > 1e-9):
            fail("schedule", f"sim step {simulated} != run step {step}")
        if step is None or detail:
            return result
        contention_free = not re.search(r"\bfaults\s*\{|enabled:\s*true|\btopology\s*\{|shared_endpoints:\s*false",
                                        text)
        if contention_free and report["ranks"] <= 16:
            result["engine_diff"] = check_engines(binary, cwd, step, fail, result["strategy"])
        if not re.search(r'at:\s*"(?!0s")', text):  # a fault later than 0 s may strike a faster step elsewhere
            check_metamorphic(binary, cwd, text, step, fail)
    return result


def presets(binary):
    """What `eppsim presets` lists: each GPU preset's dense peak in TFLOP/s, each model
    preset's (heads, kv_heads, layers), and the strategies, in its order."""
    listing = subprocess.run([binary, "presets"], capture_output=True, text=True, check=True).stdout
    scale = {"T": 1, "P": 1000}
    tflops = {m[1]: float(m[2]) * scale[m[3]]
              for m in re.finditer(r"^\s+(\S+)\s+([0-9.]+) ([TP])FLOP/s", listing, re.M)}
    models = {m[1]: (int(m[3]), int(m[4]), int(m[2]))
              for m in re.finditer(r"^\s+(\S+)\s+([0-9]+)\s+[0-9]+\s+([0-9]+)/([0-9]+)\s", listing, re.M)}
    strategies = re.search(r"^strategies: (.*)$", listing, re.M)[1].split(", ")
    return {"tflops": tflops, "models": models, "strategies": strategies}


def refusal_key(message):
    """A refusal's kind: its field path and first words, numbers and file names dropped."""
    text = re.sub(r"^eppsim: error: (\S+\.textproto(:[0-9]+)?: )?", "", message)
    text = re.sub(r"[0-9][0-9.,]*", "N", text)
    return " ".join(text.split()[:5])


def summarize(results, wall):
    """The JSON summary: counts, refusal mix, failures per invariant, engine differences per strategy."""
    summary = {"cases": len(results), "ok": 0, "refused": 0, "refusals": {}, "failures": {},
               "failed_cases": [], "known_to_fail": sorted(OPTIONS["known"]), "known_failures": {},
               "engine_differences": {}, "wall_time_s": round(wall, 1)}
    for res in results:
        if res["status"] == "refused":
            summary["refused"] += 1
            key = refusal_key(res["message"])
            summary["refusals"][key] = summary["refusals"].get(key, 0) + 1
        elif not res["failures"] and not res["known"]:
            summary["ok"] += 1
        for invariant, detail in res["failures"]:
            summary["failures"][invariant] = summary["failures"].get(invariant, 0) + 1
            summary["failed_cases"].append({"case": res["case"], "invariant": invariant, "detail": detail})
        for invariant, _ in res["known"]:
            key = f"{invariant}:{res['strategy']}"
            summary["known_failures"][key] = summary["known_failures"].get(key, 0) + 1
        if res["engine_diff"] is not None:
            diffs = summary["engine_differences"].setdefault(res["strategy"], [])
            diffs.append(res["engine_diff"])
    for strategy, diffs in summary["engine_differences"].items():
        summary["engine_differences"][strategy] = {
            "cases": len(diffs), "max": max(diffs), "mean": sum(diffs) / len(diffs),
            "over_tolerance": sum(d > engine_tolerance(strategy) for d in diffs)}
    summary["refusals"] = dict(sorted(summary["refusals"].items(), key=lambda kv: -kv[1]))
    return summary


def save_regression(folder, result, text):
    """Copies a failing case to folder/soak-SEED-CASE.textproto, headed by its failures."""
    seed, case = result["case"].split("-")
    header = "".join(f"# soak.py --seed {seed} --case {case}: {invariant}: {detail}\n"
                     for invariant, detail in result["failures"])
    Path(folder).mkdir(parents=True, exist_ok=True)
    Path(folder, f"soak-{seed}-{case}.textproto").write_text(header + text)


def main():
    """Parses the options, runs the cases in parallel, reports and writes the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eppsim", required=True)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--out", help="the JSON summary")
    parser.add_argument("--regressions", help="folder that failing cases are copied to")
    parser.add_argument("--case", type=int, help="run only this case")
    parser.add_argument("--replay", help="run every *.textproto of this folder instead of generated cases")
    parser.add_argument("--print-case", action="store_true", help="print the case's textproto and exit")
    parser.add_argument("--engine-tolerance", type=float, default=0.02)
    parser.add_argument("--engine-tolerance-of", default="",
                        help="STRATEGY=F pairs (comma-separated): a strategy's own engine tolerance, for gaps "
                             "docs/guide/flow-engine.md explains")
    parser.add_argument("--metamorphic-tolerance", type=float, default=0.01)
    parser.add_argument("--known-to-fail", default="",
                        help="INVARIANT:STRATEGY pairs not yet required to hold, e.g. engines:flexsp "
                             "(comma-separated; reported as known, not failing)")
    args = parser.parse_args()
    binary = str(Path(args.eppsim).resolve())
    tolerance_of = {}
    for pair in filter(None, args.engine_tolerance_of.split(",")):
        strategy, _, value = pair.partition("=")
        tolerance_of[strategy] = float(value)
    OPTIONS.update(engine_tolerance=args.engine_tolerance, metamorphic_tolerance=args.metamorphic_tolerance,
                   engine_tolerance_of=tolerance_of,
                   known=set(filter(None, args.known_to_fail.split(","))), **presets(binary))
    if args.replay:
        cases = [(p.stem, p.read_text()) for p in sorted(Path(args.replay).glob("*.textproto"))]
    else:
        numbers = [args.case] if args.case is not None else range(args.cases)
        cases = [(f"{args.seed}-{k}", generate(args.seed, k)) for k in numbers]
    if args.print_case:
        print("".join(text for _, text in cases), end="")
        return 0
    start, results = time.monotonic(), []
    with concurrent.futures.ProcessPoolExecutor(args.jobs, initializer=OPTIONS.update, initargs=(OPTIONS,)) as pool:
        for res in pool.map(run_case, [(binary, cid, text) for cid, text in cases]):
            results.append(res)
            for invariant, detail in res["failures"]:
                print(f"FAIL case {res['case']} seed {args.seed} {invariant}: {detail}", flush=True)
            for invariant, detail in res["known"]:
                print(f"KNOWN case {res['case']} {invariant} ({res['strategy']}): {detail}", flush=True)
            if res["failures"] and args.regressions and not args.replay:
                save_regression(args.regressions, res, dict(cases)[res["case"]])
    summary = summarize(results, time.monotonic() - start)
    if args.out:
        write_text_atomically(args.out, json.dumps(summary, indent=1) + "\n")
    print(f"soak: {summary['cases']} cases, {summary['ok']} ok, {summary['refused']} refused, "
          f"failures {summary['failures'] or 'none'}, {summary['wall_time_s']} s; "
          f"known to fail (not required yet): {summary['known_failures'] or 'none'}")
    for strategy, d in sorted(summary["engine_differences"].items()):
        print(f"  engines {strategy}: {d['cases']} cases, max {d['max']:.1%}, mean {d['mean']:.1%}")
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
