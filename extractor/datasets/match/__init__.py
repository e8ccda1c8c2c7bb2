"""Runtime error text -> the dataset records of the sites that can have raised it.

A user holds a message, an ``ErrorClass: message`` line, or a whole traceback or server log.
:func:`parse_query` turns that text into *exceptions* (class, message variants, traceback frames,
and a weight: the last exception of a chained traceback weighs most); :class:`Matcher` indexes a
dataset once and ranks its records against them.

Evidence and score (0..100, the sum of three parts, best over the exceptions of the input;
the last exception of a chain counts fully, the ones before it 0.6, and an exception quoted
inside another's message 0.85):

* message (55 points): a full match of ``messagePattern`` scores 0.15 + 0.85 x specificity,
  where specificity grows with the literal text the pattern pins down against its placeholders
  (a bare ``(?s:.*)`` scores almost nothing and, like a pattern below :data:`MIN_SPECIFICITY`,
  names no site without a frame or an sglang class to back it); the pattern's literal runs found
  in order inside the message (whitespace-tolerant: wrapped or joined lines) score 0.7 of that,
  less when they explain little of the message; failing both, idf-weighted word overlap (a
  message from a nearby sglang version) scores at most 0.45.
* class (15 points): same class 1, related through the known class hierarchy 0.5 (0.2 through
  ``Exception``), known and unrelated -0.5, unknowable 0. The hierarchy is Python's built-in
  exceptions plus every ``class X(Base):`` line found in the records' ``sourceCode`` windows;
  an sglang exception class defined away from every raise site is known by name only (it
  matches exactly, never as a subclass). ``pkg.mod.Name`` compares as ``Name``, but a class
  qualified by another package (``openai.BadRequestError``) is not sglang's class of that name.
  An sglang-specific class alone (``KVTransferError``) names its sites; a builtin one does not.
* frames (30 points): a traceback frame whose path, from its ``sglang/`` or ``sgl_kernel/``
  folder on, ends the record's ``filePath`` scores by the nearness of its line to ``lineNumber``
  (frames outside those packages are ignored); the innermost frame counts fully, the innermost
  sglang frame 0.8, callers 0.4. A frame within a few lines names its site by itself (a bare
  ``AssertionError``), unless the site's class contradicts the input's and its text does too.

Speed: patterns are analysed once (literal runs, specificity, word anchors); a query only tries
records whose rarest safe literal word occurs in the message (a word that any full match must
contain), plus records sharing a traceback file, plus the few records with no such word. The
necessary-condition check "all literal runs appear in order" runs before any regex; regexes run
only on messages up to :data:`MAX_REGEX_CHARS` characters and, in the main thread, under a
:data:`REGEX_SECONDS` alarm. Inputs over :data:`MAX_INPUT_LINES` lines are read around their
tracebacks and at their end.
"""

from extractor.datasets.match.classes import ClassHierarchy, last_name
from extractor.datasets.match.patterns import PatternInfo, analyse_pattern
from extractor.datasets.match.query import (
    Frame,
    QueryException,
    message_variants,
    parse_query,
    strip_prefixes,
)
from extractor.datasets.match.ranking import Match, Matcher
from extractor.datasets.match.render import matches_table
from extractor.datasets.match.selection import newest_dataset

__all__ = [
    "ClassHierarchy",
    "Frame",
    "Match",
    "Matcher",
    "PatternInfo",
    "QueryException",
    "analyse_pattern",
    "last_name",
    "matches_table",
    "message_variants",
    "newest_dataset",
    "parse_query",
    "strip_prefixes",
]
