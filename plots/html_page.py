"""The pieces of eppsim's self-contained HTML pages (plots/report.py, plots/sweep_page.py):
a stylesheet, figures inlined as SVG or PNG data, tables, and the atomic write
of DIR/report.html."""
import base64
import html
import io
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from figure_io import PlotInputError, figure_svg  # noqa: E402

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1500px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; }
figure svg, figure img { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
"""


def svg_figure(fig, caption):
    text = figure_svg(fig)
    plt.close(fig)
    return f'<figure>{text}<figcaption>{html.escape(caption)}</figcaption></figure>'


def png_figure(fig, caption):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f'<figcaption>{html.escape(caption)}</figcaption></figure>')


def try_plot(make, render, caption, needs):
    """A plot when its inputs exist, else a line saying which are missing."""
    missing = [n for n in needs if not os.path.exists(n)]
    if missing:
        return f"<p>{html.escape(caption)}: not drawn, {html.escape(', '.join(missing))} not written.</p>"
    try:
        return render(make(), caption)
    except PlotInputError as e:
        return f"<p>{html.escape(caption)}: not drawn, {html.escape(str(e))}.</p>"


def table(header, rows, numeric_from=1):
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = ""
    for row in rows:
        cells = "".join(f'<td class="num">{html.escape(str(c))}</td>' if i >= numeric_from else
                        f"<td>{html.escape(str(c))}</td>" for i, c in enumerate(row))
        body += f"<tr>{cells}</tr>\n"
    return f"<table><tr>{head}</tr>\n{body}</table>"



def write_page(directory, title, parts):
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
    output = os.path.join(directory, "report.html")
    temporary = output + f".tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(temporary, output)  # a reader sees the old page or the new one, never half of one
    print(f"wrote {output}", file=sys.stderr)


