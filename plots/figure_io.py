"""Shared by the plot scripts: writing a figure atomically, choosing ranks."""
import os
import sys


def save_figure(fig, output):
    """Writes `fig` to `output` (PNG, 120 dpi) through a temporary file and a
    rename, so a reader never sees half a file, and says so on stderr."""
    temporary = output + ".tmp.png"
    fig.savefig(temporary, dpi=120)
    os.replace(temporary, output)
    print(f"wrote {output}", file=sys.stderr)


def parse_ranks(text, available):
    """'0-3,8' -> [0, 1, 2, 3, 8], kept to ranks present in the trace."""
    if not text:
        return sorted(available)
    chosen = set()
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-", 1)
            chosen.update(range(int(low), int(high) + 1))
        else:
            chosen.add(int(part))
    return sorted(chosen & set(available))
