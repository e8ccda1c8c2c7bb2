"""Per-file results on disk, keyed by the file's git blob sha within a namespace.

A namespace is a hash of everything besides the file's bytes that a result depends on: the
extractor's own code (:func:`code_fingerprint`), its configuration and its knowledge tables. The
pipeline computes it (see :func:`make_namespace`) and hands it to :class:`ResultCache`; a changed
extractor therefore lands in a fresh namespace and never reads results an older one wrote.

Entries are never trusted blindly: each one starts with a header holding the payload's length and
a sha256 over the namespace, the blob sha and the payload. A truncated, bit-flipped or swapped
entry fails the check, is deleted and reported as a miss, so the caller recomputes it. Entries are
written to a temp file beside their destination and renamed into place, so concurrent writers
(two runs, or worker processes) never expose a half-written entry; fsync is skipped on purpose
because a torn entry after a power loss is caught by the checksum anyway.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import stat
import struct
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CacheStats",
    "ResultCache",
    "code_fingerprint",
    "default_cache_dir",
    "make_namespace",
    "package_fingerprint",
    "prune_namespaces",
]

_APP_DIR = "sglang-errors"
_RESULTS = "results"
# Marker touched whenever a namespace is opened, so unused namespaces can be pruned by age.
_LAST_USED = ".last-used"

# Header: magic, payload length (u64, big-endian), sha256 digest. Bump the magic when it changes.
_MAGIC = b"SGE1"
_HEADER = struct.Struct(">4sQ32s")
_BLOB_RE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")  # sha1 or sha256 object names
_NAMESPACE_RE = re.compile(r"^[0-9a-f]{16,}$")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/sglang-errors``, or ``~/.cache/sglang-errors`` when it is unset or relative."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    # The XDG spec says a relative value is invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / _APP_DIR


# The module whose import closure decides per-file results: editing a module outside it (the CLI,
# diff, match, nightly) must not throw the extraction cache away.
_FINGERPRINT_ROOTS: tuple[str, ...] = ("engine.pipeline",)


@functools.cache
def code_fingerprint() -> str:
    """sha256 over the extraction code of the installed ``extractor`` package and its version.

    The code is every module that :mod:`extractor.engine.pipeline` imports, directly or through others
    (function-level imports included); each contributes its path relative to the package and its
    bytes, so an edit or a new import changes the fingerprint even if ``__version__`` did not.
    Computed once per process: the code a process runs does not change under it.
    """
    import extractor

    return package_fingerprint(Path(extractor.__file__).resolve().parent, extractor.__version__)


def package_fingerprint(package: Path, version: str, roots: Iterable[str] = _FINGERPRINT_ROOTS) -> str:
    """The fingerprint :func:`code_fingerprint` computes, for the package folder ``package``."""
    digest = hashlib.sha256()
    digest.update(b"extractor " + version.encode() + b"\0")
    for rel in sorted(import_closure(package, roots)):
        data = (package / rel).read_bytes()
        digest.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0")
        digest.update(data)
    return digest.hexdigest()


# Import statements read from the text: a regex finds every one the parser would (and, inside a
# string or comment, a few it would not, which only makes the fingerprint more careful), at a
# fraction of parsing the package's source on every run.
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|(?:[^\n#;\\]|\\\n)*)", re.M)
_PLAIN_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w., \t]+)", re.M)
_AS = re.compile(r"\s+as\s+\w+")


def import_closure(package: Path, roots: Iterable[str]) -> set[str]:
    """Files (relative to ``package``) of ``roots`` and every package module they import, transitively."""
    prefix = package.name + "."

    def module_file(name: str) -> str | None:
        rel = name.replace(".", "/")
        for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
            if (package / candidate).is_file():
                return candidate
        return None

    def imported(text: str) -> list[str]:
        names: list[str] = []
        for m in _FROM_IMPORT.finditer(text):
            base = m.group(1)
            if base != package.name and not base.startswith(prefix):
                continue
            base = base[len(prefix) :] if base.startswith(prefix) else ""
            if base:
                names.append(base)
            for item in _AS.sub("", m.group(2).strip("()").replace("\\", " ")).split(","):
                item = item.strip()
                if item.isidentifier():
                    names.append(f"{base}.{item}" if base else item)
        for m in _PLAIN_IMPORT.finditer(text):
            for item in _AS.sub("", m.group(1)).split(","):
                item = item.strip()
                if item.startswith(prefix):
                    names.append(item[len(prefix) :])
        return names

    seen: set[str] = set()
    todo = [f for f in (module_file(r) for r in roots) if f is not None]
    init = module_file("__init__")
    if init is not None:
        todo.append(init)
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        try:
            text = (package / rel).read_text("utf-8", "replace")
        except OSError:
            continue
        for name in imported(text):
            found = module_file(name)
            if found is not None:
                todo.append(found)
    return seen


def make_namespace(*parts: str) -> str:
    """A namespace from its ingredients (code fingerprint, scope key, knowledge fingerprint...)."""
    digest = hashlib.sha256()
    for part in parts:
        # Length-prefixed so ("ab", "c") and ("a", "bc") differ.
        raw = part.encode()
        digest.update(str(len(raw)).encode() + b":" + raw)
    return digest.hexdigest()


@dataclass
class CacheStats:
    """What a :class:`ResultCache` did. A corrupt entry counts as a miss as well as corrupt."""

    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    writes: int = 0
    write_errors: int = 0


class ResultCache:
    """Payloads keyed by blob sha under ``<root>/results/<namespace[:16]>/<sha[:2]>/<sha>.bin``."""

    def __init__(self, root: Path, namespace: str) -> None:
        if not _NAMESPACE_RE.match(namespace):
            raise ValueError(f"namespace must be at least 16 lowercase hex digits, got {namespace!r}")
        self.root = Path(root)
        self.namespace = namespace
        self.folder = self.root / _RESULTS / namespace[:16]
        self.stats = CacheStats()
        self._ns_bytes = namespace.encode()
        self._touch()

    def _touch(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / _LAST_USED).write_bytes(self._ns_bytes + b"\n")
        except OSError:
            # An unwritable cache only costs speed; get/put degrade to misses and write errors.
            pass

    def path_for(self, blob_sha: str) -> Path:
        """Where the entry for ``blob_sha`` lives (whether or not it exists)."""
        if not _BLOB_RE.match(blob_sha):
            # Also keeps a malformed key from naming a path outside the cache.
            raise ValueError(f"not a git object name: {blob_sha!r}")
        return self.folder / blob_sha[:2] / f"{blob_sha}.bin"

    def _digest(self, blob_sha: str, payload: bytes) -> bytes:
        digest = hashlib.sha256()
        digest.update(self._ns_bytes + b"\0" + blob_sha.encode() + b"\0")
        digest.update(payload)
        return digest.digest()

    def get(self, blob_sha: str) -> bytes | None:
        """The payload stored for ``blob_sha``, or ``None``; a damaged entry is deleted and missed."""
        path = self.path_for(blob_sha)
        raw = _read_regular(path)
        if raw is None:
            self.stats.misses += 1
            return None
        payload = self._check(blob_sha, raw)
        if payload is None:
            self.stats.corrupt += 1
            self.stats.misses += 1
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        self.stats.hits += 1
        return payload

    def _check(self, blob_sha: str, raw: bytes) -> bytes | None:
        if len(raw) < _HEADER.size:
            return None
        magic, length, digest = _HEADER.unpack_from(raw)
        payload = raw[_HEADER.size :]
        if magic != _MAGIC or length != len(payload) or digest != self._digest(blob_sha, payload):
            return None
        return payload

    def put(self, blob_sha: str, payload: bytes) -> None:
        """Store ``payload`` atomically; a failure to write is counted, never raised."""
        path = self.path_for(blob_sha)
        header = _HEADER.pack(_MAGIC, len(payload), self._digest(blob_sha, payload))
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{blob_sha[:12]}.", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(header)
                fh.write(payload)
            os.replace(tmp, path)
            tmp = None
        except OSError:
            self.stats.write_errors += 1
            return
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
        self.stats.writes += 1


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not through a symlink); else ``None``.

    Anything else where an entry should be (a FIFO would block the run forever, a device could
    be endless) is a miss, and the entry written after the analysis replaces it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        chunks: list[bytes] = []
        while chunk := os.read(fd, max(info.st_size, 1 << 16)):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def prune_namespaces(root: Path, *, older_than_days: float, keep: Iterable[str] = ()) -> list[Path]:
    """Delete result namespaces not opened for ``older_than_days``; return the folders removed.

    ``keep`` names namespaces (full or 16-digit prefix) that stay whatever their age. A namespace
    in use is touched when opened, so only abandoned ones (an older extractor's) go.
    """
    results = Path(root) / _RESULTS
    if not results.is_dir():
        return []
    kept = {k[:16] for k in keep}
    cutoff = time.time() - older_than_days * 86400
    removed: list[Path] = []
    for folder in sorted(results.iterdir()):
        if not folder.is_dir() or folder.name in kept or not _NAMESPACE_RE.match(folder.name):
            continue
        marker = folder / _LAST_USED
        try:
            last = marker.stat().st_mtime
        except OSError:
            last = folder.stat().st_mtime
        if last < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
