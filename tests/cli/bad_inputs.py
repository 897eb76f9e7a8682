"""The catalogue of bad inputs: every case eppsim must refuse with exit status 2
and one line naming the file (or option), the field or op, and the rule.

tests/cli/bad_inputs_test.py runs each case in a fresh folder; scripts/bad_inputs_doc.py
renders this table as docs/bad-inputs.md (the test checks the doc is up to date).

A case: Case(id, area, input, args, expect, files).
  args    the command line after the program, with {d} for the case's folder and
          {b} for the shared folder of valid inputs (s.textproto, schedule.pb,
          schedule.textproto, run/, et/t.N.et, lengths.txt; see bad_inputs_test.py).
  files   what to create in {d} first: name -> str | bytes | a function of the
          base folder returning bytes | DIR | FIFO | Symlink(target) | Sparse(bytes).
  expect  what stderr's one line must contain after "eppsim: error: ", with
          "..." for any text and {d}/ for the case's folder; matched case-sensitively.
  program "eppsim" (default), "eppsim-run" or "eppsim-bench".
"""

from dataclasses import dataclass, field
from typing import Callable, Union

DIR = "dir"
FIFO = "fifo"


@dataclass(frozen=True)
class Symlink:
    target: str  # with {d} / {b}


@dataclass(frozen=True)
class Sparse:
    size: int  # a file of this many bytes that takes no disk space (all zeros)


FileSpec = Union[str, bytes, Callable, Symlink]


@dataclass
class Case:
    id: str
    area: str
    input: str  # one line for the doc: what is wrong
    args: list
    expect: str
    files: dict = field(default_factory=dict)
    program: str = "eppsim"


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(field_number: int, wire_type: int) -> bytes:
    return varint(field_number << 3 | wire_type)


def read(path):
    return lambda base: (base / path).read_bytes()


def truncated(path, keep):
    return lambda base: (base / path).read_bytes()[:keep]


def scenario(*replacements, append=""):
    """The base scenario (scenarios/quickstart.textproto with a small batch) with
    `old -> new` text replacements applied, each of which must match."""

    def make(base):
        text = (base / "s.textproto").read_text()
        for old, new in replacements:
            assert old in text, f"replacement {old!r} does not match the base scenario"
            text = text.replace(old, new, 1)
        return (text + append).encode()

    return make


def schedule_text(*replacements, append=""):
    def make(base):
        text = (base / "schedule.textproto").read_text()
        for old, new in replacements:
            assert old in text, f"replacement {old!r} does not match the base schedule"
            text = text.replace(old, new, 1)
        return (text + append).encode()

    return make


def schedule_op(code, column, value, rank=0):
    """The base schedule (schedule.textproto as eppsim plan writes it: each
    rank's ops as columns, one line per entry) with entry `column` of the first
    `code` op of `rank` set to `value`. An optional column the program lacks
    (algorithm, duration_source, fixed_duration_ns) is added, 0 for every other op."""

    def make(base):
        lines = (base / "schedule.textproto").read_text().split("\n")
        begin = [i for i, line in enumerate(lines) if line == "programs {"][rank]
        end = lines.index("}", begin)
        block = lines[begin + 1:end]
        codes = [line.split(": ")[1] for line in block if line.startswith("  code: ")]
        assert code in codes, f"rank {rank} of the base schedule has no {code} op"
        op = codes.index(code)
        entries = [i for i, line in enumerate(block) if line.startswith(f"  {column}: ")]
        if entries:
            assert len(entries) == len(codes), f"{column} is not a per-op column"
            block[entries[op]] = f"  {column}: {value}"
        else:
            block += [f"  {column}: {value if i == op else 0}" for i in range(len(codes))]
        return "\n".join(lines[:begin + 1] + block + lines[end:]).encode()

    return make


def one_rank(program, shared_computes="", streams=("compute",)):
    """A one-rank schedule in text: `program` inside programs { }, its ops as columns."""
    names = "".join(f'stream_names: "{s}" ' for s in streams)
    return f"num_ranks: 1 {names}placement {{ }} programs {{ {program} }} {shared_computes}\n"


ONE_LAYER = "shared_computes { phase: FORWARD layer_count: 1 }"
# The form before schema version 5 (a message per op), which eppsim converts as it reads.
OLD_FORM = "(ops as messages, the form before schema version 5)"


RUN = ["run", "{d}/s.textproto", "-o", "{d}/out"]
SIM = ["sim", "{d}/x.pb", "--cluster", "{b}/s.textproto", "-o", "{d}/out"]
SIMT = ["sim", "{d}/x.textproto", "--cluster", "{b}/s.textproto", "-o", "{d}/out"]


def run_set(assignment):
    return ["run", "{b}/s.textproto", "-o", "{d}/out", "--set", assignment]


