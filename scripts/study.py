#!/usr/bin/python3
"""Runs a shipped study and writes its results: scenarios/studies/NAME/.

    /usr/bin/python3 scripts/study.py NAME [-j N] [--eppsim BIN] [--out DIR]
    /usr/bin/python3 scripts/study.py NAME --render [--check]

A study is a folder of scenarios/studies/ holding sweep.textproto (the sweep),
README.md (what it asks and how to read it) and results.csv (the sweep's rows,
as shipped). Running it runs `eppsim sweep sweep.textproto -o DIR --html`
(DIR: eppsim-out/studies/NAME, resumable: rerun after an interruption), copies
DIR/results.csv into the study, and renders its results file from it:
  - a paper reproduction (scenarios/NAME/paper.json exists): scenarios/NAME/RESULTS.md,
    our speedups beside the paper's (scripts/reproduction_table.py);
  - any other study: scenarios/studies/NAME/RESULTS.md, the tables its
    tables.json asks for (scripts/study_tables.py).
--render renders from the shipped results.csv without running anything;
with --check it writes nothing and exits 1 when the shipped results file
differs from what the shipped rows give (tests/cli/studies_test.py).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def results_file(name):
    """(the results file, the command that renders it into a path)."""
    paper = os.path.join(ROOT, "scenarios", name, "paper.json")
    study = os.path.join(ROOT, "scenarios", "studies", name)
    csv = os.path.join(study, "results.csv")
    if os.path.exists(paper):
        return (os.path.join(ROOT, "scenarios", name, "RESULTS.md"),
                lambda out: ["/usr/bin/python3", "-B", os.path.join(ROOT, "scripts", "reproduction_table.py"), paper,
                             csv, out])
    return (os.path.join(study, "RESULTS.md"),
            lambda out: ["/usr/bin/python3", "-B", os.path.join(ROOT, "scripts", "study_tables.py"),
                         os.path.join(study, "tables.json"), csv, out])


def render(name, check):
    target, command = results_file(name)
    if not check:
        subprocess.run(command(target), check=True)
        print(f"study: wrote {os.path.relpath(target, ROOT)}", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as work:
        fresh = os.path.join(work, "RESULTS.md")
        subprocess.run(command(fresh), check=True)
        with open(fresh, "rb") as a, open(target, "rb") as b:
            if a.read() == b.read():
                return 0
    print(f"study {name}: {os.path.relpath(target, ROOT)} is not what scenarios/studies/{name}/results.csv gives; "
          f"rerun /usr/bin/python3 scripts/study.py {name} --render", file=sys.stderr)
    return 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="a folder of scenarios/studies/")
    parser.add_argument("--render", action="store_true", help="render the results file from the shipped rows only")
    parser.add_argument("--check", action="store_true", help="with --render: compare, write nothing")
    parser.add_argument("-j", "--jobs", default="0", help="points at once (eppsim sweep -j)")
    parser.add_argument("--eppsim", default=os.environ.get("EPPSIM", os.path.join(ROOT, "build", "sim", "eppsim")))
    parser.add_argument("--out", help="the sweep's output folder (default eppsim-out/studies/NAME)")
    args = parser.parse_args()
    study = os.path.join(ROOT, "scenarios", "studies", args.name)
    if not os.path.exists(os.path.join(study, "sweep.textproto")):
        sys.exit(f"study: scenarios/studies/{args.name}/sweep.textproto not found")
    if args.render:
        sys.exit(render(args.name, args.check))
    if not os.access(args.eppsim, os.X_OK):
        sys.exit(f"study: {args.eppsim} is not built (scripts/build.sh, or --eppsim BIN)")
    out = os.path.abspath(args.out or os.path.join("eppsim-out", "studies", args.name))
    # From the repository's root, so that what the rows say of files (a failed point's error)
    # names them as scenarios/..., the same on every machine.
    result = subprocess.run([os.path.abspath(args.eppsim), "sweep", os.path.join("scenarios", "studies", args.name,
                                                                                  "sweep.textproto"),
                             "-o", out, "-j", args.jobs, "--html"], cwd=ROOT)
    if result.returncode != 0:
        sys.exit(result.returncode)
    shutil.copyfile(os.path.join(out, "results.csv"), os.path.join(study, "results.csv"))
    sys.exit(render(args.name, check=False))


if __name__ == "__main__":
    main()
