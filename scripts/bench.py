#!/usr/bin/python3
"""The speed benchmark of issue 10 (item 5): measures the simulator on one core
and writes every figure, the machine and the git commit to one JSON file.

    cmake --build build -j --target eppsim eppsim_speed_probe
    scripts/bench.py [--build build] [--out bench.json] [--strategies a,b,...] [--repeat N]
                     [--cpu C] [--limit-1k S] [--limit-16k S] [--limit-100k S] [--limit-flow S]
                     [--limit-flow-scale S] [--sections a,b,...]

Each measurement runs in a child process pinned to one CPU (--cpu; by default
the last this process may use: on the lent host the first was the slower in
three of four comparisons, docs/bench/host-33299b7.json), with a wall-clock limit and an address-space limit
(--memory-limit-gib): a run past its time is killed and recorded as
{"timed_out": true, "limit_s": S}, and one that fails (past its memory it
fails with std::bad_alloc) records its exit status and the last line of its
error. A child is build/tests/bench/
eppsim_speed_probe (plan, then the engine once, no output files; its peak RSS
is its own) or, for the wall time a user sees, `eppsim run` itself. Each probe
runs --repeat times (default 3) in a row: its record is the run of median
engine time, with every run's engine time and ops/s beside it ("runs").

Sections of the JSON:
  engine_ops      (a) analytic engine ops/s on training-step schedules of every
                  strategy: scenarios/bench/step_16k at 1,024 GPUs (128 nodes,
                  1,024 sequences: the same load per replica) and at 16,384
                  (the runs of step_16k below)
  allreduce_4096  (b) `eppsim run scenarios/bench/allreduce_ring_4096.textproto`:
                  process wall time (plan, engine, report and every output file)
                  and the probe's plan and engine times
  step_16k        (c) scenarios/bench/step_16k per strategy: plan time, engine
                  time, peak RSS
  railx_100k      (d) scenarios/railx_200k.textproto cut to 56 x 56 nodes of 32
                  chips (100,352 GPUs, half the batch, no compared topologies)
  flow_1024       (e) scenarios/bench/allreduce_ring_1024 on the engine named
                  "flow", when one is registered ({"skipped": ...} otherwise)
  outputs_16k     (f) `eppsim run scenarios/bench/step_16k.textproto --strategy S`
                  with its default outputs (trace.pb, trace.json, the CSVs and
                  schedule.pb; past 4,000,000 ops the op events of --trace-ranks
                  auto's ranks) as a user runs it: wall time, the run's own
                  peak RSS (timings.json) and the memory guard's estimate
                  (issue 42, item 6)
  railx_200k      (g) `eppsim run scenarios/railx_200k.textproto --strategy S`
                  (199,712 chips, no compared topologies) with its default
                  outputs and settings that fit its model (RAILX_200K_SETS), as
                  (f), epp and epp-flex with every replica the same 16
                  sequences (RAILX_200K_REPEATS: identical replicas simulated
                  a class at a time): issue 42's target is 120 s and 16 GiB
  plan_scale      (h) planning time of every strategy as the GPUs grow:
                  railx_200k cut to 6x6 ... 48x48 nodes (1,152 to 73,728 GPUs,
                  half a sequence per GPU, RAILX_200K_SETS), the probe's
                  --plan-only; per strategy the exponent of plan time against
                  GPUs from 4,608 GPUs up (issue 42: at most 1, linear)
  railx_1m        (i) `eppsim run scenarios/bench/railx_1m.textproto --strategy S`
                  (1,002,528 chips) with its default outputs, S packed-1f1b
                  and epp (of --strategies; epp with every replica the same 16
                  sequences, RAILX_1M_SETS), under a 20 GiB address-space
                  limit: issue 42's target is 300 s and 20 GiB
  flow_step_1k    (j) scenarios/bench/step_16k at 1,024 GPUs (as (a)) on both
                  engines, every strategy, one run each: both step times, their
                  gap, and the flow engine's time (issue 45, item 6: under 60 s)
  flow_scale      (k) the flow engine on scenarios/bench/step_16k cut to 1,024
                  and 4,096 GPUs (the same load per replica) and whole (16,384),
                  every strategy, `eppsim run` with its default outputs under
                  --limit-flow-scale: wall, planning, simulation and writing
                  time, the run's peak RSS and its forked simulation's
                  (timings.json), the memory guard's estimate (issue 42, item
                  6: step_16k itself under 10 minutes)
  identical_replicas (l) scenarios/bench/step_16k cut to 1,024 GPUs and whole,
                  epp with every replica the same sequences (workload.repeats =
                  the replicas), `eppsim run` with its default outputs with
                  simulation.identical_replicas true and false: both runs and
                  whether their report.json are the same bytes (issue 42, item
                  6: exact at 1K and 16K GPUs)
  trace_tools     (m) the commands that read a trace, on the trace of
                  scenarios/bench/step_16k, epp, every rank's op events
                  (`eppsim run ... --trace-ranks all --outputs trace`): export
                  chrome, perfetto and timeline, diff and validate of the trace
                  with itself; per command its wall time and its own peak RSS
                  (issue 42, item 1: traces read a part at a time)
  targets         each target of issue 10 item 5 and issue 42 item 6 this file
                  measures, met or not
"""
import argparse
import hashlib
import json
import math
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time

