"""The nightly job, run as the real CLI against small git repos built here.

Every run is a subprocess (``python -m extractor nightly``) so that SIGKILL, the folder lock and
the exit codes are the real thing. Pauses at named points (see ``extractor.nightly._pause``) make
"killed mid-way" and "two runs at once" deterministic: the run announces the point with a file and
waits there until the test releases or kills it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git
import orjson
import pytest

from extractor import api
from tests.gitrepos import add_commit, make_repo

REPO_ROOT = Path(__file__).resolve().parents[1]
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z

# Small modules shaped like sglang's: argument checks, asserts, NotImplementedError branches.
FILES: dict[str, str] = {
    "python/sglang/srt/sampling/params.py": """\
def check_temperature(temperature):
    if temperature < 0:
        raise ValueError(f"temperature must be non-negative, got {temperature}")
    return temperature
""",
    "python/sglang/srt/layers/quant.py": """\
class Quantizer:
    def __init__(self, bits):
        assert bits in (4, 8), f"unsupported bit width {bits}"
        self.bits = bits

    def apply(self, kind):
        if kind == "fp8":
            return self.bits
        raise NotImplementedError(f"quantization {kind} is not supported")
""",
    "python/sglang/srt/managers/io.py": """\
import os


def read_config(path):
    if not os.path.exists(path):
        raise FileNotFoundError(f"config file {path} does not exist")
    return path
""",
}
CHANGED_QUANT = (
    FILES["python/sglang/srt/layers/quant.py"]
    + """

def pick_backend(name):
    if name not in ("triton", "torch"):
        raise ValueError(f"unknown backend {name}; expected triton or torch")
    return name
