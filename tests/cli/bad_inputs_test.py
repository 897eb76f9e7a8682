"""Runs the catalogue of bad inputs (tests/cli/bad_inputs.py) against eppsim.

usage: bad_inputs_test.py EPPSIM SOURCE_DIR [CASE_ID_REGEX]   (BAD_INPUTS_SHOW=1: print every message)

For every case, in a fresh folder: exit status exactly 2 (no signal, no other
code); stderr exactly one line, "eppsim: error: " and then the case's expected
text; within a 20 s timeout; under a 4 GiB address-space limit (skipped when
EPPSIM_SANITIZED is set: sanitizers reserve terabytes of address space); and
the folder afterwards exactly as before (no output, no partial or staging
file, -o targets unchanged). Also checks that docs/bad-inputs.md is what
scripts/bad_inputs_doc.py renders from the catalogue.
"""

import hashlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bad_inputs  # noqa: E402
from bad_inputs import DIR, FIFO, Sparse, Symlink  # noqa: E402

TIMEOUT_S = 20
MEMORY_LIMIT_BYTES = 4 << 30


def fs(text: str) -> bytes:
    """A command-line string or file name as bytes (surrogate escapes: raw bytes)."""
    return os.fsencode(text)


def substitute(text: str, case_dir: Path, base: Path) -> str:
    return text.replace("{d}", os.fsdecode(case_dir)).replace("{b}", os.fsdecode(base))


def make_files(case, case_dir: Path, base: Path):
    for name, spec in case.files.items():
        path = case_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if spec == DIR:
            path.mkdir(exist_ok=True)
        elif spec == FIFO:
            os.mkfifo(path)
        elif isinstance(spec, Symlink):
            path.symlink_to(substitute(spec.target, case_dir, base))
        elif isinstance(spec, Sparse):
            with open(path, "wb") as f:
                f.truncate(spec.size)
        elif isinstance(spec, str):
            path.write_bytes(spec.encode())
        elif isinstance(spec, bytes):
            path.write_bytes(spec)
        else:
            path.write_bytes(spec(base))


def snapshot(root: Path) -> dict:
    """Every entry under `root` with what it is: its bytes' digest, a link's target."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if path.is_symlink():
                what = ("link", os.readlink(path))
            elif path.is_dir():
                what = ("dir",)
            elif path.is_fifo():
                what = ("fifo",)
            elif st.st_size > (64 << 20):
                what = ("file", st.st_size, st.st_mtime_ns)  # sparse fixtures: not read whole
            else:
                what = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            entries[os.fsdecode(path.relative_to(root))] = what
    return entries


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def expected_regex(program: str, expect: str, case_dir: Path, base: Path) -> str:
    parts = substitute(expect, case_dir, base).split("...")
    return f"^{re.escape(program)}: error: .*" + ".*".join(re.escape(p) for p in parts)


def program_path(eppsim: Path, program: str) -> Path:
    """eppsim, or eppsim-run / eppsim-bench in the build tree's runtime/ folder beside sim/."""
    return eppsim if program == "eppsim" else eppsim.parent.parent / "runtime" / program


