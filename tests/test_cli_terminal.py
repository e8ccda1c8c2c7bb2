"""The CLI in a real terminal (a pty): progress bars for extract and nightly, Ctrl-C, and how
the bar's ETA weighs files.

These run ``python -m extractor`` as a true subprocess on a pseudo-terminal, so stderr is a
terminal exactly as a user's is, and Ctrl-C is a real SIGINT sent to the whole process group.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from extractor.engine.pipeline import _progress, file_key
from extractor.source.git import TargetFile
from tests.gitrepos import make_repo

ROOT = Path(__file__).resolve().parents[1]


def _module(i: int) -> bytes:
    # Enough distinct guarded raises per file that analysing a few hundred takes seconds.
    body = [f"def check_{i}_{j}(value, limit):\n    if value > limit + {j}:\n"
            f"        raise ValueError(f'value {{value}} over the limit {j} of module {i}')\n" for j in range(12)]  # fmt: skip
    return "\n\n".join(body).encode()


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("big")
    files = {f"python/sglang/srt/pkg{i % 10}/mod_{i}.py": _module(i) for i in range(400)}
    repo, _ = make_repo(tmp, [files], name="sglang")
    return repo


def in_terminal(
    args: list[str], *, interrupt_on: bytes | None = None, timeout: float = 120
) -> tuple[int, str, bool]:
    """Run the CLI on a pty; with ``interrupt_on``, Ctrl-C the process group once that text shows."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1767225600", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes the session leader of the new terminal
        # A runner that starts the suite in the background (``cmd &``, ``nohup``) leaves SIGINT and
        # SIGHUP ignored, and exec keeps that: a user's terminal delivers both.
        for sig in (signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        os.execve(sys.executable, [sys.executable, "-m", "extractor", *args], env)
    out = b""
    sent = False
    status: int | None = None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if interrupt_on is not None and not sent and interrupt_on in out:
                os.killpg(pid, signal.SIGINT)
                sent = True
        # Closing the terminal hangs up its session: wait for the child first (still draining what
        # it prints), so a slow exit on a loaded machine is not read as a SIGHUP death.
        while status is None and time.monotonic() < deadline + 30:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = raw
                break
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                with contextlib.suppress(OSError):
                    out += os.read(fd, 65536)
    finally:
        if status is None:  # still running: a hang, to be reported as one (not as the SIGHUP of the close)
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    screen = out.decode("utf-8", "replace")
    if status is None:
        pytest.fail(f"still running {timeout + 30:.0f}s in ({sent=}), a hang: {screen[-400:]!r}")
    return os.waitstatus_to_exitcode(status), screen, sent


def test_extract_shows_progress_and_ctrl_c_leaves_its_message_after_the_bar(
    big_repo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "x.jsonl"
    args = [
        "extract",
        "--source",
        str(big_repo),
        "--sha",
        "HEAD",
        "-o",
        str(out),
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    code, screen, sent = in_terminal([*args, "-j", "2"], interrupt_on=b"files")
    assert sent, screen
    assert code == 130, screen
    assert "analysing" in screen
    # The bar is erased when it stops; the message comes after the last erase, so it stays.
    after_bar = screen.rsplit("\x1b[2K", 1)[-1]
    assert "interrupted" in after_bar, repr(screen[-400:])
    assert "Traceback" not in screen and "KeyboardInterrupt" not in screen
    assert not out.exists()


def test_nightly_shows_progress_in_a_terminal(big_repo: Path, tmp_path: Path) -> None:
    args = ["nightly", "--source", str(big_repo), "--ref", "HEAD", "--out-dir", str(tmp_path / "out")]
    code, screen, _ = in_terminal([*args, "--cache-dir", str(tmp_path / "c"), "-j", "2"])
    assert code == 0, screen
    assert "analysing" in screen and "400 files" in screen
    quiet_code, quiet, _ = in_terminal([*args, "--cache-dir", str(tmp_path / "c2"), "-j", "2", "-q"])
    assert quiet_code == 0 and "analysing" not in quiet and quiet.strip() == ""


def test_progress_advances_by_bytes_not_files() -> None:
    files = [TargetFile(f"f{i}.py", f"{i:040x}", 0o100644, size) for i, size in enumerate([9000, 500, 500])]
    bar = _progress(True, files)
    tick = bar.__enter__()
    try:
        tick(file_key(files[0]))
        task = bar._bar.tasks[0]
        # One of three files done, but nine tenths of the bytes: the ETA sees the big one gone.
        assert task.fields["done"] == 1 and task.fields["files"] == 3
        assert task.completed / task.total == pytest.approx(0.9)
    finally:
        bar.__exit__(None, None, None)
