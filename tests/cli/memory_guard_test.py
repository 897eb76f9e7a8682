#!/usr/bin/python3
"""The memory guard (base/memory_limit.h) against what runs measure.

Each run's timings.json holds the guard's estimate of the simulation's peak
(estimated_peak_bytes: what the process held before the engine, plus the
engine's state per op and the kept op events) beside the peak it measured
(peak_rss_bytes). On scenarios/bench/step_16k cut to 2,048 GPUs, where the
engine's part is most of the peak, the estimate of epp must be within 10% of
the peak; of ulysses within -20%..+25% (its peak is nearer the planner's and
the writers'). The flow engine simulates in a forked child (its peak is
timings.json's peak_rss_forked_bytes): on step_16k cut to 1,024 GPUs the
estimate, its SimGrid platform included, must lie within 0.95..2x of the
larger of the two processes' peaks (a forked child shares its parent's pages).
A run past --max-memory is refused before it simulates: exit 2, one line
naming the estimate, the limit and what to change, and no output directory.
The flow engine, under the catalogue's 4 GiB address-space limit, runs a ring
all-reduce of 1,024 ranks (SimGrid's default 8 MiB actor stacks failed to
allocate there) and refuses step_16k's 16,384 ranks with the estimate of its
SimGrid platform.

usage: memory_guard_test.py EPPSIM_BINARY SOURCE_DIR
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

eppsim, source = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
CUT = ["--set", "cluster.nodes=256", "--set", "workload.global_batch=2048"]
CUT_1K = ["--set", "cluster.nodes=128", "--set", "workload.global_batch=1024"]
failures = []


def run(args, work, address_space_bytes=None):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (address_space_bytes, address_space_bytes))

    return subprocess.run([eppsim, *args, "--log=warn"], cwd=work, capture_output=True, text=True,
                          preexec_fn=limit if address_space_bytes else None)


with tempfile.TemporaryDirectory() as work:
    for engine, cut, strategy, low, high in (("analytic", CUT, "epp", 0.9, 1.1), ("analytic", CUT, "ulysses", 0.8, 1.25),
                                             ("flow", CUT_1K, "packed-1f1b", 0.95, 2.0),
                                             ("flow", CUT_1K, "ulysses", 0.95, 2.0)):
        for outputs in ("none", "all"):
            out = os.path.join(work, f"{engine}-{strategy}-{outputs}")
            r = run(["run", os.path.join(source, "scenarios/bench/step_16k.textproto"), *cut, "--strategy", strategy,
                     "--engine", engine, "--outputs", outputs, "-o", out], work)
            if r.returncode != 0:
                failures.append(f"{strategy} on the {engine} engine, --outputs {outputs}: exit {r.returncode}: {r.stderr}")
                continue
            with open(os.path.join(out, "timings.json")) as f:
                timings = json.load(f)
            peak = max(timings["peak_rss_bytes"], timings.get("peak_rss_forked_bytes", 0))
            ratio = timings["estimated_peak_bytes"] / peak
            line = (f"{strategy} on the {engine} engine, --outputs {outputs}: estimated "
                    f"{timings['estimated_peak_bytes'] / 2**30:.3f} GiB, measured {peak / 2**30:.3f} GiB ({ratio:.3f}x)")
            print(("ok   " if low <= ratio <= high else "FAIL ") + line)
            if not low <= ratio <= high:
                failures.append(f"{line}: not within {low}..{high}x")

    out = os.path.join(work, "refused")
    r = run(["run", os.path.join(source, "scenarios/quickstart.textproto"), "--max-memory", "1MiB", "-o", out], work)
    want = ("simulating 16 ranks' packed-1f1b with the analytic engine needs about ", "past the memory limit of 1 MiB "
            "(--max-memory): keep fewer ranks' op events (--trace-ranks auto, or --outputs none)")
    if r.returncode != 2 or not all(w in r.stderr for w in want) or os.path.exists(out):
        failures.append(f"a run past --max-memory: exit {r.returncode}, output directory left: {os.path.exists(out)}, "
                        f"stderr: {r.stderr}")
    else:
        print("ok   a run past --max-memory is refused before it simulates")

    for name, want_exit, want in (("allreduce_ring_1024", 0, ""),
                                  ("step_16k", 2, "with the flow engine (its platform about ")):
        r = run(["run", os.path.join(source, f"scenarios/bench/{name}.textproto"), "--engine", "flow",
                 "--outputs", "none", "-o", os.path.join(work, f"flow-{name}")], work, address_space_bytes=4 << 30)
        if r.returncode != want_exit or want not in r.stderr:
            failures.append(f"{name} on the flow engine under 4 GiB of address space: exit {r.returncode}, "
                            f"wanted {want_exit} and {want!r}: {r.stderr[-2000:]}")
        else:
            print(f"ok   {name} on the flow engine under 4 GiB of address space: exit {want_exit}")

for failure in failures:
    print("FAIL " + failure)
sys.exit(1 if failures else 0)
