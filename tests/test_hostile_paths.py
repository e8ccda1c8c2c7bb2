"""Hostile paths and readers (issue 18, items 4-6 and 8): planted symlinks and FIFOs, odd tree
entries, bad output paths, hostile datasets, and user text that would drive the terminal.

Real files, real FIFOs, real git trees built with ``git mktree``, and the real CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import git
import orjson
import pytest

from extractor.config import Scope
from extractor.engine.cache import ResultCache
from extractor.errors import ExtractorError
from extractor.reasons import Reason
from extractor.records.jsonl import read_dataset
from extractor.source.git import open_target
from tests.diff_factory import make_record
from tests.gitrepos import Gitlink, make_repo

ROOT = Path(__file__).resolve().parents[1]
GOOD = b"def f(x):\n    if x < 0:\n        raise ValueError('negative')\n"


def cli(*args: str, timeout: float = 120, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "extractor", *args],
        cwd=ROOT, env=env, capture_output=True, timeout=timeout, input=stdin,
    )  # fmt: skip


def _expect_error(proc: subprocess.CompletedProcess[bytes], where: str, what: str) -> None:
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    assert f"{where}: " in err and what in err, err


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root, _ = make_repo(tmp_path_factory.mktemp("paths"), [{"python/sglang/ok.py": GOOD}])
    return root


def _reader(fifo: Path, got: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


# --------------------------------------------------------------------------- (4) paths


def test_nightly_never_truncates_through_a_symlinked_lock(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (out / ".lock").symlink_to(precious)
    proc = cli("nightly", "--source", str(repo), "--ref", "main", "--out-dir", str(out),
               "--cache-dir", str(tmp_path / "cache"), "--jobs", "1")  # fmt: skip
    _expect_error(proc, str(out / ".lock"), "symlink")
    assert precious.read_text() == "keep me\n"


def test_nightly_refuses_a_fifo_as_its_lock(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    os.mkfifo(out / ".lock")
    proc = cli("nightly", "--source", str(repo), "--ref", "main", "--out-dir", str(out),
               "--cache-dir", str(tmp_path / "cache"), "--jobs", "1")  # fmt: skip
    _expect_error(proc, str(out / ".lock"), "not a regular file")


def test_schema_writes_through_a_fifo_instead_of_replacing_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    thread = _reader(fifo, got)
    proc = cli("schema", "-o", str(fifo))
    thread.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert fifo.is_fifo()
    assert orjson.loads(got[0])["title"]


def test_output_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert cli("schema", "-o", str(link)).returncode == 0
    assert link.is_symlink() and orjson.loads(target.read_bytes())["title"]


def test_dash_means_stdout(tmp_path: Path, repo: Path) -> None:
    proc = cli("schema", "-o", "-")
    assert proc.returncode == 0 and orjson.loads(proc.stdout)["title"]
    proc = cli("extract", "--source", str(repo), "--sha", "HEAD", "--out", "-",
               "--cache-dir", str(tmp_path / "cache"), "--jobs", "1")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert orjson.loads(line)["record"]["errorMessage"] == "negative"
    assert not Path(ROOT / "-").exists()


@pytest.mark.parametrize("kind", ["directory", "parent-is-a-file"])
def test_a_bad_out_is_named_before_any_work(repo: Path, tmp_path: Path, kind: str) -> None:
    if kind == "directory":
        out, what = tmp_path / "adir", "is a directory"
        out.mkdir()
    else:
        (tmp_path / "file.txt").write_text("x")
        out, what = tmp_path / "file.txt" / "x.jsonl", "not a folder"
    cache = tmp_path / "cache"
    proc = cli("extract", "--source", str(repo), "--sha", "HEAD", "--out", str(out),
               "--cache-dir", str(cache), "--jobs", "1")  # fmt: skip
    _expect_error(proc, str(out), what)
    assert not (cache / "results").exists()  # refused before the run opened its cache


def _odd_tree_repo(tmp_path: Path) -> tuple[Path, str]:
    root, _ = make_repo(tmp_path, [{"python/sglang/ok.py": GOOD}])
    g = git.Repo(root).git
    blob = (
        g.hash_object("-w", "--stdin", istream=None, input="raise ValueError('outside')\n") if False else None
    )
    blob = subprocess.run(["git", "-C", str(root), "hash-object", "-w", "--stdin"], input=b"raise ValueError('x')\n",
                          capture_output=True, check=True).stdout.decode().strip()  # fmt: skip

    def mktree(lines: str) -> str:
        return subprocess.run(["git", "-C", str(root), "mktree"], input=lines.encode(), capture_output=True,
                              check=True).stdout.decode().strip()  # fmt: skip

    leaf = mktree(f"100644 blob {blob}\tevil.py\n")
    ok = g.rev_parse("HEAD:python/sglang/ok.py")
    sglang = mktree(f"040000 tree {leaf}\t..\n040000 tree {leaf}\t.git\n100644 blob {ok}\tok.py\n")
    python = mktree(f"040000 tree {sglang}\tsglang\n")
    top = mktree(f"040000 tree {python}\tpython\n")
    commit = subprocess.run(["git", "-C", str(root), "commit-tree", top, "-m", "odd"], capture_output=True,
                            check=True, env=dict(os.environ, GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b",
                            GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b")).stdout.decode().strip()  # fmt: skip
    return root, commit


def test_tree_entries_that_climb_out_are_reported_and_skipped(tmp_path: Path) -> None:
    root, commit = _odd_tree_repo(tmp_path)
    with open_target(str(root), commit) as target:
        assert [f.path for f in target.files(Scope())] == ["python/sglang/ok.py"]
        skipped = {path: reason for path, reason, _ in target.skipped(Scope())}
    assert skipped == {
        "python/sglang/../evil.py": Reason.UNSAFE_PATH,
        "python/sglang/.git/evil.py": Reason.UNSAFE_PATH,
    }


# --------------------------------------------------------------------------- (5) readers


def _line(**record_changes: object) -> bytes:
    record = make_record().model_dump(mode="json")
    record.update(record_changes)
    return orjson.dumps({"record": record, "datasetVersion": "2026-01-01T00:00:00.000Z"}) + b"\n"


def test_validate_rejects_duplicate_keys(tmp_path: Path) -> None:
    good = _line()
    dup = good.replace(b'"datasetVersion":', b'"datasetVersion":"x","datasetVersion":', 1)
    path = tmp_path / "d.jsonl"
    path.write_bytes(good + dup)
    proc = cli("validate", str(path))
    assert proc.returncode == 1, proc.stderr
    assert f"{path}:2: duplicate key 'datasetVersion'".encode() in proc.stderr


def test_a_deeply_nested_pattern_is_a_named_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(_line(messagePattern="(" * 1000 + "x" + ")" * 1000))
    proc = cli("validate", str(path))
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr and f"{path}:1: ".encode() in proc.stderr


@pytest.mark.parametrize("command", ["diff", "match"])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_readers_refuse_files_that_are_not_regular(tmp_path: Path, command: str, kind: str) -> None:
    if kind == "fifo":
        odd = tmp_path / "pipe.jsonl"
        os.mkfifo(odd)
    else:
        odd = Path("/dev/zero")
    good = tmp_path / "good.jsonl"
    good.write_bytes(_line())
    args = (
        ["diff", str(odd), str(good)]
        if command == "diff"
        else ["match", "ValueError: x", "--dataset", str(odd)]
    )
    _expect_error(cli(*args, timeout=60), str(odd), "not a regular file")


def test_a_fifo_where_a_cache_entry_should_be_is_a_miss(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, "0" * 16)
    blob = "a" * 40
    path = cache.path_for(blob)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert cache.get(blob) is None  # returns at once: nothing blocks on the FIFO
    cache.put(blob, b"payload")
    assert cache.get(blob) == b"payload"


# --------------------------------------------------------------------------- (6) terminal


def test_markup_in_user_text_is_printed_literally(tmp_path: Path) -> None:
    odd = tmp_path / "[/]" / "[bold]x.jsonl"
    proc = cli("validate", str(odd))
    _expect_error(proc, str(odd), "no such dataset file")


def test_control_characters_in_file_names_are_escaped(tmp_path: Path) -> None:
    forged = "python/sglang/a\n  python/sglang/fake.py: skipped: symlink\x1b[2J.py"
    root, _ = make_repo(tmp_path, [{forged: b"def broken(:\n", "python/sglang/ok.py": GOOD}])
    proc = cli("extract", "--source", str(root), "--sha", "HEAD", "--out", str(tmp_path / "x.jsonl"),
               "--cache-dir", str(tmp_path / "cache"), "--jobs", "1")  # fmt: skip
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "\x1b" not in err
    assert not any(line.startswith("  python/sglang/fake.py") for line in err.splitlines())
    assert "a\\n  python/sglang/fake.py: skipped: symlink\\x1b[2J.py: syntax error" in err


# --------------------------------------------------------------------------- (8) smaller


def test_a_gitlink_named_exactly_by_include_is_reported(tmp_path: Path) -> None:
    root, _ = make_repo(tmp_path, [{"vendor/lib": Gitlink("1" * 40), "python/sglang/ok.py": GOOD}])
    with open_target(str(root), "HEAD") as target:
        assert target.skipped(Scope(include=("vendor/lib",))) == [
            ("vendor/lib", Reason.SUBMODULE, "submodule")
        ]


def test_an_unreadable_repository_gives_gits_reason(tmp_path: Path) -> None:
    root, (sha,) = make_repo(tmp_path, [{"python/sglang/ok.py": GOOD}])
    (root / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    with pytest.raises(ExtractorError) as caught:
        open_target(str(root), "HEAD")
    assert "cannot read" in caught.value.what and "no such commit" not in caught.value.what
    with pytest.raises(ExtractorError) as unknown:
        open_target(str(root), "no-such-branch")
    assert "no such commit" in unknown.value.what


def test_read_dataset_duplicate_keys_only_when_asked(tmp_path: Path) -> None:
    good = _line()
    path = tmp_path / "d.jsonl"
    path.write_bytes(good.replace(b'"datasetVersion":', b'"datasetVersion":"x","datasetVersion":', 1))
    assert not read_dataset(path).problems
    assert read_dataset(path, reject_duplicate_keys=True).problems


def _records(source: str) -> list[dict[str, object]]:
    from extractor.engine.payloads import analyse_file
    from extractor.prose.knowledge import Knowledge
    from extractor.types import Parsed

    outcome = analyse_file("python/sglang/odd.py", source.encode(), "o/r", Knowledge.empty())
    assert isinstance(outcome, Parsed), outcome
    return outcome.records


def test_a_fullwidth_class_name_is_the_builtin() -> None:
    (record,) = _records("def f(x):\n    if x:\n        raise \uff36alueError('fullwidth')\n")
    assert record["errorClass"] == "ValueError"
    assert (
        record["errorType"]
        == _records("def f(x):\n    if x:\n        raise ValueError('plain')\n")[0]["errorType"]
    )


def test_exception_group_messages_carry_their_count() -> None:
    import re

    source = (
        "def f(items):\n    try:\n        run(items)\n    except* ValueError:\n"
        "        raise ExceptionGroup('except star group', [RuntimeError('x')])\n"
        "    except* KeyError:\n        raise ExceptionGroup(f'bad {len(items)}', list(items))\n"
    )
    literal, dynamic = _records(source)
    assert literal["errorMessage"] == "except star group (1 sub-exception)"
    assert re.fullmatch(
        str(literal["messagePattern"]), str(ExceptionGroup("except star group", [RuntimeError("x")]))
    )
    for n in (1, 3):
        runtime = str(ExceptionGroup(f"bad {n}", [KeyError(i) for i in range(n)]))
        assert re.fullmatch(str(dynamic["messagePattern"]), runtime), runtime


def test_validation_code_of_a_match_case_binds_what_the_case_captures() -> None:
    source = (
        "MODES = ('a', 'b')\n\n\ndef f(cfg):\n    match cfg:\n"
        "        case {'mode': mode} if mode not in MODES:\n            raise ValueError(f'bad mode {mode}')\n"
    )
    (record,) = _records(source)
    code = str(record["validationCode"])
    assert code.splitlines()[0] == "mode = cfg['mode']"
    scope: dict[str, object] = {"MODES": ("a", "b"), "cfg": {"mode": "z"}}
    exec(compile(code.splitlines()[0], "<binding>", "exec"), scope)  # our own generated line, on our own data
    assert eval(code.splitlines()[-1], scope) is True


# --------------------------------------------------------------------------- (7) interpreter


NEWER = """\
type Alias = int


def first[T](xs: list[T]) -> T:
    raise IndexError('empty')


def lookup(d):
    if not d:
        raise KeyError(f"missing {d["key"]}")


class Box[T]:
    def get(self) -> T:
        raise NotImplementedError("abstract")
"""


def test_newer_syntax_gives_the_same_sites_on_any_interpreter() -> None:
    records = _records(NEWER)
    assert [(r["lineNumber"], r["errorClass"]) for r in records] == [
        (5, "IndexError"),
        (10, "KeyError"),
        (15, "NotImplementedError"),
    ]
    by_line = {r["lineNumber"]: r for r in records}
    assert by_line[10]["errorMessage"] == 'missing {d["key"]}'
    assert 'd["key"]' in str(by_line[10]["sourceCode"])  # the window is the file's own text
    assert str(by_line[5]["sourceCode"]).startswith("def first[T]")


def test_a_real_syntax_error_stays_one() -> None:
    from extractor.analysis.parse import ParseFailure, parse_source

    failure = parse_source("bad.py", b"def first[T](:\n    raise IndexError('x')\n")
    assert isinstance(failure, ParseFailure) and failure.code is Reason.SYNTAX_ERROR
