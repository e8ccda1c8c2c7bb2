"""What a file's analysis read outside its own blob: one read-only registry of read kinds.

A cache entry lists every answer the analysis of a file was given (:mod:`extractor.engine.reads`)
as ``[kind, path, key, answer]``; the kind is one of these codes, written as its ``value``, so an
entry says what it depends on in words and a tool reading the cache needs no table of letters. A
stored entry whose kind is not listed here never holds, so renaming a code only costs a
re-analysis; the payload version changes with any rename all the same.
"""

from __future__ import annotations

import enum
from types import MappingProxyType

__all__ = ["READ_KINDS", "ReadKind"]


class ReadKind(enum.Enum):
    """A read kind; ``value`` is the code written into cache entries."""

    MODULE = "module"
    NAMESPACE = "namespace"
    ARG_CLASS = "arg-class"
    FLAG = "flag"
    ALL_FLAGS = "all-flags"
    FOUND_FLAG = "found-flag"
    ENV = "env"
    LAUNCHED_ENV = "launched-env"
    CHECKS = "checks"
    DISTRIBUTION = "distribution"
    WHOLE_KNOWLEDGE = "whole-knowledge"

    @property
    def summary(self) -> str:
        """One line on what the read is and what its recorded answer holds."""
        return READ_KINDS[self]


READ_KINDS: MappingProxyType[ReadKind, str] = MappingProxyType(
    {
        ReadKind.MODULE: "another module of the commit, by path: its blob sha, or none",
        ReadKind.NAMESPACE: "the argument namespace of a module, by path",
        ReadKind.ARG_CLASS: "whether a class of a module, by path and name, is a server-args class",
        ReadKind.FLAG: "one flag of a module's namespace, by path and attribute: a digest of it, or none",
        ReadKind.FOUND_FLAG: "the flag of a module's namespace that a finder of "
        "extractor.prose.flag_spelling gives (by spelling, alias or help), by path and "
        "'finder:key': a digest of it, or none",
        ReadKind.ALL_FLAGS: "every flag of a module's namespace, by path: a digest of them all",
        ReadKind.ENV: "an environment variable, by name: its kind and default, or none",
        ReadKind.LAUNCHED_ENV: "whether the launch code turns an environment variable on itself, by name",
        ReadKind.CHECKS: "what the server-args validation of a module's namespace demands of one flag, "
        "by path and attribute: its checks",
        ReadKind.DISTRIBUTION: "the declared requirement that provides an import, by module name "
        "(or, with an empty name, whether any requirement is known): it, or none",
        ReadKind.WHOLE_KNOWLEDGE: "any other use of the knowledge: its whole fingerprint",
    }
)
