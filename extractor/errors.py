"""The package's one exception type.

Everything a user can get wrong (a bad source, an unknown sha, an unreadable dataset) is raised as
:class:`ExtractorError` carrying *where* (a file, ``file:line``, a value) and *what*; only the CLI
catches it, prints ``where: what`` and exits non-zero.
"""

from __future__ import annotations


class ExtractorError(Exception):
    """A user-facing failure: ``where`` names the file, line or value, ``what`` says what is wrong."""

    def __init__(self, where: str, what: str, *, exit_code: int = 2) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what
        self.exit_code = exit_code
