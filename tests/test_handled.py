"""Golden test of raises that are caught: ``tests/fixtures/handled/*.py`` is a small package (an
optional loader that falls back, a scheduler loop that logs and goes on, a frontend that turns one
error into another, and raises that are *not* swallowed: a re-raise, a clause of another class, a
``BaseException`` an ``except Exception`` lets through, a call of unknown receiver outside any
``try``). It is committed to a real git repository
and extracted; ``handled.jsonl`` holds the fields the handling decides. Regenerate after a
deliberate change with ``SGLANG_ERRORS_REGEN=1`` and review ``git diff tests/fixtures/handled/``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from extractor.api import ExtractOptions, extract
from tests.conftest import assert_golden_rows, records_by_message
from tests.gitrepos import make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "handled"
GOLDEN = FIXTURES / "handled.jsonl"
FIELDS = (
    "errorClass",
    "handlingStrategy",
    "severity",
    "documentation",
    "triggerScenarios",
    "tryCatchPattern",
)


def _rows(tmp_path: Path, jobs: int = 1) -> list[dict[str, object]]:
    files = {f"python/sglang/pkg/{p.name}": p.read_bytes() for p in sorted(FIXTURES.glob("*.py"))}
    files["python/sglang/pkg/__init__.py"] = b""
    repo, shas = make_repo(tmp_path / "repo", [files])
    result = extract(
        ExtractOptions.build(source=str(repo), sha=shas[0], jobs=jobs, cache_dir=tmp_path / "cache")
    )
    rows = []
    for r in result.records:
        row: dict[str, object] = {"file": r.filePath.rsplit("/", 1)[1], "line": r.lineNumber}
        row.update({f: getattr(r, f) for f in FIELDS})
        row["firstSolution"] = r.solutions[0]
        row["handled"] = next((t for t in r.tags if t in ("swallowed", "re-raised-as-other")), None)
        rows.append(row)
    return rows


def test_handled_records_match_the_golden_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    assert_golden_rows(GOLDEN, _rows(tmp_path))


def test_what_is_and_is_not_swallowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    rows = {(str(r["file"]), str(r["errorClass"]), int(str(r["line"]))): r for r in _rows(tmp_path, jobs=2)}

    def one(file: str, cls: str) -> dict[str, object]:
        (found,) = [r for (f, c, _), r in rows.items() if f == file and c == cls]
        return found

    loader = one("loader.py", "ImportError")
    assert loader["handled"] == "swallowed" and loader["handlingStrategy"] == "fallback"
    assert "Kernel {name} unavailable, using the slow path: {exc}" in str(loader["triggerScenarios"])
    assert loader["tryCatchPattern"] is None and loader["severity"] == "warning"
    # An alias of a class from another module, caught through its ValueError base.
    aliased = [r for (f, c, _), r in rows.items() if f == "loader.py" and c == "ShapeErr"]
    assert [r["handled"] for r in aliased] == [
        "swallowed",
        None,
    ]  # pick_dtype swallows, strict_dtype does not
    assert one("loader.py", "ValueError")["handled"] is None  # logged, then re-raised
    # Every caller of validate_request logs and goes on; the BaseException passes `except Exception`.
    assert one("scheduler.py", "ValueError")["handled"] == "swallowed"
    assert one("scheduler.py", "StopServing")["handled"] is None
    converted = one("scheduler.py", "BackendError")
    assert converted["handled"] == "re-raised-as-other" and converted["handlingStrategy"] == "propagate"
    assert "`ClientError` raised from it" in str(converted["triggerScenarios"])
    # The caller logs, and keeps the text as the request's reason: the user may still read it.
    kept = one("submitter.py", "ValueError")
    assert kept["handled"] == "swallowed"
    assert "It does not reach the user as an exception: every known caller catches it" in str(
        kept["documentation"]
    )
    assert "and its text kept (`reason = f'submission failed: {e}'`)" in str(kept["triggerScenarios"])
    # A route is called by its framework too: its one caller in the tree does not make it swallowed.
    assert one("scheduler.py", "LookupError")["handled"] is None
    # OverflowError is an ArithmeticError: logged, kept for later, said once.
    kept = one("scheduler.py", "OverflowError")
    assert kept["handled"] == "swallowed" and str(kept["documentation"]).count("failures[job.id] = exc") == 1
    # A call whose receiver's class is unknown may be one more caller: it keeps the raise
    # swallowed only when it sits in a ``try`` that ends the raise too.
    senders = {int(str(r["line"])): r for (f, c, _), r in rows.items() if f == "transfer.py"}
    assert senders[17]["handled"] == "swallowed"  # raise_failure: every call, known or not, is caught
    assert senders[20]["handled"] is None  # raise_stall: the unknown receiver's call is not
    # A helper that does not catch hands the raise to its callers: swallowed when they all end it.
    relayed = {int(str(r["line"])): r for (f, c, _), r in rows.items() if f == "relay.py"}
    assert relayed[14]["handled"] == "swallowed"
    assert "packing failed, shipping unpacked" in str(relayed[14]["triggerScenarios"])
    assert relayed[32]["handled"] is None  # nobody up the chain catches it
    # A handler that logs by the error's class: each raise is read along the branch it takes,
    # in its own function and in a caller's.
    posted = one("poster.py", "Exception")
    assert '"unexpected worker error for room {room}" (an error line in the log)' in str(
        posted["triggerScenarios"]
    )
    assert "transport error for room" not in str(posted["triggerScenarios"])
    transport = one("poster.py", "ConnectionError")
    assert '"transport error for room {room}: {e}" (a warning line in the log)' in str(
        transport["triggerScenarios"]
    )
    # Kept by a retry loop for the raise after it: the user meets it inside that one's message.
    retried = one("handshake.py", "ConnectionError")
    assert retried["handled"] == "re-raised-as-other" and retried["severity"] == "error"
    assert str(retried["firstSolution"]).startswith(
        "You meet this error inside another: when no later try gets past it, line 21 raises "
        '`RuntimeError` "handshake failed after {tries} tries: {last_error}"'
    )


NESTED = """\
def start(model_path, callbacks):
    def resolve(path):
        if "/" not in path:
            raise ValueError(f"not a repo id: {path}")
        return path

    def on_ready(event):
        if event is None:
            raise RuntimeError("no event to handle")

    callbacks.append(on_ready)
    try:
        repo = resolve(model_path)
    except Exception as e:
        print(f"could not resolve {e}; using the local model")
        repo = None
    return repo
