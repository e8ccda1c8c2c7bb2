"""Runtime error text -> the dataset records of the sites that can have raised it.

A user holds a message, an ``ErrorClass: message`` line, or a whole traceback or server log.
:func:`parse_query` turns that text into *exceptions* (class, message variants, traceback frames,
and a weight: the last exception of a chained traceback weighs most); :class:`Matcher` indexes a
dataset once and ranks its records against them, one ranked list per distinct error of the input
(:meth:`Matcher.match_groups`). :func:`search` does that over a nightly folder's datasets too.

Modules: ``logs`` (logger prefixes, reading a long log), ``query`` (text -> exceptions),
``patterns`` (a pattern's literal runs), ``prefix`` (cut-short messages), ``classes`` (the class
hierarchy), ``sites`` (a record's function and statement lines), ``results`` (evidence, scores
and their explanation), ``ranking`` (the index and the ranking), ``selection`` (which datasets),
``history`` (older datasets of a nightly folder), ``render`` (tables and JSON rows),
``choices`` (the architecture and flag values a log names).

Evidence and score (0..100, the sum of three parts, best over the exceptions of the input;
the last exception of a chain counts fully, the ones before it 0.6, and an exception quoted
inside another's message 0.85):

* message (55 points): a full match of ``messagePattern`` scores 0.15 + 0.85 x specificity,
  where specificity grows with the literal text the pattern pins down against its placeholders
  (a bare ``(?s:.*)`` scores almost nothing and, like a pattern below :data:`MIN_SPECIFICITY`,
  names no site without a frame or an sglang class to back it); the pattern's literal runs found
  in order inside the message (whitespace-tolerant: wrapped or joined lines) score 0.7 of that,
  less when they explain little of the message; a message cut short (an issue title, a first
  line, a tail dropped with "…") that is a prefix of some rendering scores 0.8 of a full match
  of the part it reaches (all of it when marked with "…"); failing these, idf-weighted word
  overlap (a message from a nearby sglang version) scores at most 0.45.
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
  sglang frame 0.8, callers 0.4. Line numbers drift between releases: a frame whose printed
  source line is a line of the site's statement scores as near whatever its line, more so in the
  same function (read from the record's documentation), and finds its site in a file that moved
  to another folder. A frame within a few lines, or on the same statement, names its site by
  itself (a bare ``AssertionError``), unless the site's class contradicts the input's and its
  text does too.
* reach (a tiebreak, at most 1 point on top): each choice the whole input names (a
  ``ServerArgs(attention_backend='fa3', ...)`` dump, a ``--enable-lora`` command line, an
  architecture such as ``DeepseekV3ForCausalLM``) that is among a site's tags, which carry the
  choices that reach it, adds 0.5 for two at most. Sites sharing a message are told apart by
  it; a site the other parts score more than a point higher is never overtaken.

Speed: patterns are analysed once (literal runs, specificity, word anchors); a query only tries
records whose rarest safe literal word occurs in the message (a word that any full match must
contain), or whose rarest word among the pattern's first characters does (for cut-short text),
plus records sharing a traceback file, plus the few records with no such word. The
necessary-condition check "all literal runs appear in order" runs before any regex; regexes run
only on messages up to :data:`MAX_REGEX_CHARS` characters and, in the main thread, under a
:data:`REGEX_SECONDS` alarm. Inputs over :data:`MAX_INPUT_LINES` lines are read around each
distinct traceback and exception line and at their end, in one pass.
"""

from extractor.datasets.match.classes import ClassHierarchy, last_name
from extractor.datasets.match.history import Searched, SearchResult, search
from extractor.datasets.match.logs import strip_prefixes
from extractor.datasets.match.patterns import PatternInfo, analyse_pattern
from extractor.datasets.match.query import Frame, QueryException, message_variants, parse_query
from extractor.datasets.match.ranking import Matcher
from extractor.datasets.match.render import json_rows, matches_table, print_search
from extractor.datasets.match.results import Match, MatchGroup
from extractor.datasets.match.selection import DatasetChoice, choose_datasets, newest_dataset

__all__ = [
    "ClassHierarchy",
    "DatasetChoice",
    "Frame",
    "Match",
    "MatchGroup",
    "Matcher",
    "PatternInfo",
    "QueryException",
    "SearchResult",
    "Searched",
    "analyse_pattern",
    "choose_datasets",
    "json_rows",
    "last_name",
    "matches_table",
    "message_variants",
    "newest_dataset",
    "parse_query",
    "print_search",
    "search",
    "strip_prefixes",
]
