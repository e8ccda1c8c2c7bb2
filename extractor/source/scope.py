"""Which repository paths a :class:`~extractor.config.Scope` selects.

Globs are matched against the whole repo-relative, ``/``-separated path (they are anchored at the
repository root, unlike ``.gitignore`` patterns):

* ``**`` as a whole segment matches any number of path segments, including none
  (``a/**/b.py`` matches ``a/b.py`` and ``a/x/y/b.py``; ``**/tests/**`` matches a ``tests``
  folder at any depth);
* ``*`` matches any run of characters within one segment, ``?`` one character, ``[abc]`` /
  ``[!abc]`` one character of (or not of) a set; none of them ever matches ``/``;
* everything else is literal.

A path is in scope when some include glob matches it and no exclude glob does.
"""

from __future__ import annotations

import re
from functools import lru_cache

from extractor.config import Scope
from extractor.errors import ExtractorError

__all__ = ["compile_glob", "dir_in_scope", "glob_match", "in_scope"]


_ANY_NAME = "\x00" * 64


def _translate_segment(segment: str) -> str:
    """One path segment of a glob as a regex that never crosses ``/``."""
    out: list[str] = []
    i = 0
    n = len(segment)
    while i < n:
        c = segment[i]
        if c == "*":
            # Runs of stars inside a segment ("a**b") are one star: only a whole "**" segment spans dirs.
            while i < n and segment[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            start = i + 1
            if start < n and segment[start] in "!^":
                start += 1
            if start < n and segment[start] == "]":
                start += 1  # "[]a]": a leading "]" is a member, as in fnmatch
            end = segment.find("]", start)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = segment[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                for special in ("\\", "^", "[", "]"):
                    body = body.replace(special, "\\" + special)
                # A negated set must still not match the separator.
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _segments(pattern: str) -> list[str]:
    segs = [s for s in pattern.strip("/").split("/") if s]
    collapsed: list[str] = []
    for seg in segs:
        if seg == "**" and collapsed and collapsed[-1] == "**":
            continue
        collapsed.append(seg)
    return collapsed


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regex a glob stands for (see the module docstring for the syntax)."""
    segs = _segments(pattern)
    parts: list[str] = []
    last = len(segs) - 1
    for i, seg in enumerate(segs):
        if seg == "**":
            if i == last:
                # Trailing "**": whatever lies below the prefix, or the prefix itself.
                parts.append(".*" if i == 0 else "(?:/.*)?")
            else:
                parts.append("(?:[^/]+/)*")
        else:
            parts.append(_translate_segment(seg))
            # The separator belongs to this segment unless a trailing "**" follows, which brings
            # its own optional "/...".
            if i != last and not (i + 1 == last and segs[last] == "**"):
                parts.append("/")
    try:
        return re.compile("".join(parts), re.DOTALL)
    except re.error as exc:
        raise ExtractorError(pattern, f"invalid glob: {exc}") from None


def glob_match(pattern: str, path: str) -> bool:
    """Whether ``path`` (repo-relative, ``/``-separated) matches the whole glob."""
    return compile_glob(pattern).fullmatch(path) is not None


def in_scope(path: str, scope: Scope) -> bool:
    """Whether a file path is selected: matched by an include glob and by no exclude glob."""
    return any(glob_match(p, path) for p in scope.include) and not any(
        glob_match(p, path) for p in scope.exclude
    )


def _prefix_could_match(pattern: str, dir_segments: list[str]) -> bool:
    """Whether some path below the directory ``dir_segments`` could match ``pattern``."""
    segs = _segments(pattern)

    def walk(pi: int, di: int) -> bool:
        if di == len(dir_segments):
            # The directory is used up; anything left of the pattern can still be matched below it.
            return pi < len(segs)
        if pi == len(segs):
            return False
        if segs[pi] == "**":
            return walk(pi + 1, di) or walk(pi, di + 1)
        if re.fullmatch(_translate_segment(segs[pi]), dir_segments[di]) is None:
            return False
        return walk(pi + 1, di + 1)

    return walk(0, 0)


def dir_in_scope(path: str, scope: Scope) -> bool:
    """Whether a directory-like entry (a submodule) could hold in-scope files.

    True when some include glob could match a path below it and no exclude glob matches every
    path below it (``**/tests/**`` rules out ``a/tests``; ``**/*_pb2.py`` rules out nothing).
    """
    segs = [s for s in path.split("/") if s]
    if not any(_prefix_could_match(p, segs) for p in scope.include):
        return False
    # A name only "*" or "**" can match (no real file is called 64 NULs) stands for "any file
    # below": an exclude glob that matches it matches everything below the directory.
    probe = f"{path.rstrip('/')}/{_ANY_NAME}"
    return not any(glob_match(p, probe) for p in scope.exclude)
