#!/usr/bin/python3
"""Writes docs/guide/fields.md, the reference of every field a scenario file can hold, from the
protos and the code that reads them, and checks that it is current and complete.

usage: /usr/bin/python3 scripts/field_reference.py [--check] [SOURCE_DIR]

Sources, all read fresh on every run:
  proto/scenario.proto, proto/topology.proto and the messages they use, compiled by protoc
    (--include_source_info) and read with python3-protobuf: fields, types, enum values and
    comments. A field's default is the clause of its comment after the word "default" (or
    "required"); an enum's zero value stands for it where the field says nothing. Its unit: a
    unit string's kind is the parser the loader reads it with (parse_bytes, parse_seconds,
    parse_bandwidth or parse_flops in scenario/ and sim/plan/), and its comment's example must be
    one; a number's unit is the unit word its comment names it by ("tokens, > 0", "the fraction
    of ...", "this many tokens"), else its name's suffix (_s, _usd, _tokens, _efficiency, ...).
  Bounds: from the comment (intervals, >=, <=, "at most N", ...); and the constants of
    base/input_limits.h and scenario/scenario_faults.h that the field's comment names, that
    name the field's path in their own comment (input_limits.h: "cluster.nodes",
    "fat_tree.radix", "cluster.*.latency"), or that the loader checks the field against
    (require_at_most / require_at_least in scenario/ and sim/plan/).

--check writes nothing: it exits 1 when the page differs from what this script writes, or when
a field of scenario.proto or topology.proto is undocumented (no comment, no default, a double
without its unit, a unit string whose example disagrees with its parser), naming each."""

import argparse
import difflib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from doc_output import show_value

PROTOS = ("scenario.proto", "topology.proto")  # documented here; their fields must be complete
ROOT_MESSAGE = "eppsim.proto.Scenario"
OUTPUT = "docs/guide/fields.md"
LIMIT_HEADERS = ("base/input_limits.h", "scenario/scenario_faults.h")
CODE_DIRS = ("scenario", "sim/plan")
REGENERATE = "/usr/bin/python3 scripts/field_reference.py"

PARSERS = {"parse_bytes": "bytes", "parse_seconds": "duration", "parse_bandwidth": "bandwidth",
           "parse_flops": "FLOP rate"}
_NUMBER = r"\s*(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*"
UNIT_FORMS = {  # each kind's strings, as base/units.h accepts them
    "FLOP rate": rf"^{_NUMBER}[kKMGTP]?(?:FLOPS|FLOP/s)$",
    "bandwidth": rf"^{_NUMBER}(?:[kKMGTP]i?)?(?:B/s|bps|bit/s|b/s)$",
    "duration": rf"^{_NUMBER}(?:ns|us|µs|ms|s)$",
    "bytes": rf"^{_NUMBER}(?:[kKMGTP]i?)?B?$",
}
NAME_UNITS = (("_s_per_token2", "seconds per token²"), ("_s_per_token", "seconds per token"),
              ("_s_per_extra_segment", "seconds per extra segment"), ("_Bps", "bytes per second"),
              ("_s", "seconds"), ("_usd", "US dollars"), ("_years", "years"), ("_tokens", "tokens"),
              ("_bytes", "bytes"), ("_factor", "factor"), ("_fraction", "fraction"),
              ("_efficiency", "fraction"), ("_gap", "fraction"))
UNIT_WORDS = ("tokens", "sequences", "layers", "seconds", "bytes", "years", "US dollars", "fraction", "factor")
BOUND_PATTERNS = (
    r"\bin [\[(]\s*-?[\d.]+\s*,\s*[\w.]+\s*[\])]",       # in (0, 1]
    r"(?:^|(?<=[,;(] ))[\[(]\s*-?[\d.]+\s*,\s*[\w.]+\s*[\])](?=$|[;,) ])",  # (0, 1] on its own
    r"(?:>=|<=) ?[\w.]+(?: / [\w.]+)?",                      # >= 1, <= radix / nics_per_chip
    r"(?<![\w=-])[<>] ?\d[\d.]*\b",                          # > 0
    r"\b\d+\.\.\d+\b",                                    # 0..3
    r"\bat (?:most|least) \d[\d,.]*\d\b|\bat (?:most|least) \d\b",  # at most 4096
    r"\b(?:\d+, )*\d+ or \d+\b",                           # 2 or 3; 1, 2 or 4
    r"\beven\b",
    r"\bpower of two\b",
)
LIMIT_LINE = re.compile(r"^inline constexpr (?:std::uint\d+_t|double|int) (k\w+) = (.+?);\s*(?://\s*(.*))?$")
SCALAR_TYPES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 8: "bool", 9: "string",
                12: "bytes", 13: "uint32", 17: "sint32", 18: "sint64"}