"""

CALLER = """\
from sglang.pkg.starter import start


def main(args):
    return start(args.model_path, [])
"""


def test_a_nested_function_its_parent_only_calls_inside_a_try_is_handled_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    files = {"python/sglang/pkg/starter.py": NESTED.encode(), "python/sglang/pkg/main.py": CALLER.encode()}
    repo, shas = make_repo(tmp_path / "repo", [files])
    records = {
        r.errorMessage: r
        for r in extract(
            ExtractOptions.build(source=str(repo), sha=shas[0], jobs=1, cache_dir=tmp_path / "c")
        ).records
    }
    resolve = records["not a repo id: {path}"]
    assert "swallowed" in resolve.tags
    assert "could not resolve {e}; using the local model" in resolve.triggerScenarios
    # A nested function handed on as a callback may be called anywhere: nothing is said of it.
    assert "swallowed" not in records["no event to handle"].tags


def test_a_silent_fallback_asks_for_no_traceback_in_a_bug_report(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """\
        def shape_of(values):
            try:
                assert len(values) % 2 == 0, "values come in pairs"
                return len(values) // 2
            except AssertionError:
                return 0


        def logged_shape(values, logger):
            try:
                assert len(values) % 2 == 0, "pairs expected"
                return len(values) // 2
            except AssertionError as e:
                logger.warning(f"bad shape: {e}")
                return 0
        """
    )
    records = records_by_message(tmp_path, {"python/sglang/pkg/shapes.py": source})
    silent = records["values come in pairs"]
    assert "swallowed" in silent.tags
    # Nothing is printed: no message or traceback exists to send.
    assert not any("traceback" in s for s in silent.solutions), silent.solutions
    assert any("If what the fallback gives you is wrong" in s for s in silent.solutions)
    # A fallback that logs the message leaves a line to send.
    assert not any(
        "If what the fallback gives you is wrong" in s for s in records["pairs expected"].solutions
    )