STRATEGIES = ["packed-1f1b", "ulysses", "ulysses-adaptive", "seq1f1b", "flexsp", "epp", "epp-flex"]
STEP_16K = "scenarios/bench/step_16k.textproto"
STEP_1K_SETS = ["cluster.nodes=128", "workload.global_batch=1024"]
# flow_scale: step_16k at 1,024, 4,096 and 16,384 GPUs, 8 a node, a sequence a GPU.
FLOW_SCALE_GPUS = [1024, 4096, 16384]
RING_4096 = "scenarios/bench/allreduce_ring_4096.textproto"
RING_1024 = "scenarios/bench/allreduce_ring_1024.textproto"
RAILX = "scenarios/railx_200k.textproto"


def railx_grid_sets(grid):
    """railx_200k cut to grid x grid nodes of 32 chips, half a sequence a chip, no compared topologies."""
    nodes = grid * grid
    return ["cluster.compare_topologies=[]", f"cluster.nodes={nodes}", f"cluster.topology.railx.nx={grid}",
            f"cluster.topology.railx.ny={grid}", f"workload.global_batch={nodes * 16}"]


RAILX_100K_SETS = railx_grid_sets(56)  # 100,352 GPUs
GIB = 1024.0 ** 3
SECTIONS = ["engine_ops", "allreduce_4096", "step_16k", "railx_100k", "flow_1024", "outputs_16k", "railx_200k",
            "plan_scale", "railx_1m", "flow_step_1k", "flow_scale", "identical_replicas", "trace_tools"]
RAILX_1M = "scenarios/bench/railx_1m.textproto"
RAILX_1M_STRATEGIES = ["packed-1f1b", "epp"]  # issue 42's million-GPU step
RAILX_1M_MEMORY_GIB = 20.0  # its target
RAILX_1M_SETS = {"epp": ["workload.repeats=31329"]}  # every replica (31,329) the same 16 sequences
# plan_scale: railx_200k cut to G x G nodes of 32 chips, half a sequence per chip.
PLAN_SCALE_GRIDS = [6, 12, 24, 48]  # 1,152 to 73,728 GPUs
# Per strategy, what fits railx_200k's model (40 heads, 40 layers) besides its defaults.
RAILX_200K_SETS = {
    "ulysses": ["plan.ulysses.sp_degree=8"],
    "ulysses-adaptive": ["plan.ulysses.sp_degree=8"],
    "seq1f1b": ["plan.seq1f1b.pipeline_stages=4", "plan.seq1f1b.sp_degree=8"],
    "epp": ["plan.epp.pipeline_stages=4", "plan.epp.sp_degree=8"],
    "epp-flex": ["plan.epp.pipeline_stages=4", "plan.epp.sp_degree=8"],
}

