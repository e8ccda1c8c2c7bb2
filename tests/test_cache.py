"""The per-file result cache: round trips, damaged entries, namespaces, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extractor.engine import cache
from extractor.engine.cache import (
    ResultCache,
    code_fingerprint,
    default_cache_dir,
    make_namespace,
    package_fingerprint,
    prune_namespaces,
)

BLOB = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
OTHER = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
NS = make_namespace("code", "scope", "knowledge")


def test_round_trip_and_stats(tmp_path: Path) -> None:
    rc = ResultCache(tmp_path, NS)
    assert rc.get(BLOB) is None
    rc.put(BLOB, b'{"sites":[1,2,3]}')
    assert rc.get(BLOB) == b'{"sites":[1,2,3]}'
    rc.put(OTHER, b"")
    assert rc.get(OTHER) == b""
    assert (rc.stats.hits, rc.stats.misses, rc.stats.corrupt, rc.stats.writes) == (2, 1, 0, 2)
    path = rc.path_for(BLOB)
    assert path == tmp_path / "results" / NS[:16] / BLOB[:2] / f"{BLOB}.bin"
    # A second cache object (another run) on the same root sees the entry.
    assert ResultCache(tmp_path, NS).get(BLOB) == b'{"sites":[1,2,3]}'


def _damage_truncate(raw: bytes) -> bytes:
    return raw[:-3]


def _damage_flip_payload(raw: bytes) -> bytes:
    return raw[:-1] + bytes([raw[-1] ^ 0x01])


def _damage_flip_header(raw: bytes) -> bytes:
    return raw[:10] + bytes([raw[10] ^ 0x80]) + raw[11:]


def _damage_empty(raw: bytes) -> bytes:
    return b""


def _damage_extend(raw: bytes) -> bytes:
    return raw + b"x"


@pytest.mark.parametrize(
    "damage", [_damage_truncate, _damage_flip_payload, _damage_flip_header, _damage_empty, _damage_extend]
)
def test_damaged_entry_is_deleted_and_missed(tmp_path: Path, damage: object) -> None:
    rc = ResultCache(tmp_path, NS)
    rc.put(BLOB, b"payload-bytes-0123456789")
    path = rc.path_for(BLOB)
    assert callable(damage)
    path.write_bytes(damage(path.read_bytes()))
    assert rc.get(BLOB) is None
    assert (rc.stats.hits, rc.stats.misses, rc.stats.corrupt) == (0, 1, 1)
    assert not path.exists()
    # Recomputed and stored again, it is trusted.
    rc.put(BLOB, b"payload-bytes-0123456789")
    assert rc.get(BLOB) == b"payload-bytes-0123456789"


def test_entry_copied_to_another_key_or_namespace_is_rejected(tmp_path: Path) -> None:
    rc = ResultCache(tmp_path, NS)
    rc.put(BLOB, b"result of BLOB")
    # A well-formed entry under the wrong blob name (a swapped file) fails the checksum.
    wrong = rc.path_for(OTHER)
    wrong.parent.mkdir(parents=True, exist_ok=True)
    wrong.write_bytes(rc.path_for(BLOB).read_bytes())
    assert rc.get(OTHER) is None
    assert rc.stats.corrupt == 1
    # Two namespaces sharing a 16-digit prefix still cannot read each other's entries.
    twin = NS[:16] + "0" * (len(NS) - 16)
    assert twin != NS
    assert ResultCache(tmp_path, twin).get(BLOB) is None


def test_namespaces_are_isolated(tmp_path: Path) -> None:
    ResultCache(tmp_path, make_namespace("code-v1", "scope")).put(BLOB, b"old")
    new = ResultCache(tmp_path, make_namespace("code-v2", "scope"))
    assert new.get(BLOB) is None
    assert make_namespace("ab", "c") != make_namespace("a", "bc")


def test_bad_keys_are_refused(tmp_path: Path) -> None:
    rc = ResultCache(tmp_path, NS)
    for bad in ["../../etc/passwd", "ABCDEF" * 7, "", BLOB[:-1]]:
        with pytest.raises(ValueError):
            rc.get(bad)
    with pytest.raises(ValueError):
        ResultCache(tmp_path, "not-hex")


def test_unwritable_cache_degrades_to_misses(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_bytes(b"")
    rc = ResultCache(blocker, NS)
    rc.put(BLOB, b"x")
    assert rc.get(BLOB) is None
    assert rc.stats.write_errors == 1 and rc.stats.misses == 1


def _writer(root: str, seed: int, rounds: int) -> None:
    rc = ResultCache(Path(root), NS)
    for _ in range(rounds):
        # Every writer stores the same bytes for a key, as runs of one extractor do.
        rc.put(BLOB, b"same-result" * 50)
        got = rc.get(BLOB)
        if got is not None and got != b"same-result" * 50:
            raise SystemExit(3)
        rc.put(OTHER, b"other-%d" % seed)


def test_concurrent_writers_never_expose_partial_entries(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), n, 200)) for n in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    rc = ResultCache(tmp_path, NS)
    assert rc.get(BLOB) == b"same-result" * 50
    assert rc.get(OTHER) in {b"other-0", b"other-1", b"other-2"}
    assert rc.stats.corrupt == 0
    assert list(tmp_path.rglob("*.tmp")) == []


def test_default_cache_dir_honours_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "sglang-errors"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "sglang-errors"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "sglang-errors"


def test_code_fingerprint_tracks_package_bytes(tmp_path: Path) -> None:
    import extractor

    fp = code_fingerprint()
    assert len(fp) == 64 and fp == code_fingerprint()
    # A copy of the package, imported by a fresh interpreter: its fingerprint is that of the
    # copy's bytes, and changes with one edited byte or one added module.
    copy = tmp_path / "extractor"
    shutil.copytree(Path(extractor.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    prog = "from extractor.engine.cache import code_fingerprint; print(code_fingerprint())"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def run() -> str:
        return subprocess.run(
            [sys.executable, "-c", prog], env=env, capture_output=True, text=True, check=True, cwd=tmp_path
        ).stdout.strip()

    original = run()
    assert original == package_fingerprint(copy, extractor.__version__)
    assert package_fingerprint(copy, "9.9.9") != original
    timefmt = copy / "timefmt.py"
    timefmt.write_bytes(timefmt.read_bytes() + b"\n# edited\n")
    edited = run()
    assert edited != original
    # Modules the extraction never imports (the CLI, diff, match) leave the cache alone ...
    (copy / "new_module.py").write_bytes(b"")
    for name in ("datasets/diff.py", "datasets/match/ranking.py", "cli.py"):
        (copy / name).write_bytes((copy / name).read_bytes() + b"\n# edited\n")
    assert run() == edited
    # ... until the extraction imports them.
    sites = copy / "analysis" / "sites.py"
    sites.write_bytes(sites.read_bytes() + b"\nimport extractor.new_module\n")
    assert run() not in {original, edited}


def test_prune_removes_only_stale_namespaces(tmp_path: Path) -> None:
    old_ns = make_namespace("old")
    fresh_ns = make_namespace("fresh")
    kept_ns = make_namespace("kept")
    for ns in (old_ns, fresh_ns, kept_ns):
        ResultCache(tmp_path, ns).put(BLOB, b"x")
    long_ago = time.time() - 40 * 86400
    for ns in (old_ns, kept_ns):
        marker = tmp_path / "results" / ns[:16] / cache._LAST_USED
        os.utime(marker, (long_ago, long_ago))
    removed = prune_namespaces(tmp_path, older_than_days=30, keep=[kept_ns])
    assert removed == [tmp_path / "results" / old_ns[:16]]
    assert ResultCache(tmp_path, fresh_ns).get(BLOB) == b"x"
    assert ResultCache(tmp_path, kept_ns).get(BLOB) == b"x"
    assert prune_namespaces(tmp_path / "absent", older_than_days=1) == []