TYPE_MESSAGE, TYPE_ENUM, LABEL_REPEATED = 11, 14, 3


# ---------------------------------------------------------------- reading the protos

def flat(text):
    return " ".join(text.split())


def load_descriptors(source):
    """The FileDescriptorSet of PROTOS and their imports, with comments."""
    try:
        from google.protobuf import descriptor_pb2
    except ImportError:
        sys.exit("field_reference: needs python3-protobuf (scripts/install-deps.sh installs it)")
    proto_dir = source / "proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fields.pb"
        protoc = subprocess.run(["protoc", f"-I{proto_dir}", "--include_imports", "--include_source_info",
                                 f"--descriptor_set_out={out}", *[str(proto_dir / p) for p in PROTOS]],
                                capture_output=True, text=True)
        if protoc.returncode != 0:
            sys.exit(f"field_reference: protoc failed on {proto_dir}:\n{protoc.stderr}")
        files = descriptor_pb2.FileDescriptorSet()
        files.ParseFromString(out.read_bytes())
    return files


def index_types(files):
    """{full name: message or enum record} over every file."""
    types = {}
    for f in files.file:
        comments = {tuple(loc.path): flat(loc.leading_comments + " " + loc.trailing_comments)
                    for loc in f.source_code_info.location}

        def add_enum(e, full, path):
            types[full] = {"kind": "enum", "name": e.name, "full": full, "file": f.name, "comment": comments.get(path, ""),
                           "values": [(v.name, v.number, comments.get(path + (2, i), "")) for i, v in enumerate(e.value)]}

        def add_message(m, full, path):
            fields = []
            for i, fd in enumerate(m.field):
                real_oneof = fd.HasField("oneof_index") and not fd.proto3_optional
                fields.append({"name": fd.name, "number": fd.number, "type": fd.type, "type_name": fd.type_name.lstrip("."),
                               "repeated": fd.label == LABEL_REPEATED, "optional": fd.proto3_optional,
                               "oneof": m.oneof_decl[fd.oneof_index].name if real_oneof else "",
                               "comment": comments.get(path + (2, i), "")})
            types[full] = {"kind": "message", "name": m.name, "full": full, "file": f.name, "fields": fields,
                           "comment": comments.get(path, "")}
            for i, nested in enumerate(m.nested_type):
                add_message(nested, f"{full}.{nested.name}", path + (3, i))
            for i, nested in enumerate(m.enum_type):
                add_enum(nested, f"{full}.{nested.name}", path + (4, i))

        prefix = f.package + "." if f.package else ""
        for i, m in enumerate(f.message_type):
            add_message(m, prefix + m.name, (4, i))
        for i, e in enumerate(f.enum_type):
            add_enum(e, prefix + e.name, (5, i))
    return types


def walk(types):
    """The messages reachable from Scenario, depth first in declaration order, each with every
    textproto path it sits at ("" for the top level; "faults[]" for a repeated message)."""
    order, paths = [], {}

    def visit(full, path):
        first = full not in paths
        paths.setdefault(full, []).append(path)
        if not first:
            return
        order.append(full)
        for fd in types[full]["fields"]:
            if fd["type"] == TYPE_MESSAGE:
                visit(fd["type_name"], join(path, fd["name"]) + ("[]" if fd["repeated"] else ""))

    visit(ROOT_MESSAGE, "")
    # A message met again deeper in the walk keeps its first path; its others are listed beside it.
    return order, paths


def join(prefix, name):
    return f"{prefix}.{name}" if prefix else name


def plain(path):
    return path.replace("[]", "")


# ---------------------------------------------------------------- reading the code

