#!/usr/bin/env python3
"""The layers of docs/architecture.md hold: every #include of the sources (tests/ and fuzz/
aside, which may use everything) goes to a layer that the table "Layers" lets its layer
include, no two folders (subfolders included) include each other, and the libraries of the
table below it appear only in the folders it names.

usage: layers_test.py SOURCE_DIR"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cpp", ".cu")
LIBRARY_PATTERNS = {
    "SimGrid": r"simgrid/",
    "COIN-OR CBC": r"(Cbc|Coin|Osi|Clp)\w*\.hpp",
    "Boost.Graph": r"boost/graph/",
    "MPI": r"mpi\.h$",
    "CUDA, cuBLAS, NCCL": r"(cuda|cublas|nccl)",
    "BLAS": r"cblas\.h$",
}


def markdown_tables(text):
    """Yields each table of `text` as a list of rows, a row a list of cells (header and rule dropped)."""
    rows = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            yield rows[2:]
            rows = []


def folders_in(cell):
    return [name.strip("`/ ") for name in re.findall(r"`([^`]+)`", cell)] or [
        name.strip() for name in cell.split(",") if name.strip()]


def read_rules(doc_path):
    text = open(doc_path, encoding="utf-8").read()
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    tables = list(markdown_tables(section))
    if len(tables) != 2:
        raise SystemExit(f"{doc_path}: \"Layers\" must hold two tables (layers, libraries), found {len(tables)}")
    may_include = {}
    for row in tables[0]:
        layer = row[0].strip("`/ ")
        may_include[layer] = set(folders_in(row[2])) if len(row) > 2 and row[2] else set()
    libraries = {}
    for row in tables[1]:
        name = re.sub(r"\s*\(.*", "", row[0]).strip()
        if name not in LIBRARY_PATTERNS:
            raise SystemExit(f"{doc_path}: library table names '{name}', which this test does not know")
        libraries[name] = set(folders_in(row[1]))
    return may_include, libraries


def main():
    root = os.path.abspath(sys.argv[1])
    may_include, libraries = read_rules(os.path.join(root, "docs", "architecture.md"))
    failures = []
    folder_edges = {}
    checked = 0
    for layer in sorted(may_include):
        for directory, _, files in os.walk(os.path.join(root, layer)):
            folder = os.path.relpath(directory, root)
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(folder, name)
                checked += 1
                for number, line in enumerate(open(os.path.join(root, path), encoding="utf-8"), 1):
                    project = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    system = re.match(r"\s*#\s*include\s+<([^>]+)>", line)
                    if project:
                        target = project.group(1)
                        target_folder = os.path.dirname(target)
                        target_layer = target.split("/", 1)[0]
                        if target_layer in may_include and target_layer != layer and \
                                target_layer not in may_include[layer]:
                            failures.append(f"{path}:{number}: {layer}/ may not include {target_layer}/ ({target})")
                        if target_folder and target_folder != folder:
                            folder_edges.setdefault((folder, target_folder), f"{path}:{number}")
                    elif system:
                        for library, pattern in LIBRARY_PATTERNS.items():
                            if re.match(pattern, system.group(1)) and library in libraries and \
                                    folder not in libraries[library]:
                                failures.append(f"{path}:{number}: {library} (<{system.group(1)}>) outside "
                                                f"{', '.join(sorted(libraries[library]))}")
    for (a, b), where in sorted(folder_edges.items()):
        if (b, a) in folder_edges and a < b:
            failures.append(f"{a}/ and {b}/ include each other: {where} and {folder_edges[(b, a)]}")
    if checked < 250:
        failures.append(f"only {checked} source files found under {root}: wrong SOURCE_DIR?")
    for failure in failures:
        print("FAIL", failure)
    print(f"layers_test: {checked} files, {len(folder_edges)} folder edges, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
