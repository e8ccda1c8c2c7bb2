"""The target's knowledge base (its flags and env vars), built once and cached by the blobs it reads.

A knowledge base is kept (in the cache, and for worker processes) as plain JSON data, never as a
pickle: :func:`knowledge_to_plain` writes each field of :class:`~extractor.prose.knowledge.Knowledge`
by its declared type, and :func:`knowledge_from_plain` rebuilds the objects with our own code,
checking every value against that type. Whoever can write the cache can at worst make a run rebuild
the knowledge; nothing read back can name code to run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from extractor.config import Scope
from extractor.prose import knowledge as knowledge_module
from extractor.prose.knowledge import Knowledge, build_knowledge, is_knowledge_path

if TYPE_CHECKING:
    from extractor.engine.cache import ResultCache
    from extractor.source.git import Target

__all__ = ["knowledge_cache", "knowledge_from_plain", "knowledge_to_plain", "load_knowledge"]

# A field type as declared (annotations are strings under ``from __future__ import annotations``).
_GENERIC = re.compile(r"^(\w+)\[(.*)\]$")
_SCALARS: dict[str, type] = {"str": str, "int": int, "bool": bool}


def _split_args(args: str) -> list[str]:
    """``"str, Mapping[str, X]"`` -> ``["str", "Mapping[str, X]"]`` (commas inside brackets kept)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(args[start:i].strip())
            start = i + 1
    parts.append(args[start:].strip())
    return parts


def _dataclass_named(name: str) -> type | None:
    # Only the knowledge module's own dataclasses: a plain-data name can never reach other code.
    found = getattr(knowledge_module, name, None)
    return found if isinstance(found, type) and dataclasses.is_dataclass(found) else None


def _encode(value: Any, kind: str) -> Any:
    if kind in _SCALARS:
        if not isinstance(value, _SCALARS[kind]):
            raise TypeError(f"expected {kind}, got {type(value).__name__}")
        return value
    generic = _GENERIC.match(kind)
    if generic is not None:
        name, args = generic.group(1), _split_args(generic.group(2))
        if name in ("Mapping", "dict") and args[0] == "str":
            return {k: _encode(v, args[1]) for k, v in sorted(value.items())}
        if name == "frozenset":
            return sorted((_encode(v, args[0]) for v in value), key=orjson.dumps)
        if name == "tuple":
            if len(args) == 2 and args[1] == "...":
                return [_encode(v, args[0]) for v in value]
            if len(value) != len(args):
                raise TypeError(f"expected {kind}")
            return [_encode(v, a) for v, a in zip(value, args, strict=True)]
    cls = _dataclass_named(kind)
    if cls is not None and isinstance(value, cls):
        return {f.name: _encode(getattr(value, f.name), str(f.type)) for f in dataclasses.fields(cls)}
    raise TypeError(f"cannot write a {kind} as plain data")


def _decode(plain: Any, kind: str) -> Any:
    if kind in _SCALARS:
        expected = _SCALARS[kind]
        if not isinstance(plain, expected) or (expected is int and isinstance(plain, bool)):
            raise ValueError(f"expected {kind}")
        return plain
    generic = _GENERIC.match(kind)
    if generic is not None:
        name, args = generic.group(1), _split_args(generic.group(2))
        if name in ("Mapping", "dict") and args[0] == "str":
            if not isinstance(plain, dict):
                raise ValueError(f"expected {kind}")
            return {k: _decode(v, args[1]) for k, v in plain.items()}
        if not isinstance(plain, list):
            raise ValueError(f"expected {kind}")
        if name == "frozenset":
            return frozenset(_decode(v, args[0]) for v in plain)
        if name == "tuple":
            if len(args) == 2 and args[1] == "...":
                return tuple(_decode(v, args[0]) for v in plain)
            if len(plain) != len(args):
                raise ValueError(f"expected {kind}")
            return tuple(_decode(v, a) for v, a in zip(plain, args, strict=True))
    cls = _dataclass_named(kind)
    if cls is not None:
        fields = dataclasses.fields(cls)
        if not isinstance(plain, dict) or set(plain) != {f.name for f in fields}:
            raise ValueError(f"expected the fields of {kind}")
        return cls(**{f.name: _decode(plain[f.name], str(f.type)) for f in fields})
    raise ValueError(f"cannot read a {kind} from plain data")


def knowledge_to_plain(knowledge: Knowledge) -> bytes:
    """The knowledge as JSON; raises ``TypeError`` for a field this codec cannot write."""
    return orjson.dumps(_encode(knowledge, "Knowledge"))


def knowledge_from_plain(raw: bytes) -> Knowledge:
    """The knowledge :func:`knowledge_to_plain` wrote; raises ``ValueError`` for anything else."""
    try:
        plain = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    found = _decode(plain, "Knowledge")
    assert isinstance(found, Knowledge)
    return found


def knowledge_cache(cache_dir: Path) -> ResultCache:
    """Where built knowledge bases are kept, keyed by the paths and blobs they were read from."""
    from extractor.engine.cache import ResultCache, code_fingerprint, make_namespace

    return ResultCache(cache_dir, make_namespace(code_fingerprint(), "knowledge-v2-json"))


def load_knowledge(target: Target, cache_dir: Path | None = None) -> Knowledge:
    """The target's flags and env vars, read from its own files at the analysed sha.

    With ``cache_dir``, the built knowledge is kept under the blob shas of the files it was
    read from, so a run at a commit that did not touch them skips reading and parsing them.
    """
    try:
        every = target.files(Scope(include=("**/*.py", "python/pyproject*.toml"), exclude=()))
    except Exception:  # knowledge is an enrichment, never a reason to fail
        return Knowledge.empty()
    wanted = sorted((f.path, f.blob_sha) for f in every if is_knowledge_path(f.path))
    store = key = None
    if cache_dir is not None:
        store = knowledge_cache(cache_dir)
        key = hashlib.sha256(orjson.dumps(wanted)).hexdigest()
        raw = store.get(key)
        if raw is not None:
            try:
                return knowledge_from_plain(raw)
            except (ValueError, TypeError):  # a stale or foreign entry is rebuilt
                pass
    by_blob = {blob: path for path, blob in wanted}
    files = {by_blob[blob]: data for blob, data in target.read_many(by_blob)}
    knowledge = build_knowledge(files)
    if store is not None and key is not None:
        # A knowledge this codec cannot write is not kept: the next run builds it again.
        with contextlib.suppress(TypeError, orjson.JSONEncodeError):
            store.put(key, knowledge_to_plain(knowledge))
    return knowledge
