"""match: runtime error text (message, class line, traceback, server log) -> ranked source sites.

Every test runs the real parser and index over a small synthetic dataset modelled on sglang's
raise sites (written here, not copied), and the CLI as a subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from bench.match_queries import bench_queries, sample_queries
from extractor.datasets.match import (
    Matcher,
    analyse_pattern,
    newest_dataset,
    parse_query,
    strip_prefixes,
)
from extractor.errors import ExtractorError
from extractor.records import message_pattern
from extractor.records.model import ErrorRecord
from tests.match_factory import make_record, template_pattern, write

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "match"
ARGS = "python/sglang/srt/server_args.py"
SCHED = "python/sglang/srt/managers/scheduler.py"
LOADER = "python/sglang/srt/model_loader/loader.py"
KV = "python/sglang/srt/disaggregation/kv_transfer.py"
MODEL_CONFIG = "python/sglang/srt/configs/model_config.py"
WORKER = "python/sglang/srt/managers/tp_worker.py"
QUANT = "python/sglang/srt/layers/quantization/registry.py"
SERVING = "python/sglang/srt/entrypoints/openai/serving_chat.py"
POOL = "python/sglang/srt/mem_cache/memory_pool.py"

KV_CLASS_SOURCE = (
    "class KVTransferError(RuntimeError):\n"
    '    """Raised when a KV cache transfer between prefill and decode fails."""\n'
    "\n"
    "\n"
    "def transfer(req, reason):\n"
    '    raise KVTransferError(f"Failed to transfer KV cache for request {req.rid}: {reason}")'
)


def dataset_records() -> list[ErrorRecord]:
    return [
        make_record(ARGS, 100, "ValueError", "--enable-foo requires --bar"),
        make_record(ARGS, 140, "ValueError", "Invalid value {tp} for --tp-size; it must divide {n_gpus}"),
        make_record(ARGS, 160, "ValueError", "{msg}"),
        make_record(ARGS, 180, "TypeError", "--enable-foo requires --bar"),
        make_record(SCHED, 503, "AssertionError", "", pattern=""),
        make_record(SCHED, 530, "AssertionError", "", pattern=""),
        make_record(
            SCHED, 300, "RuntimeError", "Not enough memory for the KV cache. Lower --max-running-requests."
        ),
        make_record(
            WORKER, 200, "RuntimeError", "Not enough memory for the KV cache. Lower --max-running-requests."
        ),
        make_record(LOADER, 83, "RuntimeError", "Failed to load weights from {path}: {reason}"),
        make_record(
            KV,
            6,
            "KVTransferError",
            "Failed to transfer KV cache for request {rid}: {reason}",
            source_code=KV_CLASS_SOURCE,
        ),
        make_record(MODEL_CONFIG, 41, "KeyError", "{name}"),
        make_record(MODEL_CONFIG, 46, "ValueError", "Unknown model type {name}; registered types: {types}"),
        make_record(QUANT, 30, "ValueError", "Unsupported quantization method: {method}"),
        make_record(QUANT, 50, "ValueError", "Unsupported {what}: {detail}"),
        make_record(QUANT, 60, "ValueError", "{kind}: {detail}"),
        make_record(QUANT, 70, "KeyError", "No quantization config registered under {name}"),
        make_record(SERVING, 90, "ValueError", "The request has too many tokens: {n} > {limit}"),
        make_record(SERVING, 120, "fastapi.HTTPException", "Model {name} is not served here"),
        make_record(SERVING, 140, "BadRequestError", "Image {url} could not be fetched"),
        make_record(
            POOL,
            20,
            "RuntimeError",
            "Memory pool is too small.\nIncrease --mem-fraction-static (now {frac}).",
        ),
        make_record(
            POOL,
            60,
            "ValueError",
            "Page size {p} is not supported",
        ),
    ]


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher(dataset_records())


def top(matcher: Matcher, text: str, n: int = 5) -> list[tuple[str, int]]:
    return [(m.record.filePath, m.record.lineNumber) for m in matcher.match(text, top=n)]


# -- patterns ------------------------------------------------------------------------------------


def test_pattern_literal_runs_and_safe_words() -> None:
    info = analyse_pattern(template_pattern("Invalid value {tp} for --tp-size; it must divide {n}"))
    assert info.runs == ("Invalid value ", " for --tp-size; it must divide ")
    assert info.placeholders == 2
    assert {"invalid", "value", "for", "tp", "size", "must", "divide"} <= info.safe_words
    # A word touching a placeholder may run on into it at runtime: never an anchor.
    edge = analyse_pattern(r"(?s:.*)_size must be positive")
    assert "_size" not in edge.safe_words and "positive" in edge.safe_words


def test_pattern_specificity_orders_literal_over_placeholder() -> None:
    pure = analyse_pattern(r"(?s:.*)")
    mostly_placeholder = analyse_pattern(template_pattern("{kind}: {detail}"))
    mostly_literal = analyse_pattern(template_pattern("Unsupported quantization method: {method}"))
    literal = analyse_pattern(
        template_pattern("Not enough memory for the KV cache. Lower --max-running-requests.")
    )
    assert pure.specificity == 0
    assert 0 < mostly_placeholder.specificity < mostly_literal.specificity < literal.specificity <= 1


def test_pattern_flags_and_classes() -> None:
    info = analyse_pattern(r"(?i)page size \d+ is not supported")
    assert info.ignore_case and info.runs == ("page size ", " is not supported")
    lazy = analyse_pattern(r"got [\s\S]*? tokens[.]")
    assert lazy.runs == ("got ", " tokens.")


_PIECES = st.one_of(
    st.text(min_size=1, max_size=12).map(re.escape),
    st.sampled_from([r"(?s:.*)", r"[\s\S]*?", r".*", r"\d+", r"\Z", r"\n", "^", r"\w"]),
    st.text(min_size=1, max_size=8).map(lambda t: r"(?=[\s\S]*?" + re.escape(t) + ")"),
    st.sampled_from(["(?:a|b)", "x?", "[abc]", "(foo)", "a{2}", r"(?i:Ab)"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=8).map("".join))
def test_fast_scanner_agrees_with_the_regex_parser(pattern: str) -> None:
    re.compile(pattern)
    assert analyse_pattern(pattern) == analyse_pattern(pattern, fast=False)


# -- input forms ---------------------------------------------------------------------------------


def test_plain_message(matcher: Matcher) -> None:
    assert top(matcher, "Unsupported quantization method: fp4")[0] == (QUANT, 30)


def test_mostly_literal_pattern_ranks_above_mostly_placeholder(matcher: Matcher) -> None:
    found = matcher.match("ValueError: Unsupported quantization method: fp4", top=None)
    places = [(m.record.filePath, m.record.lineNumber) for m in found]
    assert places[:2] == [(QUANT, 30), (QUANT, 50)]
    assert found[0].score > found[1].score
    # "{kind}: {detail}" fits any text with a colon: it alone names no site.
    assert (QUANT, 60) not in places


def test_class_line_prefers_the_matching_class(matcher: Matcher) -> None:
    assert top(matcher, "ValueError: --enable-foo requires --bar")[0] == (ARGS, 100)
    assert top(matcher, "TypeError: --enable-foo requires --bar")[0] == (ARGS, 180)


@pytest.mark.parametrize(
    "line",
    [
        "[2026-01-01 12:00:00 TP0] ValueError: Invalid value 3 for --tp-size; it must divide 8",
        "[2026-01-01 12:00:00.123 DP0 TP1 EP1] ValueError: Invalid value 3 for --tp-size; it must divide 8",
        "[TP0] ValueError: Invalid value 3 for --tp-size; it must divide 8",
        "ERROR: ValueError: Invalid value 3 for --tp-size; it must divide 8",
        "ERROR 01-01 12:00:00 server_args.py:12] Invalid value 3 for --tp-size; it must divide 8",
        "2026-01-01 12:00:00,511 - sglang - ERROR - Invalid value 3 for --tp-size; it must divide 8",
        "ERROR:root:ValueError: Invalid value 3 for --tp-size; it must divide 8",
        "[rank3]: ValueError: Invalid value 3 for --tp-size; it must divide 8",
        "\x1b[31mERROR\x1b[0m: Invalid value 3 for --tp-size; it must divide 8",
    ],
)
def test_logger_prefixes(matcher: Matcher, line: str) -> None:
    assert top(matcher, line)[0] == (ARGS, 140)


def test_strip_prefixes_keeps_errno_brackets() -> None:
    assert strip_prefixes("[Errno 2] No such file or directory: 'x'") == (
        "[Errno 2] No such file or directory: 'x'",
        False,
    )
    assert strip_prefixes("[2026-01-01 12:00:00 TP0] hello") == ("hello", True)
    assert strip_prefixes("[rank0]: hello") == ("hello", False)


def test_wrapped_lines(matcher: Matcher) -> None:
    wrapped = "RuntimeError: Not enough memory for the KV cache. Lower --max-\nrunning-requests."
    assert top(matcher, wrapped)[0][1] in (300, 200)
    spaced = "Invalid value 3 for --tp-size;\n  it must divide 8"
    assert top(matcher, spaced)[0] == (ARGS, 140)


def test_multiline_message_is_kept_whole(matcher: Matcher) -> None:
    text = "RuntimeError: Memory pool is too small.\nIncrease --mem-fraction-static (now 0.5)."
    found = matcher.match(text)
    assert (found[0].record.filePath, found[0].record.lineNumber) == (POOL, 20)
    assert "pattern fully matches" in found[0].why


@pytest.mark.parametrize(
    "text",
    [
        "ValueError('--enable-foo requires --bar')",
        'ValueError("--enable-foo requires --bar")',
        "'--enable-foo requires --bar'",
        "request failed with ValueError('--enable-foo requires --bar')",
    ],
)
def test_repr_quoting(matcher: Matcher, text: str) -> None:
    assert top(matcher, text)[0] == (ARGS, 100)


def test_repr_with_escaped_newline(matcher: Matcher) -> None:
    text = r"RuntimeError('Memory pool is too small.\nIncrease --mem-fraction-static (now 0.5).')"
    assert top(matcher, text)[0] == (POOL, 20)
    logged = r"Memory pool is too small.\nIncrease --mem-fraction-static (now 0.5)."
    assert top(matcher, logged)[0] == (POOL, 20)


def test_keyerror_message_is_quoted_at_runtime(matcher: Matcher) -> None:
    # str(KeyError("msg")) is "'msg'": the quotes are not part of the site's message.
    assert top(matcher, "KeyError: 'No quantization config registered under w4a4'")[0] == (QUANT, 70)


def test_case_changed_message_is_found_by_its_text(matcher: Matcher) -> None:
    assert top(matcher, "ValueError: PAGE SIZE 48 is not supported")[0] == (POOL, 60)


def test_module_qualified_custom_class(matcher: Matcher) -> None:
    found = matcher.match(
        "sglang.srt.disaggregation.kv_transfer.KVTransferError: Failed to transfer KV cache for request 7: timeout"
    )
    assert (found[0].record.filePath, found[0].record.lineNumber) == (KV, 6)
    assert any("class KVTransferError matches" in w for w in found[0].why)


def test_custom_class_alone_is_enough(matcher: Matcher) -> None:
    assert top(matcher, "KVTransferError")[0] == (KV, 6)


def test_base_class_of_a_custom_class_is_related(matcher: Matcher) -> None:
    assert matcher.hierarchy.relation("RuntimeError", "KVTransferError") == 0.5
    assert matcher.hierarchy.relation("KVTransferError", "Exception") == 0.2
    assert matcher.hierarchy.relation("TypeError", "KVTransferError") == -0.5
    # A helper's name as errorClass, or a class whose bases no record shows: no evidence either way.
    assert matcher.hierarchy.relation("ValueError", "_bad_request") == 0
    assert matcher.hierarchy.relation("SomeOtherError", "ValueError") == 0
    text = "Failed to transfer KV cache for request 7: timeout"
    exact = matcher.match("KVTransferError: " + text)[0]
    base = matcher.match("RuntimeError: " + text)[0]
    other = matcher.match("TypeError: " + text)[0]
    assert exact.record.filePath == base.record.filePath == other.record.filePath == KV
    assert exact.score > base.score > other.score


def test_assertion_error_with_empty_message_uses_the_frame(matcher: Matcher) -> None:
    text = (FIXTURES / "assert_empty.txt").read_text()
    found = matcher.match(text)
    assert (found[0].record.filePath, found[0].record.lineNumber) == (SCHED, 503)
    assert found[0].record.errorClass == "AssertionError"
    # The other assert in the same file is far from the frame line: it ranks lower or not at all.
    others = [m for m in found if m.record.lineNumber == 530]
    assert not others or others[0].score < found[0].score


def test_bare_builtin_class_is_no_match(matcher: Matcher) -> None:
    assert matcher.match("AssertionError") == []
    assert matcher.match("ValueError: a message no site in this dataset raises") == []


def test_frames_break_ties_between_identical_messages(matcher: Matcher) -> None:
    message = "RuntimeError: Not enough memory for the KV cache. Lower --max-running-requests."
    for path, line, frame_line in ((SCHED, 300, 302), (WORKER, 200, 200)):
        text = (
            "Traceback (most recent call last):\n"
            f'  File "/usr/lib/python3/site-packages/sglang/{path.split("sglang/", 1)[1]}", line {frame_line}, in f\n'
            "    raise RuntimeError(\n"
            f"{message}\n"
        )
        assert top(matcher, text)[0] == (path, line)


def test_traceback_pasted_without_indentation_or_header(matcher: Matcher) -> None:
    flattened = (
        "Traceback (most recent call last):\n"
        'File "/opt/sglang/python/sglang/srt/server_args.py", line 160, in check\n'
        "raise ValueError(msg)\n"
        "ValueError: tp_size=3 does not fit the cluster\n"
    )
    assert top(matcher, flattened)[0] == (ARGS, 160)
    headless = 'File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 503, in process_batch\nAssertionError\n'
    assert top(matcher, headless)[0] == (SCHED, 503)


def test_frame_path_needs_the_sglang_suffix(matcher: Matcher) -> None:
    # A torch file that happens to be called scheduler.py says nothing about sglang's.
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/torch/optim/lr_scheduler.py", line 503, in step\n'
        '  File "/usr/lib/python3/site-packages/torch/managers/scheduler.py", line 503, in step\n'
        "AssertionError\n"
    )
    assert matcher.match(text) == []


def test_placeholder_only_pattern_needs_a_frame(matcher: Matcher) -> None:
    bare = "ValueError: tp_size=3 does not fit the cluster"
    assert all(m.record.lineNumber != 160 for m in matcher.match(bare, top=None))
    framed = (
        "Traceback (most recent call last):\n"
        '  File "/x/sglang/srt/server_args.py", line 160, in check\n'
        "    raise ValueError(msg)\n"
        f"{bare}\n"
    )
    assert top(matcher, framed)[0] == (ARGS, 160)


def test_chained_traceback_ranks_the_last_exception_first(matcher: Matcher) -> None:
    text = (FIXTURES / "chained.txt").read_text()
    found = matcher.match(text, top=None)
    places = [(m.record.filePath, m.record.lineNumber) for m in found]
    assert places[0] == (MODEL_CONFIG, 46)
    assert (MODEL_CONFIG, 41) in places  # the cause is still listed, below
    queries = parse_query(text, matcher.hierarchy)
    assert [(q.cls, q.weight) for q in queries[:2]] == [("KeyError", 0.6), ("ValueError", 1.0)]


def test_whole_server_log(matcher: Matcher) -> None:
    text = (FIXTURES / "server_log.txt").read_text()
    found = matcher.match(text)
    assert (found[0].record.filePath, found[0].record.lineNumber) == (LOADER, 83)
    assert found[0].score >= 90  # message, class and innermost frame all agree


def test_long_log_is_read_around_its_traceback(matcher: Matcher) -> None:
    progress = [
        f"[2026-01-01 12:00:00 TP0] Decode batch. #running-req: {i}, #token: {7 * i}" for i in range(3000)
    ]
    trace = (FIXTURES / "server_log.txt").read_text().splitlines()
    text = "\n".join(progress[:1500] + trace + progress[1500:])
    found = matcher.match(text)
    assert (found[0].record.filePath, found[0].record.lineNumber) == (LOADER, 83)


def test_http_error_body(matcher: Matcher) -> None:
    body = (
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': "
        "'The request has too many tokens: 9000 > 8192', 'type': 'BadRequestError', 'code': 400}"
    )
    assert top(matcher, body)[0] == (SERVING, 90)
    json_body = '{"object": "error", "message": "The request has too many tokens: 9000 > 8192", "code": 400}'
    assert top(matcher, json_body)[0] == (SERVING, 90)


def test_class_qualified_by_another_package(matcher: Matcher) -> None:
    found = matcher.match("fastapi.exceptions.HTTPException: 404: Model qwen is not served here")
    assert (found[0].record.filePath, found[0].record.lineNumber) == (SERVING, 120)
    assert "class HTTPException matches" in found[0].why
    # The OpenAI client's BadRequestError is not sglang's class of that name.
    body = "openai.BadRequestError: Error code: 400 - {'message': 'The request has too many tokens: 9 > 8'}"
    assert top(matcher, body, n=10) == [(SERVING, 90)]
    assert top(matcher, "BadRequestError")[0] == (SERVING, 140)


def test_message_from_a_nearby_version_matches_by_words(matcher: Matcher) -> None:
    # The site's text changed punctuation since the dataset's sha: no full match, still found.
    found = matcher.match("ValueError: The request has too many tokens (9000 > 8192)")
    assert found and (found[0].record.filePath, found[0].record.lineNumber) == (SERVING, 90)
    assert "words" in found[0].why[0]


def test_wrapped_inner_message_matches_as_contained_text(matcher: Matcher) -> None:
    found = matcher.match("RuntimeError: worker 3 exited: --enable-foo requires --bar")
    assert (found[0].record.filePath, found[0].record.lineNumber) == (ARGS, 100)


def test_long_input_against_backtracking_pattern_returns() -> None:
    # Nested wildcards backtrack badly on long text; the matcher must not run them on it.
    slow = (message_pattern.WILDCARD + "slow ") * 4 + "pattern!"
    bad = make_record(ARGS, 10, "ValueError", "", pattern=slow)
    m = Matcher([bad, *dataset_records()])
    text = "ValueError: " + "slow " * 20_000 + "pattern!"
    found = m.match(text)
    assert found and found[0].record.lineNumber == 10
    assert found[0].why[0] == "its literal text occurs in the message"


def test_runaway_regex_cannot_enter_a_dataset() -> None:
    # (x+x+)+ backtracks exponentially on a near miss; the portable dialect has no such pattern.
    with pytest.raises(ValidationError, match="not a portable pattern"):
        make_record(ARGS, 12, "ValueError", "", pattern=r"(?:x+x+)+y!")


def test_index_runs_few_regexes() -> None:
    many = [
        make_record(
            f"python/sglang/srt/gen/mod{i}.py",
            10,
            "ValueError",
            f"Option opt{i} must be set when using {{x}}",
        )
        for i in range(300)
    ]
    m = Matcher([*many, *dataset_records()])
    found = m.match("ValueError: Option opt17 must be set when using fp8")
    assert found[0].record.filePath.endswith("mod17.py")
    assert len(m._compiled) < 10  # only candidates sharing the rare anchor word were compiled


def test_deterministic_order(matcher: Matcher) -> None:
    text = "RuntimeError: Not enough memory for the KV cache. Lower --max-running-requests."
    first = matcher.match(text)
    assert [m.record.id for m in first] == [m.record.id for m in Matcher(dataset_records()[::-1]).match(text)]
    assert first[0].score == first[1].score
    assert [m.record.filePath for m in first[:2]] == sorted(m.record.filePath for m in first[:2])


# -- datasets ------------------------------------------------------------------------------------


def test_newest_dataset_by_analysis_time_not_file_time(tmp_path: Path) -> None:
    def at(records: list[ErrorRecord], when: str) -> list[ErrorRecord]:
        return [r.model_copy(update={"analyzedAt": when}) for r in records]

    older = write(tmp_path / "output" / "a.jsonl", at(dataset_records()[:2], "2026-01-01T00:00:00.000Z"))
    newer = write(
        tmp_path / "output" / "nested" / "b.jsonl", at(dataset_records()[2:4], "2026-03-01T00:00:00.000Z")
    )
    # The older dataset was copied in last: its file time says nothing about its sglang.
    now = time.time()
    os.utime(older, (now, now))
    os.utime(newer, (now - 100, now - 100))
    assert newest_dataset(tmp_path / "output") == newer
    with pytest.raises(ExtractorError):
        newest_dataset(tmp_path / "empty")


def test_bad_dataset_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", dataset_records()[:3])
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b'{"record": {"id": "nope"}}\n' + lines[2])
    with pytest.raises(ExtractorError) as info:
        Matcher.from_path(path)
    assert info.value.where == f"{path}:2"


def test_sample_queries_and_bench(tmp_path: Path) -> None:
    records = dataset_records()
    queries = sample_queries(records, n=50, seed=1)
    # Every record with a message renders to text its own pattern matches, in rotating forms.
    assert len(queries) == sum(1 for r in records if r.errorMessage)
    assert any(q.startswith("[2026-01-01 12:00:00 TP0] Scheduler hit an exception") for q, _ in queries)
    path = write(tmp_path / "d.jsonl", records)
    report = bench_queries(path, queries)
    assert report["queries"] == report["matched"] == report["hit1"] == len(queries)
    assert {"load_s", "mean_ms", "p50_ms", "p95_ms", "max_ms", "hit5"} <= set(report)


# -- CLI -----------------------------------------------------------------------------------------


def cli(
    *args: str | Path, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "extractor", "match", *map(str, args)],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=120,
    )


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("match") / "output" / "sglang-errors-test.jsonl", dataset_records())


def test_cli_argument_table(dataset: Path) -> None:
    proc = cli("ValueError: --enable-foo requires --bar", "--dataset", dataset)
    assert proc.returncode == 0, proc.stderr
    assert f"{ARGS}:100" in proc.stdout
    assert "Fix the configuration." in proc.stdout


def test_cli_stdin_traceback_json(dataset: Path) -> None:
    proc = cli("--dataset", dataset, "--json", stdin=(FIXTURES / "server_log.txt").read_text())
    assert proc.returncode == 0, proc.stderr
    rows = orjson.loads(proc.stdout)
    assert isinstance(rows, list) and rows
    assert set(rows[0]) == {"score", "record"}
    record = ErrorRecord.model_validate(rows[0]["record"])
    assert (record.filePath, record.lineNumber) == (LOADER, 83)
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores, reverse=True)


def test_cli_top(dataset: Path) -> None:
    proc = cli(
        "RuntimeError: Not enough memory for the KV cache. Lower --max-running-requests.",
        "--dataset",
        dataset,
        "--json",
        "--top",
        "1",
    )
    assert proc.returncode == 0, proc.stderr
    assert len(orjson.loads(proc.stdout)) == 1


def test_cli_no_match_exits_1(dataset: Path) -> None:
    proc = cli("ValueError: nothing in the dataset says this", "--dataset", dataset)
    assert proc.returncode == 1
    assert "no match" in proc.stderr
    proc = cli("ValueError: nothing in the dataset says this", "--dataset", dataset, "--json")
    assert proc.returncode == 1 and orjson.loads(proc.stdout) == []


def test_cli_default_dataset_is_newest_under_output(dataset: Path) -> None:
    older = write(dataset.parent / "older.jsonl", dataset_records()[:1])
    os.utime(older, (time.time() - 1000, time.time() - 1000))
    proc = cli("KVTransferError: Failed to transfer KV cache for request 1: x", cwd=dataset.parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert f"{KV}:6" in proc.stdout


def test_cli_bad_dataset_exits_2_with_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("not json\n")
    proc = cli("anything", "--dataset", path)
    assert proc.returncode == 2
    assert f"{path}:1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_empty_input_exits_2(dataset: Path) -> None:
    proc = cli("--dataset", dataset, stdin="   \n")
    assert proc.returncode == 2
    assert "nothing to match" in proc.stderr


def test_cli_format_json_is_the_json_alias_and_common_options_stay_options(dataset: Path) -> None:
    text = "ValueError: --enable-foo requires --bar"
    aliased = cli(text, "--dataset", dataset, "--json")
    formatted = cli("-q", text, "--dataset", dataset, "--format", "json")
    assert formatted.returncode == 0, formatted.stderr
    assert orjson.loads(formatted.stdout) == orjson.loads(aliased.stdout)
    # "-q" was read as the option, not as part of the message
    assert orjson.loads(formatted.stdout)[0]["record"]["lineNumber"] == 100
    clash = cli(text, "--dataset", dataset, "--json", "--format", "table")
    assert clash.returncode == 2 and "--format" in clash.stderr
