"""The parts a message is read into: literal text and a placeholder for each dynamic piece.

A :class:`~extractor.analysis.facts.Placeholder` is written in the template as its source text
(``{dtype!r}``); a :class:`Choice` is a placeholder known to render as one of a few alternatives;
a :class:`Loose` literal is text whose whitespace the runtime may change (``textwrap.dedent``,
``str.strip``), carrying the regex that allows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from extractor.analysis.facts import Placeholder
from extractor.records.message_pattern import escape

Part = str | Placeholder


@dataclass(frozen=True)
class Choice(Placeholder):
    """A dynamic part known to render as one of a few alternatives (a name assigned on branches).

    The template still shows ``{source}``; the pattern matches exactly the alternatives.
    """

    options: tuple[tuple[Part, ...], ...] = ()


class Loose(str):
    """Literal text whose runtime form may differ in whitespace, with the regex that allows it.

    ``textwrap.dedent`` and ``str.strip`` run on the rendered message, so the values decide how
    much indentation (or edge whitespace) survives: the template shows the text, the pattern
    lets the affected whitespace vary.
    """

    regex: str

    @classmethod
    def of(cls, text: str, regex: str) -> Loose:
        made = cls(text)
        made.regex = regex
        return made


def regex_of(text: str) -> str:
    return text.regex if isinstance(text, Loose) else escape(text)


def normalise(parts: Sequence[Part]) -> tuple[Part, ...]:
    """Join adjacent literals and drop empty ones."""
    out: list[Part] = []
    for part in parts:
        if isinstance(part, str):
            if not part and not (isinstance(part, Loose) and part.regex):
                continue
            if out and isinstance(out[-1], str):
                prev = out[-1]
                if isinstance(prev, Loose) or isinstance(part, Loose):
                    out[-1] = Loose.of(prev + part, regex_of(prev) + regex_of(part))
                else:
                    out[-1] = prev + part
                continue
        out.append(part)
    return tuple(out)


def template_of(parts: Sequence[Part]) -> str:
    """The template form: literal text with its braces doubled (as ``str.format`` reads them), each
    dynamic part as ``{source}``.

    A name that holds a known string stays ``{name}`` here while the pattern spells its value:
    the template says where the text comes from, the pattern what it reads at runtime.
    """
    return "".join(
        p.replace("{", "{{").replace("}", "}}") if isinstance(p, str) else "{" + p.source + "}" for p in parts
    )


# A token of a pattern under construction: literal text, None for a wildcard, a ready-made regex
