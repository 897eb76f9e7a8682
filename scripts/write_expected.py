#!/usr/bin/python3
"""Writes SCENARIO.expected.textproto from a run's report.json: the headline
values tests/sim/scenarios_test.cpp checks. Run after a deliberate change of a
cost model or planner, and say why in the commit.

    build/sim/eppsim run SCENARIO -o OUT && scripts/write_expected.py SCENARIO OUT/report.json
"""
import json
import os
import sys
import tempfile


def main(argv):
    if len(argv) != 3:
        print("usage: write_expected.py SCENARIO REPORT_JSON", file=sys.stderr)
        return 2
    scenario, report_path = argv[1], argv[2]
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"write_expected: {report_path}: {e}", file=sys.stderr)
        return 2
    out = scenario.replace(".textproto", ".expected.textproto")
    lines = [
        f"# Headline results of {scenario} (strategy {report['strategy']}), checked by tests/sim/scenarios_test.cpp.",
        "# Re-measure after a deliberate change of the cost model or the planner and say why in the commit.",
        f'measured_by: "build/sim/eppsim run {scenario} -o eppsim-out"',
    ]
    if "collective" in report:
        # A collective micro-benchmark: its time and nccl-tests' bandwidths.
        c = report["collective"]
        lines += [
            f'values {{ field: "collective.ranks" value: {int(c["ranks"])} relative_tolerance: 0 }}',
            f'values {{ field: "collective.time_s" value: {c["time_s"]:.9g} relative_tolerance: 1e-6 }}',
            f'values {{ field: "collective.algbw_Bps" value: {c["algbw_Bps"]:.9g} relative_tolerance: 1e-6 }}',
            f'values {{ field: "collective.busbw_Bps" value: {c["busbw_Bps"]:.9g} relative_tolerance: 1e-6 }}',
        ]
    else:
        lines += [
            f'values {{ field: "sequences" value: {int(report["sequences"])} relative_tolerance: 0 }}',
            f'values {{ field: "tokens" value: {int(report["tokens"])} relative_tolerance: 0 }}',
            f'values {{ field: "micro_batches" value: {int(report["micro_batches"])} relative_tolerance: 0 }}',
            f'values {{ field: "step_time_s" value: {report["step_time_s"]:.6g} relative_tolerance: 0.001 }}',
            f'values {{ field: "mfu" value: {report["mfu"]:.6g} relative_tolerance: 0.001 }}',
        ]
    if "faults" in report:
        # Simulated faults: the healthy step and, when the step completed, the slowdown.
        f = report["faults"]
        lines.append(f'values {{ field: "faults.healthy_step_time_s" value: {f["healthy_step_time_s"]:.6g} relative_tolerance: 0.001 }}')
        if "slowdown" in f:
            lines.append(f'values {{ field: "faults.slowdown" value: {f["slowdown"]:.6g} relative_tolerance: 0.001 }}')
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(out)), prefix=".expected-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
