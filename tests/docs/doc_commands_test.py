#!/usr/bin/python3
"""Runs every command that README.md and docs/guide/*.md show and checks the
output quoted beside it, so that the documentation cannot go stale.

usage: doc_commands_test.py EPPSIM_BINARY REPO_ROOT [PAGE.md ...]
(PAGE.md relative to REPO_ROOT: only those pages; default every page)

Commands. In a fenced block (``` or ~~~), a line that starts with "$ " is a
command; a command line ending in a backslash goes on over the next line. The
lines after a command, up to the next "$ " line or the end of the block, are
the output it is quoted as printing. A block without a "$ " line is not run
(a textproto, a listing, a diagram), but a block labelled bash, sh, shell,
console or zsh must have prompts or a marker, unless it is a script's text
(its first line starts with "#!", e.g. a Slurm job file): a command block
cannot escape the test by leaving its prompts out.

Markers. A one-line HTML comment just before a block (blank lines between are
allowed), which the rendered page does not show, says how to run it:
  <!-- doc-test: skip (REASON) -->  not run, and listed with its reason: GPUs,
                                     mpirun over machines, Slurm, installing
                                     packages, builds, benchmarks, long runs
  <!-- doc-test: needs PATH -->      run only where PATH (from the commands'
                                     folder) exists, else listed as skipped
  <!-- doc-test: exit N -->          each command must exit with N, not 0
One marker may hold several, separated by ";". Anything else after
"doc-test:", a marker on a block without commands, or a marker followed by no
block is an error.

Where commands run. Each page gets a fresh folder of its own, TMP/PAGE/,
holding a symbolic link to each top-level entry the repository tracks
(scenarios/, plots/, scripts/, proto/, docs/, ...; no build trees, no outputs
of earlier runs), so that a command reads the repository as the guide's
reader does, from its root, and writes beside the links rather than into it
(eppsim refuses an -o that is a symbolic link, so `-o base` fails here).
A page's commands run there in order, so a command reads what the page's
earlier ones wrote (running.md's plots draw its runs). There,
`build/sim/eppsim` is a link to EPPSIM_BINARY, and EPPSIM_BINARY's folder
comes first on PATH, so that `eppsim` (and `eppsim-sweep-mpi` beside it) is
the binary under test; `../shared` is the checkout's sibling `../shared` when
it has one (ASTRA-sim's example traces). Each command runs in `bash -o
pipefail -c COMMAND`, stdin closed, for at most TIMEOUT_S seconds.

Checks. (a) The exit status: 0, or the block's `exit N`. (b) Its standard
output against the quoted lines, line by line, trailing spaces ignored: a
quoted line that is just "..." stands for any number of lines (none too),
"..." inside a line for any text within it, and all else must be equal. A
command quoted with no lines must print nothing on stdout. Standard error
(log lines) is not quoted; it is shown when a check fails. Numbers are
compared as text, except the wall-clock times of WALL_CLOCK: in a line that
its selector matches, each number its pattern captures may be any number
(the guide's `0.9 s` for a sweep's time matches `12.3 s`); a step time, a
throughput or a byte count must match to the digit.
"""
import difflib
import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 120
NUMBER = r"\d+(?:\.\d+)?"
# (where, the lines it covers, the wall-clock numbers in them as group 1)
WALL_CLOCK = [
    ("the `took` line of eppsim run, sim and replay", re.compile(r"^\s+took\s"),
     re.compile(rf"({NUMBER}) s\b")),
    ("eppsim sweep's summary line", re.compile(r"^sweep .*: \d+ points \("),
     re.compile(rf"failed, ({NUMBER}) s\b")),
]
SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*doc-test:(.*?)-->\s*$")
DIRECTIVE = re.compile(r"\s*(?:skip\s*\((?P<reason>.*?)\)|needs\s+(?P<path>[^\s;]+)|exit\s+(?P<code>\d+))\s*(?:;|$)")


class Command:
    def __init__(self, line, text):
        self.line, self.text, self.quoted = line, text, []


class Block:
    def __init__(self, page, line, commands, skip=None, needs=None, exit_status=0):
        self.page, self.line, self.commands = page, line, commands
        self.skip, self.needs, self.exit_status = skip, needs, exit_status


def parse_directives(text, where, errors):
    found, pos = {}, 0
    while pos < len(text) and text[pos:].strip():
        m = DIRECTIVE.match(text, pos)
        if not m or m.end() == pos:
            errors.append(f"{where}: doc-test marker: cannot read {text[pos:].strip()!r} "
                          "(skip (REASON), needs PATH or exit N, separated by ';')")
            return None
        for key in ("reason", "path", "code"):
            if m.group(key) is not None:
                if key in found:
                    errors.append(f"{where}: doc-test marker: two of {key}")
                found[key] = m.group(key).strip()
        pos = m.end()
    if not found:
        errors.append(f"{where}: doc-test marker without a directive")
        return None
    if "reason" in found and not found["reason"]:
        errors.append(f"{where}: doc-test marker: skip needs a reason in parentheses")
    return found


