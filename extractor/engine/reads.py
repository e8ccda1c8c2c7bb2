"""What a file's prose read from the knowledge, recorded so a cached outcome outlives unrelated edits.

A cached outcome does not depend on the whole knowledge base: the worker records every answer the
knowledge gave while the file was enriched (:class:`RecordingKnowledge`), and the entry is reused as
long as the current knowledge gives the same answers (:class:`ReadsCheck`). An edit of
``server_args.py`` therefore re-analyses only the files whose prose read what changed. A cache entry
is the answers as one JSON line, a newline, then the outcome (:func:`entry`, :func:`split_entry`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

import orjson

from extractor.engine.read_kinds import ReadKind
from extractor.prose.flag_spelling import FINDERS
from extractor.prose.knowledge import Knowledge

if TYPE_CHECKING:
    from extractor.prose.knowledge import FlagInfo

_MISSING = object()


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _flag_digest(info: FlagInfo | None) -> str | None:
    # repr of a frozen dataclass holds every field, so any change to the flag changes it.
    return None if info is None else _digest(repr(info))


def _checks_plain(checks: tuple[tuple[str, tuple[str, ...]], ...]) -> list[list[Any]]:
    # As JSON gives it back (lists), so a recorded answer compares equal to a fresh one.
    return [[op, list(values)] for op, values in checks]


def _mapping_digest(flags: Mapping[str, FlagInfo]) -> str:
    return _digest(repr(sorted(flags.items())))


class _RecordingFlags(Mapping[str, "FlagInfo"]):
    """``Knowledge.flags_for(path)`` that records each lookup (and a digest of it all when iterated)."""

    def __init__(
        self, flags: Mapping[str, FlagInfo], reads: dict[tuple[str, str, str], Any], path: str
    ) -> None:
        self._flags = flags
        self._reads = reads
        self._path = path

    def _look(self, key: object) -> FlagInfo | None:
        if not isinstance(key, str):
            return None
        info = self._flags.get(key)
        self._reads[(ReadKind.FLAG.value, self._path, key)] = _flag_digest(info)
        return info

    def __getitem__(self, key: str) -> FlagInfo:
        info = self._look(key)
        if info is None:
            raise KeyError(key)
        return info

    def get(self, key: str, default: Any = None) -> Any:
        info = self._look(key)
        return default if info is None else info

    def __contains__(self, key: object) -> bool:
        return self._look(key) is not None

    def lookup(self, finder: str, key: str) -> FlagInfo | None:
        """:func:`~extractor.prose.flag_spelling.find_flag`, recorded as that one answer."""
        info = FINDERS[finder](self._flags, key)
        self._reads[(ReadKind.FOUND_FLAG.value, self._path, f"{finder}:{key}")] = _flag_digest(info)
        return info

    def _all(self) -> None:
        self._reads[(ReadKind.ALL_FLAGS.value, self._path, "")] = _mapping_digest(self._flags)

    def __iter__(self) -> Iterator[str]:
        self._all()
        return iter(self._flags)

    def __len__(self) -> int:
        self._all()
        return len(self._flags)


class RecordingKnowledge:
    """Stands in for :class:`Knowledge` while one file is enriched and notes every answer it gives.

    ``namespace_of``, ``is_arg_class``, ``flags_for(...)[key]``, the flags found by spelling, alias
    or help (:mod:`extractor.prose.flag_spelling`) and the distributions are recorded one by one; any
    other use of the knowledge (an attribute this class does not know) records its whole
    fingerprint, so a new way of reading it is never missed, only less precise. ``source`` may be
    a function giving the knowledge: it is called on first use only, so a worker can parse and
    analyse a file before the parent has finished building the knowledge.
    """

    def __init__(self, source: Knowledge | Callable[[], Knowledge]) -> None:
        self._source = source
        self._resolved: Knowledge | None = source if isinstance(source, Knowledge) else None
        self.reads: dict[tuple[str, str, str], Any] = {}

    def _k(self) -> Knowledge:
        if self._resolved is None:
            self._resolved = cast("Callable[[], Knowledge]", self._source)()
        return self._resolved

    def namespace_of(self, path: str) -> str:
        answer = self._k().namespace_of(path)
        self.reads[(ReadKind.NAMESPACE.value, path, "")] = answer
        return answer

    def is_arg_class(self, path: str, class_name: str | None) -> bool:
        answer = self._k().is_arg_class(path, class_name)
        self.reads[(ReadKind.ARG_CLASS.value, path, class_name or "")] = answer
        return answer

    def flags_for(self, path: str) -> Mapping[str, FlagInfo]:
        return _RecordingFlags(self._k().flags_for(path), self.reads, path)

    def env_of(self, name: str) -> Any:
        info = self._k().env_of(name)
        self.reads[(ReadKind.ENV.value, "", name)] = [info.kind, info.default] if info is not None else None
        return info

    def launches_env(self, name: str) -> bool:
        answer = self._k().launches_env(name)
        self.reads[(ReadKind.LAUNCHED_ENV.value, "", name)] = answer
        return answer

    def checks_for(self, path: str, dest: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        answer = self._k().checks_for(path, dest)
        self.reads[(ReadKind.CHECKS.value, path, dest)] = _checks_plain(answer)
        return answer

    def distribution_for(self, module: str) -> str | None:
        answer = self._k().distribution_for(module)
        self.reads[(ReadKind.DISTRIBUTION.value, "", module)] = answer
        return answer

    def knows_distributions(self) -> bool:
        answer = self._k().knows_distributions()
        self.reads[(ReadKind.DISTRIBUTION.value, "", "")] = answer
        return answer

    def __getattr__(self, name: str) -> Any:
        if name in ("_source", "_resolved", "reads"):  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        knowledge = self._k()
        self.reads[(ReadKind.WHOLE_KNOWLEDGE.value, "", "")] = knowledge.fingerprint()
        return getattr(knowledge, name)

    def encoded(self) -> bytes:
        """The answers as one JSON line (sorted, so equal reads give equal bytes)."""
        try:
            return orjson.dumps(sorted([*k, v] for k, v in self.reads.items()))
        except orjson.JSONEncodeError:
            # A key orjson cannot write (a lone surrogate from a string literal): depend on it all.
            return orjson.dumps([[ReadKind.WHOLE_KNOWLEDGE.value, "", "", self._k().fingerprint()]])


def _answer(
    knowledge: Knowledge, code: str, path: str, key: str, blobs: Mapping[str, str], digests: dict[int, Any]
) -> Any:
    try:
        kind = ReadKind(code)
    except ValueError:
        return _MISSING  # a kind this version does not write never matches
    match kind:
        case ReadKind.MODULE:
            return blobs.get(path)
        case ReadKind.NAMESPACE:
            return knowledge.namespace_of(path)
        case ReadKind.ARG_CLASS:
            return knowledge.is_arg_class(path, key or None)
        case ReadKind.FLAG:
            flag = knowledge.flags_for(path).get(key)
            return _kept(digests, flag, _flag_digest) if flag is not None else None
        case ReadKind.FOUND_FLAG:
            finder, _, name = key.partition(":")
            find = FINDERS.get(finder)
            if find is None:
                return _MISSING
            found = find(knowledge.flags_for(path), name)
            return _kept(digests, found, _flag_digest) if found is not None else None
        case ReadKind.ALL_FLAGS:
            return _kept(digests, knowledge.flags_for(path), _mapping_digest)
        case ReadKind.ENV:
            info = knowledge.env_of(key)
            return [info.kind, info.default] if info is not None else None
        case ReadKind.LAUNCHED_ENV:
            return knowledge.launches_env(key)
        case ReadKind.CHECKS:
            return _checks_plain(knowledge.checks_for(path, key))
        case ReadKind.DISTRIBUTION:
            return knowledge.distribution_for(key) if key else knowledge.knows_distributions()
        case ReadKind.WHOLE_KNOWLEDGE:
            return knowledge.fingerprint()


def _kept(digests: dict[int, Any], value: Any, digest: Any) -> Any:
    # Every path of one namespace shares its flags (the same objects): each is digested once.
    found = digests.get(id(value))
    if found is None:
        found = digests[id(value)] = (digest(value), value)  # the value kept, so its id stays its own
    return found[0]


class ReadsCheck:
    """Whether recorded answers still hold for this run's knowledge (answers memoised per run)."""

    def __init__(self, knowledge: Knowledge, blobs: Mapping[str, str] | None = None) -> None:
        self._knowledge = knowledge
        self._blobs: Mapping[str, str] = blobs or {}
        self._memo: dict[tuple[str, str, str], Any] = {}
        self._digests: dict[int, Any] = {}

    def holds(self, encoded: bytes) -> bool:
        try:
            reads = orjson.loads(encoded)
            for kind, path, key, answer in reads:
                memo_key = (kind, path, key)
                now = self._memo.get(memo_key, _MISSING)
                if now is _MISSING:
                    now = self._memo[memo_key] = _answer(
                        self._knowledge, kind, path, key, self._blobs, self._digests
                    )
                if now != answer:
                    return False
        except (orjson.JSONDecodeError, TypeError, ValueError):
            return False
        return True


def entry(reads: bytes, payload: bytes) -> bytes:
    # orjson never writes a raw newline, so the first one ends the answers.
    return reads + b"\n" + payload


def split_entry(raw: bytes) -> tuple[bytes, bytes] | None:
    reads, sep, payload = raw.partition(b"\n")
    return (reads, payload) if sep else None
