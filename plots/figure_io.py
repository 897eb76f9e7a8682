"""Shared by the plot scripts: writing a figure atomically."""
import os
import sys


def save_figure(fig, output):
    """Writes `fig` to `output` (PNG, 120 dpi) through a temporary file and a
    rename, so a reader never sees half a file, and says so on stderr."""
    temporary = output + ".tmp.png"
    fig.savefig(temporary, dpi=120)
    os.replace(temporary, output)
    print(f"wrote {output}", file=sys.stderr)