def read_commands(page, first_line, body, where, errors):
    """The commands of a block's lines (body[0] is the page's line first_line)."""
    commands, k = [], 0
    while k < len(body):
        line = body[k]
        if line.startswith("$ "):
            command = Command(first_line + k, line[2:])
            while command.text.endswith("\\") and k + 1 < len(body):
                k += 1
                command.text += "\n" + body[k]
            commands.append(command)
        elif commands:
            commands[-1].quoted.append(line.rstrip())
        elif line.strip() and any(other.startswith("$ ") for other in body):
            errors.append(f"{where}: text before the block's first '$ ' command: {line.strip()!r}")
        k += 1
    for command in commands:
        while command.quoted and not command.quoted[-1].strip():
            command.quoted.pop()
    return commands


def parse_page(root, page, errors):
    lines = open(os.path.join(root, page), encoding="utf-8").read().split("\n")
    blocks, marker, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        if m:
            if marker:
                errors.append(f"{page}:{marker[0]}: doc-test marker followed by another, not by a block")
            marker = (i + 1, parse_directives(m.group(1), f"{page}:{i + 1}", errors))
            i += 1
            continue
        if "<!--" in line and "doc-test" in line:
            errors.append(f"{page}:{i + 1}: a doc-test marker is one line: <!-- doc-test: ... -->")
        fence = FENCE.match(line)
        if not fence:
            if line.strip() and marker:
                errors.append(f"{page}:{marker[0]}: doc-test marker not followed by a fenced block")
                marker = None
            i += 1
            continue
        indent, ticks, language = fence.groups()
        closing = re.compile(rf"^\s*{re.escape(ticks[0])}{{{len(ticks)},}}\s*$")
        j, body = i + 1, []
        while j < len(lines) and not closing.match(lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        if j == len(lines):
            errors.append(f"{page}:{i + 1}: fenced block never closed")
        where = f"{page}:{i + 1}"
        commands = read_commands(page, i + 2, body, where, errors)
        directives = marker[1] if marker else None
        skipped_script = marker and directives and directives.get("reason") and language.lower() in SHELL_LANGUAGES
        if not commands and skipped_script:
            # A shell block kept without prompts (the README's first two commands) and skipped: listed as such.
            blocks.append(Block(page, i + 1, [Command(i + 2 + k, line) for k, line in enumerate(body) if line.strip()],
                                directives.get("reason")))
        elif not commands:
            if marker:
                errors.append(f"{where}: doc-test marker on a block without '$ ' commands")
            elif language.lower() in SHELL_LANGUAGES and not (body and body[0].startswith("#!")):
                errors.append(f"{where}: a {language} block without '$ ' prompts: write its commands as "
                              "'$ COMMAND' (with their output) or mark it <!-- doc-test: skip (REASON) -->")
        elif marker is None or directives is not None:
            directives = directives or {}
            blocks.append(Block(page, i + 1, commands, directives.get("reason"), directives.get("path"),
                                int(directives.get("code", 0))))
        marker = None
        i = j + 1
    if marker:
        errors.append(f"{page}:{marker[0]}: doc-test marker at the end of the page")
    return blocks


def line_pattern(quoted):
    """A regex for one quoted line: '...' is any text, wall-clock numbers any number."""
    spans = []
    for _, selector, number in WALL_CLOCK:
        if selector.search(quoted):
            spans = [m.span(1) for m in number.finditer(quoted)]
            break
    parts, pos = [], 0
    for start, end in spans + [(len(quoted), len(quoted))]:
        parts.append(".*".join(re.escape(piece) for piece in quoted[pos:start].split("...")))
        if start < len(quoted):
            parts.append(NUMBER)
        pos = end
    return re.compile("".join(parts))


def output_matches(quoted, printed):
    patterns = [None if q.strip() == "..." else line_pattern(q) for q in quoted]

    @functools.lru_cache(maxsize=None)
    def match(i, j):
        if i == len(patterns):
            return j == len(printed)
        if patterns[i] is None:
            return any(match(i + 1, k) for k in range(j, len(printed) + 1))
        return j < len(printed) and bool(patterns[i].fullmatch(printed[j])) and match(i + 1, j + 1)

    return match(0, 0)


def run(command, cwd, env):
    """(exit status or None on a timeout, stdout, stderr, seconds)."""
    start = time.monotonic()
    process = subprocess.Popen(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env, text=True,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=TIMEOUT_S)
        status = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        status = None
    return status, out, err, time.monotonic() - start


def tracked_entries(root):
    """The repository's top-level entries: those git tracks, else all but hidden ones and build*."""
    try:
        listing = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, text=True,
                                 check=True).stdout
        names = {path.split("/")[0] for path in listing.split("\0") if path}
    except (OSError, subprocess.CalledProcessError):
        names = {n for n in os.listdir(root) if not n.startswith("build")}
    return sorted(n for n in names if not n.startswith(".") and os.path.lexists(os.path.join(root, n)))


