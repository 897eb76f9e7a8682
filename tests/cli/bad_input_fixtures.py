"""What the catalogue of bad inputs (tests/cli/bad_inputs.py) is made of: the
Case record, the kinds of fixture file, and the builders that write a case's
inputs from the shared folder of valid ones (encoders of protobuf's wire format,
text replacements in the base scenario and schedule, command lines).
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


def edited(name, what, replacements, append):
    """Base file `name` with `old -> new` text replacements applied, each of
    which must match, and `append` added at the end."""

    def make(base):
        text = (base / name).read_text()
        for old, new in replacements:
            assert old in text, f"replacement {old!r} does not match the base {what}"
            text = text.replace(old, new, 1)
        return (text + append).encode()

    return make


def scenario(*replacements, append=""):
    """The base scenario (scenarios/quickstart.textproto with a small batch), edited."""
    return edited("s.textproto", "scenario", replacements, append)


def schedule_text(*replacements, append=""):
    """The base schedule as text (schedule.textproto), edited."""
    return edited("schedule.textproto", "schedule", replacements, append)


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


# A compute benchmark (eppsim-bench compute's format) of a one-layer model, one row.
TINY_COMPUTE_BENCH = (
    '{"eppsim_bench": 1, "kind": "compute", "backend": "cpu", "device": "test", "ranks": 1, '
    '"model": {"name": "custom", "layers": 1, "hidden_size": 64, "attention_heads": 1, "kv_heads": 1, '
    '"ffn_hidden_size": 128, "vocab_size": 256, "bytes_per_element": 4}, '
    '"results": [{"kernel": "layer", "pass": "forward", "tokens": 64, "context_tokens": 0, "time_s": 0.001}]}')

ONE_LAYER = "shared_computes { phase: FORWARD layer_count: 1 }"
# The form before schema version 5 (a message per op), which eppsim converts as it reads.
OLD_FORM = "(ops as messages, the form before schema version 5)"


RUN = ["run", "{d}/s.textproto", "-o", "{d}/out"]
SIM = ["sim", "{d}/x.pb", "--cluster", "{b}/s.textproto", "-o", "{d}/out"]
SIMT = ["sim", "{d}/x.textproto", "--cluster", "{b}/s.textproto", "-o", "{d}/out"]
SWEEP = ["sweep", "{d}/w.textproto", "-o", "{d}/out"]


def sweep(body):
    """A sweep file (w.textproto) over the base scenario, `body` from its third line on."""
    return lambda base: f'name: "w"\nscenario: "{base / "s.textproto"}"\n{body}\n'.encode()


def run_set(assignment):
    return ["run", "{b}/s.textproto", "-o", "{d}/out", "--set", assignment]
