"""The analysed repository: open a source at a commit-ish; the rest is re-exported from its parts.

A *source* is a URL or the path of a local repository; :mod:`extractor.source.urls` checks it (and
the commit-ish) before git sees either, :mod:`extractor.source.clones` opens a local repository in
place or clones a URL once, bare, into the cache, and :mod:`extractor.source.blobs` lists the tree
at the resolved commit and reads its blobs. Nothing is ever checked out.
"""

from __future__ import annotations

from pathlib import Path

from extractor.engine.cache import default_cache_dir
from extractor.source.blobs import PathChange, Target, TargetFile
from extractor.source.clones import (
    clone_dir_for,
    fetch_origin,
    open_cached_clone,
    open_local,
    rev_parse,
    unknown_commit,
)
from extractor.source.urls import ALLOWED_SCHEMES, is_url, validate_commitish, validate_source

__all__ = [
    "ALLOWED_SCHEMES",
    "PathChange",
    "Target",
    "TargetFile",
    "clone_dir_for",
    "default_cache_dir",
    "is_url",
    "open_target",
    "validate_commitish",
    "validate_source",
]


def open_target(source: str, sha: str, *, cache_dir: Path | None = None, refresh: bool = False) -> Target:
    """Open ``source`` at commit-ish ``sha``, resolved to a full commit sha.

    Local paths are read in place; URLs are cloned (bare) into ``cache_dir`` (default
    :func:`default_cache_dir`) once and fetched only when the commit is missing, or always with
    ``refresh=True`` (for a moving name such as ``main`` that must be current). Every failure
    (refused source or commit-ish, missing path, not a repository, network error, unknown
    commit) is an :class:`ExtractorError`.
    """
    validate_source(source)
    validate_commitish(sha)
    if not is_url(source):
        repo = open_local(source)
        full, complaint = rev_parse(repo, sha)
        if full is None:
            repo.close()
            raise unknown_commit(sha, source, complaint, fetched=False)
        return Target(source, full, repo)
    repo, fresh = open_cached_clone(source, cache_dir if cache_dir is not None else default_cache_dir())
    full, complaint = rev_parse(repo, sha)
    # Fetch only for a commit the clone lacks: a branch or tag name that resolves uses the clone's
    # copy of it, so a cached run needs no network (pass a full sha to pin a commit exactly).
    up_to_date = fresh
    if (full is None or refresh) and not fresh:
        fetch_origin(repo, source, sha)
        full, complaint = rev_parse(repo, sha)
        up_to_date = True
    if full is None:
        repo.close()
        raise unknown_commit(sha, source, complaint, fetched=up_to_date)
    return Target(source, full, repo)
