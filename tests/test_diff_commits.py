"""``sglang-errors diff --from A --to B``: extract both commits of a real git repository, then diff.

The fixture repository has two commits that cover every kind of edit the issue names: a site
added, one removed, a message reworded, a method moved within its file, a function moved to
another file, a file renamed (one of its messages reworded too, so only git's rename report can
pair it), a file whose sites only shift down, and a file nobody touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import orjson
import pytest

from extractor.records.model import ErrorRecord
from tests.gitrepos import make_repo

ROOT = Path(__file__).resolve().parent.parent
PKG = "python/sglang/srt"

SCHEDULER_V1 = """
class Scheduler:
    def check_tp(self, tp_size):
        if tp_size <= 0:
            raise ValueError("tp_size must be a positive integer")

    def check_dp(self, dp_size, tp_size):
        # Data parallelism splits the tensor-parallel group.
        if tp_size % dp_size:
            raise ValueError(f"dp_size {dp_size} must divide tp_size {tp_size}")

    def evict(self, node):
        if node.lock_ref > 0:
            raise RuntimeError("cannot evict a locked radix tree node")


def fused_topk(router_logits, k):
    if k > router_logits.shape[-1]:
        raise NotImplementedError(f"top-{k} routing over {router_logits.shape[-1]} experts is unsupported")
    return router_logits.topk(k)
"""

SCHEDULER_V2 = """
class Scheduler:
    def check_lora(self, name, adapters):
        if name not in adapters:
            raise KeyError(f"LoRA adapter {name!r} was never loaded")

    def check_tp(self, tp_size):
        if tp_size <= 0:
            raise ValueError(f"tp_size must be a positive integer, got {tp_size}")

    def warmup(self):
        return None

    def check_dp(self, dp_size, tp_size):
        # Data parallelism splits the tensor-parallel group.
        if tp_size % dp_size:
            raise ValueError(f"dp_size {dp_size} must divide tp_size {tp_size}")
"""

TOPK = """
def fused_topk(router_logits, k):
    if k > router_logits.shape[-1]:
        raise NotImplementedError(f"top-{k} routing over {router_logits.shape[-1]} experts is unsupported")
    return router_logits.topk(k)
"""

POOL_V1 = """
class TokenToKVPool:
    def alloc(self, need):
        if need > self.free_slots:
            raise RuntimeError(f"out of KV cache slots: need {need}, have {self.free_slots}")
        return self.take(need)

    def free(self, index):
        if index in self.freed:
            raise ValueError(f"double free of KV slot {index}")
        self.freed.add(index)

    def clear(self):
        self.freed = set()
        self.free_slots = self.size
        self.pages = []
        self.owner = None
"""

POOL_V2 = POOL_V1.replace("double free of KV slot {index}", "KV slot {index} was already freed")

UTILS = """
def get_bool_env(name):
    value = os.environ.get(name, "false").lower()
    if value not in ("true", "false", "1", "0"):
        raise ValueError(f"{name} must be a boolean, got {value!r}")
    return value in ("true", "1")
"""

SHIFTED = """
def check_dtype(dtype):
    if dtype not in ("float16", "bfloat16"):
        raise TypeError(f"unsupported dtype {dtype}")
"""


def src(text: str) -> bytes:
    return dedent(text).lstrip("\n").encode()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    base = tmp_path_factory.mktemp("diffrepo")
    return make_repo(
        base,
        [
            {
                f"{PKG}/managers/scheduler.py": src(SCHEDULER_V1),
                f"{PKG}/mem_cache/pool.py": src(POOL_V1),
                f"{PKG}/utils.py": src(UTILS),
                f"{PKG}/layers/dtype.py": src(SHIFTED),
            },
            {
                f"{PKG}/managers/scheduler.py": src(SCHEDULER_V2),
                f"{PKG}/layers/moe/topk.py": src(TOPK),
                f"{PKG}/mem_cache/pool.py": None,
                f"{PKG}/mem_cache/allocator.py": src(POOL_V2),
                f"{PKG}/layers/dtype.py": b"# Dtype checks shared by the layers.\n\nimport torch\n\n"
                + src(SHIFTED),
            },
        ],
        tags={"v1": 0, "v2": 1},
    )


def run_diff(repo_path: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1700000000", "COLUMNS": "200"}
    env.pop("SGLANG_ERRORS_SOURCE", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "extractor",
            "diff",
            "--source",
            str(repo_path),
            "--cache-dir",
            str(tmp_path / "cache"),
            "-j",
            "1",
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_diff_between_two_commits(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, shas = repo
    run = run_diff(path, tmp_path, "--from", "v1", "--to", "v2", "--format", "json")
    assert run.returncode == 1, run.stderr
    doc = orjson.loads(run.stdout)
    assert (doc["from"], doc["to"]) == tuple(shas)

    added = [(r["filePath"], r["errorClass"]) for r in doc["added"]]
    removed = [(r["filePath"], r["errorMessage"]) for r in doc["removed"]]
    assert added == [(f"{PKG}/managers/scheduler.py", "KeyError")]
    assert removed == [(f"{PKG}/managers/scheduler.py", "cannot evict a locked radix tree node")]

    changed = {
        (c["old"]["filePath"], c["new"]["filePath"], c["new"]["errorMessage"]): c["fields"]
        for c in doc["changed"]
    }
    reworded = changed.pop(
        (
            f"{PKG}/managers/scheduler.py",
            f"{PKG}/managers/scheduler.py",
            "tp_size must be a positive integer, got {tp_size}",
        )
    )
    assert {"errorMessage", "messagePattern"} <= set(reworded) and "filePath" not in reworded
    moved = changed.pop(
        (
            f"{PKG}/managers/scheduler.py",
            f"{PKG}/layers/moe/topk.py",
            "top-{k} routing over {router_logits.shape[-1]} experts is unsupported",
        )
    )
    assert "filePath" in moved and "errorMessage" not in moved
    renamed_same = changed.pop(
        (
            f"{PKG}/mem_cache/pool.py",
            f"{PKG}/mem_cache/allocator.py",
            "out of KV cache slots: need {need}, have {self.free_slots}",
        )
    )
    assert "filePath" in renamed_same and "errorMessage" not in renamed_same
    renamed_reworded = changed.pop(
        (f"{PKG}/mem_cache/pool.py", f"{PKG}/mem_cache/allocator.py", "KV slot {index} was already freed")
    )
    assert {"filePath", "errorMessage"} <= set(renamed_reworded)
    assert changed == {}

    # check_dp moved within its file, dtype.py only shifted, utils.py untouched: all unchanged.
    assert doc["summary"] == {"added": 1, "removed": 1, "changed": 4, "unchanged": 3}
    reported = {r["filePath"] for r in doc["added"] + doc["removed"]} | {
        c[side]["filePath"] for c in doc["changed"] for side in ("old", "new")
    }
    assert not reported & {f"{PKG}/utils.py", f"{PKG}/layers/dtype.py"}
    for record in doc["added"] + doc["removed"]:
        ErrorRecord.model_validate(record)


def test_same_commit_is_no_difference(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, _ = repo
    run = run_diff(path, tmp_path, "--from", "v2", "--to", "main")
    assert run.returncode == 0, run.stderr
    assert "0 added, 0 removed, 0 changed, 8 unchanged" in run.stdout


def test_unknown_commit_is_trouble(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, _ = repo
    run = run_diff(path, tmp_path, "--from", "v1", "--to", "no-such-tag")
    assert run.returncode == 2
    assert "no-such-tag" in run.stderr and "Traceback" not in run.stderr
