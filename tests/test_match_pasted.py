"""match on what users paste: cut-short titles and first lines, older wordings, bare asserts whose
line numbers moved, logs with several errors, server error bodies, nightly folders, and the CLI.

Every dataset here is a small synthetic one modelled on sglang's raise sites (written here, not
copied); the matcher, the parser and the CLI are the real ones.
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

from extractor.datasets.match import Matcher, choose_datasets, search
from extractor.datasets.match.prefix import prefix_cover, strip_ellipsis
from extractor.records.model import ErrorRecord
from tests.match_factory import make_record, write

ROOT = Path(__file__).resolve().parent.parent
ARGS = "python/sglang/srt/server_args.py"
P2P = "python/sglang/srt/distributed/device_communicators/cuda_wrapper.py"
ATTN = "python/sglang/srt/layers/attention/registry.py"
DISAGG = "python/sglang/srt/disaggregation/utils.py"
RADIX = "python/sglang/srt/mem_cache/radix_cache.py"
SERVING = "python/sglang/srt/entrypoints/openai/serving_completions.py"
ROPE = "python/sglang/srt/layers/rotary_embedding.py"
OLD_SHA = "1111111111111111111111111111111111111111"
NEW_SHA = "2222222222222222222222222222222222222222"

SPEC_LONG = (
    "Speculative decoding with {algo} needs --speculative-num-steps >= 1 and "
    "--speculative-eagle-topk >= 1; got steps={steps}, topk={topk}"
)


def lock_ref_source(fn: str, pad: int) -> str:
    return "\n".join(
        [
            f"    def {fn}(self, node):",
            *(["        node = node.parent"] * pad),
            "        assert node.lock_ref > 0",
        ]
    )


def bare_assert(line: int, fn: str, pad: int) -> ErrorRecord:
    code = lock_ref_source(fn, pad)
    start = line - code.count("\n")
    return make_record(
        RADIX,
        line,
        "AssertionError",
        "",
        pattern="",
        source_code=code,
        source_start=start,
        documentation=f"In the method `RadixCache.{fn}` ({RADIX}), line {line} fails the assertion.",
    )


def records() -> list[ErrorRecord]:
    return [
        make_record(ARGS, 200, "ValueError", SPEC_LONG),
        make_record(ARGS, 210, "ValueError", "Speculative decoding with {algo} is not supported"),
        make_record(ARGS, 230, "ValueError", "--speculative-num-steps must be >= 1, got {n}"),
        make_record(
            P2P,
            40,
            "RuntimeError",
            "Error happened when batch testing peer-to-peer access from {i} to {j}:\n{stderr}",
        ),
        make_record(
            ATTN,
            12,
            "ValueError",
            "Unknown attention backend {name}; choose one of triton, flashinfer, fa3, trtllm_mha",
        ),
        make_record(ATTN, 30, "ValueError", "Attention backend {name} does not support {feature}"),
        make_record(
            DISAGG, 55, "ValueError", "run_mode={mode} is not valid for --disaggregation-transfer-backend {b}"
        ),
        bare_assert(120, "inc_lock_ref", 3),
        bare_assert(150, "dec_lock_ref", 3),
        make_record(
            SERVING, 90, "ValueError", "The prompt has {n} tokens, more than the context length {limit}"
        ),
        make_record(SERVING, 99, "ValueError", "Requested {n} logprobs; at most {limit} are allowed"),
        make_record(
            SERVING, 120, "ValueError", "return_hidden_states is not supported with streaming requests"
        ),
        make_record(SERVING, 130, "ValueError", "logprob_start_len is not supported with streaming requests"),
        make_record(
            ARGS, 260, "ValueError", "chunked_prefill_size={c} must not exceed max_prefill_tokens={m}"
        ),
        make_record(ROPE, 20, "ValueError", "Unknown rope scaling type {t}"),
        make_record(
            ROPE,
            44,
            "ValueError",
            "Unknown rope scaling type {t}; use one of linear, dynamic, yarn, longrope",
        ),
    ]


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher(records())


def first(matcher: Matcher, text: str) -> tuple[str, int]:
    found = matcher.match(text, top=3)
    assert found, text
    return found[0].record.filePath, found[0].record.lineNumber


def spec_message() -> str:
    return SPEC_LONG.format(algo="EAGLE3", steps=0, topk=4)


# -- cut-short messages ------------------------------------------------------------------------


@pytest.mark.parametrize("tail", ["", "…", "...", " …"])
def test_title_cut_at_80_characters(matcher: Matcher, tail: str) -> None:
    title = f"ValueError: {spec_message()}"[:80] + tail
    assert first(matcher, title) == (ARGS, 200)


def test_cut_short_ranks_below_the_full_message(matcher: Matcher) -> None:
    full = matcher.match(f"ValueError: {spec_message()}", top=1)[0]
    cut = matcher.match(f"ValueError: {spec_message()}"[:70], top=1)[0]
    assert full.record.id == cut.record.id
    assert cut.score < full.score
    assert "cut short" in " ".join(cut.why) and "fully matches" in " ".join(full.why)


def test_marked_cut_prefers_the_site_that_spells_out_more(matcher: Matcher) -> None:
    # "su; use one of linear, dyn" fits the short message's placeholder too, but "..." says the
    # text was cut: the site whose literal text goes on as pasted is the likelier one.
    assert first(matcher, "ValueError: Unknown rope scaling type su; use one of linear, dyn...") == (ROPE, 44)
    assert first(matcher, "ValueError: Unknown rope scaling type su") == (ROPE, 20)


def test_first_line_of_a_multiline_message(matcher: Matcher) -> None:
    line = "RuntimeError: Error happened when batch testing peer-to-peer access from 0 to 1:"
    assert first(matcher, line) == (P2P, 40)


def test_message_cut_inside_its_first_literal(matcher: Matcher) -> None:
    assert first(matcher, "Error happened when batch testing peer-to-pe") == (P2P, 40)


def test_short_generic_prefix_names_nothing(matcher: Matcher) -> None:
    # Under the minimum of literal text a cut-short message is too vague to name a site.
    assert matcher.match("Error happened", top=3) == []


def test_ellipsis_is_stripped_only_at_the_end() -> None:
    assert strip_ellipsis("a … b") is None
    assert strip_ellipsis("abc def …") == "abc def"
    assert strip_ellipsis("abc def...") == "abc def"
    assert strip_ellipsis("...") is None


def _prefix_oracle(runs: list[str], starts: bool, text: str) -> bool:
    """Whether ``text`` is a prefix of some rendering ``[any] run0 any run1 ... any``."""
    for k in range(len(runs) + 1):
        partial = ""
        if k < len(runs):
            for ch in reversed(runs[k]):
                partial = f"(?:{re.escape(ch)}{partial})?"
        body = ".*".join(re.escape(r) for r in runs[:k])
        lead = "" if starts else ".*"
        gap = ".*" if k > 0 else ""
        rx = partial if k == 0 and starts else lead + body + gap + partial
        if re.fullmatch("(?s)" + rx, text):
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(
    runs=st.lists(st.text("ab ", min_size=1, max_size=4), min_size=1, max_size=3),
    starts=st.booleans(),
    text=st.text("ab c", min_size=1, max_size=12),
)
def test_prefix_cover_agrees_with_a_regex_oracle(runs: list[str], starts: bool, text: str) -> None:
    assert (prefix_cover(runs, starts, text) >= 0) == _prefix_oracle(runs, starts, text)


def test_prefix_cover_on_hostile_text_returns() -> None:
    # One find per run and a bounded look at the text's end, whatever the text repeats.
    runs = ["a" * 150 + "b", "a" * 199 + "c"]
    text = "a" * 200_000
    # The text never holds the first run; it ends in the 150 "a" that begin it.
    assert prefix_cover(runs, False, text) == 150
    assert prefix_cover(runs, True, text) == -1


# -- older wordings ----------------------------------------------------------------------------


def test_message_from_a_release_with_one_backend_fewer(matcher: Matcher) -> None:
    older = "ValueError: Unknown attention backend 'foo'; choose one of triton, flashinfer"
    assert first(matcher, older) == (ATTN, 12)


def test_renamed_field_in_an_older_message(matcher: Matcher) -> None:
    older = "ValueError: mode=prefill is not valid for --disaggregation-transfer-backend mooncake"
    assert first(matcher, older) == (DISAGG, 55)


def test_identifier_renamed_since_matches_by_its_parts(matcher: Matcher) -> None:
    older = "ValueError: return_states is not supported with streaming requests"
    assert first(matcher, older) == (SERVING, 120)
    # Both fields renamed: only their parts still agree.
    assert first(matcher, "ValueError: chunked_size=8192 must not exceed max_tokens=4096") == (ARGS, 260)


def test_message_that_gained_a_clause_since(matcher: Matcher) -> None:
    older = "ValueError: The prompt has 9000 tokens, more than the context length 8192. Shorten it."
    assert first(matcher, older) == (SERVING, 90)


# -- tracebacks and logs -----------------------------------------------------------------------


def traceback(path: str, line: int, function: str, source: str, last: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 900, in event_loop\n'
        "    self.process_batch()\n"
        f'  File "/usr/lib/python3/dist-packages/{path[len("python/") :]}", line {line}, in {function}\n'
        f"    {source}\n"
        f"{last}\n"
    )


@pytest.mark.parametrize(("function", "line"), [("inc_lock_ref", 120), ("dec_lock_ref", 150)])
def test_bare_assert_with_moved_line_numbers(matcher: Matcher, function: str, line: int) -> None:
    # Both asserts print the same source line; forty lines of drift leave the function to decide.
    text = traceback(RADIX, line + 40, function, "assert node.lock_ref > 0", "AssertionError")
    found = matcher.match(text, top=3)
    assert (found[0].record.filePath, found[0].record.lineNumber) == (RADIX, line)
    assert "same source line" in " ".join(found[0].why)


def test_bare_assert_in_a_moved_file(matcher: Matcher) -> None:
    moved = RADIX.replace("mem_cache/", "mem_cache/trees/")
    text = traceback(moved, 300, "dec_lock_ref", "assert node.lock_ref > 0", "AssertionError")
    found = matcher.match(text, top=3)
    assert (found[0].record.filePath, found[0].record.lineNumber) == (RADIX, 150)
    assert "file moved" in " ".join(found[0].why)


def test_bare_assert_without_the_source_line_is_not_guessed(matcher: Matcher) -> None:
    text = traceback(RADIX, 400, "evict", "assert len(heap) > 0", "AssertionError")
    assert matcher.match(text, top=3) == []


def test_log_with_two_errors_gives_two_groups(matcher: Matcher) -> None:
    log = (
        "[2026-01-01 10:00:00] INFO:     Started server process [100]\n"
        "[2026-01-01 10:00:01 TP0] Scheduler hit an exception: "
        + traceback(RADIX, 170, "dec_lock_ref", "assert node.lock_ref > 0", "AssertionError")
        + "[2026-01-01 10:00:02 TP1] Scheduler hit an exception: "
        + traceback(RADIX, 171, "dec_lock_ref", "assert node.lock_ref > 0", "AssertionError")
        + "[2026-01-01 10:05:00] INFO:     Started server process [101]\n"
        + "[2026-01-01 10:05:03 TP0] ValueError: Attention backend fa3 does not support sliding window\n"
    )
    groups = matcher.match_groups(log)
    # The same assert printed by two ranks is one error; the later ValueError is another.
    assert [(g.matches[0].record.filePath, g.matches[0].record.lineNumber) for g in groups] == [
        (RADIX, 150),
        (ATTN, 30),
    ]
    assert groups[1].label == "ValueError: Attention backend fa3 does not support sliding window"
    # One list for the whole input still holds both.
    merged = {(m.record.filePath, m.record.lineNumber) for m in matcher.match(log)}
    assert {(RADIX, 150), (ATTN, 30)} <= merged


def test_exception_lines_deep_inside_a_long_log_are_read(matcher: Matcher) -> None:
    noise = "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 3, #token: 512, gen throughput (token/s): 88.1\n"
    log = (
        noise * 3000
        + "[2026-01-01 10:00:00 TP0] ValueError: Requested 30 logprobs; at most 20 are allowed\n"
        + noise * 3000
    )
    groups = matcher.match_groups(log)
    assert [(g.matches[0].record.filePath, g.matches[0].record.lineNumber) for g in groups] == [(SERVING, 99)]


@pytest.mark.parametrize(
    "body",
    [
        '{"object":"error","message":"The prompt has 9000 tokens, more than the context length 8192",'
        '"type":"BadRequestError","param":null,"code":400}',
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': "
        "'The prompt has 9000 tokens, more than the context length 8192', 'type': 'BadRequestError', "
        "'param': None, 'code': 400}",
        '{"error": {"message": "The prompt has 9000 tokens, more than the context length 8192", "code": 400}}',
    ],
)
def test_error_body_of_the_openai_compatible_server(matcher: Matcher, body: str) -> None:
    assert first(matcher, body) == (SERVING, 90)


def test_chained_exception_keeps_one_group(matcher: Matcher) -> None:
    text = (
        traceback(ARGS, 231, "check", 'raise ValueError(f"--speculative-num-steps must be >= 1, got {n}")',
                  "ValueError: --speculative-num-steps must be >= 1, got 0")
        + "\nThe above exception was the direct cause of the following exception:\n\n"
        + "Traceback (most recent call last):\n"
        + '  File "/srv/app/launch.py", line 5, in main\n'
        + "    start()\n"
        + "RuntimeError: server failed to start\n"
    )  # fmt: skip
    groups = matcher.match_groups(text)
    assert len(groups) == 1
    assert (groups[0].matches[0].record.filePath, groups[0].matches[0].record.lineNumber) == (ARGS, 230)


# -- nightly folders ---------------------------------------------------------------------------


def nightly_folder(tmp: Path) -> Path:
    """A nightly folder whose older dataset words the backend message as an older release did."""
    folder = tmp / "nightly"
    folder.mkdir()
    old_name = f"sglang-errors-{OLD_SHA[:12]}-20260101T000000Z.jsonl"
    new_name = f"sglang-errors-{NEW_SHA[:12]}-20260201T000000Z.jsonl"
    older = [
        make_record(ATTN, 10, "ValueError", "Backend {name} is unknown to this build", sha=OLD_SHA),
        make_record(ARGS, 230, "ValueError", "--speculative-num-steps must be >= 1, got {n}", sha=OLD_SHA),
    ]
    newer = [
        make_record(ATTN, 12, "ValueError", "Backend {name} is unknown to this build of sglang", sha=NEW_SHA),
        make_record(ARGS, 230, "ValueError", "--speculative-num-steps must be >= 1, got {n}", sha=NEW_SHA),
    ]
    write(folder / old_name, older)
    write(folder / new_name, newer)
    manifest = {
        "manifestVersion": 1,
        "sha": NEW_SHA,
        "datasetFile": new_name,
        "history": [{"sha": NEW_SHA, "datasetFile": new_name}, {"sha": OLD_SHA, "datasetFile": old_name}],
    }
    (folder / "manifest.json").write_bytes(orjson.dumps(manifest))
    # The older file was touched last: file times must not decide which dataset is current.
    os.utime(folder / old_name, (time.time() + 100, time.time() + 100))
    return folder


def test_nightly_folder_maps_an_older_match_to_the_current_record(tmp_path: Path) -> None:
    folder = nightly_folder(tmp_path)
    choice = choose_datasets(folder, tmp_path / "unused")
    assert choice.current.name.startswith(f"sglang-errors-{NEW_SHA[:12]}")
    assert [p.name[:26] for p in choice.older] == [f"sglang-errors-{OLD_SHA[:12]}"]
    result = search(choice, "ValueError: Backend flashmla is unknown to this build")
    best = result.groups[0].matches[0]
    assert (best.record.analyzedSha, best.record.lineNumber) == (NEW_SHA, 12)
    assert best.via is not None and (best.via.analyzedSha, best.via.lineNumber) == (OLD_SHA, 10)
    assert any("diff pairs it with this record" in w for w in best.why)
    assert [s.sha for s in result.searched] == [NEW_SHA, OLD_SHA]


def test_nightly_folder_prefers_the_current_dataset_when_it_matches(tmp_path: Path) -> None:
    result = search(
        choose_datasets(nightly_folder(tmp_path), tmp_path), "--speculative-num-steps must be >= 1, got 0"
    )
    best = result.groups[0].matches[0]
    assert best.record.analyzedSha == NEW_SHA and best.via is None


# -- CLI ---------------------------------------------------------------------------------------


def cli(*args: str | Path, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "extractor", "match", *map(str, args)],
        input=stdin, capture_output=True, text=True, env=env, cwd=cwd or ROOT, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("pasted") / "d.jsonl", records())


@pytest.mark.parametrize(
    "args",
    [
        ("--speculative-num-steps must be >= 1, got 0",),
        ("--", "--speculative-num-steps must be >= 1, got 0"),
        ("-n", "1", "--speculative-num-steps", "must", "be", ">=", "1,", "got", "0"),
    ],
)
def test_cli_text_that_starts_with_dashes(dataset: Path, args: tuple[str, ...]) -> None:
    proc = cli("--dataset", dataset, "--json", *args)
    assert proc.returncode == 0, proc.stderr
    rows = orjson.loads(proc.stdout)
    assert (rows[0]["record"]["filePath"], rows[0]["record"]["lineNumber"]) == (ARGS, 230)


def test_cli_dash_reads_stdin_and_names_the_dataset(dataset: Path) -> None:
    text = traceback(RADIX, 190, "dec_lock_ref", "assert node.lock_ref > 0", "AssertionError")
    proc = cli("-d", dataset, "-", stdin=text)
    assert proc.returncode == 0, proc.stderr
    assert f"{RADIX}:150" in proc.stdout
    assert f"searched {dataset} (sglang {'8905cbd42f4a'}, {len(records())} records)" in proc.stdout


def test_cli_json_rows_are_stable(dataset: Path) -> None:
    proc = cli("-d", dataset, "--json", "ValueError: Requested 30 logprobs; at most 20 are allowed")
    rows = orjson.loads(proc.stdout)
    assert all(set(row) == {"score", "record"} for row in rows)
    assert "searched" in proc.stderr
    log = "ValueError: Requested 30 logprobs; at most 20 are allowed\n\nValueError: Attention backend x does not support y\n"
    rows = orjson.loads(cli("-d", dataset, "--json", "-n", "1", stdin=log).stdout)
    assert [(row["group"], row["record"]["lineNumber"]) for row in rows] == [(0, 99), (1, 30)]
    assert rows[1]["error"] == "ValueError: Attention backend x does not support y"


def test_cli_explain_shows_each_part_of_the_score(dataset: Path) -> None:
    proc = cli("-d", dataset, "--explain", "-n", "2", f"ValueError: {spec_message()}"[:80])
    assert proc.returncode == 0, proc.stderr
    assert "message 0." in proc.stdout and "(the message is its text cut short)" in proc.stdout
    assert "class +1.00 x 15" in proc.stdout
    assert "frame 0.00 x 30 = 0.0 (no traceback frame at this site)" in proc.stdout


def test_cli_nightly_folder(tmp_path: Path) -> None:
    folder = nightly_folder(tmp_path)
    proc = cli("--dataset", folder, "--json", "ValueError: Backend flashmla is unknown to this build")
    assert proc.returncode == 0, proc.stderr
    rows = orjson.loads(proc.stdout)
    assert rows[0]["record"]["analyzedSha"] == NEW_SHA
    assert rows[0]["matchedOlder"]["analyzedSha"] == OLD_SHA
    assert NEW_SHA[:12] in proc.stderr and OLD_SHA[:12] in proc.stderr


def test_cli_default_is_the_manifests_current_dataset(tmp_path: Path) -> None:
    folder = nightly_folder(tmp_path)
    folder.rename(tmp_path / "output")
    proc = cli("--json", "--speculative-num-steps must be >= 1, got 0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)[0]["record"]["analyzedSha"] == NEW_SHA


def test_cli_folder_without_manifest_takes_the_newest_analysis(tmp_path: Path) -> None:
    def at(rs: list[ErrorRecord], when: str) -> list[ErrorRecord]:
        return [r.model_copy(update={"analyzedAt": when}) for r in rs]

    write(tmp_path / "a.jsonl", at(records()[:3], "2026-05-01T00:00:00.000Z"))
    old = write(tmp_path / "b.jsonl", at(records()[3:], "2026-01-01T00:00:00.000Z"))
    os.utime(old, (time.time() + 100, time.time() + 100))
    proc = cli("--dataset", tmp_path, "--speculative-num-steps must be >= 1, got 0")
    assert proc.returncode == 0, proc.stderr
    assert f"searched {tmp_path / 'a.jsonl'}" in proc.stdout