def read_limits(source):
    """{name: (value, comment, header)} of the limit headers' constants."""
    limits, values = {}, {}
    for header in LIMIT_HEADERS:
        above = []
        for line in (source / header).read_text().splitlines():
            m = LIMIT_LINE.match(line.strip())
            if line.strip().startswith("//"):
                above.append(line.strip()[2:].strip())
                continue
            if m:
                name, expression, comment = m.groups()
                python = re.sub(r"std::uint\d+_t\{(\d+)\}", r"\1", expression)
                python = re.sub(r"\b(\d+)u\b", r"\1", python)
                value = eval(python, {}, dict(values))  # the headers' own constants, numbers and shifts only
                values[name] = value
                limits[name] = (value, comment or " ".join(above), header)
            above = []
    return limits


def code_files(source):
    return sorted(p for d in CODE_DIRS for p in (source / d).glob("*.cpp"))


def code_bounds(source):
    """{(path, constant)}: the fields the loader checks against a limit. A path that starts
    with "." is a suffix (the loader builds its start, e.g. path + ".fat_tree.radix")."""
    pairs = set()
    for file in code_files(source):
        text = file.read_text()
        for m in re.finditer(r"require_at_(?:most|least)\(\s*where,\s*([^;]*?)limits::(k\w+)", text, re.S):
            args, constant = m.groups()
            literal = re.match(r'(?:\w+\s*\+\s*|fmt::format\()?"([\w.\[\]{}]+)"', args)
            if literal:
                pairs.add((literal[1].replace("[{}]", ""), constant))
                continue
            # for (const auto& [path, value] : table) require_at_most(where, path, value, limits::kX);
            var = re.match(r"(\w+)\s*,", args)
            before = text[:m.start()]
            loop = var and re.search(rf"for \(const auto& \[{var[1]}, \w+\] : (\w+)\)\s*$", before)
            tables = loop and re.findall(rf"\b{loop[1]}\[\] = \{{(.*?)\}};", before, re.S)
            if tables:
                pairs.update((p, constant) for p in re.findall(r'\{"([\w.]+)"', tables[-1]))
    return pairs


def code_units(source):
    """{field name: unit kind} of the unit strings the loader parses, by its parsers."""
    units = {}
    for file in code_files(source):
        text = file.read_text()
        for name, parser in re.findall(r"parse_unit\(\s*where,[^;]*?\.(\w+)\(\),\s*(parse_\w+)\)", text, re.S):
            units[name] = PARSERS.get(parser)
        for parser, name in re.findall(r"\b(parse_\w+)\(\s*\w+(?:\.\w+\(\))*\.(\w+)\(\)\s*\)", text):
            if parser in PARSERS:
                units[name] = PARSERS[parser]
        # A helper that parses one of its parameters:
        #   Seconds f(const std::string& text, ...) { ... parse_unit(where, path, text, parse_seconds) ... }
        for helper, params, body in re.findall(r"^\w[\w:<>]*\s+(\w+)\(([^()]*)\)\s*\{(.*?)^\}", text, re.S | re.M):
            for param, parser in re.findall(r"parse_unit\(\s*where,\s*[^,]+,\s*(\w+),\s*(parse_\w+)\)", body):
                if re.search(rf"\b{param}\b", params) and parser in PARSERS:
                    for name in re.findall(rf"\b{helper}\(\s*\w+\.(\w+)\(\)", text):
                        units[name] = PARSERS[parser]
    return {name: kind for name, kind in units.items() if kind}


# ---------------------------------------------------------------- reading the comments

def clause(text, word):
    """The clause of `text` from `word` ("default": after it) to ';', '. ', an unbalanced ')' or the end."""
    m = re.search(rf"\b{word}\b", text, re.I)
    if not m:
        return None
    start = m.end() if word == "default" else m.start()
    if word == "default":
        while start < len(text) and text[start] in ": ":
            start += 1
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (c == ";" or (c == "." and text[i + 1:i + 2] in ("", " ")
                                           and not text[:i].endswith(("e.g", "i.e")))):
            break
        i += 1
    return text[start:i].strip().rstrip(",") or None


def comment_bounds(text):
    found = []
    for pattern in BOUND_PATTERNS:
        for m in re.finditer(pattern, text):
            if text[max(0, m.start() - 5):m.start()] != "e.g. ":
                bound = re.sub(r"^in ", "", m.group(0)).strip()
                bound = re.sub(r"^at most ", "<= ", re.sub(r"^at least ", ">= ", bound))
                found.append((m.start(), bound))
    return list(dict.fromkeys(b for _, b in sorted(found)))


