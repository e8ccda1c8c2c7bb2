"""Exception classes and helpers defined in another module of the target, read through the imports.

Real git repositories, the real extract; a warm run must recompute exactly the files whose raised
class changed in another file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from extractor.analysis.imports import imports_of, module_paths
from extractor.api import ExtractOptions, ExtractResult, extract
from extractor.records.jsonl import dumps_line
from tests.gitrepos import make_repo

ERRORS = "python/sglang/srt/errors.py"
HELPERS = "python/sglang/srt/utils/failures.py"
USER = "python/sglang/srt/managers/loader.py"
RELATIVE = "python/sglang/srt/managers/relative.py"
PLAIN = "python/sglang/srt/managers/plain.py"


def errors_src(prefix: str) -> bytes:
    return f'''
class TransferFailed(Exception):
    def __init__(self, room, reason):
        super().__init__(reason)
        self.room = room
        self.reason = reason

    def __str__(self):
        return f"{prefix}(room={{self.room}}): {{self.reason}}"


class QuotaExceeded(RuntimeError):
    def __init__(self, used, limit):
        super().__init__(f"quota exceeded: {{used}} of {{limit}}")
'''.encode()


HELPERS_SRC = b"""
from sglang.srt.errors import QuotaExceeded


def bad_config(field, value):
    return ValueError(f"invalid {field}: {value!r}")


def over_quota(used):
    return QuotaExceeded(used, 100)
"""

USER_SRC = b"""
from sglang.srt import errors
from sglang.srt.errors import TransferFailed
from sglang.srt.utils.failures import bad_config, over_quota


def send(room, ok):
    if not ok:
        raise TransferFailed(room, "peer closed the connection")


def configure(port):
    if port < 0:
        raise bad_config("port", port)


def charge(used):
    if used > 100:
        raise over_quota(used)
    raise errors.QuotaExceeded(used, 10)
"""

RELATIVE_SRC = b"""
from ..errors import QuotaExceeded


def reserve(n):
    if n > 8:
        raise QuotaExceeded(n, 8)
"""

PLAIN_SRC = b"""
def nothing_imported(x):
    if x:
        raise ValueError("plain")
"""


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    first = {
        ERRORS: errors_src("TransferFailed"),
        HELPERS: HELPERS_SRC,
        USER: USER_SRC,
        RELATIVE: RELATIVE_SRC,
        PLAIN: PLAIN_SRC,
        "python/sglang/srt/__init__.py": b"",
    }
    return make_repo(tmp_path_factory.mktemp("repo"), [first, {ERRORS: errors_src("KV transfer failed")}])


def run(repo: Path, sha: str, cache: Path | None, jobs: int = 1) -> ExtractResult:
    if cache is None:
        return extract(ExtractOptions.build(source=str(repo), sha=sha, jobs=jobs, use_cache=False))
    return extract(ExtractOptions.build(source=str(repo), sha=sha, jobs=jobs, cache_dir=cache))


def by_line(result: ExtractResult, path: str) -> dict[int, tuple[str, str, str]]:
    return {
        r.lineNumber: (r.errorClass, r.errorMessage, r.messagePattern)
        for r in result.records
        if r.filePath == path
    }


def test_imported_class_formats_its_message_as_its_module_says(history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    records = by_line(run(repo, shas[0], None), USER)
    cls, template, pattern = records[9]
    assert cls == "TransferFailed"
    assert template == "TransferFailed(room={room}): peer closed the connection"
    assert re.fullmatch(pattern, "TransferFailed(room=7): peer closed the connection")
    assert not re.fullmatch(pattern, "peer closed the connection")


def test_imported_helper_gives_the_class_and_message_it_builds(history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    records = by_line(run(repo, shas[0], None), USER)
    cls, template, pattern = records[14]
    assert (cls, template) == ("ValueError", "invalid port: {port!r}")
    assert re.fullmatch(pattern, "invalid port: -1")
    # A helper whose class itself comes from a third module, and a class reached as ``module.Class``.
    cls, template, pattern = records[19]
    assert cls == "QuotaExceeded" and template == "quota exceeded: {used} of 100"
    cls, template, _ = records[20]
    assert (cls, template) == ("errors.QuotaExceeded", "quota exceeded: {used} of 10")
    relative = by_line(run(repo, shas[0], None), RELATIVE)
    assert relative[7][:2] == ("QuotaExceeded", "quota exceeded: {n} of 8")


def test_an_edit_of_the_defining_module_recomputes_the_files_that_raise_its_class(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = history
    cache = tmp_path / "cache"
    run(repo, shas[0], cache)
    warm = run(repo, shas[1], cache)
    # errors.py itself (a new blob), and loader.py and relative.py, which read it; failures.py
    # raises nothing (it only builds errors) and plain.py imports nothing: both are reused.
    assert warm.stats.files_parsed == 3
    fresh = run(repo, shas[1], None)
    assert by_line(warm, USER)[9][1] == "KV transfer failed(room={room}): peer closed the connection"
    dump = b"".join(dumps_line(r, "2026-01-01T00:00:00.000Z") for r in warm.records)
    assert dump == b"".join(dumps_line(r, "2026-01-01T00:00:00.000Z") for r in fresh.records)


def test_jobs_and_cache_do_not_change_the_output(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, shas = history
    one = run(repo, shas[0], tmp_path / "a", jobs=1)
    two = run(repo, shas[0], tmp_path / "b", jobs=2)
    again = run(repo, shas[0], tmp_path / "b", jobs=2)
    assert again.stats.files_parsed == 0
    dumps = [
        b"".join(dumps_line(r, "2026-01-01T00:00:00.000Z") for r in x.records) for x in (one, two, again)
    ]
    assert dumps[0] == dumps[1] == dumps[2]


def test_module_paths_look_only_where_the_import_can_be() -> None:
    assert module_paths("python/sglang/srt/a/b.py", "sglang.srt.errors", 0) == [
        "python/sglang/srt/errors.py",
        "python/sglang/srt/errors/__init__.py",
    ]
    assert module_paths("python/sglang/srt/a/b.py", "errors", 2) == [
        "python/sglang/srt/errors.py",
        "python/sglang/srt/errors/__init__.py",
    ]
    assert module_paths("python/sglang/srt/a/b.py", "", 1) == ["python/sglang/srt/a/__init__.py"]
    assert module_paths("python/sglang/srt/a/b.py", "torch.nn", 0) == []  # not a package of the target
    assert module_paths("x.py", "m", 3) == []


def test_imports_of_reads_every_module_level_binding() -> None:
    import ast

    tree = ast.parse(
        "import a.b\nimport c.d as e\ntry:\n    from .f import G as H\nexcept ImportError:\n    pass\n"
    )
    found = imports_of(tree)
    assert (found["a"].module, found["a"].name) == ("a", None)
    assert (found["e"].module, found["e"].name) == ("c.d", None)
    assert (found["H"].module, found["H"].name, found["H"].level) == ("f", "G", 1)
