#!/usr/bin/python3
"""The hybrid emulation table (docs/guide/runtime.md, "Hybrid emulation"), from
the folders of scripts/hybrid-validate.sh: the all-real run's (ALL/: its
calibrated simulation against it), then each hybrid run's
(DIR/vs-all-real/validation.json: the hybrid trace against the all-real one).
A row gives the ranks run for real and how the others were timed, the step
time against the all-real run's, the real ranks' compute (their COMPUTE ops'
busy time summed; every rank's for the simulation) and each real rank's busy
time against the same rank's in the all-real run (not for the simulation,
which counts a transfer busy from its last side's arrival, where a run counts
it from its posting).

    hybrid_table.py ALL [HYBRID_DIR ...]     (prints Markdown to stdout)

A hybrid folder is named hybrid-RANKS-LOOP (LOOP: open or closed); a folder
without a readable validation.json is an error (exit 2) that names it.
"""
import os
import sys

from validation_table import read_validation


def fail(message):
    print(f"hybrid_table: {message}", file=sys.stderr)
    sys.exit(2)


def read(path):
    try:
        return read_validation(path)
    except ValueError as e:
        fail(str(e))


def error(simulated, measured):
    return "—" if measured <= 0 else f"{(simulated - measured) / measured:+.1%}"


def cells(validation, busy_comparable=True):
    compute = [k for k in validation.get("kinds", []) if k["kind"].startswith("compute/")]
    sim_compute = sum(k.get("simulated_s", 0.0) for k in compute)
    meas_compute = sum(k.get("measured_s", 0.0) for k in compute)
    real = set(validation.get("real_ranks", []))
    busy = [f"{r['rank']}: {error(r.get('simulated_busy_s', 0.0), r.get('measured_busy_s', 0.0))}"
            for r in validation.get("per_rank", []) if not real or r["rank"] in real]
    return [f"{validation['simulated_step_time_s']:.3f} s", f"{validation['measured_step_time_s']:.3f} s",
            error(validation["simulated_step_time_s"], validation["measured_step_time_s"]),
            error(sim_compute, meas_compute), ", ".join(busy) if busy_comparable else "—"]


def main(argv):
    if len(argv) < 2:
        fail("usage: hybrid_table.py ALL [HYBRID_DIR ...]")
    lines = ["| run | real ranks | virtual ranks timed by | step | step, all real | step error | real ranks' compute error "
             "| busy error, per real rank |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    everything = read(os.path.join(argv[1], "validation.json"))
    # A simulation counts a transfer busy from its last side's arrival, a run from
    # its posting: their busy times are not comparable, hybrid and all-real ones are.
    lines.append("| " + " | ".join(["calibrated simulation", "none", "—"] + cells(everything, False)) + " |")
    for folder in argv[2:]:
        name = os.path.basename(os.path.normpath(folder))
        parts = name.split("-")
        if len(parts) < 3 or parts[0] != "hybrid" or parts[-1] not in ("open", "closed"):
            fail(f"{folder}: a hybrid folder is named hybrid-RANKS-open or hybrid-RANKS-closed")
        validation = read(os.path.join(folder, "vs-all-real", "validation.json"))
        timing = "the simulation (open loop)" if parts[-1] == "open" else "the simulation, re-timed (closed loop)"
        lines.append("| " + " | ".join(["hybrid", "-".join(parts[1:-1]), timing] + cells(validation)) + " |")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv)