def unit_kind_of(example):
    for kind, form in UNIT_FORMS.items():
        if re.match(form, example):
            return kind
    return None


def number_unit(fd):
    """A unit word where a comment names the quantity (its start, "(tokens)", ", a fraction", "this many
    tokens", "Static: layers"), else the name's suffix."""
    comment = re.sub(r"`[^`]*`", "", fd["comment"])
    words = "|".join(UNIT_WORDS)
    m = re.search(rf"(?:^|[(:;,] |this many )(?:(?:the|a|an) )?({words})\b", comment, re.I)
    if m:
        return m[1].lower() if m[1] != "US dollars" else m[1]
    return next((unit for suffix, unit in NAME_UNITS if fd["name"].endswith(suffix)), None)


# ---------------------------------------------------------------- the reference

def limit_unit(name):
    for ending, unit in (("BytesPerSecond", " B/s"), ("Seconds", " s"), ("_s", " s"), ("Flops", " FLOP/s"),
                         ("Bytes", " bytes")):
        if name.endswith(ending):
            return unit
    return ""


def limit_matches(comment, path):
    """Whether a limit's comment names the field at `path` (e.g. "fat_tree.radix", "cluster.*.latency")."""
    for token in re.findall(r"[\w*]+(?:\.[\w*/]+)+", comment):
        stem, _, alternatives = token.partition("/")
        names = [stem]
        if alternatives and len(alternatives) < len(stem):  # "ports_per_chip_x/y": also ports_per_chip_y
            names.append(stem[:-len(alternatives)] + alternatives)
        for name in names:
            pattern = re.escape(name).replace(r"\*", r"[^.]+")
            if re.search(rf"(?:^|\.){pattern}$", path):
                return True
    return False