def run_case(case, eppsim: Path, base: Path, work: Path, sanitized: bool) -> list:
    case_dir = work / case.id
    case_dir.mkdir()
    make_files(case, case_dir, base)
    args = [fs(substitute(a, case_dir, base)) for a in case.args]
    program = program_path(eppsim, case.program)
    if case.program == "eppsim" and not any(a.startswith(b"--log") for a in args):
        args.append(b"--log=warn")
    env = dict(os.environ)
    if case.program == "eppsim-run":
        # Open MPI never frees some of its own allocations (in plugins it has unloaded by exit, so no
        # suppression can name them): in sanitizer builds its ranks run without LeakSanitizer, as in
        # tests/runtime; AddressSanitizer's other checks and UBSan stay on.
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
    before = snapshot(case_dir)
    try:
        proc = subprocess.run([fs(str(program))] + args, cwd=case_dir, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=TIMEOUT_S, env=env,
                              preexec_fn=None if sanitized else limit_memory)
    except subprocess.TimeoutExpired:
        return [f"hung: no exit within {TIMEOUT_S} s"]
    problems = []
    stderr = proc.stderr.decode("utf-8", errors="replace")
    if proc.returncode < 0:
        problems.append(f"killed by signal {signal.Signals(-proc.returncode).name}")
    elif proc.returncode != 2:
        problems.append(f"exit status {proc.returncode}, expected 2")
    lines = stderr.splitlines()
    if len(lines) != 1:
        problems.append(f"stderr has {len(lines)} lines, expected 1")
    elif not re.search(expected_regex(case.program, case.expect, case_dir, base), lines[0]):
        problems.append(f"message does not match {case.expect!r}")
    after = snapshot(case_dir)
    if after != before:
        added = sorted(set(after) - set(before))
        changed = sorted(k for k in before if after.get(k) != before[k])
        problems.append(f"the folder changed: added {added}, changed or removed {changed}")
    if os.environ.get("BAD_INPUTS_SHOW"):
        print(f"{case.id}: {stderr.strip()}")
    if problems:
        problems.append("stderr: " + (stderr.strip()[:2000] or "(empty)"))
        problems.append("stdout: " + (proc.stdout.decode("utf-8", errors="replace").strip()[:500] or "(empty)"))
    return problems


def make_base(eppsim: Path, source: Path, base: Path):
    """The valid inputs the cases start from: a small scenario and what eppsim makes of it."""
    text = (source / "scenarios/quickstart.textproto").read_text().replace("global_batch: 512", "global_batch: 32")
    (base / "s.textproto").write_text(text)

    def check(*args):
        subprocess.run([str(eppsim), *map(str, args), "--log=warn"], check=True, cwd=base, stdout=subprocess.DEVNULL)

    (base / "topo.textproto").write_text((source / "scenarios/topology_small.textproto").read_text())
    check("run", base / "s.textproto", "-o", base / "run")
    check("plan", base / "s.textproto", "-o", base / "schedule.pb")
    check("plan", base / "s.textproto", "-o", base / "schedule.textproto")
    check("export", "chakra", base / "schedule.pb", "-o", base / "et/t")


def check_doc(source: Path) -> list:
    sys.path.insert(0, str(source / "scripts"))
    import bad_inputs_doc

    doc = source / "docs/bad-inputs.md"
    wanted = bad_inputs_doc.render(source)
    if not doc.exists() or doc.read_text() != wanted:
        return [f"{doc} is not up to date: run /usr/bin/python3 scripts/bad_inputs_doc.py"]
    return []


def main() -> int:
    eppsim, source = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    only = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
    sanitized = os.environ.get("EPPSIM_SANITIZED", "") not in ("", "0")
    ids = [c.id for c in bad_inputs.CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    doc_problems = check_doc(source)
    for p in doc_problems:
        print(f"FAIL doc: {p}")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="eppsim-bad-inputs-") as tmp:
        work = Path(tmp)
        base = work / "base"
        base.mkdir()
        make_base(eppsim, source, base)
        cases = [c for c in bad_inputs.CASES if not only or only.search(c.id)]
        (work / "cases").mkdir()
        skipped = 0
        for case in cases:
            if not program_path(eppsim, case.program).exists():
                print(f"skip {case.id}: {case.program} is not built")
                skipped += 1
                continue
            problems = run_case(case, eppsim, base, work / "cases", sanitized)
            if problems:
                failures += 1
                print(f"FAIL {case.id} ({case.input})")
                for p in problems:
                    print(f"    {p}")
            else:
                print(f"ok   {case.id}")
        print(f"{len(cases) - skipped - failures} of {len(cases) - skipped} cases passed"
              + (f", {skipped} skipped" if skipped else "")
              + (" (no memory limit: sanitized build)" if sanitized else ""))
    return 1 if failures or doc_problems else 0


if __name__ == "__main__":
    sys.exit(main())
