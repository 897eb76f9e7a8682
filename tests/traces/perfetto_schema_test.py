#!/usr/bin/python3
"""`eppsim export perfetto` read with Perfetto's own compiled schema (perfetto_trace_pb2 of
the PyPI package perfetto), not ours:

- proto/perfetto_trace.proto, compiled with protoc, declares every field and enum value it
  has as Perfetto's schema does (number, name, type, label, oneof, message or enum type);
- the export of the quickstart's run parses with Perfetto's schema without unknown fields,
  on one packet sequence whose first packet clears incremental state, track events needing
  it, timestamps nondecreasing, every track and interned id defined before use;
- rebuilt through that schema (slices from each track's begin/end stack, names and
  categories through the interned data, tracks through their parents), it holds exactly
  the run's Chrome trace (trace.json): each op with its rank, stream, name, category, start,
  duration to the nanosecond and args, and each memory sample as a counter.

Perfetto's trace processor (perfetto.trace_processor) is not used: it downloads its binary
from get.perfetto.dev on first use, and tests run offline.

usage: perfetto_schema_test.py EPPSIM_BINARY SOURCE_DIR PROTOC PERFETTO_PYTHON
Runs under PERFETTO_PYTHON when this Python lacks the package (perfetto_trace_pb2 needs
protobuf >= 6.31, newer than Debian 12's python3-protobuf); exits 77 (ctest: skipped)
when neither has it. A Python with it: `python3 -m venv /opt/eppsim-perfetto &&
/opt/eppsim-perfetto/bin/pip install perfetto==0.59.1`.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

try:
    from google.protobuf import descriptor_pb2
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except Exception as error:  # missing, or a protobuf runtime too old for the generated code
    perfetto_python = sys.argv[4] if len(sys.argv) > 4 else ""
    if perfetto_python and os.path.exists(perfetto_python) and os.path.realpath(perfetto_python) != os.path.realpath(sys.executable):
        os.execv(perfetto_python, [perfetto_python, "-B", os.path.abspath(__file__)] + sys.argv[1:])
    print(f"SKIP perfetto_schema_test: no Python here has the PyPI package perfetto ({error}); make one with "
          "`python3 -m venv /opt/eppsim-perfetto && /opt/eppsim-perfetto/bin/pip install perfetto==0.59.1`")
    sys.exit(77)

eppsim, source, protoc = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2]), sys.argv[3]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(argv):
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL {' '.join(argv)} exited {result.returncode}:\n{result.stderr}")


# ---------------------------------------------------------------- the schema, field by field

def check_schema(work):
    descriptor_set = os.path.join(work, "subset.pb")
    run([protoc, f"--proto_path={source}/proto", f"--descriptor_set_out={descriptor_set}", "perfetto_trace.proto"])
    files = descriptor_pb2.FileDescriptorSet()
    with open(descriptor_set, "rb") as f:
        files.ParseFromString(f.read())
    ours = files.file[0]
    check(ours.syntax in ("", "proto2"), f"perfetto_trace.proto: syntax {ours.syntax}, Perfetto's is proto2")

    def upstream(name):
        theirs = descriptor_pb2.DescriptorProto()
        pb.DESCRIPTOR.pool.FindMessageTypeByName("perfetto.protos." + name).CopyToProto(theirs)
        return theirs

    def short_type(type_name):  # ".eppsim.perfetto.TrackEvent.Type" -> "TrackEvent.Type"
        for prefix in (".eppsim.perfetto.", ".perfetto.protos."):
            if type_name.startswith(prefix):
                return type_name[len(prefix):]
        return type_name

    def oneof_of(message, field):
        return message.oneof_decl[field.oneof_index].name if field.HasField("oneof_index") else None

    def compare_enums(path, mine, theirs):
        values = {v.number: v.name for v in theirs.value}
        for v in mine.value:
            check(values.get(v.number) == v.name,
                  f"{path}.{v.name} = {v.number}: Perfetto's {v.number} is {values.get(v.number)}")

    def compare(path, mine, theirs):
        fields = {f.number: f for f in theirs.field}
        for f in mine.field:
            t = fields.get(f.number)
            where = f"{path}.{f.name} = {f.number}"
            if t is None:
                failures.append(f"{where}: Perfetto's {path} has no field {f.number}")
                continue
            for what, a, b in (("name", f.name, t.name), ("type", f.type, t.type), ("label", f.label, t.label),
                               ("oneof", oneof_of(mine, f), oneof_of(theirs, t)),
                               ("type name", short_type(f.type_name), short_type(t.type_name)),
                               ("packed", f.options.packed, t.options.packed)):
                check(a == b, f"{where}: {what} {a!r}, Perfetto's {b!r}")
        theirs_nested = {e.name: e for e in theirs.enum_type}
        for e in mine.enum_type:
            check(e.name in theirs_nested, f"{path}.{e.name}: not an enum of Perfetto's {path}")
            if e.name in theirs_nested:
                compare_enums(f"{path}.{e.name}", e, theirs_nested[e.name])
        for nested in mine.nested_type:
            compare(f"{path}.{nested.name}", nested, upstream(f"{path}.{nested.name}"))

    for message in ours.message_type:
        compare(message.name, message, upstream(message.name))
    return len(ours.message_type)


# ---------------------------------------------------------------- the export, read back

def unknown_fields(message, path="packet"):
    from google.protobuf.unknown_fields import UnknownFieldSet
    found = [path] if len(UnknownFieldSet(message)) else []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for i, item in enumerate(value if field.is_repeated else [value]):
            found += unknown_fields(item, f"{path}.{field.name}[{i}]")
    return found


def read_perfetto(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    Packet, TrackEvent = pb.TracePacket, pb.TrackEvent
    tracks, names, categories, annotation_names = {}, {}, {}, {}
    open_slices = collections.defaultdict(list)
    slices, counters = collections.Counter(), collections.Counter()
    sequences, last_time = set(), 0
    for i, p in enumerate(trace.packet):
        for where in unknown_fields(p, f"packet[{i}]"):
            failures.append(f"{where}: fields unknown to Perfetto's schema")
        sequences.add(p.trusted_packet_sequence_id)
        cleared = p.sequence_flags & Packet.SEQ_INCREMENTAL_STATE_CLEARED
        check(bool(cleared) == (i == 0), f"packet[{i}]: sequence_flags {p.sequence_flags}")
        for table, entries in ((names, p.interned_data.event_names), (categories, p.interned_data.event_categories),
                               (annotation_names, p.interned_data.debug_annotation_names)):
            for entry in entries:
                check(entry.iid not in table, f"packet[{i}]: iid {entry.iid} interned twice")
                table[entry.iid] = entry.name
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            check(d.uuid not in tracks, f"packet[{i}]: track {d.uuid} described twice")
            check(not d.HasField("parent_uuid") or d.parent_uuid in tracks, f"packet[{i}]: parent not described yet")
            tracks[d.uuid] = d
            continue
        check(p.HasField("track_event"), f"packet[{i}]: neither a track descriptor nor a track event")
        check(p.sequence_flags & Packet.SEQ_NEEDS_INCREMENTAL_STATE, f"packet[{i}]: no SEQ_NEEDS_INCREMENTAL_STATE")
        check(p.timestamp >= last_time, f"packet[{i}]: timestamp {p.timestamp} before {last_time}")
        last_time = p.timestamp
        e = p.track_event
        check(e.track_uuid in tracks, f"packet[{i}]: track {e.track_uuid} not described")
        if e.type == TrackEvent.TYPE_SLICE_BEGIN:
            check(e.name_iid in names and all(c in categories for c in e.category_iids),
                  f"packet[{i}]: name or category not interned")
            args = {annotation_names.get(a.name_iid): a.uint_value for a in e.debug_annotations}
            open_slices[e.track_uuid].append((p.timestamp, names.get(e.name_iid),
                                              ",".join(categories.get(c, "?") for c in e.category_iids), args))
        elif e.type == TrackEvent.TYPE_SLICE_END:
            if not open_slices[e.track_uuid]:
                failures.append(f"packet[{i}]: ends a slice on a track with none open")
                continue
            start, name, category, args = open_slices[e.track_uuid].pop()
            slices[op_row(tracks, e.track_uuid, name, category, start, p.timestamp - start, args)] += 1
        elif e.type == TrackEvent.TYPE_COUNTER:
            check(tracks[e.track_uuid].HasField("counter"), f"packet[{i}]: a counter value on a track not a counter")
            process = tracks[tracks[e.track_uuid].parent_uuid].process
            counters[(process.process_name, p.timestamp, e.counter_value)] += 1
        else:
            failures.append(f"packet[{i}]: track event of type {e.type}")
    check(sequences == {1} or not trace.packet, f"packets on sequences {sorted(sequences)}, expected one")
    check(not any(open_slices.values()), "slices left open")
    return trace, slices, counters


def op_row(tracks, uuid, name, category, start_ns, duration_ns, args):
    thread = tracks[uuid].thread
    process = tracks[tracks[uuid].parent_uuid].process
    check(thread.pid == process.pid, f"thread {thread.thread_name}: pid {thread.pid}, its process's {process.pid}")
    kept = {k: v for k, v in args.items() if k != "size_bytes"}
    return (process.process_name, thread.thread_name, name, category, start_ns, duration_ns,
            args.get("size_bytes", 0), tuple(sorted(kept.items())))


def read_chrome(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    slices, counters = collections.Counter(), collections.Counter()
    for e in events:
        ns = lambda us: round(us * 1000)  # microseconds with three decimals: exact nanoseconds
        if e["ph"] == "X":
            args = e["args"]
            kept = {k: args[k] for k in ("op", "chunk", "stage", "peer", "group") if k in args}
            slices[(f"rank {e['pid']}", threads[(e["pid"], e["tid"])], e["name"], e["cat"], ns(e["ts"]),
                    ns(e["dur"]), args["size_bytes"], tuple(sorted(kept.items())))] += 1
        elif e["ph"] == "C":
            counters[(f"rank {e['pid']}", ns(e["ts"]), e["args"]["bytes"])] += 1
    return slices, counters


def main():
    with tempfile.TemporaryDirectory() as work:
        messages = check_schema(work)
        run([eppsim, "run", f"{source}/scenarios/quickstart.textproto", "-o", f"{work}/run"])
        run([eppsim, "export", "perfetto", f"{work}/run", "-o", f"{work}/trace.pftrace"])
        trace, slices, counters = read_perfetto(f"{work}/trace.pftrace")
        chrome_slices, chrome_counters = read_chrome(f"{work}/run/trace.json")
        check(sum(slices.values()) > 100, f"only {sum(slices.values())} slices")
        check(slices == chrome_slices,
              f"slices differ from trace.json's ops: only in the Perfetto trace {list((slices - chrome_slices).items())[:3]}, "
              f"only in trace.json {list((chrome_slices - slices).items())[:3]}")
        check(counters == chrome_counters and counters, "memory counters differ from trace.json's")
    for failure in failures[:30]:
        print("FAIL", failure)
    if failures:
        sys.exit(f"{len(failures)} failures")
    print(f"ok: {messages} messages as Perfetto declares them; {len(trace.packet)} packets, "
          f"{sum(slices.values())} slices and {sum(counters.values())} counter values, as trace.json has them")


main()
