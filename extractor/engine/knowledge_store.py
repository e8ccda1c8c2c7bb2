"""The target's knowledge base (its flags and env vars), built once and cached by the blobs it reads."""

from __future__ import annotations

import contextlib
import hashlib
import io
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from extractor.config import Scope
from extractor.prose.knowledge import Knowledge, build_knowledge, is_knowledge_path

if TYPE_CHECKING:
    from extractor.engine.cache import ResultCache
    from extractor.source.git import Target


class _KnowledgeUnpickler(pickle.Unpickler):
    """Loads only what a :class:`Knowledge` is made of: a cache file can never name other code."""

    _BUILTINS = frozenset({"frozenset", "set", "tuple", "dict", "list", "str", "int", "bool"})

    def find_class(self, module: str, name: str) -> Any:
        if module == "extractor.prose.knowledge" or (module == "builtins" and name in self._BUILTINS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a knowledge base")


def knowledge_cache(cache_dir: Path) -> ResultCache:
    """Where built knowledge bases are kept, keyed by the paths and blobs they were read from."""
    from extractor.engine.cache import ResultCache, code_fingerprint, make_namespace

    return ResultCache(cache_dir, make_namespace(code_fingerprint(), "knowledge-v1"))


def load_knowledge(target: Target, cache_dir: Path | None = None) -> Knowledge:
    """The target's flags and env vars, read from its own files at the analysed sha.

    With ``cache_dir``, the built knowledge is kept under the blob shas of the files it was
    read from, so a run at a commit that did not touch them skips reading and parsing them.
    """
    try:
        every = target.files(Scope(include=("**/*.py",), exclude=()))
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
                found = _KnowledgeUnpickler(io.BytesIO(raw)).load()
            except Exception:  # a stale or foreign entry is rebuilt
                found = None
            if isinstance(found, Knowledge):
                return found
    by_blob = {blob: path for path, blob in wanted}
    files = {by_blob[blob]: data for blob, data in target.read_many(by_blob)}
    knowledge = build_knowledge(files)
    if store is not None and key is not None:
        knowledge.fingerprint()  # computed once, stored with it
        with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError):
            store.put(key, pickle.dumps(knowledge, protocol=pickle.HIGHEST_PROTOCOL))
    return knowledge
