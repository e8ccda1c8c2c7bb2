"""Why a target file gave no records: one read-only registry of reason codes.

Every per-file outcome that is not ``parsed`` carries one of these codes beside its human text (as
linters keep their rule codes in one table), so tests and tools check the kind of an outcome, never
its wording. ``S`` codes are files deliberately left out (skipped), ``F`` codes files that were
read and could not be analysed (failed). A code, once published, keeps its meaning.
"""

from __future__ import annotations

import enum
from types import MappingProxyType

__all__ = ["REASONS", "Reason"]


class Reason(enum.Enum):
    """A reason code; ``value`` is the code written into payloads and shown by tools."""

    SYMLINK = "S101"
    SUBMODULE = "S102"
    NOT_REGULAR = "S103"
    PATH_NOT_UTF8 = "S104"
    UNSAFE_PATH = "S105"

    NUL_BYTE = "F201"
    UNDECODABLE = "F202"
    SYNTAX_ERROR = "F203"
    TOO_DEEP = "F204"
    UNPARSEABLE = "F205"

    ANALYSIS_ERROR = "F301"
    INVALID_RECORD = "F302"
    UNENCODABLE = "F303"

    @property
    def skipped(self) -> bool:
        """Left out on purpose (``S`` codes) rather than failed."""
        return self.value.startswith("S")

    @property
    def summary(self) -> str:
        """One line on what the code means."""
        return REASONS[self]


REASONS: MappingProxyType[Reason, str] = MappingProxyType(
    {
        Reason.SYMLINK: "a symbolic link: its target is never followed",
        Reason.SUBMODULE: "a submodule (gitlink): a commit of another repository, no content here",
        Reason.NOT_REGULAR: "a tree entry that is not a regular file",
        Reason.PATH_NOT_UTF8: "a path that is not valid UTF-8",
        Reason.UNSAFE_PATH: "a path with a '.', '..' or '.git' component, which git refuses to check out",
        Reason.NUL_BYTE: "the file holds a NUL byte (binary content)",
        Reason.UNDECODABLE: "the bytes do not decode in the declared or default encoding",
        Reason.SYNTAX_ERROR: "the source is not Python that the parsers accept",
        Reason.TOO_DEEP: "nesting deeper than the parser or the analysis can follow",
        Reason.UNPARSEABLE: "the parser failed for another reason",
        Reason.ANALYSIS_ERROR: "the analysis of a parsed file raised",
        Reason.INVALID_RECORD: "a record built from the file does not validate against the model",
        Reason.UNENCODABLE: "the records cannot be written as JSON",
    }
)