class Reference:
    def __init__(self, source):
        self.source = source
        self.types = index_types(load_descriptors(source))
        self.order, self.paths = walk(self.types)
        self.limits = read_limits(source)
        self.code_bounds = code_bounds(source)
        self.code_units = code_units(source)
        self.problems = []

    def documented(self, message):
        return message["file"] in PROTOS

    def problem(self, message, fd, what):
        if self.documented(message):
            self.problems.append(f"proto/{message['file']}: {message['name']}.{fd['name']}: {what}")

    def anchor(self, full):
        path = self.paths[full][0]
        return plain(path) or "scenario"

    def type_cell(self, fd):
        if fd["type"] == TYPE_MESSAGE:
            name = f"[{self.types[fd['type_name']]['name']}](#{self.anchor(fd['type_name'])})"
        elif fd["type"] == TYPE_ENUM:
            enum = self.types[fd["type_name"]]
            name = f"[{enum['name']}](#enum-{enum['name'].lower()})"
        else:
            name = SCALAR_TYPES[fd["type"]]
        label = "repeated " if fd["repeated"] else "optional " if fd["optional"] else ""
        oneof = f", one of `{fd['oneof']}`" if fd["oneof"] else ""
        return label + name + oneof

    def unit_cell(self, message, fd):
        comment = fd["comment"]
        if fd["type"] == 9:  # string
            kind = self.code_units.get(fd["name"])
            examples = [e for e in re.findall(r'"([^"]*)"', comment) if unit_kind_of(e)]
            if kind is None and examples and self.documented(message):
                self.problem(message, fd, f'its comment gives the unit example "{examples[0]}", but the loader '
                                          f"parses no unit string of this name")
            if kind is None:
                return ""
            wrong = [e for e in examples if unit_kind_of(e) != kind]
            if wrong or not examples:
                self.problem(message, fd, f"a {kind} string (the loader's parser) needs an example of one in its "
                                          f'comment, e.g. "80GiB", "1.5us", "400Gbps", "989TFLOPS"'
                                          + (f'; "{wrong[0]}" is not one' if wrong else ""))
            return f"[{kind}](#unit-strings)"
        if fd["type"] in (1, 2, 3, 4, 5, 13, 17, 18):
            unit = number_unit(fd)
            if unit is None and fd["type"] in (1, 2):
                self.problem(message, fd, "states no unit (a unit word such as fraction, factor, seconds, or a "
                                          "name ending _s, _usd, ...)")
            return unit or ""
        return ""

    def default_cell(self, message, fd):
        comment = fd["comment"]
        default, required = clause(comment, "default"), clause(comment, "required")
        if default and required and "required" in default:
            required = None
        cell = "; ".join(c for c in (default, required) if c)
        if cell:
            return cell[0].lower() + cell[1:] if cell[1:2].islower() else cell
        if fd["oneof"]:
            return f"— (set one of `{fd['oneof']}`)"
        if fd["repeated"]:
            return "empty"
        if fd["type"] == TYPE_MESSAGE:
            return "—"
        if fd["type"] == 8 and not fd["optional"]:
            return "false"
        if fd["type"] == TYPE_ENUM:
            enum = self.types[fd["type_name"]]
            zero = next((v for v in enum["values"] if v[1] == 0), None)
            if zero and zero[2]:
                return zero[2][2:].strip() if zero[2].startswith("= ") else f"{zero[0]}: {zero[2]}"
        self.problem(message, fd, 'states no default (add "default X", or "required" where it must be set)')
        return "" if self.documented(message) else "—"

    def bound_cell(self, message, fd):
        bounds = comment_bounds(fd["comment"])
        paths = [plain(join(p, fd["name"])) for p in self.paths[message["full"]]]
        names = []
        for name, (value, comment, header) in self.limits.items():
            named = header == LIMIT_HEADERS[0] and any(limit_matches(comment, p) for p in paths)
            checked = any(p == c or (c.startswith(".") and p.endswith(c))
                          for p in paths for c, k in self.code_bounds if k == name)
            if named or checked or re.search(rf"\b{name}\b", fd["comment"]):
                names.append(name)
        for name in re.findall(r"\bk(?:Max|Min)\w+", fd["comment"]):
            if name not in self.limits:
                self.problem(message, fd, f"its comment names {name}, which {', '.join(LIMIT_HEADERS)} do not define")
        for name in names:
            value, _, _ = self.limits[name]
            sign = ">=" if name.startswith("kMin") else "<="
            bounds.append(f"{sign} {show_value(value)}{limit_unit(name)} (`{name}`)")
        return "; ".join(bounds)

    def check_code_paths(self):
        every = {plain(join(p, fd["name"])) for full in self.order for p in self.paths[full]
                 for fd in self.types[full]["fields"]}
        for path, constant in sorted(self.code_bounds):
            if not any(p == path or (path.startswith(".") and p.endswith(path)) for p in every):
                self.problems.append(f"the loader checks '{path}' against {constant}, but no scenario field has that path")

    def render(self):
        lines = [
            "# Scenario field reference",
            "",
            "<!-- Generated by scripts/field_reference.py from proto/scenario.proto, proto/topology.proto",
            f"     (and the messages they use), {', '.join(LIMIT_HEADERS)} and the checks of",
            f"     {' and '.join(d + '/' for d in CODE_DIRS)}; do not edit by hand. Regenerate with",
            f"     `{REGENERATE}`; `ctest -R scripts_field_reference` checks it is current. -->",
            "",
            "Every field a scenario file can hold, message by message from the top of the file (how to",
            "write one: [Scenarios](scenarios.md)). The columns:",
            "",
            "- **Field**: the path from the top of the file, as error messages and `--set` name it; `[]`",
            "  marks a repeated message, whose every entry holds the fields listed under it (`--set` sets a",
            "  repeated field whole).",
            "- **Type**: the protobuf type; an enum links to its values, a message to its fields; `optional`",
            "  fields tell unset from zero; `one of` fields exclude the others of their group.",
            "- **Unit**: a [unit string](#unit-strings)'s kind, or a number's unit.",
            "- **Default**: what an unset field means; an unset number reads as 0 and a 0 then means the",
            "  default. \"required\" fields must be set (where the clause says).",
            "- **Bound**: what the loader accepts; constants in `code` are the upper bounds of",
            "  `base/input_limits.h` (listed in [docs/bad-inputs.md](../bad-inputs.md)) and",
            "  `scenario/scenario_faults.h`. Other rules (divisibility, matching counts) are in the",
            "  description and in the loader's error messages.",
            "",
            "## Unit strings",
            "",
            "From `base/units.h`:",
            "",
            "```",
            *self.units_comment(),
            "```",
            "",
            "## Messages",
            "",
        ]
        documented = [f for f in self.order if self.documented(self.types[f])]
        appendix = [f for f in self.order if not self.documented(self.types[f])]
        groups = {}
        for full in documented + appendix:
            groups.setdefault(plain(self.paths[full][0]).split(".")[0], []).append(full)
        for fulls in groups.values():
            lines.append("- " + ", ".join(f"[`{self.paths[f][0] or '(top level)'}`](#{self.anchor(f)})" for f in fulls))
        lines.append("")
        for i, full in enumerate(documented + appendix):
            if i == len(documented):
                lines += ["## Calibration fits", "",
                          "Written by `eppsim calibrate` (`proto/calibration.proto`), inline under",
                          "`cost_model.calibration` or in the file `cost_model.calibration_file` names.", ""]
            lines += self.render_message(full)
        lines += self.render_enums()
        self.check_code_paths()
        return "\n".join(lines).rstrip("\n") + "\n"

    def units_comment(self):
        out = []
        for line in (self.source / "base/units.h").read_text().splitlines()[1:]:
            if not line.startswith("//"):
                break
            out.append(line[3:])
        return out

    def render_message(self, full):
        message = self.types[full]
        paths = self.paths[full]
        title = f"`{paths[0]}`" if paths[0] else "The top level"
        lines = [f'### <a id="{self.anchor(full)}"></a>{title}: {message["name"]}']
        about = [text(message["comment"])] if message["comment"] else []
        if len(paths) > 1:
            about.append("Also at " + ", ".join(f"`{p}`" for p in paths[1:]) + ".")
        if about:
            lines += [" ".join(about), ""]
        lines += ["| Field | Type | Unit | Default | Bound | Description |", "|---|---|---|---|---|---|"]
        for fd in message["fields"]:
            if not fd["comment"]:
                self.problem(message, fd, "has no comment")
            cells = [f"`{join(paths[0], fd['name'])}`", self.type_cell(fd), self.unit_cell(message, fd),
                     self.default_cell(message, fd), self.bound_cell(message, fd), fd["comment"]]
            lines.append("| " + " | ".join(text(c) if i >= 2 else c for i, c in enumerate(cells)) + " |")
        return lines + [""]

    def render_enums(self):
        used = {}
        for full in self.order:
            for fd in self.types[full]["fields"]:
                if fd["type"] == TYPE_ENUM:
                    used.setdefault(fd["type_name"], []).append(join(plain(self.paths[full][0]), fd["name"]))
        lines = ["## Enums", "", "| Enum | Value | Number | Meaning |", "|---|---|---|---|"]
        for full, fields in used.items():
            enum = self.types[full]
            about = (f'<a id="enum-{enum["name"].lower()}"></a>{enum["name"]} (`proto/{enum["file"]}`), of '
                     + ", ".join(f"`{f}`" for f in fields) + (f": {text(enum['comment'])}" if enum["comment"] else ""))
            for i, (name, number, comment) in enumerate(enum["values"]):
                lines.append(f"| {about if i == 0 else ''} | `{name}` | {number} | {text(comment)} |")
        return lines


