#!/usr/bin/python3
"""The sweep benchmark of issue 41: what `eppsim sweep` costs per point over a
lone `eppsim run` of the same point, and what two workers and two MPI
processes gain. Writes every figure, the machine and the commit to one JSON file.

    cmake --build build -j --target eppsim eppsim-sweep-mpi
    scripts/sweep_bench.py [--build build] [--points 1000] [--lone 30] [--out sweep-bench.json]

The sweep runs the quickstart scenario (`--outputs none`) at seeds 1..POINTS,
so every point samples its own batch. `lone` is the median wall time of
`eppsim run` of seeds 1..LONE one after the other (process start, plan,
simulation, report; no heavy files), the same work a point does; then
  sweep_j1      `eppsim sweep -j1`: per_point_s = wall / points, and
                overhead_pct = (per_point_s - lone_median_s) / lone_median_s,
                the target being under 5%
  sweep_j2      `eppsim sweep -j2`: its speedup over -j1
  mpirun_np2    `mpirun -np 2 eppsim sweep -j1`: its speedup over -j1
Each sweep starts from an empty output folder.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def wall(command):
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--lone", type=int, default=30)
    parser.add_argument("--out", default="sweep-bench.json")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    eppsim = os.path.join(os.path.abspath(args.build), "sim", "eppsim")
    quickstart = os.path.join(root, "scenarios", "quickstart.textproto")
    work = tempfile.mkdtemp(prefix="sweep-bench-")
    try:
        sweep = os.path.join(work, "seeds.textproto")
        with open(sweep, "w") as f:
            f.write(f'name: "seeds"\nscenario: "{quickstart}"\n'
                    f'axes {{ fields {{ field: "seed" range {{ start: 1 stop: {args.points} step: 1 }} }} }}\n')
        lone = [wall([eppsim, "run", quickstart, "--set", f"seed={s}", "--outputs", "none", "-o",
                      os.path.join(work, "lone"), "--log=warn"]) for s in range(1, args.lone + 1)]
        lone_median = statistics.median(lone)
        result = {
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0]},
            "commit": subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                                     text=True).stdout.strip(),
            "points": args.points,
            "lone": {"runs": len(lone), "median_s": lone_median, "min_s": min(lone), "max_s": max(lone)},
        }

        def run_sweep(name, prefix, jobs):
            out = os.path.join(work, name)
            seconds = wall(prefix + [eppsim, "sweep", sweep, "-o", out, "-j", str(jobs), "--log=warn"])
            with open(os.path.join(out, "results.csv")) as f:
                rows = sum(1 for _ in f) - 1
            if rows != args.points:
                raise SystemExit(f"sweep_bench: {name} wrote {rows} rows, expected {args.points}")
            return seconds

        j1 = run_sweep("j1", [], 1)
        per_point = j1 / args.points
        result["sweep_j1"] = {"wall_s": j1, "per_point_s": per_point,
                              "overhead_pct": 100.0 * (per_point - lone_median) / lone_median}
        j2 = run_sweep("j2", [], 2)
        result["sweep_j2"] = {"wall_s": j2, "speedup_over_j1": j1 / j2}
        if shutil.which("mpirun"):
            root_flag = ["--allow-run-as-root"] if os.geteuid() == 0 else []
            np2 = run_sweep("mpi", ["mpirun", *root_flag, "--oversubscribe", "-np", "2"], 1)
            result["mpirun_np2"] = {"wall_s": np2, "speedup_over_j1": j1 / np2}
        result["targets"] = {"overhead_under_5pct": result["sweep_j1"]["overhead_pct"] < 5.0}
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
