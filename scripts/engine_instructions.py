#!/usr/bin/python3
"""Instructions the analytic engine executes per op, counted by valgrind's callgrind:
a measure of the engine's work that, unlike wall time, is the same from run to run
and from one machine to the next (for one build), so that a change's effect shows
even on a noisy machine. Writes one JSON file.

    cmake --build build-release --target eppsim
    scripts/engine_instructions.py [--build build-release] [--out FILE]
                                   [--strategies a,b,...] [--set FIELD=VALUE]...
                                   [--keep-profiles DIR]

For each strategy it runs, under `valgrind --tool=callgrind` (Debian's valgrind
package), `eppsim run scenarios/bench/step_16k.textproto --set plan.strategy=S
--outputs none` at 256 GPUs (cluster.nodes=32, workload.global_batch=256: the same
load per replica as the speed benchmark's 1K and 16K steps; --set adds to or
replaces these), and counts the instructions inside run_analytic (validation and
flat arrays, pricing, the event loop and the trace: what the speed benchmark's
engine time covers) with --toggle-collect. A run's ops and events come from the
engine's debug line. Each run takes about a minute for epp. --keep-profiles keeps
each run's callgrind file (DIR/STRATEGY.callgrind), whose split by function
`callgrind_annotate --inclusive=no DIR/epp.callgrind` prints.

--cache-sim BYTES also simulates the data caches (callgrind --cache-sim=yes): a
48 KiB, 12-way first level and a last level of BYTES, 16-way, 64-byte lines (the
lent H200 host's Xeon has 2 MiB of L2 a core: --cache-sim 2097152), and records
each run's misses of both per op. At 16K GPUs (--set cluster.nodes=2048 --set
workload.global_batch=16384) the engine's working set outgrows the 2 MiB level:
its misses per op are three to six times those at 1K. The simulation takes about
twice as long as counting alone.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import STRATEGIES, STEP_16K, build_type, cache_value, git_commit, machine  # noqa: E402

SETS_256 = ["cluster.nodes=32", "workload.global_batch=256"]


def count(args, strategy, sets, scratch):
    out_file = os.path.join(scratch, f"{strategy}.callgrind")
    cache = ["--cache-sim=yes", "--D1=49152,12,64", f"--LL={args.cache_sim},16,64"] if args.cache_sim else []
    argv = ["valgrind", "--tool=callgrind", *cache, "--toggle-collect=eppsim::run_analytic*",
            f"--callgrind-out-file={out_file}", os.path.join(args.build, "sim/eppsim"), "run", STEP_16K,
            "--set", f"plan.strategy={strategy}", "--outputs", "none", "-o", os.path.join(scratch, strategy),
            "--log", "engine.analytic:debug"]
    for s in sets:
        argv += ["--set", s]
    done = subprocess.run(argv, cwd=args.source, capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"failed": True, "exit_status": done.returncode, "error": lines[-1] if lines else ""}
    instructions = None
    counts, names = {}, []
    with open(out_file, encoding="utf-8") as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            if line.startswith("summary:") or line.startswith("totals:"):
                counts = dict(zip(names, (int(v) for v in line.split()[1:])))
                instructions = counts.get("Ir")
    ops = re.search(r"(\d+) ops: validation", done.stderr)
    events = re.search(r"\((\d+) events", done.stderr)  # (builds before f8daf06 do not count them)
    if instructions is None or ops is None:
        return {"failed": True, "error": "no callgrind summary or engine debug line"}
    record = {"ops": int(ops.group(1)), "instructions": instructions,
              "instructions_per_op": round(instructions / int(ops.group(1)), 1)}
    if events is not None:
        record["events"] = int(events.group(1))
    if args.cache_sim:
        # Data misses, reads and writes, of the first level and of the last (the --cache-sim level).
        record["l1d_misses_per_op"] = round((counts.get("D1mr", 0) + counts.get("D1mw", 0)) / record["ops"], 2)
        record["last_level_misses_per_op"] = round((counts.get("DLmr", 0) + counts.get("DLmw", 0)) / record["ops"], 2)
    return record


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build-release", help="the build to measure (default build-release)")
    parser.add_argument("--out", default="engine-instructions.json")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--set", action="append", default=[], dest="sets", metavar="FIELD=VALUE",
                        help="a scenario override after the 256-GPU ones")
    parser.add_argument("--keep-profiles", metavar="DIR", help="keep each run's callgrind file in DIR")
    parser.add_argument("--cache-sim", type=int, metavar="BYTES",
                        help="also simulate the data caches, with a last level of BYTES, and count their misses")
    args = parser.parse_args(argv)
    args.source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args.build = os.path.abspath(args.build)
    if shutil.which("valgrind") is None:
        sys.exit("engine_instructions.py: valgrind is not installed (apt-get install valgrind)")
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    sets = SETS_256 + args.sets
    what = "instructions inside run_analytic (callgrind), per strategy"
    if args.cache_sim:
        what += f", with data cache misses (48 KiB 12-way L1d, {args.cache_sim}-byte 16-way last level)"
    result = {"what": what, "scenario": STEP_16K,
              "sets": sets, "valgrind": valgrind, "build": args.build, "build_type": build_type(args.build),
              "machine": machine(), **git_commit(cache_value(args.build, "CMAKE_HOME_DIRECTORY") or args.source), "strategies": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for strategy in args.strategies.split(","):
            record = count(args, strategy, sets, scratch)
            result["strategies"][strategy] = record
            print(f"{strategy}: {json.dumps(record)}", file=sys.stderr)
            if args.keep_profiles:
                os.makedirs(args.keep_profiles, exist_ok=True)
                profile = os.path.join(scratch, f"{strategy}.callgrind")
                if os.path.exists(profile):
                    shutil.copy(profile, args.keep_profiles)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
