"""What a record says about its site beyond the message: the function it is in, its statement lines."""

from __future__ import annotations

import re

from extractor.records.model import ErrorRecord

# The documentation field opens with "In the <kind> `<qualname>` (<path>)..." for a site inside a
# function, and with "At module level ..." otherwise (the wording the records' prose is built with).
_QUALNAME_RE = re.compile(r"In the [a-z ]+? `([^`]+)` \(")


def function_name(record: ErrorRecord) -> str:
    """The innermost function of the site as a traceback prints it (``<module>`` at module level)."""
    m = _QUALNAME_RE.match(record.documentation)
    return m.group(1).rsplit(".", 1)[-1] if m else "<module>"


def statement_lines(record: ErrorRecord) -> frozenset[str]:
    """The stripped source lines of the raising statement (a traceback prints one of them)."""
    lines = record.sourceCode.split("\n")
    first = max(0, record.lineNumber - record.sourceCodeStart)
    return frozenset(s for s in (line.strip() for line in lines[first:]) if s)