# railx_200k: epp and epp-flex with every replica (6,241) the same 16 sequences.
RAILX_200K_REPEATS = {s: ["workload.repeats=6241"] for s in ["epp", "epp-flex"]}
# identical_replicas: step_16k cut to G GPUs, epp's replicas (8 stages x SP 8) each given the same sequences.
IDENTICAL_REPLICAS_GPUS = [1024, 16384]
# trace_tools: each command that reads a trace, on TRACE (a run directory), writing under OUT.
TRACE_TOOLS = {
    "export_chrome": ["export", "chrome", "{trace}", "-o", "{out}/trace.json"],
    "export_perfetto": ["export", "perfetto", "{trace}", "-o", "{out}/trace.pftrace"],
    "export_timeline": ["export", "timeline", "{trace}", "-o", "{out}/rank_timeline.csv"],
    "diff": ["diff", "{trace}", "{trace}", "-o", "{out}/diff"],
    "validate": ["validate", "--simulated", "{trace}", "--measured", "{trace}", "-o", "{out}/validate"],
}


CPU = [None]  # set from --cpu


def one_core():
    """The CPU every child is pinned to: --cpu, else the last this process may run on."""
    return max(os.sched_getaffinity(0)) if CPU[0] is None else CPU[0]


MEMORY_LIMIT_BYTES = [16 * 1024 ** 3]  # set from --memory-limit-gib


def limit_child():
    """In the child: one core, and an address-space cap so that a run too big for the machine
    fails with bad_alloc instead of calling the kernel's OOM killer onto its neighbours."""
    os.sched_setaffinity(0, {one_core()})
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES[0], MEMORY_LIMIT_BYTES[0]))


def run_child(argv, limit_s, cwd):
    """Runs argv pinned to one core; returns (seconds, stdout) or a failure record."""
    start = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=limit_s,
                              preexec_fn=limit_child)
    except subprocess.TimeoutExpired:
        return None, {"timed_out": True, "limit_s": limit_s}
    wall = time.monotonic() - start
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        error = lines[-1] if lines else ""
        if done.returncode < 0:  # killed: SIGKILL with no message is most likely the kernel's OOM killer
            error = f"killed by {signal.Signals(-done.returncode).name}" + (f": {error}" if error else
                                                                          " (out of memory?)")
        return None, {"failed": True, "exit_status": done.returncode, "error": error, "wall_s": round(wall, 3)}
    return wall, done.stdout


def run_measured(argv, limit_s, cwd):
    """As run_child, with the child's own peak RSS (os.wait4): (seconds, peak RSS bytes) or a failure record."""
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as stderr:
        child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=limit_child)
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() - start > limit_s:
                child.kill()
                os.wait4(child.pid, 0)
                return None, {"timed_out": True, "limit_s": limit_s}
            time.sleep(0.05)
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        wall = time.monotonic() - start
        if child.returncode != 0:
            stderr.seek(0)
            lines = stderr.read().strip().splitlines()
            return None, {"failed": True, "exit_status": child.returncode, "error": lines[-1] if lines else "",
                          "wall_s": round(wall, 3)}
    return wall, usage.ru_maxrss * 1024


def probe_once(args, scenario, sets, limit_s, flags=()):
    argv = [os.path.join(args.build, "tests/bench/eppsim_speed_probe"), scenario, *flags]
    for s in sets:
        argv += ["--set", s]
    wall, out = run_child(argv, limit_s, args.source)
    if wall is None:
        return out
    record = json.loads(out)
    record["wall_s"] = round(wall, 3)
    record["peak_rss_gib"] = round(record["peak_rss_bytes"] / GIB, 3)
    return record


