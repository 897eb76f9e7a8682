#!/usr/bin/env python3
"""Names what moved between two builds' outputs of the golden-outputs test.

usage: compare_outputs.py BEFORE_DIR AFTER_DIR

Both directories are written by `GOLDEN_KEEP=DIR tests/cli/golden_outputs_test.sh`.
For every output directory holding a report.json whose files differ, prints the
step time before and after and its relative change; other differing files are
listed by name. Exits 0 (it reports; the golden test decides).
"""
import json
import pathlib
import sys


def differing(before: pathlib.Path, after: pathlib.Path):
    for path in sorted(before.rglob("*")):
        if not path.is_file() or path.name == "timings.json":
            continue
        other = after / path.relative_to(before)
        if not other.is_file() or other.read_bytes() != path.read_bytes():
            yield path.relative_to(before)


def main() -> int:
    before, after = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    changed_dirs = sorted({p.parent for p in differing(before, after)})
    for directory in changed_dirs:
        report_before, report_after = before / directory / "report.json", after / directory / "report.json"
        if report_before.is_file() and report_after.is_file():
            old = json.loads(report_before.read_text())["step_time_s"]
            new = json.loads(report_after.read_text())["step_time_s"]
            print(f"{directory}: step {old:.6f} s -> {new:.6f} s ({100 * (new - old) / old:+.4f}%)")
        else:
            files = [p.name for p in differing(before / directory, after / directory) if p.parent == pathlib.Path(".")]
            print(f"{directory}: {', '.join(files)} differ")
    print(f"{len(changed_dirs)} output directories differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
