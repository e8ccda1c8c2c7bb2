"""Faults: a poisoned cache runs nothing, a killed run leaves no process, folder or lock behind.

Every test here works on real things: cache entries forged on disk, the real CLI in a subprocess
killed with real signals, and the processes it forked looked up in ``/proc``.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from extractor.engine.knowledge_store import (
    knowledge_cache,
    knowledge_from_plain,
    knowledge_to_plain,
    load_knowledge,
)
from extractor.source.git import open_target
from tests.gitrepos import make_repo

ROOT = Path(__file__).resolve().parents[1]
ARGS = "python/sglang/srt/server_args.py"
SERVER_ARGS = b"""\
from dataclasses import dataclass
import argparse


@dataclass
class ServerArgs:
    tp_size: int = 1
    enable_lora: bool = False

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--tp-size", type=int, default=1, help="Tensor parallel size.")
        parser.add_argument("--enable-lora", action="store_true", help="Serve LoRA adapters.")
"""


def _busy_module(n: int) -> bytes:
    """A module with many guarded raises: enough work that a run lasts a few seconds."""
    funcs = [
        f"def check_{i}(x, y):\n"
        f"    if x < {i}:\n"
        f"        raise ValueError(f'check {i}: {{x}} below {i}, {{y!r}}')\n"
        f"    assert y != {i}, f'y hit {{y}}'\n"
        f"    return x\n"
        for i in range(60)
    ]
    return (f"# module {n}\n\n" + "\n\n".join(funcs)).encode()


@pytest.fixture(scope="module")
def busy_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {f"python/sglang/srt/busy/m{n:03}.py": _busy_module(n) for n in range(160)}
    files[ARGS] = SERVER_ARGS
    files["python/pyproject.toml"] = (
        b'[project]\nname = "sglang"\ndependencies = ["kernelpack_python==2.0"]\n'
    )
    root, _ = make_repo(tmp_path_factory.mktemp("busy"), [files])
    return root


# --------------------------------------------------------------------------- (1) poisoned caches


def _pickle_calling(module: str, name: str, arg: str) -> bytes:
    """A protocol-4 pickle that calls ``module.name(arg)`` (dotted names reach through modules)."""

    def short(text: str) -> bytes:
        raw = text.encode()
        return b"\x8c" + bytes([len(raw)]) + raw

    return b"\x80\x04" + short(module) + short(name) + b"\x93" + short(arg) + b"\x85R."


def test_a_poisoned_knowledge_entry_runs_nothing(busy_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    marker = tmp_path / "ran"
    with open_target(str(busy_repo), "HEAD") as target:
        built = load_knowledge(target, cache)
        (entry,) = knowledge_cache(cache).folder.rglob("*.bin")
        # What a restricted unpickler admitting the knowledge module would have run: its module
        # imports fnmatch, whose os.system is one attribute walk away.
        store = knowledge_cache(cache)
        store.put(
            entry.stem, _pickle_calling("extractor.prose.knowledge", "fnmatch.os.system", f"touch {marker}")
        )
        rebuilt = load_knowledge(target, cache)
    assert not marker.exists()
    assert rebuilt.fingerprint() == built.fingerprint()
    # Rebuilt and stored again as plain JSON data.
    assert knowledge_from_plain(store.get(entry.stem) or b"").fingerprint() == built.fingerprint()


def test_knowledge_is_kept_as_plain_data_of_every_field(busy_repo: Path) -> None:
    with open_target(str(busy_repo), "HEAD") as target:
        built = load_knowledge(target)
    raw = knowledge_to_plain(built)
    assert isinstance(orjson.loads(raw), dict)
    back = knowledge_from_plain(raw)
    assert built.flags_for(ARGS)["tp_size"].flag == "--tp-size"
    # The package metadata is read from the commit too, and kept.
    assert built.distribution_for("kernelpack") == "kernelpack_python==2.0"
    for f in dataclasses.fields(built):
        assert getattr(back, f.name) == getattr(built, f.name), f.name


@pytest.mark.parametrize(
    "forged",
    [
        b"not json",
        b"[]",
        b'{"flags": {}}',
        orjson.dumps({"__class__": "os.system"}),
    ],
    ids=["not-json", "a-list", "missing-fields", "a-class-name"],
)
def test_a_forged_knowledge_entry_is_refused(forged: bytes) -> None:
    with pytest.raises(ValueError):
        knowledge_from_plain(forged)


def test_a_wrongly_typed_field_is_refused(busy_repo: Path) -> None:
    with open_target(str(busy_repo), "HEAD") as target:
        plain = orjson.loads(knowledge_to_plain(load_knowledge(target)))
    ns = next(iter(plain["scoped"]))
    plain["scoped"][ns]["tp_size"]["is_bool"] = "yes"
    with pytest.raises(ValueError):
        knowledge_from_plain(orjson.dumps(plain))


# --------------------------------------------------------------------------- (2) killed runs


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("State:")), "X")
    return state not in ("Z", "X")  # a zombie has exited; only its parent has not reaped it


def _wait_until(predicate: Callable[[], bool], limit: float = 60.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _default_signals() -> None:
    # A runner that starts the suite in the background (``cmd &``, ``nohup``) leaves SIGINT and
    # SIGHUP ignored, which exec keeps; the runs under test get the dispositions a user's have.
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _start(args: list[str], tmp: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp), NO_COLOR="1")
    return subprocess.Popen(
        [sys.executable, "-m", "extractor", *args],
        preexec_fn=_default_signals,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _kill_once_workers_run(proc: subprocess.Popen[bytes], sig: signal.Signals, cache: Path) -> set[int]:
    """Wait until the run's workers have stored results, then send ``sig`` to the run alone;
    return the processes it had forked."""
    workers: set[int] = set()

    def forked() -> bool:
        workers.update(_descendants(proc.pid))
        busy = len(workers) >= 2 and any((cache / "results").rglob("*.bin"))
        return busy or proc.poll() is not None

    assert _wait_until(forked), "no workers started"
    assert proc.poll() is None, "the run ended before it could be killed: make the workload bigger"
    os.kill(proc.pid, sig)
    proc.wait(timeout=60)
    return workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_workers_die_with_a_killed_run(busy_repo: Path, tmp_path: Path, sig: signal.Signals) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _start(
        ["extract", "--source", str(busy_repo), "--sha", "HEAD", "--out", str(tmp_path / "x.jsonl"),
         "--cache-dir", str(tmp_path / "cache"), "--jobs", "2"],
        tmp,
    )  # fmt: skip
    workers = _kill_once_workers_run(proc, sig, tmp_path / "cache")
    assert _wait_until(lambda: not any(_alive(p) for p in workers)), [p for p in workers if _alive(p)]
    # Nobody holds the run's stdout any more: reading it reaches the end.
    assert proc.stdout is not None
    proc.stdout.read()
    assert not list(tmp.iterdir())  # no temporary folder or file outlives the run
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_nightly_leaves_its_lock_free(busy_repo: Path, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "site"
    args = ["nightly", "--source", str(busy_repo), "--ref", "main", "--out-dir", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--jobs", "2"]  # fmt: skip
    workers = _kill_once_workers_run(_start(args, tmp), signal.SIGKILL, tmp_path / "cache")
    assert workers
    again = _start(args, tmp)
    output, _ = again.communicate(timeout=600)
    assert again.returncode == 0, output.decode(errors="replace")


def test_workers_do_not_hold_the_lock_descriptor(tmp_path: Path) -> None:
    """A descriptor kept from workers is closed in any process forked while it is registered."""
    from extractor.engine.lifeline import keep_from_workers, release_from_workers

    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    keep_from_workers(fd)
    try:
        pid = os.fork()
        if pid == 0:  # the child reports whether the descriptor is still open
            try:
                os.fstat(fd)
                os._exit(1)
            except OSError:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        release_from_workers(fd)
        os.close(fd)