def probe(args, scenario, sets, limit_s):
    """--repeat runs of one probe: the run of median engine time (the first that fails, if any)."""
    records = []
    for _ in range(args.repeat):
        record = probe_once(args, scenario, sets, limit_s)
        if "engine_time_s" not in record:
            return record
        records.append(record)
    median = sorted(records, key=lambda r: r["engine_time_s"])[(len(records) - 1) // 2]
    median["runs"] = [{k: r[k] for k in ("engine_time_s", "ops_per_s", "wall_s")} for r in records]
    return median


def git_commit(source):
    def git(*words):
        return subprocess.run(["git", *words], cwd=source, capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no") != ""
    return {"commit": commit, "dirty": dirty}


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu_model": model or platform.processor(), "cores": os.cpu_count(),
            "cores_usable": len(os.sched_getaffinity(0)), "measured_on_cores": 1, "measured_on_cpu": one_core(),
            "system": f"{platform.system()} {platform.release()}"}


def cache_value(build, key):
    """A variable of the build's CMake cache ("" when there is none)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


def build_type(build):
    """CMAKE_BUILD_TYPE of the build measured (RelWithDebInfo, Release, ...)."""
    return cache_value(build, "CMAKE_BUILD_TYPE")


def engines(args):
    argv = [os.path.join(args.build, "tests/bench/eppsim_speed_probe"), "--engines"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def summary(record):
    if record.get("timed_out"):
        return f"timed out after {record['limit_s']} s"
    if record.get("failed"):
        return f"failed: {record['error']}"
    if "skipped" in record:
        return f"skipped: {record['skipped']}"
    parts = [f"{k} {record[k]}" for k in ("plan_time_s", "engine_time_s", "ops_per_s", "peak_rss_gib", "wall_s")
             if k in record]
    return ", ".join(parts)


def within(record, wall_s, gib):
    """A run with default outputs that finished under `wall_s` seconds and `gib` GiB of peak RSS."""
    return record.get("wall_s", 1e9) < wall_s and record.get("peak_rss_bytes", 1e99) < gib * GIB


def met(value, limit):
    return None if value is None else value < limit


def targets(result, strategies):
    """Each target of issue 10 item 5 that the JSON measures: met, not met, or unknown (null)."""
    ops = [r.get("ops_per_s") for size in result["engine_ops"].values() for r in size.values()]
    ops_known = [x for x in ops if x is not None]
    step = result["step_16k"]
    step_ok = [s in step and ("peak_rss_bytes" in step[s]) and step[s]["wall_s"] < 60 and
               step[s]["peak_rss_bytes"] < 8 * GIB for s in strategies]
    flow = result.get("flow_1024", {})
    flow_1k = result.get("flow_step_1k", {})
    flow_16k = result.get("flow_scale", {}).get("16384", {}).get("packed-1f1b")
    outputs = result.get("outputs_16k", {})
    outputs_ok = {s: within(r, 60, 8) for s, r in outputs.items()}
    railx_ok = {s: within(r, 120, 16) for s, r in result.get("railx_200k", {}).items()}
    railx_1m_ok = {s: within(r, 300, 20) for s, r in result.get("railx_1m", {}).items()}
    identical = result.get("identical_replicas", {})
    return {
        "step_16k_default_outputs_under_60_s_and_8_GiB_every_strategy": {
            "met": bool(outputs_ok) and all(outputs_ok.values()) if outputs else None,
            "strategies_meeting": [s for s, ok in outputs_ok.items() if ok]},
        "railx_200k_default_outputs_under_120_s_and_16_GiB_every_strategy": {
            "met": all(railx_ok.values()) if railx_ok else None,
            "strategies_meeting": [s for s, ok in railx_ok.items() if ok]},
        "railx_1m_default_outputs_under_300_s_and_20_GiB_packed_1f1b_and_epp": {
            "met": all(railx_1m_ok.values()) if railx_1m_ok else None,
            "strategies_meeting": [s for s, ok in railx_1m_ok.items() if ok]},
        "engine_5M_ops_per_s_every_strategy": {
            "met": (len(ops_known) == len(ops) and min(ops_known) >= 5e6) if ops else None,
            "slowest_ops_per_s": min(ops_known) if ops_known else None},
        "allreduce_4096_under_2.6_s": {"met": met(result.get("allreduce_4096", {}).get("eppsim_run_wall_s"), 2.6)},
        "step_16k_under_60_s_and_8_GiB_every_strategy": {
            "met": all(step_ok) if step else None, "strategies_meeting": [s for s, ok in zip(strategies, step_ok) if ok]},
        "plan_time_at_most_linear_in_gpus_from_4608_every_strategy": {
            "met": all(r["exponent_from_4608"] is not None and r["exponent_from_4608"] <= 1.1
                       for r in result["plan_scale"].values()) if result.get("plan_scale") else None,
            "exponents": {s: r["exponent_from_4608"] for s, r in result.get("plan_scale", {}).items()}},
        "railx_100k_under_120_s": {"met": met(result.get("railx_100k", {}).get("wall_s"), 120)},
        "flow_allreduce_1024_under_10_s": {"met": met(flow.get("wall_s"), 10) if flow and "skipped" not in flow else None},
        "flow_step_1k_under_60_s_every_strategy": {
            "met": all(r.get("flow", {}).get("wall_s", 1e9) < 60 for r in flow_1k.values()) if flow_1k else None,
            "strategies_meeting": [s for s, r in flow_1k.items() if r.get("flow", {}).get("wall_s", 1e9) < 60]},
        "flow_step_16k_under_600_s": {"met": met(flow_16k.get("wall_s"), 600) if flow_16k is not None else None},
        "identical_replicas_exact_at_1k_and_16k": {
            "met": all(r["reports_identical"] for r in identical.values()) if identical else None,
            "gpus_identical": [g for g, r in identical.items() if r["reports_identical"]]},
    }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build", help="the CMake build folder (default build)")
    parser.add_argument("--out", default="bench.json", help="the JSON file to write (default bench.json)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help=f"strategies to time (default {','.join(STRATEGIES)})")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each probe; the median is kept (default 3)")
    parser.add_argument("--cpu", type=int, help="the CPU to run on (default: the last this process may use)")
    parser.add_argument("--limit-1k", type=float, default=45.0, help="seconds per 1,024-GPU run (default 45)")
    parser.add_argument("--limit-16k", type=float, default=60.0,
                        help="seconds per 16,384-GPU run (default 60, the target)")
    parser.add_argument("--limit-100k", type=float, default=120.0, help="seconds for the RailX run (default 120, the target)")
    parser.add_argument("--limit-flow", type=float, default=60.0, help="seconds for the flow engine's run (default 60)")
    parser.add_argument("--limit-flow-scale", type=float, default=600.0,
                        help="seconds per run of the flow_scale section (default 600, step_16k's target)")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"the sections to measure (default all: {','.join(SECTIONS)})")
    parser.add_argument("--limit-outputs", type=float, default=600.0,
                        help="seconds per run of the outputs_16k section (default 600; its target is 60)")
    parser.add_argument("--memory-limit-gib", type=float, default=16.0,
                        help="address space per run (default 16 GiB; twice the 8 GiB target): past it a run fails")
    args = parser.parse_args(argv[1:])
    MEMORY_LIMIT_BYTES[0] = int(args.memory_limit_gib * 1024 ** 3)
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    if args.cpu is not None and args.cpu not in os.sched_getaffinity(0):
        parser.error(f"--cpu {args.cpu} is not among the CPUs this process may use {sorted(os.sched_getaffinity(0))}")
    CPU[0] = args.cpu
    args.source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args.build = os.path.abspath(args.build)
    strategies = [s for s in args.strategies.split(",") if s]
    sections = [s for s in args.sections.split(",") if s]
    for s in sections:
        if s not in SECTIONS:
            parser.error(f"--sections: unknown section '{s}' (known: {', '.join(SECTIONS)})")

    result = {"benchmark": "eppsim speed (issue 10, item 5)", "command": " ".join(["scripts/bench.py", *argv[1:]]),
              "git": git_commit(args.source), "machine": machine(), "build_type": build_type(args.build),
              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "memory_limit_gib": args.memory_limit_gib, "repeat": args.repeat, "engine_ops": {"1024": {}, "16384": {}}, "step_16k": {}}

    for s in strategies if "engine_ops" in sections else []:  # (a) at 1K
        record = probe(args, STEP_16K, STEP_1K_SETS + [f"plan.strategy={s}"], args.limit_1k)
        result["engine_ops"]["1024"][s] = record
        log(f"1K {s}: {summary(record)}")

    if "allreduce_4096" in sections:
        measure_ring(args, result)
    for s in strategies if "step_16k" in sections else []:  # (c) one step on 16K GPUs; (a) at 16K
        record = probe(args, STEP_16K, [f"plan.strategy={s}"], args.limit_16k)
        result["step_16k"][s] = record
        result["engine_ops"]["16384"][s] = {k: record[k] for k in ("ops", "engine_time_s", "ops_per_s", "runs") if k in record}
        if "ops" not in record:
            result["engine_ops"]["16384"][s] = record
        log(f"16K {s}: {summary(record)}")

    if "railx_100k" in sections:
        result["railx_100k"] = probe(args, RAILX, RAILX_100K_SETS, args.limit_100k)  # (d)
        log(f"RailX 100K: {summary(result['railx_100k'])}")

    if "flow_1024" not in sections:
        pass
    elif "flow" in engines(args):  # (e)
        result["flow_1024"] = probe(args, RING_1024, ["simulation.engine=flow"], args.limit_flow)
        log(f"flow 1024: {summary(result['flow_1024'])}")
    else:
        result["flow_1024"] = {"skipped": "no engine named flow is registered in this build"}

    if "flow_step_1k" in sections and "flow" in engines(args):  # (j)
        result["flow_step_1k"] = {}
        for s in strategies:
            record = {}
            for engine in ("analytic", "flow"):
                record[engine] = probe_once(args, STEP_16K, STEP_1K_SETS + [f"plan.strategy={s}",
                                                                            f"simulation.engine={engine}"], args.limit_flow)
            steps = [record[e].get("step_time_s") for e in ("analytic", "flow")]
            if None not in steps:
                record["flow_vs_analytic"] = round(steps[1] / steps[0] - 1.0, 6)
            result["flow_step_1k"][s] = record
            log(f"flow 1K {s}: analytic {summary(record['analytic'])}; flow {summary(record['flow'])}")

    if "outputs_16k" in sections:  # (f)
        result["outputs_16k"] = {}
        for s in strategies:
            record = run_with_outputs(args, STEP_16K, s, args.limit_outputs)
            result["outputs_16k"][s] = record
            log(f"16K {s} with default outputs: {summary(record)}")

    if "plan_scale" in sections:  # (h)
        result["plan_scale"] = measure_plan_scale(args, strategies)

    if "railx_200k" in sections:  # (g)
        result["railx_200k"] = {}
        for s in strategies:
            sets = ["cluster.compare_topologies=[]"] + RAILX_200K_SETS.get(s, []) + RAILX_200K_REPEATS.get(s, [])
            record = run_with_outputs(args, RAILX, s, args.limit_outputs, sets)
            record["sets"] = sets
            result["railx_200k"][s] = record
            log(f"RailX 200K {s} with default outputs: {summary(record)}")

    if "railx_1m" in sections:  # (i)
        result["railx_1m"] = {}
        MEMORY_LIMIT_BYTES[0] = int(max(args.memory_limit_gib, RAILX_1M_MEMORY_GIB) * 1024 ** 3)
        for s in [s for s in strategies if s in RAILX_1M_STRATEGIES]:
            record = run_with_outputs(args, RAILX_1M, s, args.limit_outputs, RAILX_1M_SETS.get(s, []))
            record["sets"] = RAILX_1M_SETS.get(s, [])
            result["railx_1m"][s] = record
            log(f"RailX 1M {s} with default outputs: {summary(record)}")
        MEMORY_LIMIT_BYTES[0] = int(args.memory_limit_gib * 1024 ** 3)

    if "identical_replicas" in sections:  # (l)
        result["identical_replicas"] = {}
        for gpus in IDENTICAL_REPLICAS_GPUS:
            replicas = gpus // 64
            sets = [f"cluster.nodes={gpus // 8}", f"workload.global_batch={gpus}", f"workload.repeats={replicas}"]
            runs = {}
            for identical in ["true", "false"]:
                runs[identical] = run_with_outputs(args, STEP_16K, "epp", args.limit_outputs,
                                                   sets + [f"simulation.identical_replicas={identical}"])
                log(f"{gpus} GPUs epp, identical_replicas {identical}: {summary(runs[identical])}")
            same = all("report_sha256" in r for r in runs.values()) and \
                runs["true"]["report_sha256"] == runs["false"]["report_sha256"]
            result["identical_replicas"][str(gpus)] = {"sets": sets, "once": runs["true"], "every_rank": runs["false"],
                                                       "reports_identical": same}
            log(f"{gpus} GPUs: reports identical: {same}")

    if "trace_tools" in sections:  # (m)
        result["trace_tools"] = measure_trace_tools(args)

    if "flow_scale" in sections and "flow" in engines(args):  # (k)
        result["flow_scale"] = {}
        for gpus in FLOW_SCALE_GPUS:
            sizes = [f"cluster.nodes={gpus // 8}", f"workload.global_batch={gpus}"] if gpus != 16384 else []
            result["flow_scale"][str(gpus)] = {}
            for s in strategies:
                record = run_with_outputs(args, STEP_16K, s, args.limit_flow_scale, sizes + ["simulation.engine=flow"])
                result["flow_scale"][str(gpus)][s] = record
                log(f"flow {gpus} {s}: {summary(record)}, forked child {record.get('peak_rss_forked_gib')} GiB")

    result["targets"] = targets(result, strategies)
    result["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.out)), prefix=".bench-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    log(f"wrote {args.out}")
    return 0


def measure_ring(args, result):
    """(b) the 4,096-rank ring all-reduce, as a user runs it and as the probe times it."""
    ring = probe(args, RING_4096, [], args.limit_16k)
    with tempfile.TemporaryDirectory(prefix="eppsim-bench-") as out:
        wall, res = run_child([os.path.join(args.build, "sim/eppsim"), "run", RING_4096, "-o", out],
                              args.limit_16k, args.source)
    ring["eppsim_run_wall_s"] = round(wall, 3) if wall is not None else None
    if wall is None:
        ring["eppsim_run"] = res
    result["allreduce_4096"] = ring
    log(f"ring 4096: {summary(ring)}, eppsim run {ring['eppsim_run_wall_s']} s")


def measure_plan_scale(args, strategies):
    """(h) per strategy, the probe's planning time at each of PLAN_SCALE_GRIDS (median of --repeat
    runs) and the exponent k of time ~ GPUs^k fitted by least squares from 4,608 GPUs up."""
    out = {}
    for s in strategies:
        points = {}
        for grid in PLAN_SCALE_GRIDS:
            sets = railx_grid_sets(grid) + [f"plan.strategy={s}"] + RAILX_200K_SETS.get(s, [])
            runs = []
            for _ in range(args.repeat):
                record = probe_once(args, RAILX, sets, args.limit_outputs, ["--plan-only"])
                if "plan_time_s" not in record:
                    runs = [record]
                    break
                runs.append(record)
            record = sorted(runs, key=lambda r: r.get("plan_time_s", 0))[(len(runs) - 1) // 2]
            points[str(grid * grid * 32)] = record
            log(f"plan scale {s} at {grid * grid * 32} GPUs: {summary(record)}")
        fitted = [(int(n), r["plan_time_s"]) for n, r in points.items() if int(n) >= 4608 and r.get("plan_time_s", 0) > 0]
        out[s] = {"points": points, "exponent_from_4608": round(slope(fitted), 3) if len(fitted) >= 2 else None}
    return out


def slope(points):
    """Least-squares slope of log(y) against log(x)."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def measure_trace_tools(args):
    """(m) each command that reads a trace, on step_16k's epp trace of every rank."""
    with tempfile.TemporaryDirectory(prefix="eppsim-bench-") as out:
        trace = os.path.join(out, "run")
        argv = [os.path.join(args.build, "sim/eppsim"), "run", STEP_16K, "--strategy", "epp", "--trace-ranks", "all",
                "--outputs", "trace", "-o", trace, "--log=warn"]
        wall, res = run_child(argv, args.limit_outputs, args.source)
        if wall is None:
            return {"run": res}
        record = {"run": {"argv": argv[1:], "wall_s": round(wall, 3),
                          "trace_pb_bytes": os.path.getsize(os.path.join(trace, "trace.pb"))}}
        log(f"trace tools: step_16k epp, every rank: trace.pb {record['run']['trace_pb_bytes']} bytes")
        for name, words in TRACE_TOOLS.items():
            argv = [os.path.join(args.build, "sim/eppsim"), *[w.format(trace=trace, out=out) for w in words],
                    "--log=warn"]
            wall, res = run_measured(argv, args.limit_outputs, args.source)
            record[name] = res if wall is None else {"wall_s": round(wall, 3), "peak_rss_bytes": res,
                                                     "peak_rss_gib": round(res / GIB, 3)}
            log(f"trace tools: {name}: {summary(record[name])}")
            for leftover in ("trace.json", "trace.pftrace", "rank_timeline.csv"):  # gigabytes each
                if os.path.exists(os.path.join(out, leftover)):
                    os.remove(os.path.join(out, leftover))
    return record


