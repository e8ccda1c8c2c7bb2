"""The nightly job against small git repos built here.

The cache, publishing and pruning are exercised in-process through :func:`run_nightly` (the
same function the CLI calls). Whatever depends on a real process (SIGKILL, the folder lock, exit
codes, what the command prints) runs the CLI as a subprocess: ``python -m extractor nightly``.
Subprocesses import a snapshot of the package taken once per session, so the code fingerprint in
the cache key cannot drift between two runs of one test while the checkout is being edited.

Pauses at named points (see ``extractor.datasets.folder_lock.pause``) make "killed mid-way" and "two runs at
once" deterministic: the run announces the point with a file and waits there until the test
releases or kills it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from extractor import api
from extractor.api import ExtractOptions
from extractor.datasets.nightly import NightlyOptions, NightlyResult, run_nightly
from extractor.errors import ExtractorError
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
QUANT = "python/sglang/srt/layers/quant.py"
CHANGED_QUANT = (
    FILES[QUANT]
    + """

def pick_backend(name):
    if name not in ("triton", "torch"):
        raise ValueError(f"unknown backend {name}; expected triton or torch")
    return name
"""
)


@pytest.fixture(scope="session")
def package_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the extractor package for subprocesses (see the module docstring)."""
    root = tmp_path_factory.mktemp("snapshot")
    shutil.copytree(REPO_ROOT / "extractor", root / "extractor", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@dataclass
class Env:
    """One test's world: a source repo, a cache folder, an output folder, a pause folder."""

    tmp: Path
    source: Path
    cache: Path
    out: Path
    pauses: Path
    snapshot: Path

    def commit(self, files: dict[str, str], message: str) -> str:
        return add_commit(self.source, {rel: text.encode() for rel, text in files.items()}, message)

    def head(self) -> str:
        return (self.source / ".git" / "refs" / "heads" / "main").read_text().strip()

    # -- in-process

    def nightly(
        self, ref: str = "main", *, out: Path | None = None, use_cache: bool = True, **kw: Any
    ) -> NightlyResult:
        extract = ExtractOptions.build(
            source=str(self.source), cache_dir=self.cache, jobs=1, use_cache=use_cache
        )
        return run_nightly(NightlyOptions(extract=extract, ref=ref, out_dir=out or self.out, **kw))

    # -- subprocess

    def args(self, ref: str, *extra: str) -> list[str]:
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
            str(self.out),
            "--cache-dir",
            str(self.cache),
            "--jobs",
            "1",
            *extra,
        ]

    def environ(self, pause_at: str | None = None) -> dict[str, str]:
        env = {**os.environ, "PYTHONPATH": str(self.snapshot), "SOURCE_DATE_EPOCH": EPOCH, "NO_COLOR": "1"}
        env.pop("SGLANG_ERRORS_TEST_PAUSE_AT", None)
        if pause_at:
            env["SGLANG_ERRORS_TEST_PAUSE_AT"] = pause_at
            env["SGLANG_ERRORS_TEST_PAUSE_DIR"] = str(self.pauses)
        return env

    def run(self, ref: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.args(ref, *extra), env=self.environ(), capture_output=True, text=True, timeout=120
        )

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
def env(tmp_path: Path, package_snapshot: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.delenv("SGLANG_ERRORS_TEST_PAUSE_AT", raising=False)
    source, _ = make_repo(tmp_path, [{rel: text.encode() for rel, text in FILES.items()}], name="sglang")
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    yield Env(tmp_path, source, tmp_path / "cache", tmp_path / "out", pauses, package_snapshot)


def assert_published(out: Path, manifest: dict[str, Any]) -> None:
    """The manifest's dataset exists, validates, and matches the manifest's figures."""
    dataset = out / manifest["datasetFile"]
    report = api.validate(dataset)
    assert report.problems == []
    assert report.good == manifest["records"]
    assert hashlib.sha256(dataset.read_bytes()).hexdigest() == manifest["datasetSha256"]
    for entry in manifest["history"]:
        assert (out / entry["datasetFile"]).is_file()
        if entry["changelog"]:
            assert (out / entry["changelog"]["markdown"]).is_file()
            assert (out / entry["changelog"]["json"]).is_file()


def files(m: dict[str, Any]) -> tuple[int, int, int, int]:
    f = m["files"]
    return f["inScope"], f["parsed"], f["fromCache"], f["failed"]


# -- cache and reproducibility ------------------------------------------------------------------


def test_cold_warm_and_uncached_runs_give_identical_bytes(env: Env) -> None:
    sha = env.head()
    cold = env.nightly().manifest
    assert cold["sha"] == sha and cold["ref"] == "main"
    assert files(cold) == (3, 3, 0, 0)
    assert cold["previousSha"] is None and cold["changelog"] is None
    assert cold["records"] == 4
    assert cold["schemaHash"] == hashlib.sha256(api.schema_bytes()).hexdigest()
    assert cold["datasetVersion"] == "2026-01-01T00:00:00.000Z"
    assert_published(env.out, cold)
    cold_bytes = (env.out / cold["datasetFile"]).read_bytes()

    rerun = env.nightly()
    warm = rerun.manifest
    assert files(warm) == (3, 0, 3, 0)
    assert (env.out / warm["datasetFile"]).read_bytes() == cold_bytes
    # Nothing new: the same dataset is republished, still the first one (no baseline, no changelog).
    assert rerun.republished and warm["datasetFile"] == cold["datasetFile"]
    assert warm["previousSha"] is None and warm["changelog"] is None and len(warm["history"]) == 1
    assert_published(env.out, warm)

    other = env.tmp / "nocache"
    fresh = env.nightly(out=other, use_cache=False).manifest
    assert files(fresh) == (3, 3, 0, 0)
    assert (other / fresh["datasetFile"]).read_bytes() == cold_bytes


def test_new_commit_touching_one_file_parses_one_file(env: Env) -> None:
    first = env.head()
    env.nightly()
    second = env.commit({QUANT: CHANGED_QUANT}, "add a backend check")
    result = env.nightly()
    m = result.manifest
    assert m["sha"] == second and m["previousSha"] == first
    assert files(m) == (3, 1, 2, 0)
    assert m["changelog"]["summary"] == {"added": 1, "removed": 0, "changed": 0, "unchanged": 4}
    assert result.changelog_markdown is not None and result.changelog_json is not None
    markdown = result.changelog_markdown.read_text()
    assert "unknown backend" in markdown and first[:12] in markdown and second[:12] in markdown
    changes = orjson.loads(result.changelog_json.read_bytes())
    added = [r["errorMessage"] for r in changes["added"]]
    assert len(added) == 1 and added[0].startswith("unknown backend")
    assert [h["sha"] for h in m["history"]] == [second, first]
    assert_published(env.out, m)


def test_rerun_without_upstream_change_keeps_the_last_real_changelog(env: Env) -> None:
    first = env.head()
    env.nightly(keep=1)
    second = env.commit({QUANT: CHANGED_QUANT}, "add a backend check")
    changed = env.nightly(keep=1)
    before = sorted(p.name for p in env.out.iterdir())
    again = env.nightly(keep=1)
    assert again.republished and again.pruned == []
    assert sorted(p.name for p in env.out.iterdir()) == before
    m = again.manifest
    assert m["sha"] == second and m["previousSha"] == first
    assert m["changelog"] == changed.manifest["changelog"]
    assert m["changelog"]["summary"]["added"] == 1
    assert again.changelog_summary == "1 added, 0 removed, 0 changed, 4 unchanged"
    assert_published(env.out, m)


def test_renamed_file_is_followed_in_the_changelog(env: Env) -> None:
    env.nightly()
    moved = "python/sglang/srt/managers/config_io.py"
    add_commit(
        env.source,
        {moved: FILES["python/sglang/srt/managers/io.py"].encode(), "python/sglang/srt/managers/io.py": None},
    )
    m = env.nightly().manifest
    # The untouched files come from the cache (the moved one may be re-analysed: its prose names
    # its path), and the moved site pairs with its old self instead of "removed + added".
    inscope, parsed, cached, _ = files(m)
    assert inscope == 3 and cached >= 2 and parsed + cached == 3
    summary = m["changelog"]["summary"]
    assert summary["added"] == 0 and summary["removed"] == 0 and summary["changed"] == 1


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_corrupt_cache_entries_are_recomputed(env: Env, damage: str) -> None:
    first = env.nightly().manifest
    # Every entry the run stored (per-file results and whatever else the pipeline caches).
    entries = sorted((env.cache / "results").rglob("*.bin"))
    assert len(entries) >= 3
    for victim in entries:
        raw = victim.read_bytes()
        if damage == "truncate":
            victim.write_bytes(raw[: len(raw) // 2])
        else:
            victim.write_bytes(raw[:-5] + bytes([raw[-5] ^ 0xFF]) + raw[-4:])
    second = env.nightly().manifest
    assert files(second) == (3, 3, 0, 0)
    assert (env.out / second["datasetFile"]).read_bytes() == (env.out / first["datasetFile"]).read_bytes()
    # The recomputed entries were stored again, intact: the next run parses nothing.
    assert files(env.nightly().manifest) == (3, 0, 3, 0)


# -- publishing and pruning ---------------------------------------------------------------------


def test_keep_prunes_old_datasets_never_named_ones(env: Env) -> None:
    shas = [env.head()]
    env.nightly(keep=2)
    shas.append(env.commit({QUANT: CHANGED_QUANT}, "second"))
    env.nightly(keep=2)
    shas.append(
        env.commit({"python/sglang/srt/managers/extra.py": "raise RuntimeError('boom at import')\n"}, "third")
    )
    result = env.nightly(keep=2)
    m = result.manifest
    assert files(m) == (4, 1, 3, 0)
    assert [h["sha"] for h in m["history"]] == [shas[2], shas[1]]
    datasets = sorted(p.name for p in env.out.glob("*.jsonl"))
    assert datasets == sorted(h["datasetFile"] for h in m["history"])
    assert [p.name for p in result.pruned] == [f"sglang-errors-{shas[0][:12]}-20260101T000000000Z.jsonl"]
    assert_published(env.out, m)
    # An older commit-ish is accepted and diffed against the newest dataset.
    back = env.nightly(shas[0][:10], keep=2).manifest
    assert back["sha"] == shas[0] and back["previousSha"] == shas[2]
    assert back["changelog"]["summary"]["removed"] == 2
    assert_published(env.out, back)


def test_published_files_are_readable_and_leftovers_are_swept(env: Env) -> None:
    env.out.mkdir()
    # What a killed run can leave: a staged dataset, a half-written manifest, an unpublished dataset.
    stale = [
        env.out / ".sglang-errors-0123456789ab-20260101T000000000Z.jsonl.x1y2.tmp",
        env.out / ".manifest.json.abcd.tmp",
    ]
    stray = env.out / "sglang-errors-0123456789ab-20260101T000000000Z.jsonl"
    unrelated = env.out / "README.txt"
    for path in [*stale, stray, unrelated]:
        path.write_bytes(b"partial")
    result = env.nightly()
    assert not any(p.exists() for p in stale)
    assert not stray.exists() and stray in result.pruned
    assert unrelated.read_bytes() == b"partial"  # not ours: never touched
    umask = os.umask(0)
    os.umask(umask)
    for path in (result.manifest_path, result.dataset_path):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_damaged_manifest_is_refused_and_left_alone(env: Env) -> None:
    env.out.mkdir()
    bad = b'{"manifestVersion": 1, "sha": "nope"'
    (env.out / "manifest.json").write_bytes(bad)
    with pytest.raises(ExtractorError) as caught:
        env.nightly()
    assert caught.value.where.endswith("manifest.json") and "not valid JSON" in caught.value.what
    (env.out / "manifest.json").write_bytes(
        b'{"manifestVersion": 1, "sha": "' + b"a" * 40 + b'", "datasetFile": "../x"}'
    )
    with pytest.raises(ExtractorError, match="does not write"):
        env.nightly()
    assert list(env.out.glob("*.jsonl")) == []


def test_keep_must_be_positive(env: Env) -> None:
    with pytest.raises(ExtractorError, match="--keep"):
        env.nightly(keep=0)


# -- the real command: report, kill, lock -------------------------------------------------------


def test_command_reports_parsed_and_cached_counts(env: Env) -> None:
    cold = env.run("main")
    assert cold.returncode == 0, cold.stderr
    assert "3 in scope, 3 parsed, 0 from cache" in cold.stderr
    assert "no changelog" in cold.stderr
    first = env.manifest()
    warm = env.run("main")
    assert warm.returncode == 0, warm.stderr
    assert "3 in scope, 0 parsed, 3 from cache" in warm.stderr
    assert "republished" in warm.stderr
    second = env.manifest()
    assert files(second) == (3, 0, 3, 0)
    assert second["datasetFile"] == first["datasetFile"]
    assert (env.out / second["datasetFile"]).read_bytes() == (env.out / first["datasetFile"]).read_bytes()


@pytest.mark.parametrize("point", ["extracted", "before-manifest"])
def test_run_killed_midway_leaves_previous_manifest_valid(env: Env, point: str) -> None:
    env.nightly()
    before = (env.out / "manifest.json").read_bytes()
    previous = env.manifest()
    dataset_bytes = (env.out / previous["datasetFile"]).read_bytes()
    second = env.commit({QUANT: CHANGED_QUANT}, "add a backend check")

    proc = env.start("main", pause_at=point)
    try:
        env.wait_for(point, proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    if point == "before-manifest":
        # The dead run got as far as writing its dataset and changelog, unpublished.
        assert len(list(env.out.glob("*.jsonl"))) == 2

    assert (env.out / "manifest.json").read_bytes() == before
    assert (env.out / previous["datasetFile"]).read_bytes() == dataset_bytes
    assert_published(env.out, previous)

    # The next run is not blocked by the dead one's lock, sweeps its leftovers and publishes.
    after = env.nightly().manifest
    assert after["sha"] == second and after["previousSha"] == previous["sha"]
    assert_published(env.out, after)
    assert not [p for p in env.out.iterdir() if p.name.endswith(".tmp")]


def test_killed_after_manifest_before_prune_leaves_new_manifest_valid(env: Env) -> None:
    env.nightly()
    env.commit({QUANT: CHANGED_QUANT}, "add a backend check")
    proc = env.start("main", "--keep", "1", pause_at="before-prune")
    try:
        env.wait_for("before-prune", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    m = env.manifest()
    assert m["sha"] == env.head() and len(m["history"]) == 1
    assert_published(env.out, m)
    assert len(list(env.out.glob("*.jsonl"))) == 2  # the old one is merely not pruned yet


def test_second_concurrent_run_refuses_or_waits(env: Env) -> None:
    holder = env.start("main", pause_at="locked")
    waiter: subprocess.Popen[str] | None = None
    try:
        env.wait_for("locked", holder)
        refused = env.run("main")
        assert refused.returncode == 3
        assert "another nightly run" in refused.stderr and "--wait" in refused.stderr
        assert f"pid {holder.pid}" in refused.stderr
        assert "Traceback" not in refused.stderr
        assert not (env.out / "manifest.json").exists()

        waiter = env.start("main", "--wait")
        assert waiter.stderr is not None
        # The waiter says so, then blocks on the lock until the holder is done.
        assert "waiting for the nightly run" in waiter.stderr.readline()
        assert not (env.out / "manifest.json").exists()
    finally:
        env.release("locked")
    assert holder.wait(timeout=60) == 0
    assert waiter is not None
    _, rest = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, rest
    # The waiter ran after the holder had published: it found the same dataset already there.
    assert "republished" in rest
    m = env.manifest()
    assert files(m) == (3, 0, 3, 0)
    assert_published(env.out, m)


def test_unknown_ref_is_a_clear_error(env: Env) -> None:
    proc = env.run("no-such-branch")
    assert proc.returncode == 2
    assert "no-such-branch" in proc.stderr and "Traceback" not in proc.stderr
    assert not (env.out / "manifest.json").exists()


def test_default_cache_dir_follows_xdg(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(env.tmp / "xdg"))
    options = NightlyOptions(
        extract=ExtractOptions.build(source=str(env.source), jobs=1), ref="main", out_dir=env.out
    )
    assert files(run_nightly(options).manifest) == (3, 3, 0, 0)
    assert len(list((env.tmp / "xdg" / "sglang-errors" / "results").rglob("*.bin"))) >= 3
    assert files(run_nightly(options).manifest) == (3, 0, 3, 0)


def test_output_folder_that_cannot_exist_is_a_clear_error(env: Env) -> None:
    blocker = env.tmp / "a-file"
    blocker.write_bytes(b"")
    with pytest.raises(ExtractorError, match="not a directory"):
        env.nightly(out=blocker)
    with pytest.raises(ExtractorError, match="cannot create the output folder"):
        env.nightly(out=blocker / "sub")


# -- hygiene: quiet nights, fractional epochs ---------------------------------------------------


def test_rerun_at_another_time_with_nothing_changed_publishes_nothing_new(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.nightly(keep=1)
    env.commit({QUANT: CHANGED_QUANT}, "add a backend check")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767312000")
    changed = env.nightly(keep=1)
    assert changed.changelog_markdown is not None
    published = {
        p.name: p.read_bytes() for p in env.out.iterdir() if p.name not in ("manifest.json", ".lock")
    }
    # A later night with nothing new upstream: only the time stamps would differ.
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    again = env.nightly(keep=1)
    assert again.republished and again.pruned == []
    assert {
        p.name: p.read_bytes() for p in env.out.iterdir() if p.name not in ("manifest.json", ".lock")
    } == published
    m, before = again.manifest, changed.manifest
    assert m["datasetFile"] == before["datasetFile"] and m["datasetVersion"] == before["datasetVersion"]
    assert m["changelog"] == before["changelog"] and m["changelog"]["summary"]["added"] == 1
    assert_published(env.out, m)


def test_command_says_nothing_new_was_published(env: Env) -> None:
    assert env.run("main").returncode == 0
    later = {**env.environ(), "SOURCE_DATE_EPOCH": "1767312000.25"}
    proc = subprocess.run(env.args("main"), env=later, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "nothing changed at" in proc.stderr and "nothing new written" in proc.stderr
    as_json = subprocess.run(
        env.args("main", "--format", "json"), env=later, capture_output=True, text=True, timeout=120
    )
    summary = orjson.loads(as_json.stdout)
    assert summary["published"] is False and summary["datasetVersion"] == "2026-01-01T00:00:00.000Z"


def test_fractional_source_date_epoch_gives_milliseconds(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600.250")
    m = env.nightly().manifest
    assert m["datasetVersion"] == "2026-01-01T00:00:00.250Z"
    assert "-20260101T000000250Z.jsonl" in m["datasetFile"]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "soon")
    with pytest.raises(ExtractorError, match="SOURCE_DATE_EPOCH"):
        env.nightly(out=env.tmp / "other")