"""
)


@dataclass
class Env:
    """One test's world: a source repo, a cache folder, an output folder, a pause folder."""

    tmp: Path
    source: Path
    cache: Path
    out: Path
    pauses: Path

    def commit(self, files: dict[str, str], message: str) -> str:
        return add_commit(self.source, {rel: text.encode() for rel, text in files.items()}, message)

    def args(self, ref: str, *extra: str, out: Path | None = None) -> list[str]:
        return [
            sys.executable,
            "-m",
            "extractor",
            "nightly",
            "--source",
            str(self.source),
            "--ref",
            ref,
            "--out-dir",
            str(out or self.out),
            "--cache-dir",
            str(self.cache),
            "--jobs",
            "1",
            *extra,
        ]

    def environ(self, pause_at: str | None = None) -> dict[str, str]:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "SOURCE_DATE_EPOCH": EPOCH, "NO_COLOR": "1"}
        env.pop("SGLANG_ERRORS_TEST_PAUSE_AT", None)
        if pause_at:
            env["SGLANG_ERRORS_TEST_PAUSE_AT"] = pause_at
            env["SGLANG_ERRORS_TEST_PAUSE_DIR"] = str(self.pauses)
        return env

    def run(
        self, ref: str, *extra: str, out: Path | None = None, ok: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            self.args(ref, *extra, out=out), env=self.environ(), capture_output=True, text=True, timeout=120
        )
        if ok:
            assert proc.returncode == 0, proc.stderr
        return proc

    def start(self, ref: str, *extra: str, pause_at: str | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.args(ref, *extra),
            env=self.environ(pause_at),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait_for(self, point: str, proc: subprocess.Popen[str]) -> None:
        marker = self.pauses / f"{point}.reached"
        deadline = time.monotonic() + 60
        while not marker.exists():
            if proc.poll() is not None:
                raise AssertionError(f"run ended before {point}: {proc.stderr.read() if proc.stderr else ''}")
            assert time.monotonic() < deadline, f"run never reached {point}"
            time.sleep(0.02)

    def release(self, point: str) -> None:
        (self.pauses / f"{point}.release").write_text("")

    def manifest(self, out: Path | None = None) -> dict[str, Any]:
        data: dict[str, Any] = orjson.loads(((out or self.out) / "manifest.json").read_bytes())
        return data


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    source, _ = make_repo(tmp_path, [{rel: text.encode() for rel, text in FILES.items()}], name="sglang")
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    yield Env(tmp_path, source, tmp_path / "cache", tmp_path / "out", pauses)


def assert_published(out: Path, manifest: dict[str, Any]) -> None:
    """The manifest's dataset exists, validates, and matches the manifest's figures."""
    dataset = out / manifest["datasetFile"]
    report = api.validate(dataset)
    assert report.problems == []
    assert report.good == manifest["records"]
    import hashlib

    assert hashlib.sha256(dataset.read_bytes()).hexdigest() == manifest["datasetSha256"]
    for entry in manifest["history"]:
        assert (out / entry["datasetFile"]).is_file()
        if entry["changelog"]:
            assert (out / entry["changelog"]["markdown"]).is_file()
            assert (out / entry["changelog"]["json"]).is_file()


def test_cold_then_warm_rerun_parses_nothing_and_is_byte_identical(env: Env) -> None:
    sha = git.Repo(env.source).head.commit.hexsha
    env.run("main")
    cold = env.manifest()
    assert cold["sha"] == sha and cold["ref"] == "main"
    assert cold["files"] == {"inScope": 3, "parsed": 3, "fromCache": 0, "failed": 0}
    assert cold["previousSha"] is None and cold["changelog"] is None
    assert cold["records"] >= 4
    assert cold["schemaHash"] == __import__("hashlib").sha256(api.schema_bytes()).hexdigest()
    assert_published(env.out, cold)
    cold_bytes = (env.out / cold["datasetFile"]).read_bytes()

    proc = env.run("main")
    warm = env.manifest()
    assert warm["files"] == {"inScope": 3, "parsed": 0, "fromCache": 3, "failed": 0}
    assert "0 parsed, 3 from cache" in proc.stderr
    assert warm["previousSha"] == sha
    assert (env.out / warm["datasetFile"]).read_bytes() == cold_bytes
    assert warm["changelog"]["summary"]["added"] == 0 and warm["changelog"]["summary"]["removed"] == 0
    assert_published(env.out, warm)

    # Without the cache, into another folder: the same bytes again.
    other = env.tmp / "nocache"
    env.run("main", "--no-cache", out=other)
    fresh = env.manifest(other)
    assert fresh["files"]["parsed"] == 3 and fresh["files"]["fromCache"] == 0
    assert (other / fresh["datasetFile"]).read_bytes() == cold_bytes


def test_new_commit_touching_one_file_parses_one_file(env: Env) -> None:
    first = git.Repo(env.source).head.commit.hexsha
    env.run("main")
    second = env.commit({"python/sglang/srt/layers/quant.py": CHANGED_QUANT}, "add a backend check")
    proc = env.run("main")
    m = env.manifest()
    assert m["sha"] == second and m["previousSha"] == first
    assert m["files"] == {"inScope": 3, "parsed": 1, "fromCache": 2, "failed": 0}
    summary = m["changelog"]["summary"]
    assert summary["added"] == 1 and summary["removed"] == 0
    markdown = (env.out / m["changelog"]["markdown"]).read_text()
    assert "unknown backend" in markdown and first[:12] in markdown and second[:12] in markdown
    changes = orjson.loads((env.out / m["changelog"]["json"]).read_bytes())
    added = [r["errorMessage"] for r in changes["added"]]
    assert len(added) == 1 and added[0].startswith("unknown backend")
    assert "1 added" in proc.stderr
    assert [h["sha"] for h in m["history"]] == [second, first]
    assert_published(env.out, m)


def _cache_entries(cache: Path) -> list[Path]:
    return sorted((cache / "results").rglob("*.bin"))


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_corrupt_cache_entry_is_recomputed(env: Env, damage: str) -> None:
    env.run("main")
    first = env.manifest()
    entries = _cache_entries(env.cache)
    assert len(entries) == 3
    victim = entries[0]
    raw = victim.read_bytes()
    if damage == "truncate":
        victim.write_bytes(raw[: len(raw) // 2])
    else:
        victim.write_bytes(raw[:-5] + bytes([raw[-5] ^ 0xFF]) + raw[-4:])
    env.run("main")
    second = env.manifest()
    assert second["files"] == {"inScope": 3, "parsed": 1, "fromCache": 2, "failed": 0}
    assert (env.out / second["datasetFile"]).read_bytes() == (env.out / first["datasetFile"]).read_bytes()
    # The recomputed entry was stored again, intact: a third run parses nothing.
    env.run("main")
    assert env.manifest()["files"]["parsed"] == 0


@pytest.mark.parametrize("point", ["locked", "extracted", "before-manifest"])
def test_run_killed_midway_leaves_previous_manifest_valid(env: Env, point: str) -> None:
    env.run("main")
    before = (env.out / "manifest.json").read_bytes()
    previous = env.manifest()
    dataset_bytes = (env.out / previous["datasetFile"]).read_bytes()
    second = env.commit({"python/sglang/srt/layers/quant.py": CHANGED_QUANT}, "add a backend check")

    proc = env.start("main", pause_at=point)
    try:
        env.wait_for(point, proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    assert (env.out / "manifest.json").read_bytes() == before
    assert (env.out / previous["datasetFile"]).read_bytes() == dataset_bytes
    assert_published(env.out, previous)

    # The next run is not blocked by the dead one's lock, sweeps its leftovers and publishes.
    env.run("main")
    after = env.manifest()
    assert after["sha"] == second and after["previousSha"] == previous["sha"]
    assert_published(env.out, after)
    names = {p.name for p in env.out.iterdir()}
    assert not [n for n in names if n.endswith(".tmp")]


def test_killed_after_manifest_before_prune_leaves_new_manifest_valid(env: Env) -> None:
    env.run("main")
    env.commit({"python/sglang/srt/layers/quant.py": CHANGED_QUANT}, "add a backend check")
    proc = env.start("main", "--keep", "1", pause_at="before-prune")
    try:
        env.wait_for("before-prune", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    m = env.manifest()
    assert len(m["history"]) == 1
    assert_published(env.out, m)
    assert len(list(env.out.glob("*.jsonl"))) == 2  # the old one is merely not pruned yet


def test_second_concurrent_run_refuses_or_waits(env: Env) -> None:
    holder = env.start("main", pause_at="locked")
    try:
        env.wait_for("locked", holder)
        refused = env.run("main", ok=False)
        assert refused.returncode == 3
        assert "another nightly run" in refused.stderr and "--wait" in refused.stderr
        assert "Traceback" not in refused.stderr
        assert not (env.out / "manifest.json").exists()

        waiter = env.start("main", "--wait")
        # The waiter says so before blocking; read its first line of stderr.
        assert waiter.stderr is not None
        first_line = waiter.stderr.readline()
        assert "waiting for the nightly run" in first_line
        assert waiter.poll() is None
    finally:
        env.release("locked")
    assert holder.wait(timeout=60) == 0
    _, rest = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, rest
    m = env.manifest()
    assert m["previousSha"] == m["sha"]  # the waiter ran after the holder and diffed against it
    assert_published(env.out, m)


def test_keep_prunes_old_datasets_never_named_ones(env: Env) -> None:
    shas = [git.Repo(env.source).head.commit.hexsha]
    env.run("main", "--keep", "2")
    shas.append(env.commit({"python/sglang/srt/layers/quant.py": CHANGED_QUANT}, "second"))
    env.run("main", "--keep", "2")
    shas.append(
        env.commit({"python/sglang/srt/managers/extra.py": "raise RuntimeError('boom at import')\n"}, "third")
    )
    env.run("main", "--keep", "2")
    m = env.manifest()
    assert [h["sha"] for h in m["history"]] == [shas[2], shas[1]]
    datasets = sorted(p.name for p in env.out.glob("*.jsonl"))
    assert datasets == sorted(h["datasetFile"] for h in m["history"])
    assert m["files"]["inScope"] == 4 and m["files"]["parsed"] == 1
    assert_published(env.out, m)
    # An older ref (any commit-ish) is accepted, and diffed against the newest.
    env.run(shas[0][:10], "--keep", "2")
    back = env.manifest()
    assert back["sha"] == shas[0] and back["previousSha"] == shas[2]
    assert back["changelog"]["summary"]["removed"] == 2


def test_damaged_manifest_is_refused_and_left_alone(env: Env) -> None:
    env.out.mkdir()
    (env.out / "manifest.json").write_bytes(b'{"manifestVersion": 1, "sha": "nope"')
    proc = env.run("main", ok=False)
    assert proc.returncode == 2
    assert "manifest.json" in proc.stderr and "not valid JSON" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (env.out / "manifest.json").read_bytes() == b'{"manifestVersion": 1, "sha": "nope"'
    assert list(env.out.glob("*.jsonl")) == []


def test_unknown_ref_is_a_clear_error(env: Env) -> None:
    proc = env.run("no-such-branch", ok=False)
    assert proc.returncode != 0
    assert "no-such-branch" in proc.stderr and "Traceback" not in proc.stderr
    assert not (env.out / "manifest.json").exists()
