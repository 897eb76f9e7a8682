"""What the scripts that write docs and results files share: the atomic write
of a text file, and how a limit of base/input_limits.h is shown."""
import os
import tempfile


def write_text_atomically(path, text):
    """Writes `text` to `path` through a temporary file beside it, renamed over
    it: a reader sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".tmp-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def show_value(value) -> str:
    """1,073,741,824 (2^30); 16,777,216 (16 x 2^20); 3600; 9.2e+09."""
    if isinstance(value, float):
        return f"{value:g}"
    shift = (value & -value).bit_length() - 1 if value else 0
    if shift >= 10:
        factor = value >> shift
        return f"{value:,} ({'' if factor == 1 else f'{factor} x '}2^{shift})"
    return f"{value:,}"
