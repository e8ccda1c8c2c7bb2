"""The CLI's output streams: results on stdout, notes and errors on stderr, colour and width set once.

``--color auto`` follows rich, which honours ``NO_COLOR`` and ``FORCE_COLOR`` and colours only a
terminal; ``always`` and ``never`` override both. A stream that is not a terminal gets no width
limit, so a piped table is never wrapped at rich's 80-column default. ``--quiet`` silences the
notes, never an error; ``--verbose`` asks for detail (every failed file, the traceback of an
internal error).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import TextIO

from rich.console import Console

__all__ = ["ColorMode", "Streams", "make_console"]

# Wide enough that no table or line of a pipe is ever folded; tables are sized to their content.
PIPE_WIDTH = 10_000


class ColorMode(StrEnum):
    """The ``--color`` choices."""

    auto = "auto"
    always = "always"
    never = "never"


def make_console(
    file: TextIO | None, color: ColorMode, *, quiet: bool = False, stderr: bool = False
) -> Console:
    """A console on ``file`` (default stdout or stderr) that colours as ``color`` says."""
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    terminal = stream.isatty() if hasattr(stream, "isatty") else False
    kwargs: dict[str, object] = {}
    if color is ColorMode.auto and os.environ.get("NO_COLOR"):
        color = ColorMode.never  # https://no-color.org: wins over FORCE_COLOR
    if color is ColorMode.always:
        kwargs["force_terminal"] = True
        kwargs["no_color"] = False
        kwargs["color_system"] = "standard"
    elif color is ColorMode.never:
        # No escape sequence at all (bold included), whatever FORCE_COLOR says.
        kwargs["force_terminal"] = False
        kwargs["no_color"] = True
        kwargs["color_system"] = None
    if not terminal:
        kwargs["width"] = PIPE_WIDTH
    return Console(file=stream, quiet=quiet, highlight=False, soft_wrap=False, **kwargs)  # type: ignore[arg-type]


@dataclass
class Streams:
    """The three consoles a command prints through.

    ``out``: results (stdout). ``note``: progress and summaries (stderr, silent under ``-q``).
    ``alert``: errors (stderr, always shown).
    """

    out: Console
    note: Console
    alert: Console
    verbose: int = 0
    quiet: bool = False
    color: ColorMode = ColorMode.auto

    @classmethod
    def make(cls, *, color: ColorMode = ColorMode.auto, quiet: bool = False, verbose: int = 0) -> Streams:
        return cls(
            out=make_console(None, color),
            note=make_console(None, color, quiet=quiet, stderr=True),
            alert=make_console(None, color, stderr=True),
            verbose=verbose,
            quiet=quiet,
            color=color,
        )

    @property
    def interactive(self) -> bool:
        """Whether progress bars make sense: stderr is a terminal and notes are wanted."""
        return not self.quiet and sys.stderr.isatty()

    def say(self, text: str) -> None:
        """A plain note on stderr (no markup, no wrapping)."""
        self.note.print(text, markup=False, highlight=False, soft_wrap=True)
