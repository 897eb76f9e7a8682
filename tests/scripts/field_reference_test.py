#!/usr/bin/python3
"""docs/guide/fields.md is what scripts/field_reference.py writes, and it documents every field:

- `field_reference.py --check` passes on the source tree (the page is current, and every field
  of scenario.proto and topology.proto has a comment, a default and, where it needs one, a unit);
- every field reachable from Scenario has its row, walked here from protoc's descriptors
  independently of the script;
- on a copy of the sources, a stale page and a field without a comment each fail --check, with
  the command that regenerates the page or the field named;
- the script's readers of comments and limits, on examples.

usage: field_reference_test.py SOURCE_DIR"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def run_script(script, source, *args):
    return subprocess.run(["/usr/bin/python3", "-B", str(script), *args, str(source)], capture_output=True, text=True)


def field_paths(source):
    """Every textproto path under Scenario ("faults[].at"), from protoc's descriptors."""
    from google.protobuf import descriptor_pb2
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        subprocess.run(["protoc", f"-I{source / 'proto'}", "--include_imports", f"--descriptor_set_out={out}",
                        str(source / "proto/scenario.proto")], check=True)
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    messages = {}

    def index(prefix, message):
        messages[f"{prefix}.{message.name}"] = message
        for nested in message.nested_type:
            index(f"{prefix}.{message.name}", nested)

    for f in files.file:
        for m in f.message_type:
            index(f".{f.package}", m)
    paths, seen = [], set()

    def walk(name, prefix):
        if name in seen:
            return
        seen.add(name)
        for field in messages[name].field:
            path = f"{prefix}.{field.name}" if prefix else field.name
            paths.append(path)
            if field.type == field.TYPE_MESSAGE:
                walk(field.type_name, path + ("[]" if field.label == field.LABEL_REPEATED else ""))

    walk(".eppsim.proto.Scenario", "")
    return paths


def copy_sources(source, to):
    for folder in ("proto", "scenario", "sim/plan"):
        shutil.copytree(source / folder, to / folder)
    for file in ("base/input_limits.h", "base/units.h", "docs/guide/fields.md"):
        (to / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / file, to / file)


def test_helpers(reference):
    clause = reference.clause
    check(clause("inside a node (default gpus_per_node)", "default") == "gpus_per_node", "clause: (default X)")
    check(clause("one GPU; default: the preset's price (models/gpu_spec.cpp), else 0; more", "default")
          == "the preset's price (models/gpu_spec.cpp), else 0", "clause: default: ... with parentheses")
    check(clause("e.g. \"1MiB\", > 0. Required.", "required") == "Required", "clause: Required.")
    check(clause("Default 1.0. Other words.", "default") == "1.0", "clause: a decimal point does not end it")
    check(clause("the defaults of the preset", "default") is None, "clause: 'defaults' is not 'default'")
    check(reference.comment_bounds("the fraction left, in (0, 1]; at most 64; 2 or 3") == ["(0, 1]", "<= 64", "2 or 3"],
          f"bounds: {reference.comment_bounds('the fraction left, in (0, 1]; at most 64; 2 or 3')}")
    check(reference.comment_bounds("the chip grid, e.g. [4, 4]") == [], "bounds: an example is no interval")
    for example, kind in (("80GiB", "bytes"), ("4096", "bytes"), ("1.5us", "duration"), ("400Gbps", "bandwidth"),
                          ("3.35TB/s", "bandwidth"), ("989TFLOPS", "FLOP rate"), ("A100-80GB", None), ("1:1", None)):
        check(reference.unit_kind_of(example) == kind, f"unit_kind_of({example!r}) != {kind!r}")
    matches = reference.limit_matches
    check(matches("nics_per_chip, railx.ports_per_chip_x/y", "cluster.topology.railx.ports_per_chip_y"), "limit: x/y")
    check(matches("a link's latency (cluster.*.latency, topology links)", "cluster.inter_node.latency"), "limit: glob")
    check(not matches("a link's latency (cluster.*.latency)", "cluster.topology.node.link.latency"),
          "limit: * is one part")
    check(not matches("GPUs of a cluster (nodes x gpus_per_node)", "cluster.gpus_per_node"),
          "limit: bare words name nothing")


def main():
    source = Path(sys.argv[1]).resolve()
    script = source / "scripts/field_reference.py"
    sys.path.insert(0, str(script.parent))
    import field_reference

    result = run_script(script, source, "--check")
    check(result.returncode == 0, f"field_reference.py --check failed:\n{result.stderr}")

    page = (source / field_reference.OUTPUT).read_text()
    paths = field_paths(source)
    missing = [p for p in paths if f"| `{p}` |" not in page]
    check(len(paths) > 150 and not missing, f"{len(missing)} of {len(paths)} fields have no row: {missing[:10]}")

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)
        copy_sources(source, copy)
        fields_md = copy / field_reference.OUTPUT
        fields_md.write_text(page.replace("| `cluster.nodes` |", "| `cluster.node_count` |"))
        result = run_script(script, copy, "--check")
        check(result.returncode == 1 and field_reference.REGENERATE in result.stderr,
              f"a stale page: exit {result.returncode}, want 1 naming `{field_reference.REGENERATE}`:\n{result.stderr}")
        check(fields_md.read_text() != page, "--check wrote the page")

        proto = copy / "proto/scenario.proto"
        proto.write_text(proto.read_text().replace("  repeated Fault faults = 10;\n",
                                                   "  repeated Fault faults = 10;\n  uint32 probe_field = 99;\n"))
        result = run_script(script, copy, "--check")
        check(result.returncode == 1 and "Scenario.probe_field: has no comment" in result.stderr
              and "Scenario.probe_field: states no default" in result.stderr,
              f"an undocumented field: exit {result.returncode}, want 1 naming Scenario.probe_field:\n{result.stderr}")
        result = run_script(script, copy)
        check(result.returncode == 1 and "| `probe_field` |" in fields_md.read_text(),
              f"regenerating with an undocumented field: exit {result.returncode}, want 1 and its row written")

    test_helpers(field_reference)
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    print(f"field_reference_test: {len(paths)} fields, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
