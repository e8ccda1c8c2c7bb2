"""Which record fields a dataset diff compares, and how: a pair differs only in these.

A pair of records is **unchanged** when every field in :data:`CONTENT_FIELDS` is equal. The fields in
:data:`LOCATION_FIELDS` move whenever an edit elsewhere in the file shifts lines, or whenever the
dataset is regenerated at another sha, so they are never compared. ``sourceCode`` is one of
them: its window also takes in neighbouring lines, so an edit next to a site would change it;
what the window shows that matters is compared through ``errorMessage``, ``messagePattern`` and
``validationCode`` (the guard). ``datasetVersion`` belongs to the dataset line, not the record,
and is never compared either. The generated prose fields (:data:`PROSE_FIELDS`) may quote the
site's own line ("line 208", ``x.py:208``) or path; they are compared with those masked, so a
shift or a rename shows up once, in ``lineNumber`` (not compared) or ``filePath``.
"""

from __future__ import annotations

import re

from extractor.records.model import ErrorRecord

__all__ = ["CONTENT_FIELDS", "LOCATION_FIELDS", "PROSE_FIELDS", "changed_fields"]

LOCATION_FIELDS: tuple[str, ...] = (
    "lineNumber",
    "sourceCode",
    "sourceCodeStart",
    "sourceCodeEnd",
    "githubUrl",
    "analyzedSha",
    "analyzedAt",
)
"""Fields that follow a site's position or the run that produced it; never compared."""

CONTENT_FIELDS: tuple[str, ...] = tuple(
    name for name in ErrorRecord.model_fields if name not in LOCATION_FIELDS
)
"""Fields whose difference makes a pair **changed**, in the record's own field order.

``id`` is among them: two records paired by similarity have different ids, and anyone keying
on ids needs to know.
"""


PROSE_FIELDS: frozenset[str] = frozenset(
    {
        "documentation",
        "triggerScenarios",
        "commonSituations",
        "solutions",
        "exampleFix",
        "validationCode",
        "typeGuard",
        "tryCatchPattern",
        "preventionTips",
    }
)
"""Generated text that may quote the site's own position ("line 208", ``x.py:208``) or file.

They are compared with the record's own line numbers and file path masked, so a shift or a
rename, already visible in ``lineNumber`` and ``filePath``, does not also show up as changed prose.
"""


def changed_fields(old: ErrorRecord, new: ErrorRecord) -> tuple[str, ...]:
    """The content fields whose values differ, in field order (prose compared position-free)."""
    out = []
    for name in CONTENT_FIELDS:
        a, b = getattr(old, name), getattr(new, name)
        if a == b:
            continue
        if name in PROSE_FIELDS and _mask(a, old) == _mask(b, new):
            continue
        out.append(name)
    return tuple(out)


# A line number as prose quotes it: "line 208", "lines 12-15", "x.py:208", "#L12-L15".
_POSITION_RE = re.compile(r"(\blines? |:|#L|-L|\bL)([0-9]+)(?![0-9])")


def _mask(value: object, record: ErrorRecord) -> object:
    """``value`` with ``record``'s own line numbers (after ``line``, ``:``, ``L``) and path replaced."""
    if isinstance(value, list):
        return [_mask(v, record) for v in value]
    if not isinstance(value, str):
        return value
    for path in _path_forms(record.filePath):
        value = value.replace(path, "<file>")
    own = {str(record.lineNumber), str(record.sourceCodeStart), str(record.sourceCodeEnd)}
    return _POSITION_RE.sub(lambda m: m.group(1) + "<n>" if m.group(2) in own else m.group(0), value)


def _path_forms(path: str) -> list[str]:
    """The path as prose may quote it: whole, below ``python/``, below ``python/sglang/``; longest first."""
    forms = [path]
    for prefix in ("python/sglang/", "python/", "sgl-kernel/python/"):
        if path.startswith(prefix) and path.count("/") > prefix.count("/"):
            forms.append(path[len(prefix) :])
    return sorted(forms, key=len, reverse=True)
