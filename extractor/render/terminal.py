"""User-supplied text made safe to print on a terminal.

File names, manifest names and record text come from repositories and datasets we do not control:
an escape sequence in them would drive the terminal (move the cursor, retitle the window, hide
what follows) and a newline would forge a line of our own output (a fake ``skipped`` entry). They
are printed with every control character spelled as a Python escape, and never read as rich
markup (``[/]`` in a path is text).
"""

from __future__ import annotations

import re

from rich.text import Text

__all__ = ["literal", "printable"]

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    special = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if ch in special:
        return special[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\n``, ``\\x1b``...); printable text unchanged."""
    return _CONTROL.sub(_escape, text)


def literal(text: str, style: str = "") -> Text:
    """A rich ``Text`` of ``text`` escaped by :func:`printable`: never markup, never a control code."""
    return Text(printable(text), style=style)
