"""Syntax highlighting of source windows and command lines, with Pygments.

Building an ``HtmlFormatter`` compiles its style sheet, which costs as much as lexing a window,
so one formatter per kind is built once and only its line numbers change from page to page.
"""

from __future__ import annotations

import re

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import BashLexer, PythonLexer

__all__ = ["STYLE", "Highlighter"]

# A line that starts a process: the launcher, a console script, or environment assignments first.
_COMMAND_LINE = re.compile(r"^(?:python3? -m |sglang |[A-Z][A-Z0-9_]*=\S* |export |\$ )", re.MULTILINE)

STYLE = "default"
"""Pygments' own light style: its token colours are dark enough to read on the site's panels."""


class Highlighter:
    """Lexers and formatters reused for every page."""

    def __init__(self) -> None:
        self._python = PythonLexer(stripnl=False, ensurenl=False)
        self._shell = BashLexer(stripnl=False, ensurenl=False)
        self._window = HtmlFormatter(
            style=STYLE, cssclass="code", linenos="inline", lineanchors="L", wrapcode=True
        )
        self._plain = HtmlFormatter(style=STYLE, cssclass="code", wrapcode=True)

    def window(self, code: str, start: int, line: int) -> Markup:
        """A source window numbered from ``start``, with ``line`` marked and anchored as ``L-<n>``."""
        self._window.linenostart = start
        self._window.hl_lines = {line - start + 1}
        return Markup(highlight(code, self._python, self._window))

    def example(self, code: str) -> Markup:
        """An example fix: a command line (``python -m ...``, ``VAR=1 ...``) or Python code."""
        lexer = self._shell if _COMMAND_LINE.search(code) else self._python
        return Markup(highlight(code, lexer, self._plain))

    @staticmethod
    def css() -> str:
        return str(HtmlFormatter(style=STYLE, cssclass="code").get_style_defs(".code"))  # type: ignore[no-untyped-call]