def run_with_outputs(args, scenario, strategy, limit_s, sets=()):
    """(f), (g), (k) `eppsim run SCENARIO --strategy S [--set ...]` with its default outputs, as a user runs it."""
    with tempfile.TemporaryDirectory(prefix="eppsim-bench-") as out:
        argv = [os.path.join(args.build, "sim/eppsim"), "run", scenario, "--strategy", strategy, "-o",
                os.path.join(out, "run"), "--log=warn"]
        for s in sets:
            argv += ["--set", s]
        wall, res = run_child(argv, limit_s, args.source)
        if wall is None:
            return res
        with open(os.path.join(out, "run", "timings.json"), encoding="utf-8") as f:
            timings = json.load(f)
        with open(os.path.join(out, "run", "report.json"), "rb") as f:
            report = f.read()
        kept = json.loads(report).get("trace_ranks", {}).get("ranks")
        files = {name: os.path.getsize(os.path.join(out, "run", name)) for name in sorted(os.listdir(os.path.join(out, "run")))}
    return {"wall_s": round(wall, 3), "plan_time_s": round(timings["plan_time_s"], 3),
            "simulation_time_s": round(timings["simulation_time_s"], 3), "write_time_s": round(timings["write_time_s"], 3),
            "peak_rss_bytes": timings["peak_rss_bytes"], "peak_rss_gib": round(timings["peak_rss_bytes"] / GIB, 3),
            "estimated_peak_gib": round(timings.get("estimated_peak_bytes", 0) / GIB, 3),
            "peak_rss_forked_gib": round(timings.get("peak_rss_forked_bytes", 0) / GIB, 3),
            "traced_ranks": kept if kept is not None else "all", "file_bytes": files,
            "report_sha256": hashlib.sha256(report).hexdigest()}


if __name__ == "__main__":
    sys.exit(main(sys.argv))
