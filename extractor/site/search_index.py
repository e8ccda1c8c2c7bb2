"""The search index of the site, written as a script (``search-index.js``) rather than JSON.

Browsers refuse ``fetch()`` of a local file, so the index assigns one global the page's own
script reads; that works from ``file://`` as well as from a web server.
"""

from __future__ import annotations

import re

import orjson

from extractor.site.catalogue import Catalogue

__all__ = ["js_pattern", "search_index_js"]

# Escaped literals, plain characters and ``(?s:.*)`` holes: the shape of most message patterns,
# which mean the same in JavaScript once each hole becomes ``[\s\S]*``.
_PLAIN_PATTERN = re.compile(r"(?:\\[^A-Za-z0-9]|[^\\()\[\]{}*+?|^$.]|\(\?s:\.\*\))*")


def js_pattern(pattern: str) -> str | None:
    """``pattern`` as a JavaScript regex source with the same full-match meaning, or ``None``."""
    if not _PLAIN_PATTERN.fullmatch(pattern):
        return None
    return pattern.replace("(?s:.*)", "[\\s\\S]*")


def search_index_js(catalogue: Catalogue) -> bytes:
    """``window.SGLANG_ERRORS_INDEX = {...};`` with one compact row per record, in dataset order."""
    subsystems = list(catalogue.subsystems)
    sub_index = {name: i for i, name in enumerate(subsystems)}
    tags = sorted({t for e in catalogue.entries for t in e.record.tags})
    tag_index = {name: i for i, name in enumerate(tags)}
    rows = []
    for e in catalogue.entries:
        r = e.record
        rows.append(
            [
                e.page,
                r.errorMessage,
                r.errorClass,
                f"{r.filePath}:{r.lineNumber}",
                sub_index[e.subsystem],
                r.backgroundTag,
                [tag_index[t] for t in r.tags],
                [*e.mentions.flags, *e.mentions.envs],
                js_pattern(r.messagePattern),
                e.scope,
            ]
        )
    data = {
        "fields": [
            "page",
            "message",
            "class",
            "where",
            "subsystem",
            "cause",
            "tags",
            "knobs",
            "pattern",
            "scope",
        ],
        "subsystems": subsystems,
        "tags": tags,
        "records": rows,
    }
    # "</" never appears raw, so the index is also safe to inline in a <script> element.
    body = orjson.dumps(data).replace(b"</", b"<\\/")
    return b"window.SGLANG_ERRORS_INDEX = " + body + b";\n"