def text(s):
    """Markdown for a comment in a table cell: pipes escaped; outside `code`, no emphasis or tags."""
    parts = s.split("`")
    for i in range(0, len(parts), 2):
        part = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", parts[i].replace("*", r"\*"))
        parts[i] = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\_", part)
    return "`".join(parts).replace("|", r"\|")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 when {OUTPUT} is stale or a field is undocumented")
    parser.add_argument("source", nargs="?", default=Path(__file__).resolve().parent.parent, type=Path)
    args = parser.parse_args()
    reference = Reference(args.source.resolve())
    page = reference.render()
    out = args.source / OUTPUT
    status = 0
    if reference.problems:
        print(f"field_reference: {len(reference.problems)} fields are not fully documented:", file=sys.stderr)
        for p in reference.problems:
            print(f"  {p}", file=sys.stderr)
        status = 1
    if args.check:
        current = out.read_text() if out.exists() else ""
        if current != page:
            diff = list(difflib.unified_diff(current.splitlines(), page.splitlines(), OUTPUT, "generated",
                                             lineterm="", n=0))
            print(f"field_reference: {OUTPUT} is stale; regenerate it with `{REGENERATE}`", file=sys.stderr)
            print("\n".join(diff[:40] + (["..."] if len(diff) > 40 else [])), file=sys.stderr)
            status = 1
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page)
        print(f"wrote {out}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
