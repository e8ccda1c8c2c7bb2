"""Syntax highlighting of the source windows, with Pygments.

Building an ``HtmlFormatter`` compiles its style sheet, which costs as much as lexing a window,
so one formatter per kind is built once and only its line numbers change from page to page.
"""

from __future__ import annotations

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

__all__ = ["STYLE", "Highlighter"]

STYLE = "default"
"""Pygments' own light style: its token colours are dark enough to read on the site's panels."""


class Highlighter:
    """Lexers and formatters reused for every page."""

    def __init__(self) -> None:
        self._python = PythonLexer(stripnl=False, ensurenl=False)
        self._window = HtmlFormatter(
            style=STYLE, cssclass="code", linenos="inline", lineanchors="L", wrapcode=True
        )

    def window(self, code: str, start: int, line: int) -> Markup:
        """A source window numbered from ``start``, with ``line`` marked and anchored as ``L-<n>``."""
        self._window.linenostart = start
        self._window.hl_lines = {line - start + 1}
        return Markup(highlight(code, self._python, self._window))

    @staticmethod
    def css() -> str:
        return str(HtmlFormatter(style=STYLE, cssclass="code").get_style_defs(".code"))  # type: ignore[no-untyped-call]
