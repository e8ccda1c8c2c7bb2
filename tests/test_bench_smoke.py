"""The benchmark script runs end to end on a small repository (it measures; nothing here is timed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.gitrepos import make_repo

ROOT = Path(__file__).resolve().parents[1]


def test_bench_prints_the_table(tmp_path: Path) -> None:
    module = b"def f(x):\n    if x < 0:\n        raise ValueError(f'x must be positive, got {x}')\n"
    repo, shas = make_repo(
        tmp_path,
        [
            {"python/sglang/srt/a.py": module, "python/sglang/srt/b.py": b"assert True, 'never'\n"},
            {"python/sglang/srt/c.py": module.replace(b"positive", b"non-negative")},
        ],
    )
    out = tmp_path / "table.md"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "bench/bench.py", "--source", str(repo), "--sha", shas[-1], "--back", "1",
         "--jobs", "2", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = out.read_text()
    assert table in proc.stdout
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}
    assert "3 files" in rows["reference: `ast.parse`, 1 process (median of 3)"]
    assert "3 files parsed, 0 files from cache" in rows["cold extract (empty cache)"]
    assert "0 files parsed, 3 files from cache" in rows["warm extract (same sha)"]
    assert "output identical to cold" in rows["warm extract (same sha)"]
    # One commit back, c.py does not exist and a.py, b.py are unchanged: nothing to analyse.
    assert "0 files parsed, 2 files from cache" in rows["incremental extract (`sha~1`)"]
    assert f"Machine: {os.cpu_count()} cores" in table