CASES = [
    # ------------------------------------------------------------ scenarios
    Case("scenario-missing", "scenario", "the scenario file does not exist",
         RUN, "{d}/s.textproto: cannot open: No such file or directory"),
    Case("scenario-empty", "scenario", "a 0-byte scenario",
         RUN, "{d}/s.textproto: model.layers: must be > 0 when model.preset is not set", {"s.textproto": ""}),
    Case("scenario-directory", "scenario", "the scenario is a directory",
         RUN, "{d}/s.textproto: is a directory, not a file", {"s.textproto": DIR}),
    Case("scenario-fifo", "scenario", "the scenario is a FIFO (reading would block forever)",
         RUN, "{d}/s.textproto: not a regular file (a FIFO, socket or device cannot be read as input)", {"s.textproto": FIFO}),
    Case("scenario-too-large", "scenario", "a scenario over the 16 MiB limit (a comment 17 MiB long)",
         RUN, "{d}/s.textproto: 17826720 bytes is too large: input files of this kind hold at most 16777216 bytes",
         {"s.textproto": scenario(append="#" + "x" * (17 << 20) + "\n")}),
    Case("scenario-binary", "scenario", "random binary bytes instead of text",
         RUN, "{d}/s.textproto:2:118: not valid UTF-8", {"s.textproto": bytes(range(256)) * 4}),
    Case("scenario-bad-utf8", "scenario", "a string field holding invalid UTF-8",
         RUN, "{d}/s.textproto:4:8: not valid UTF-8",
         {"s.textproto": lambda b: scenario()(b).replace(b'name: "quickstart"', b'name: "\xff\xfe"')}),
    Case("scenario-unknown-field", "scenario", "a field the schema does not have",
         RUN, "{d}/s.textproto:32:1: Message type \"eppsim.proto.Scenario\" has no field named \"no_such_field\"", {"s.textproto": scenario(append="no_such_field: 1\n")}),
    Case("scenario-duplicate-field", "scenario", "a singular field given twice",
         RUN, "{d}/s.textproto:32:1: Non-repeated field \"seed\" is specified multiple times", {"s.textproto": scenario(append="seed: 2\n")}),
    Case("scenario-unknown-enum", "scenario", "an enum value the schema does not have",
         RUN, "{d}/s.textproto:23:1: Unknown enumeration value of \"SQUEEZE\" for field \"over_max_length\"",
         {"s.textproto": scenario(("over_max_length: TRUNCATE", "over_max_length: SQUEEZE"))}),
    Case("scenario-unknown-enum-number", "scenario", "an enum given as an unknown number",
         RUN, "{d}/s.textproto:22: workload.over_max_length: unknown value 77",
         {"s.textproto": scenario(("over_max_length: TRUNCATE", "over_max_length: 77"))}),
    Case("scenario-missing-brace", "scenario", "an unclosed message",
         RUN, "{d}/s.textproto:31:33: Expected identifier, got:",
         {"s.textproto": lambda b: scenario()(b).rstrip().removesuffix(b"}")}),
    Case("scenario-negative-uint", "scenario", "a negative number in an unsigned field",
         RUN, "{d}/s.textproto:20:17: global_batch: Expected integer, got: -", {"s.textproto": scenario(("global_batch: 32", "global_batch: -1"))}),
    Case("scenario-uint-overflow", "scenario", "a number past 2^32 in a 32-bit field",
         RUN, "{d}/s.textproto:20:17: global_batch: Integer out of range (99999999999)",
         {"s.textproto": scenario(("global_batch: 32", "global_batch: 99999999999"))}),
    Case("scenario-layers-huge", "scenario", "10^9 layers (well-formed, absurd)",
         RUN, "{d}/s.textproto:...model.layers: must be <= ",
         {"s.textproto": scenario(('model { preset: "llama2-7b" }', 'model { preset: "llama2-7b" layers: 1000000000 }'))}),
    Case("scenario-hidden-huge", "scenario", "a hidden size of 4*10^9",
         RUN, "{d}/s.textproto:...model.hidden_size: must be <= ",
         {"s.textproto": scenario(('model { preset: "llama2-7b" }', 'model { preset: "llama2-7b" hidden_size: 4000000000 }'))}),
    Case("scenario-nodes-huge", "scenario", "10^9 nodes",
         RUN, "{d}/s.textproto:...cluster.nodes: must be <= ",
         {"s.textproto": scenario(("nodes: 2", "nodes: 1000000000"))}),
    Case("scenario-gpus-per-node-huge", "scenario", "10^6 GPUs per node",
         RUN, "{d}/s.textproto:...cluster.gpus_per_node: must be <= ",
         {"s.textproto": scenario(("gpus_per_node: 8", "gpus_per_node: 1000000"))}),
    Case("scenario-ranks-huge", "scenario", "a cluster of 10^6 nodes x 4096 GPUs (4*10^9 ranks)",
         RUN, "{d}/s.textproto:...cluster.nodes: nodes x gpus_per_node must be <= 4194304 GPUs",
         {"s.textproto": scenario(("nodes: 2", "nodes: 1000000"), ("gpus_per_node: 8", "gpus_per_node: 4096"))}),
    Case("scenario-nodes-zero", "scenario", "0 nodes",
         RUN, "{d}/s.textproto:...cluster.nodes: must be > 0", {"s.textproto": scenario(("nodes: 2", "nodes: 0"))}),
    Case("scenario-global-batch-huge", "scenario", "a global batch of 4*10^9 sequences",
         RUN, "{d}/s.textproto:...workload.global_batch: must be <= ",
         {"s.textproto": scenario(("global_batch: 32", "global_batch: 4000000000"))}),
    Case("scenario-max-length-huge", "scenario", "a 10^15-token max_length",
         RUN, "{d}/s.textproto:...workload.max_length: must be <= ",
         {"s.textproto": scenario(("max_length: 8192", "max_length: 1000000000000000"))}),
    Case("scenario-fixed-length-huge", "scenario", "a fixed 10^15-token sequence length",
         RUN, "{d}/s.textproto:...workload.lengths.fixed: must be <= ",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', "lengths { fixed: 1000000000000000 }"),
                                  ("max_length: 8192", "max_length: 1000000000000000"))}),
    Case("scenario-micro-batch-tokens-huge", "scenario", "10^15-token micro-batches",
         RUN, "{d}/s.textproto:...plan.packed_1f1b.micro_batch_tokens: must be <= ",
         {"s.textproto": scenario(("micro_batch_tokens: 8192", "micro_batch_tokens: 1000000000000000"))}),
    Case("scenario-stages-huge", "scenario", "4*10^9 pipeline stages",
         RUN, "{d}/s.textproto:...plan.packed_1f1b.pipeline_stages: must be <= ",
         {"s.textproto": scenario(("pipeline_stages: 4", "pipeline_stages: 4000000000"))}),
    Case("scenario-bandwidth-nan", "scenario", "a NaN bandwidth",
         RUN, "{d}/s.textproto:14: cluster.intra_node.bandwidth: invalid bandwidth 'nanGB/s'",
         {"s.textproto": scenario(('bandwidth: "300GB/s"', 'bandwidth: "nanGB/s"'))}),
    Case("scenario-bandwidth-negative", "scenario", "a negative bandwidth",
         RUN, "{d}/s.textproto:15: cluster.inter_node.bandwidth: invalid bandwidth '-200Gbps': negative values are not allowed",
         {"s.textproto": scenario(('bandwidth: "200Gbps"', 'bandwidth: "-200Gbps"'))}),
    Case("scenario-latency-inf", "scenario", "an infinite latency",
         RUN, "{d}/s.textproto:14: cluster.intra_node.latency: invalid duration 'infus'",
         {"s.textproto": scenario(('latency: "2us"', 'latency: "infus"'))}),
    Case("scenario-latency-huge", "scenario", "a latency of 10^300 s (simulated time would overflow)",
         RUN, "{d}/s.textproto:15: cluster.inter_node.latency: must be <= 3600 s",
         {"s.textproto": scenario(('latency: "5us"', 'latency: "1e300s"'))}),
    Case("scenario-bandwidth-tiny", "scenario", "a bandwidth of 10^-300 bit/s (every transfer would take forever)",
         RUN, "{d}/s.textproto:15: cluster.inter_node.bandwidth: must be finite and >= 1 B/s",
         {"s.textproto": scenario(('bandwidth: "200Gbps"', 'bandwidth: "1e-300bps"'))}),
    Case("scenario-flops-tiny", "scenario", "a GPU of 10^-300 FLOP/s (compute time overflows)",
         RUN, "{d}/s.textproto:13: cluster.gpu.peak_flops: must be finite and >= 1 FLOP/s",
         {"s.textproto": scenario(('gpu { preset: "A100-80GB" }', 'gpu { preset: "A100-80GB" peak_flops: "1e-300FLOPS" }'))}),
    Case("scenario-unit-unknown", "scenario", "an unknown unit",
         RUN, "{d}/s.textproto:14: cluster.intra_node.bandwidth: invalid bandwidth '300parsecs': unknown unit 'parsecs'",
         {"s.textproto": scenario(('bandwidth: "300GB/s"', 'bandwidth: "300parsecs"'))}),
    Case("scenario-memory-fraction-nan", "scenario", "memory_fraction nan",
         RUN, "{d}/s.textproto:27: plan.memory_fraction: must be in (0, 1]", {"s.textproto": scenario(("zero_stage: 1", "zero_stage: 1 memory_fraction: nan"))}),
    Case("scenario-zero-stage", "scenario", "zero_stage 7",
         RUN, "{d}/s.textproto:...plan.zero_stage: must be 0, 1, 2 or 3", {"s.textproto": scenario(("zero_stage: 1", "zero_stage: 7"))}),
    Case("scenario-unknown-strategy", "scenario", "an unknown strategy",
         RUN, "{d}/s.textproto:26: plan.strategy: unknown strategy \"magic\"", {"s.textproto": scenario(('strategy: "packed-1f1b"', 'strategy: "magic"'))}),
    Case("scenario-unknown-preset", "scenario", "an unknown model preset",
         RUN, "{d}/s.textproto:...model.preset: unknown preset", {"s.textproto": scenario(('preset: "llama2-7b"', 'preset: "llama9-1t"'))}),
    Case("collective-chunks-huge", "scenario", "a collective benchmark of 4*10^9 chunks",
         RUN, "{d}/s.textproto:...workload.collective.chunks: must be <= ",
         {"s.textproto": 'workload { collective { kind: ALL_REDUCE bytes: "1MiB" chunks: 4000000000 } }\n'
                         'cluster { nodes: 2 gpus_per_node: 8 gpu { preset: "A100-80GB" } '
                         'intra_node { bandwidth: "300GB/s" latency: "2us" } inter_node { bandwidth: "200Gbps" latency: "5us" } }\n'}),
    Case("collective-iterations-huge", "scenario", "a collective benchmark of 4*10^9 iterations",
         RUN, "{d}/s.textproto:...workload.collective.iterations: must be <= ",
         {"s.textproto": 'workload { collective { kind: ALL_REDUCE bytes: "1MiB" iterations: 4000000000 } }\n'
                         'cluster { nodes: 2 gpus_per_node: 8 gpu { preset: "A100-80GB" } '
                         'intra_node { bandwidth: "300GB/s" latency: "2us" } inter_node { bandwidth: "200Gbps" latency: "5us" } }\n'}),
    Case("collective-bytes-huge", "scenario", "a collective of 10^30 bytes per rank",
         RUN, "{d}/s.textproto:1: workload.collective.bytes: invalid byte size '1e30B': more than 2^64 - 1 bytes",
         {"s.textproto": 'workload { collective { kind: ALL_REDUCE bytes: "1e30B" } }\n'
                         'cluster { nodes: 2 gpus_per_node: 8 gpu { preset: "A100-80GB" } '
                         'intra_node { bandwidth: "300GB/s" latency: "2us" } inter_node { bandwidth: "200Gbps" latency: "5us" } }\n'}),
    Case("scenario-time-overflow", "scenario", "a GPU of 1 FLOP/s: within its bound, but the step would take 10^11 s",
         RUN, "{d}/s.textproto: schedule: rank 0 op ...ends: simulated time ...cannot be represented",
         {"s.textproto": scenario(('gpu { preset: "A100-80GB" }', 'gpu { preset: "A100-80GB" peak_flops: "1FLOPS" }'))}),
    Case("scenario-time-overflow-flow", "scenario", "the same on the flow engine (it reported a bogus deadlock)",
         RUN + ["--engine", "flow"], "{d}/s.textproto: schedule: an op of rank ...ends at simulated time ...cannot be represented",
         {"s.textproto": scenario(('gpu { preset: "A100-80GB" }', 'gpu { preset: "A100-80GB" peak_flops: "1FLOPS" }'))}),
    Case("compare-time-overflow", "scenario", "compare on a GPU of 1 FLOP/s: every strategy fails, on one line",
         ["compare", "{d}/s.textproto", "--strategies", "packed-1f1b,ulysses", "-o", "{d}/out"],
         "{d}/s.textproto: compare: no strategy could run it: packed-1f1b: ...cannot be represented...; ulysses: ",
         {"s.textproto": scenario(('gpu { preset: "A100-80GB" }', 'gpu { preset: "A100-80GB" peak_flops: "1FLOPS" }'))}),
    Case("scenario-epp-slices-huge", "scenario", "epp with a slice count of 4*10^9",
         RUN, "{d}/s.textproto:...plan.epp.slice_counts[0]: must be <= ",
         {"s.textproto": scenario(("zero_stage: 1", "zero_stage: 1 epp { slice_counts: 4000000000 }"))}),
    Case("scenario-seq1f1b-slices-huge", "scenario", "seq1f1b with 4*10^9 slices per sequence",
         RUN, "{d}/s.textproto:...plan.seq1f1b.slices: must be <= ",
         {"s.textproto": scenario(("zero_stage: 1", "zero_stage: 1 seq1f1b { slices: 4000000000 }"))}),
    Case("scenario-flexsp-buckets-huge", "scenario", "flexsp with 4*10^9 MILP buckets",
         RUN, "{d}/s.textproto:...plan.flexsp.max_buckets: must be <= ",
         {"s.textproto": scenario(("zero_stage: 1", "zero_stage: 1 flexsp { max_buckets: 4000000000 }"))}),
    Case("scenario-calibration-missing", "scenario", "cost_model.calibration_file names no file",
         RUN, "{d}/s.textproto:32: cost_model.calibration_file: no such file {d}/nope.textproto",
         {"s.textproto": scenario(append='cost_model { calibration_file: "nope.textproto" }\n')}),
    Case("scenario-efficiency-nan", "scenario", "cost_model.gemm_efficiency nan",
         RUN, "{d}/s.textproto:32: cost_model.gemm_efficiency: must be in (0, 1]",
         {"s.textproto": scenario(append="cost_model { gemm_efficiency: nan }\n")}),
    Case("scenario-efficiency-over-one", "scenario", "cost_model.attention_efficiency 7 (over 100% of peak)",
         RUN, "{d}/s.textproto:32: cost_model.attention_efficiency: must be in (0, 1]",
         {"s.textproto": scenario(append="cost_model { attention_efficiency: 7 }\n")}),
    Case("scenario-shaped-without-shaped-compute", "scenario", "cost_model.shaped set while compute is ROOFLINE",
         RUN, "{d}/s.textproto:32: cost_model.shaped: is set, but cost_model.compute is not SHAPED",
         {"s.textproto": scenario(append="cost_model { compute: ROOFLINE shaped { fixed_costs: false } }\n")}),
    Case("scenario-shaped-launch-unit", "scenario", "cost_model.shaped.kernel_launch \"4 parsecs\"",
         RUN, "{d}/s.textproto:32: cost_model.shaped.kernel_launch: invalid duration '4 parsecs'",
         {"s.textproto": scenario(append='cost_model { compute: SHAPED shaped { kernel_launch: "4 parsecs" } }\n')}),
    Case("scenario-shaped-overhead-huge", "scenario", "cost_model.shaped.layer_overhead of two hours",
         RUN, "{d}/s.textproto:32: cost_model.shaped.layer_overhead: must be <= 3600 s",
         {"s.textproto": scenario(append='cost_model { compute: SHAPED shaped { layer_overhead: "7200s" } }\n')}),
    Case("scenario-shaped-efficiency-over-one", "scenario", "cost_model.shaped.attention_efficiency 1.5",
         RUN, "{d}/s.textproto:32: cost_model.shaped.attention_efficiency: must be in (0, 1]",
         {"s.textproto": scenario(append="cost_model { compute: SHAPED shaped { attention_efficiency: 1.5 } }\n")}),
    Case("scenario-shaped-tile-efficiency-negative", "scenario", "cost_model.shaped.gemm_tile_efficiency -0.5",
         RUN, "{d}/s.textproto:32: cost_model.shaped.gemm_tile_efficiency: must be in (0, 1]",
         {"s.textproto": scenario(append="cost_model { compute: SHAPED shaped { gemm_tile_efficiency: -0.5 } }\n")}),
    Case("scenario-shaped-half-length-huge", "scenario", "cost_model.shaped.attention_half_length 2^40 tokens",
         RUN, "{d}/s.textproto:32: cost_model.shaped.attention_half_length: must be <= ",
         {"s.textproto": scenario(append="cost_model { compute: SHAPED shaped { attention_half_length: 1099511627776 } }\n")}),
    Case("scenario-interference-below-one", "scenario", "an interference factor below 1 (overlap speeding compute up)",
         RUN, "{d}/s.textproto:32: cost_model.interference.point_to_point.compute_slowdown: must be finite and >= 1",
         {"s.textproto": scenario(
             append="cost_model { interference { enabled: true point_to_point { compute_slowdown: 0.5 } } }\n")}),
    Case("scenario-interference-infinite", "scenario", "an infinite interference factor",
         RUN, "{d}/s.textproto:32: cost_model.interference.inter_node_collective.comm_slowdown: must be finite and >= 1",
         {"s.textproto": scenario(
             append="cost_model { interference { enabled: true inter_node_collective { comm_slowdown: inf } } }\n")}),
    Case("scenario-interference-disabled-factors", "scenario", "interference factors set while interference is off",
         RUN, "{d}/s.textproto:32: cost_model.interference.intra_node_collective: sets factors while "
              "cost_model.interference.enabled is false",
         {"s.textproto": scenario(
             append="cost_model { interference { intra_node_collective { compute_slowdown: 1.2 } } }\n")}),
    Case("scenario-interference-calibration-class", "scenario", "a calibration's interference fit of an unknown class",
         RUN, "{d}/s.textproto:32: cost_model.calibration.interference[0].traffic: unknown class \"nvlink\"",
         {"s.textproto": scenario(
             append='cost_model { interference { enabled: true } calibration { interference '
                    '{ traffic: "nvlink" compute_slowdown: 1.1 comm_slowdown: 1 } } }\n')}),
    Case("scenario-zero3-dtype", "scenario", "plan.zero3.reduce_scatter_dtype \"fp16\" (ulysses)",
         RUN + ["--strategy", "ulysses"], '{d}/s.textproto:27: plan.zero3.reduce_scatter_dtype: must be "bf16" or "fp32"',
         {"s.textproto": scenario(("zero_stage: 1", 'zero_stage: 1 zero3 { reduce_scatter_dtype: "fp16" }'))}),
    Case("scenario-zero3-depth-huge", "scenario", "a ZeRO-3 prefetch depth of 4*10^9 layers (ulysses)",
         RUN + ["--strategy", "ulysses"], "{d}/s.textproto:27: plan.zero3.prefetch_depth: must be <= 65536",
         {"s.textproto": scenario(("zero_stage: 1", "zero_stage: 1 zero3 { prefetch_depth: 4000000000 }"))}),
    Case("scenario-flexsp-cap-unit", "scenario", "plan.flexsp.planning_memory_cap in an unknown unit (flexsp)",
         RUN + ["--strategy", "flexsp"], "{d}/s.textproto:27: plan.flexsp.planning_memory_cap: invalid byte size '28 gigs': unknown unit 'gigs'",
         {"s.textproto": scenario(("zero_stage: 1", 'zero_stage: 1 flexsp { planning_memory_cap: "28 gigs" }'))}),
    Case("scenario-flexsp-cap-zero", "scenario", "plan.flexsp.planning_memory_cap of 0 bytes (flexsp)",
         RUN + ["--strategy", "flexsp"], "{d}/s.textproto:27: plan.flexsp.planning_memory_cap: must be > 0",
         {"s.textproto": scenario(("zero_stage: 1", 'zero_stage: 1 flexsp { planning_memory_cap: "0GiB" }'))}),
    Case("scenario-a2a-degree-one", "scenario", "an all-to-all efficiency for degree 1",
         RUN, "{d}/s.textproto:32: cost_model.all_to_all_efficiency[0].degree: must be >= 2, got 1",
         {"s.textproto": scenario(append="cost_model { all_to_all_efficiency { degree: 1 efficiency: 0.5 } }\n")}),
    Case("scenario-a2a-degree-repeated", "scenario", "an all-to-all efficiency listed twice for degree 8",
         RUN, "{d}/s.textproto:...cost_model.all_to_all_efficiency[1].degree: degree 8 is listed twice (also at [0])",
         {"s.textproto": scenario(append="cost_model {\n  all_to_all_efficiency { degree: 8 efficiency: 0.5 }\n"
                                         "  all_to_all_efficiency { degree: 8 efficiency: 0.6 }\n}\n")}),
    Case("scenario-a2a-efficiency-over-one", "scenario", "an all-to-all efficiency of 1.5",
         RUN, "{d}/s.textproto:32: cost_model.all_to_all_efficiency[0].efficiency: must be in (0, 1], got 1.5",
         {"s.textproto": scenario(append="cost_model { all_to_all_efficiency { degree: 8 efficiency: 1.5 } }\n")}),
    Case("topology-ports-huge", "scenario", "a RailX chip with 10^8 OCS ports per row (memory would explode)",
         ["topo", "{b}/topo.textproto", "-o", "{d}/out", "--set", "cluster.topology.railx.ports_per_chip_x=100000000"],
         "cluster.topology.railx.ports_per_chip_x: must be <= 64"),
    Case("topology-ocs-radix-huge", "scenario", "a RailX optical switch of 4*10^9 ports",
         ["topo", "{b}/topo.textproto", "-o", "{d}/out", "--set", "cluster.topology.railx.ocs_radix=4000000000"],
         "cluster.topology.railx.ocs_radix: must be <= 65536"),
    Case("topology-output-file", "output", "topo -o at a regular file",
         ["topo", "{b}/topo.textproto", "-o", "{d}/out"], "{d}/out: exists and is not a directory", {"out": "keep me\n"}),
    # ------------------------------------------------------------ --set
    Case("set-no-equals", "command line", "--set without '='",
         run_set("workload.global_batch"), "--set workload.global_batch: expected FIELD=VALUE"),
    Case("set-unknown-field", "command line", "--set of a field the schema does not have",
         run_set("workload.batch=3"), "--set workload.batch=3: workload has no field 'batch'"),
    Case("set-non-utf8", "command line", "--set with a value that is not UTF-8",
         run_set("name=\udcff"), "run: --set: 'name=\\xff' is not valid UTF-8"),
    Case("set-layers-huge", "command line", "--set model.layers=10^9",
         run_set("model.layers=1000000000"), "model.layers: must be <= "),
    Case("set-layers-out-of-range", "command line", "--set model.layers=10^12 (past 32 bits)",
         run_set("model.layers=1000000000000"), "--set model.layers=1000000000000: model.layers (uint32): ...Integer out of range"),
    Case("set-global-batch-huge", "command line", "--set workload.global_batch=4*10^9",
         run_set("workload.global_batch=4000000000"), "workload.global_batch: must be <= "),
    # ------------------------------------------------------------ length files
    Case("lengths-missing", "length file", "workload.lengths.file names no file",
         RUN, "{d}/s.textproto:19: workload.lengths.file: no such file {d}/nope.txt",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "nope.txt" }'))}),
    Case("lengths-empty", "length file", "a 0-byte length file",
         RUN, "{d}/s.textproto:...workload.lengths.file: {d}/l.txt: no lengths found",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')), "l.txt": ""}),
    Case("lengths-directory", "length file", "workload.lengths.file names a directory",
         RUN, "{d}/s.textproto:19: workload.lengths.file: {d}/l: not a regular file",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l" }')), "l": DIR}),
    Case("lengths-fifo", "length file", "workload.lengths.file names a FIFO",
         RUN, "{d}/s.textproto:19: workload.lengths.file: {d}/l.txt: not a regular file",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')), "l.txt": FIFO}),
    Case("lengths-not-a-number", "length file", "a line that is not a length",
         RUN, "{d}/l.txt:2: expected a positive integer length, got 'twelve'",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')), "l.txt": "10\ntwelve\n"}),
    Case("lengths-zero", "length file", "a length of 0",
         RUN, "{d}/l.txt:1: expected a positive integer length, got '0'",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')), "l.txt": "0\n"}),
    Case("lengths-negative", "length file", "a negative length",
         RUN, "{d}/l.txt:1: expected a positive integer length, got '-5'",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')), "l.txt": "-5\n"}),
    Case("lengths-overflow", "length file", "a length past 2^64",
         RUN, "{d}/l.txt:1: expected a positive integer length, got '99999999999999999999999'",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')),
          "l.txt": "99999999999999999999999\n"}),
    Case("lengths-huge", "length file", "a 10^15-token length (over the sequence-length bound)",
         RUN, "{d}/s.textproto:19: workload.lengths.file: {d}/l.txt:1: length 1000000000000000 tokens: must be <= 1073741824",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')),
          "l.txt": "1000000000000000\n"}),
    Case("lengths-jsonl-missing-field", "length file", "JSONL without the length field",
         RUN, "{d}/l.jsonl:1: ...length",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.jsonl" }')),
          "l.jsonl": '{"tokens": 12}\n'}),
    Case("lengths-jsonl-broken", "length file", "a JSONL line that is not JSON",
         RUN, "{d}/l.jsonl:2: invalid JSON",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.jsonl" }')),
          "l.jsonl": '{"length": 12}\n{"length": \n'}),
    Case("lengths-jsonl-bad-utf8", "length file", "a JSONL line that is not UTF-8",
         RUN, "{d}/l.jsonl:1: invalid JSON: invalid code sequence",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.jsonl" }')),
          "l.jsonl": b'{"length": 12, "text": "\xff\xfe"}\n'}),
    Case("lengths-too-large", "length file", "a length file over the 1 GiB limit (sparse)",
         RUN, "{d}/s.textproto:19: workload.lengths.file: {d}/l.txt: 1100000000 bytes is too large: a length file holds at most 268435456 bytes",
         {"s.textproto": scenario(('lengths { distribution: "wikipedia" }', 'lengths { file: "l.txt" }')),
          "l.txt": Sparse(1100000000)}),
    # ------------------------------------------------------------ schedules
    Case("schedule-missing", "schedule", "the schedule file does not exist",
         SIM, "{d}/x.pb: cannot open: No such file or directory"),
    Case("schedule-empty", "schedule", "a 0-byte schedule.pb",
         SIM, "{d}/x.pb: num_ranks: must be > 0, got 0 (an empty schedule", {"x.pb": b""}),
    Case("schedule-zero-ranks", "schedule", "a schedule of 0 ranks (only a name)",
         SIMT, "{d}/x.textproto: num_ranks: must be > 0", {"x.textproto": 'scenario: "x" strategy: "hand"\n'}),
    Case("schedule-truncated", "schedule", "schedule.pb cut in the middle",
         SIM, "{d}/x.pb: not a valid binary eppsim.proto.Schedule message",
         {"x.pb": lambda b: (b / "schedule.pb").read_bytes()[: (b / "schedule.pb").stat().st_size // 2 + 1]}),
    Case("schedule-wrong-magic", "schedule", "a file of text where a binary schedule belongs",
         SIM, "{d}/x.pb: not a valid binary eppsim.proto.Schedule message", {"x.pb": b"\xff\xff\xff\xff garbage"}),
    Case("schedule-huge-length-prefix", "schedule", "a length-delimited field claiming 2^62 bytes",
         SIM, "{d}/x.pb: not a valid binary eppsim.proto.Schedule message",
         {"x.pb": key(7, 2) + varint(1 << 62) + b"\x00" * 16}),
    Case("schedule-a-trace", "schedule", "a Trace given where a Schedule belongs",
         ["sim", "{b}/run/trace.pb", "--cluster", "{b}/s.textproto", "-o", "{d}/out"], "{b}/run/trace.pb: not a valid binary eppsim.proto.Schedule message"),
    Case("schedule-ranks-huge", "schedule", "num_ranks 10^9 with no programs",
         SIMT, "{d}/x.textproto: num_ranks: must be <= 4194304", {"x.textproto": "num_ranks: 1000000000\n"}),
    Case("schedule-ranks-mismatch", "schedule", "num_ranks disagrees with the programs",
         SIMT, "{d}/x.textproto: schedule: num_ranks is 17 but there are 16 programs", {"x.textproto": schedule_text(("num_ranks: 16", "num_ranks: 17"))}),
    Case("schedule-bad-dep", "schedule", "an op depending on a later op",
         SIMT, "{d}/x.textproto: schedule: rank 0 op 0: depends on op 1, which is not earlier",
         {"x.textproto": one_rank("stream: [0, 0] code: [OP_COMPUTE, OP_COMPUTE] target: [0, 0] size_bytes: [0, 0] "
                                  "detail: [0, 0] dep_op: 0 dep_on: 1", ONE_LAYER)}),
    Case("schedule-bad-dep-old-form", "schedule", "an op depending on a later op " + OLD_FORM,
         SIMT, "{d}/x.textproto: schedule: rank 0 op 0: depends on op 1, which is not earlier",
         {"x.textproto": "num_ranks: 1 stream_names: \"compute\" placement { } programs { "
                         "ops { stream: 0 deps: 1 compute { layer_count: 1 } } ops { stream: 0 compute { layer_count: 1 } } }\n"}),
    Case("schedule-duration-overflow", "schedule", "fixed durations whose sum overflows 64-bit nanoseconds",
         SIMT, "{d}/x.textproto: schedule: rank 0 op 1 (stream compute) ends: simulated time 18000000000 s cannot be represented",
         {"x.textproto": one_rank("stream: [0, 0] code: [OP_COMPUTE, OP_COMPUTE] target: [0, 0] size_bytes: [0, 0] "
                                  "detail: [0, 0] duration_source: [DURATION_FIXED, DURATION_FIXED] "
                                  "fixed_duration_ns: [9000000000000000000, 9000000000000000000]", ONE_LAYER)}),
    Case("schedule-negative-duration", "schedule", "a negative fixed duration",
         SIMT, "{d}/x.textproto: ...fixed_duration_ns",
         {"x.textproto": one_rank("stream: 0 code: OP_COMPUTE target: 0 size_bytes: 0 detail: 0 "
                                  "duration_source: DURATION_FIXED fixed_duration_ns: -5", ONE_LAYER)}),
    Case("schedule-unknown-phase", "schedule", "a compute op of an unknown phase (a number no enum value has)",
         SIMT, "{d}/x.textproto: schedule: shared_computes[...].phase: unknown value 99",
         {"x.textproto": schedule_text(("phase: FORWARD", "phase: 99"))}),
    Case("schedule-shared-compute-out-of-range", "schedule", "a compute op naming a shared compute the schedule does not list",
         SIMT, "{d}/x.textproto: schedule: rank 0 op 0: shared_compute: index 7 out of range (0 shared computes)",
         {"x.textproto": one_rank("stream: 0 code: OP_COMPUTE target: 7 size_bytes: 0 detail: 0")}),
    Case("schedule-shared-compute-out-of-range-old-form", "schedule",
         "a compute op naming a shared compute the schedule does not list " + OLD_FORM,
         SIMT, "{d}/x.textproto: schedule: rank 0 op 0: shared_compute: index 7 out of range (0 shared computes)",
         {"x.textproto": "num_ranks: 1 stream_names: \"compute\" placement { } programs { ops { stream: 0 shared_compute: 7 } }"}),
    Case("schedule-unknown-collective-kind", "schedule", "a collective of an unknown kind (its detail)",
         SIMT, "{d}/x.textproto: schedule: rank 0 op ...: collective kind (detail): unknown value 99",
         {"x.textproto": schedule_op("OP_COLLECTIVE", "detail", 99)}),
    Case("schedule-unknown-algorithm", "schedule", "a collective of an unknown algorithm",
         SIMT, "{d}/x.textproto: schedule: rank 0 op ...: algorithm: unknown value 99",
         {"x.textproto": schedule_op("OP_COLLECTIVE", "algorithm", 99)}),
    Case("schedule-unknown-memory-tag", "schedule", "a memory op of an unknown tag (its detail)",
         SIMT, "{d}/x.textproto: schedule: rank 0 op ...: memory tag (detail): unknown value 99",
         {"x.textproto": schedule_op("OP_ALLOCATE", "detail", 99)}),
    Case("schedule-unknown-code", "schedule", "an op of an unknown code",
         SIMT, "{d}/x.textproto: schedule: rank 0 op ...: code: unknown value 9",
         {"x.textproto": schedule_op("OP_SEND", "code", 9)}),
    Case("schedule-algorithm-not-collective", "schedule", "an algorithm on an op that is not a collective",
         SIMT, "{d}/x.textproto: schedule: rank 0 op ...: algorithm: only a COLLECTIVE has one, got RING",
         {"x.textproto": schedule_op("OP_SEND", "algorithm", "RING")}),
    Case("schedule-compute-with-bytes", "schedule", "a compute op with size_bytes",
         SIMT, "{d}/x.textproto: schedule: rank 0 op ...: a COMPUTE op has no size_bytes or detail, got 4096 and 0",
         {"x.textproto": schedule_op("OP_COMPUTE", "size_bytes", 4096)}),
    Case("schedule-memory-with-target", "schedule", "a memory op with a target",
         SIMT, "{d}/x.textproto: schedule: rank 0 op ...: a MEMORY op has no target, got 3",
         {"x.textproto": schedule_op("OP_FREE", "target", 3)}),
    Case("schedule-column-short", "schedule", "a per-op column shorter than stream",
         SIMT, "{d}/x.textproto: schedule: programs[0].detail: must have one entry per op (2, as stream), got 1",
         {"x.textproto": one_rank("stream: [0, 0] code: [OP_COMPUTE, OP_COMPUTE] target: [0, 0] size_bytes: [0, 0] "
                                  "detail: 0", ONE_LAYER)}),
    Case("schedule-optional-column-short", "schedule", "an algorithm column of one entry for two ops",
         SIMT, "{d}/x.textproto: schedule: programs[0].algorithm: must have no entry or one entry per op (2, as stream), got 1",
         {"x.textproto": one_rank("stream: [0, 0] code: [OP_COMPUTE, OP_COMPUTE] target: [0, 0] size_bytes: [0, 0] "
                                  "detail: [0, 0] algorithm: ALGORITHM_AUTO", ONE_LAYER)}),
    Case("schedule-dep-on-short", "schedule", "a dependency without the op it waits for (dep_op longer than dep_on)",
         SIMT, "{d}/x.textproto: schedule: programs[0].dep_on: must have one entry per dep_op entry (2), got 1",
         {"x.textproto": one_rank("stream: [0, 0, 0] code: [OP_COMPUTE, OP_COMPUTE, OP_COMPUTE] target: [0, 0, 0] "
                                  "size_bytes: [0, 0, 0] detail: [0, 0, 0] dep_op: [1, 2] dep_on: 0", ONE_LAYER)}),
    Case("schedule-dep-op-descending", "schedule", "dependencies not in op order (dep_op descending)",
         SIMT, "{d}/x.textproto: schedule: programs[0].dep_op[1]: must be ascending, got 1 after 2",
         {"x.textproto": one_rank("stream: [0, 0, 0] code: [OP_COMPUTE, OP_COMPUTE, OP_COMPUTE] target: [0, 0, 0] "
                                  "size_bytes: [0, 0, 0] detail: [0, 0, 0] dep_op: [2, 1] dep_on: [0, 0]", ONE_LAYER)}),
    Case("schedule-dep-op-out-of-range", "schedule", "a dependency of an op the program does not have",
         SIMT, "{d}/x.textproto: schedule: programs[0].dep_op[0]: op 5 out of range (1 ops)",
         {"x.textproto": one_rank("stream: 0 code: OP_COMPUTE target: 0 size_bytes: 0 detail: 0 dep_op: 5 dep_on: 0",
                                  ONE_LAYER)}),
    Case("schedule-ops-in-both-forms", "schedule", "a program with ops in columns and as messages " + OLD_FORM,
         SIMT, "{d}/x.textproto: schedule: programs[0].ops: a program lists its ops in columns (schema version 5) or, "
               "as schedules written before version 5 did, as messages in ops, not both",
         {"x.textproto": one_rank("stream: 0 code: OP_COMPUTE target: 0 size_bytes: 0 detail: 0 "
                                  "ops { stream: 0 compute { layer_count: 1 } }", ONE_LAYER)}),
    Case("schedule-layer-count-huge", "schedule", "a compute op of 4*10^9 layers",
         SIMT, "{d}/x.textproto: schedule: shared_computes[0].layer_count: must be <= 65536",
         {"x.textproto": one_rank("stream: 0 code: OP_COMPUTE target: 0 size_bytes: 0 detail: 0",
                                  "shared_computes { phase: FORWARD layer_count: 4000000000 }")}),
    Case("schedule-layer-count-huge-old-form", "schedule", "a compute op of 4*10^9 layers " + OLD_FORM,
         SIMT, "{d}/x.textproto: schedule: shared_computes[0].layer_count: must be <= 65536",
         {"x.textproto": "num_ranks: 1 stream_names: \"compute\" placement { } programs { "
                         "ops { stream: 0 compute { phase: FORWARD layer_count: 4000000000 } } }\n"}),
    Case("schedule-segment-arrays-differ", "schedule", "a compute op with more segment_tokens than segment_context_tokens",
         SIMT, "{d}/x.textproto: schedule: shared_computes[0].segment_context_tokens: must have one entry per "
               "segment_tokens entry (2), got 1",
         {"x.textproto": one_rank("stream: 0 code: OP_COMPUTE target: 0 size_bytes: 0 detail: 0",
                                  "shared_computes { phase: FORWARD layer_count: 1 segment_tokens: [512, 256] "
                                  "segment_context_tokens: 0 }")}),
    Case("schedule-memory-bytes-huge", "schedule", "an allocation of 2^60 bytes (the per-rank sum would wrap)",
         SIMT, "{d}/x.textproto: schedule: rank 0 op 0: size_bytes: must be <= 1125899906842624",
         {"x.textproto": one_rank("stream: 0 code: OP_ALLOCATE target: 0 size_bytes: 1152921504606846976 "
                                  "detail: 2")}),
    Case("schedule-unknown-extension", "schedule", "a schedule with an unknown extension",
         ["sim", "{d}/x.bogus", "--cluster", "{b}/s.textproto", "-o", "{d}/out"],
         "{d}/x.bogus: unknown file extension '.bogus'", {"x.bogus": b"abc"}),
    Case("schedule-too-large", "schedule", "a schedule file over the size limit (sparse)",
         SIM, "{d}/x.pb: 3000000000 bytes is too large: input files of this kind hold at most 1073741824 bytes", {"x.pb": Sparse(3000000000)}),
    Case("schedule-cluster-is-binary", "schedule", "--cluster names a binary Schedule instead of a scenario",
         ["sim", "{b}/schedule.pb", "--cluster", "{b}/schedule.pb", "-o", "{d}/out"], "schedule.pb:...not valid UTF-8"),
    Case("schedule-bad-peer", "schedule", "a send to a rank that does not exist",
         SIMT, "{d}/x.textproto: schedule: rank 0 op 0: send peer 7 out of range",
         {"x.textproto": one_rank("stream: 0 code: OP_SEND target: 7 size_bytes: 1 detail: 0", streams=("comm",))}),
    Case("schedule-too-many-ranks-for-cluster", "schedule", "a 64-rank schedule on the 16-GPU cluster",
         ["sim", "{d}/x.textproto", "--cluster", "{b}/s.textproto", "-o", "{d}/out"], "{d}/x.textproto: ...64...16",
         {"x.textproto": lambda b: ("num_ranks: 64 stream_names: \"compute\" " + "programs { } " * 64 + "\n").encode()}),
    Case("chakra-export-invalid", "schedule", "export chakra of a schedule that fails validation",
         ["export", "chakra", "{d}/x.textproto", "-o", "{d}/et/t"], "{d}/x.textproto: ...depends on op 1, which is not earlier",
         {"x.textproto": "num_ranks: 1 stream_names: \"compute\" placement { } programs { "
                         "ops { stream: 0 deps: 1 compute { layer_count: 1 } } ops { stream: 0 compute { layer_count: 1 } } }\n"}),
    # ------------------------------------------------------------ traces
    Case("trace-empty-dir", "trace", "a run directory without trace.pb",
         ["export", "chrome", "{d}/r", "-o", "{d}/t.json"], "{d}/r: a directory without trace.pb", {"r": DIR}),
    Case("trace-truncated", "trace", "trace.pb cut short",
         ["export", "chrome", "{d}/t.pb", "-o", "{d}/t.json"], "{d}/t.pb: not a valid binary eppsim.proto.Trace message",
         {"t.pb": lambda b: (b / "run/trace.pb").read_bytes()[:1001]}),
    Case("trace-empty", "trace", "a 0-byte trace.pb",
         ["export", "timeline", "{d}/t.pb", "-o", "{d}/t.csv"], "{d}/t.pb: num_ranks: must be > 0, got 0 (an empty trace", {"t.pb": b""}),
    Case("trace-chrome", "trace", "a Chrome trace given where a Trace belongs",
         ["diff", "{d}/t.json", "{b}/run", "-o", "{d}/out"], "{d}/t.json: a Chrome trace",
         {"t.json": '{"traceEvents": []}'}),
    Case("trace-huge-length-prefix", "trace", "a field claiming 2^62 bytes",
         ["validate", "--simulated", "{d}/t.pb", "--measured", "{b}/run", "-o", "{d}/out"],
         "{d}/t.pb: not a valid binary eppsim.proto.Trace message", {"t.pb": key(2, 2) + varint(1 << 62)}),
    Case("trace-bad-rank", "trace", "an event on a rank past num_ranks",
         ["export", "timeline", "{d}/t.textproto", "-o", "{d}/t.csv"], "{d}/t.textproto: op_events.rank[0]: must be < num_ranks (1), got 5",
         {"t.textproto": "num_ranks: 1 op_events { rank: [5] op: [0] stream: [0] kind: [COMPUTE] phase: [FORWARD] "
                         "collective: [COLLECTIVE_KIND_UNSPECIFIED] chunk: [0] stage: [0] peer: [0] group: [0] "
                         "size_bytes: [0] start_ns: [0] end_ns: [10] }\n"}),
    Case("trace-op-events-column-short", "trace", "an op_events column shorter than the others",
         ["export", "timeline", "{d}/t.textproto", "-o", "{d}/t.csv"],
         "{d}/t.textproto: op_events.op: must have one entry per event (2, as op_events.rank), got 0",
         {"t.textproto": "num_ranks: 1 op_events { rank: [0, 0] }\n"}),
    Case("trace-events-in-both-forms", "trace", "events both in op_events and as messages (the form before op_events)",
         ["export", "timeline", "{d}/t.textproto", "-o", "{d}/t.csv"], "{d}/t.textproto: events: ...not both",
         {"t.textproto": "num_ranks: 1 op_events { rank: [0] } events { end_ns: 10 }\n"}),
    Case("trace-ranks-huge", "trace", "a trace claiming 10^9 ranks",
         ["diff", "{d}/t.textproto", "{b}/run", "-o", "{d}/out"], "{d}/t.textproto: num_ranks: must be <= ",
         {"t.textproto": "num_ranks: 1000000000\n"}),
    Case("replay-no-schedule", "trace", "replay of a trace with no schedule.pb beside it",
         ["replay", "{d}/t.pb", "--cluster", "{b}/s.textproto", "-o", "{d}/out"], "replay: {d}/t.pb has no schedule.pb beside it",
         {"t.pb": read("run/trace.pb")}),
    Case("replay-wrong-schedule", "trace", "replay with --schedule of another schedule",
         ["replay", "{b}/run/trace.pb", "--schedule", "{d}/x.textproto", "--cluster", "{b}/s.textproto", "-o", "{d}/out"],
         "{b}/run/trace.pb with {d}/x.textproto: replay: the trace has 16 ranks but the schedule 1",
         {"x.textproto": "num_ranks: 1 stream_names: \"compute\" placement { } programs { ops { stream: 0 compute { layer_count: 1 } } }\n"}),
    Case("trace-too-large", "trace", "a trace file over the size limit (sparse)",
         ["export", "chrome", "{d}/t.pb", "-o", "{d}/t.json"], "{d}/t.pb: 3000000000 bytes is too large: input files of this kind hold at most 1073741824 bytes", {"t.pb": Sparse(3000000000)}),
    Case("trace-fifo", "trace", "a FIFO given as a trace",
         ["export", "chrome", "{d}/t.pb", "-o", "{d}/t.json"], "{d}/t.pb: not a regular file (a FIFO, socket or device cannot be read as input)", {"t.pb": FIFO}),
    # ------------------------------------------------------------ Chakra
    Case("chakra-empty", "Chakra", "a 0-byte PREFIX.0.et",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out"], "{d}/t.0.et: empty: a Chakra trace starts with a GlobalMetadata message", {"t.0.et": b""}),
    Case("chakra-truncated", "Chakra", "PREFIX.0.et cut in the middle of a node",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out"], "{d}/t.0.et: byte 0 (GlobalMetadata): message of ... bytes runs past the end of the file (200 bytes)",
         {"t.0.et": lambda b: (b / "et/t.0.et").read_bytes()[:200]}),
    Case("chakra-huge-length-prefix", "Chakra", "a message length prefix of 2^62 bytes",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out"], "{d}/t.0.et: byte 0 (GlobalMetadata): message of 4611686018427387904 bytes is over the limit",
         {"t.0.et": varint(1 << 62) + b"\x00" * 8}),
    Case("chakra-garbage", "Chakra", "random bytes as a rank file",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out"], "{d}/t.0.et: byte 0 (GlobalMetadata): not a valid GlobalMetadata message",
         {"t.0.et": b"\x05\xff\xff\xff\xff\xff"}),
    Case("chakra-comm-groups-broken", "Chakra", "a communicator-group file that is not JSON",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out", "--comm-groups", "{d}/g.json"],
         "{d}/g.json: not a JSON object of group id -> ranks: ", {"t.0.et": read("et/t.0.et"), "t.1.et": read("et/t.1.et"), "g.json": "{\"1\": [0, 1"}),
    Case("chakra-comm-groups-bad-rank", "Chakra", "a communicator group naming a rank past the trace's",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out", "--comm-groups", "{d}/g.json"],
         "{d}/g.json: group 1: every member must be a rank in [0, 1), got", {"t.0.et": read("et/t.0.et"), "g.json": "{\"1\": [0, 4000000000]}"}),
    Case("chakra-comm-groups-missing", "Chakra", "--comm-groups names no file",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out", "--comm-groups", "{d}/g.json"],
         "{d}/g.json: cannot open: No such file or directory", {"t.0.et": read("et/t.0.et")}),
    Case("chakra-missing-rank", "Chakra", "rank 0's file of a 16-rank trace alone: its sends name missing ranks",
         ["sim", "{d}/t", "--cluster", "{b}/s.textproto", "-o", "{d}/out"],
         "{d}/t.0.et: GlobalMetadata: eppsim.placement: 32 values for 1 ranks", {"t.0.et": read("et/t.0.et")}),
    # ------------------------------------------------------------ command lines
    Case("cli-unknown-command", "command line", "an unknown command",
         ["frobnicate"], "unknown command 'frobnicate'"),
    Case("cli-unknown-option", "command line", "an unknown option",
         ["run", "{b}/s.textproto", "--frobnicate"], "run: unrecognised option '--frobnicate'"),
    Case("cli-missing-argument", "command line", "run without a scenario",
         ["run"], "run: the option '--scenario' is required"),
    Case("cli-top-negative", "command line", "diff --top -1",
         ["diff", "{b}/run", "{b}/run", "--top", "-1", "-o", "{d}/out"], "diff: --top: must be >= 0"),
    Case("cli-top-huge", "command line", "diff --top 10^10 (not an int)",
         ["diff", "{b}/run", "{b}/run", "--top", "10000000000", "-o", "{d}/out"], "diff: the argument ('10000000000') for option '--top' is invalid"),
    Case("cli-top-over-bound", "command line", "diff --top over its bound",
         ["diff", "{b}/run", "{b}/run", "--top", "2000000000", "-o", "{d}/out"], "diff: --top: must be <= "),
    Case("cli-unknown-engine", "command line", "an unknown --engine",
         ["run", "{b}/s.textproto", "--engine", "warp", "-o", "{d}/out"], "{b}/s.textproto: simulation.engine: unknown engine \"warp\""),
    Case("cli-unknown-outputs", "command line", "an unknown --outputs entry",
         ["run", "{b}/s.textproto", "--outputs", "trace,movies", "-o", "{d}/out"], "--outputs: unknown output 'movies'"),
    Case("cli-unknown-outputs-before-run", "command line", "an unknown --outputs entry is refused before the scenario is read and run",
         ["run", "{b}/no-such-scenario.textproto", "--outputs", "movies", "-o", "{d}/out"], "--outputs: unknown output 'movies'"),
    Case("cli-unknown-export-format", "command line", "export to an unknown format",
         ["export", "pdf", "{b}/run", "-o", "{d}/x.pdf"], "export: unknown format 'pdf'"),
    Case("cli-plan-bad-extension", "command line", "plan -o with an unknown extension",
         ["plan", "{b}/s.textproto", "-o", "{d}/x.docx"], "{d}/x.docx: unknown file extension '.docx'"),
    Case("cli-replay-bad-compute", "command line", "replay --compute of an unknown mode",
         ["replay", "{b}/run/trace.pb", "--cluster", "{b}/s.textproto", "--compute", "guess", "-o", "{d}/out"],
         "--compute: unknown value 'guess'"),
    Case("cli-testbed-too-many-steps", "command line", "testbed --steps past its bound",
         ["testbed", "{b}/s.textproto", "--steps", "1000000", "-o", "{d}/out"], "testbed: --steps: must be in [1, 1000], got 1000000"),
    Case("cli-testbed-bad-backend", "command line", "testbed --backend of an unknown backend",
         ["testbed", "{b}/s.textproto", "--backend", "abacus", "-o", "{d}/out"], "testbed: --backend: must be cpu or cuda, got 'abacus'"),
    Case("cli-bad-log", "command line", "--log of an unknown level",
         ["presets", "--log=verbose"], "--log 'verbose': unknown log level 'verbose'"),
    Case("cli-calibrate-missing", "command line", "calibrate from a missing bench file",
         ["calibrate", "{d}/b.json", "-o", "{d}/c.textproto"], "{d}/b.json: cannot open: No such file or directory"),
    Case("cli-calibrate-broken", "command line", "calibrate from a bench file that is not JSON",
         ["calibrate", "{d}/b.json", "-o", "{d}/c.textproto"], "{d}/b.json: not a valid JSON eppsim.proto.BenchFile message", {"b.json": "{"}),
    # ------------------------------------------------------------ eppsim-bench (skipped where it is not built)
    Case("bench-no-command", "command line", "eppsim-bench with no command",
         [], "a command is required: compute, comm or interference", program="eppsim-bench"),
    Case("bench-unknown-command", "command line", "eppsim-bench with an unknown command",
         ["frobnicate"], "unknown command 'frobnicate'", program="eppsim-bench"),
    Case("bench-missing-scenario-option", "command line", "eppsim-bench compute without --scenario",
         ["compute", "--backend", "cpu", "--out", "{d}/b.json"], "eppsim-bench compute: --scenario is required",
         program="eppsim-bench"),
    Case("bench-bad-backend", "command line", "eppsim-bench compute --backend abacus",
         ["compute", "--scenario", "{b}/s.textproto", "--backend", "abacus", "--out", "{d}/b.json"],
         "eppsim-bench compute: --backend: must be cpu or cuda, got 'abacus'", program="eppsim-bench"),
    Case("bench-bad-repeats", "command line", "eppsim-bench compute --repeats x",
         ["compute", "--scenario", "{b}/s.textproto", "--backend", "cpu", "--out", "{d}/b.json", "--repeats", "x"],
         "eppsim-bench compute: --repeats: expected a whole number, got 'x'", program="eppsim-bench"),
    Case("bench-scenario-fifo", "command line", "eppsim-bench compute --scenario at a FIFO",
         ["compute", "--scenario", "{d}/s.textproto", "--backend", "cpu", "--out", "{d}/b.json"],
         "{d}/s.textproto: not a regular file", {"s.textproto": FIFO}, program="eppsim-bench"),
    # ------------------------------------------------------------ outputs
    Case("out-symlink", "output", "-o at a symbolic link to a directory",
         ["run", "{b}/s.textproto", "-o", "{d}/out"], "{d}/out: is a symbolic link, which eppsim does not replace",
         {"target": DIR, "out": Symlink("{d}/target")}),
    Case("out-regular-file", "output", "-o at a regular file",
         ["run", "{b}/s.textproto", "-o", "{d}/out"], "{d}/out: exists and is not a directory", {"out": "keep me\n"}),
    Case("out-foreign-directory", "output", "-o at a folder eppsim did not write",
         ["run", "{b}/s.textproto", "-o", "{d}/out"], "{d}/out: holds files eppsim did not write", {"out": DIR, "out/mine.txt": "keep me\n"}),
    Case("out-device", "output", "export -o at a device node (/dev/null)",
         ["export", "chrome", "{b}/run", "-o", "/dev/null"], "/dev/null: the output exists and is a device; eppsim only replaces regular files"),
    Case("out-fifo", "output", "export -o at a FIFO",
         ["export", "timeline", "{b}/run", "-o", "{d}/t.csv"], "{d}/t.csv: the output exists and is a FIFO; eppsim only replaces regular files", {"t.csv": FIFO}),
    Case("out-file-symlink", "output", "plan -o at a symbolic link",
         ["plan", "{b}/s.textproto", "-o", "{d}/x.pb"], "{d}/x.pb: the output exists and is a symbolic link; eppsim only replaces regular files",
         {"target.pb": b"keep", "x.pb": Symlink("{d}/target.pb")}),
    Case("out-export-directory", "output", "export -o at a directory",
         ["export", "chrome", "{b}/run", "-o", "{d}/t"], "{d}/t: the output exists and is a directory", {"t": DIR}),
    Case("out-diff-file", "output", "diff -o at a regular file",
         ["diff", "{b}/run", "{b}/run", "-o", "{d}/out"], "{d}/out: exists and is not a directory", {"out": "keep me\n"}),
    Case("out-current-directory", "output", "-o . (the current directory)",
         ["run", "{b}/s.textproto", "-o", "."], ".: is the current directory or one of its parents"),
    Case("out-parent-is-file", "output", "plan -o under a path whose parent is a regular file",
         ["plan", "{b}/s.textproto", "-o", "{d}/f/x.pb"], "{d}/f/x.pb: cannot create directory {d}/f: Not a directory",
         {"f": "keep me\n"}),
    Case("out-non-utf8-name", "output", "-o with a name that is not UTF-8",
         ["run", "{b}/s.textproto", "-o", "{d}/out\udcff"], "run: --output: '...out\\xff' is not valid UTF-8"),
    Case("scenario-non-utf8-name", "scenario", "a scenario file name that is not UTF-8",
         ["run", "{d}/s\udcff.textproto", "-o", "{d}/out"], "run: --scenario: '...s\\xff.textproto' is not valid UTF-8", {"s\udcff.textproto": read("s.textproto")}),
]