def make_folder(tmp, page, root, entries, eppsim):
    folder = os.path.join(tmp, page.removesuffix(".md").replace("/", "-"))
    os.makedirs(os.path.join(folder, "build", "sim"))
    for name in entries:
        os.symlink(os.path.join(root, name), os.path.join(folder, name))
    os.symlink(eppsim, os.path.join(folder, "build", "sim", "eppsim"))
    return folder


def show(text, limit=40):
    lines = text.rstrip("\n").split("\n")
    if len(lines) > limit:
        lines = [f"... ({len(lines) - limit} lines before)"] + lines[-limit:]
    return "\n".join("    | " + line for line in lines)


def check_block(block, folder, env):
    """Runs a block's commands in order; returns its failures."""
    failures = []
    for command in block.commands:
        where = f"{block.page}:{command.line}"
        status, out, err, seconds = run(command.text, folder, env)
        printed = [line.rstrip() for line in out.split("\n")]
        if printed and printed[-1] == "":
            printed.pop()
        problems = []
        if status is None:
            problems.append(f"did not finish in {TIMEOUT_S} s")
        elif status != block.exit_status:
            problems.append(f"exited with {status}, the guide expects {block.exit_status}")
        if status is not None and not output_matches(command.quoted, printed):
            diff = difflib.unified_diff(command.quoted, printed, "quoted in the guide", "printed", lineterm="", n=2)
            problems.append("stdout differs from the quoted output ('...' elides; '-' quoted, '+' printed):\n" +
                            "\n".join("    " + line for line in diff))
        print(f"{'FAIL' if problems else 'ok  '} {where} ({seconds:.1f} s)  $ {command.text.splitlines()[0]}")
        if problems:
            message = f"{where}: $ {command.text}\n  " + "\n  ".join(problems)
            if err.strip():
                message += "\n  stderr:\n" + show(err)
            print(message, file=sys.stderr)
            failures.append(message)
    return failures


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    eppsim, root = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    if not os.access(eppsim, os.X_OK):
        sys.exit(f"doc_commands_test: {eppsim}: not an executable")
    guide = os.path.join(root, "docs", "guide")
    pages = sys.argv[3:] or ["README.md"] + sorted(
        f"docs/guide/{name}" for name in os.listdir(guide) if name.endswith(".md"))
    errors, blocks = [], []
    for page in pages:
        blocks += parse_page(root, page, errors)
    for error in errors:
        print(f"FAIL {error}", file=sys.stderr)
    env = dict(os.environ, PATH=os.path.dirname(eppsim) + os.pathsep + os.environ.get("PATH", ""))
    entries = tracked_entries(root)
    failures, skipped, ran = list(errors), [], 0
    with tempfile.TemporaryDirectory(prefix="eppsim-doc-commands-") as tmp:
        shared = os.path.realpath(os.path.join(root, "..", "shared"))
        if os.path.isdir(shared):
            os.symlink(shared, os.path.join(tmp, "shared"))
        folders = {}
        for block in blocks:
            if block.page not in folders:
                folders[block.page] = make_folder(tmp, block.page, root, entries, eppsim)
            folder = folders[block.page]
            if block.skip is None and block.needs and not os.path.exists(os.path.join(folder, block.needs)):
                block.skip = f"{block.needs} is absent"
            if block.skip is not None:
                skipped.append(block)
                continue
            failures += check_block(block, folder, env)
            ran += len(block.commands)
    print(f"\nskipped {len(skipped)} blocks:")
    for block in skipped:
        print(f"  {block.page}:{block.line}: {block.skip}")
        for command in block.commands:
            print(f"      $ {command.text.splitlines()[0]}")
    if ran == 0 and not failures:
        failures.append("no command ran: are the pages' blocks marked up?")
    if failures:
        print(f"\nFAIL: {len(failures)} of the guide's commands or blocks disagree (above, on stderr)")
        return 1
    print(f"\n{ran} commands in {len(blocks) - len(skipped)} blocks of {len(pages)} pages ran as the guide "
          f"says; {len(skipped)} blocks skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
