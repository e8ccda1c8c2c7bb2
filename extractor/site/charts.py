"""Charts as inline SVG: counts per subsystem as bars, and per subsystem across versions as lines.

Each chart carries a ``<title>`` and ``aria-label`` and sits beside a table of the same numbers,
so it reads without sight and without scripts.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

__all__ = ["PALETTE", "bar_chart", "line_chart"]

# Dark enough on white for graphic contrast (WCAG 1.4.11, at least 3:1).
PALETTE = ("#1f5fa8", "#b3430f", "#2a7a2a", "#7a3b9a", "#8a6d00", "#a3214a", "#236b6b", "#555555")

_BAR_HEIGHT = 18
_BAR_GAP = 4
_LABEL_WIDTH = 210
_CHART_WIDTH = 720


def bar_chart(rows: Sequence[tuple[str, int, str]], *, title: str) -> Markup:
    """Horizontal bars, one per ``(label, count, href)``, largest first as given."""
    top = max((count for _, count, _ in rows), default=0) or 1
    span = _CHART_WIDTH - _LABEL_WIDTH - 60
    height = len(rows) * (_BAR_HEIGHT + _BAR_GAP) + _BAR_GAP
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {_CHART_WIDTH} {height}" '
        f'width="{_CHART_WIDTH}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for i, (label, count, href) in enumerate(rows):
        y = _BAR_GAP + i * (_BAR_HEIGHT + _BAR_GAP)
        width = max(1, round(span * count / top))
        parts.append(
            f'<a href="{escape(href)}"><text x="{_LABEL_WIDTH - 6}" y="{y + 13}" text-anchor="end">'
            f"{escape(label)}</text>"
            f'<rect x="{_LABEL_WIDTH}" y="{y}" width="{width}" height="{_BAR_HEIGHT}" fill="{PALETTE[0]}">'
            f"<title>{escape(label)}: {count}</title></rect>"
            f'<text x="{_LABEL_WIDTH + width + 4}" y="{y + 13}">{count}</text></a>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def line_chart(labels: Sequence[str], series: Sequence[tuple[str, Sequence[int]]], *, title: str) -> Markup:
    """One line per ``(name, counts)`` over the x ``labels`` (oldest first), with a legend."""
    width, height, left, right, top_pad, bottom = _CHART_WIDTH, 300, 50, 200, 12, 40
    top = max((v for _, values in series for v in values), default=0) or 1
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    steps = max(len(labels) - 1, 1)

    def x(i: int) -> float:
        return left + (plot_w * i / steps if len(labels) > 1 else plot_w / 2)

    def y(v: int) -> float:
        return top_pad + plot_h - plot_h * v / top

    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="#555"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" stroke="#555"/>',
        f'<text x="{left - 6}" y="{top_pad + 10}" text-anchor="end">{top}</text>',
        f'<text x="{left - 6}" y="{top_pad + plot_h}" text-anchor="end">0</text>',
    ]
    for i, label in enumerate(labels):
        parts.append(
            f'<text x="{x(i):.1f}" y="{top_pad + plot_h + 16}" text-anchor="middle">{escape(label)}</text>'
        )
    for k, (name, values) in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>')
        for i, v in enumerate(values):
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                f"<title>{escape(name)} at {escape(labels[i])}: {v}</title></circle>"
            )
        ly = top_pad + 14 + k * 18
        parts.append(
            f'<rect x="{left + plot_w + 12}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{left + plot_w + 28}" y="{ly}">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
