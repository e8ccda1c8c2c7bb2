"""Diffing two dataset versions: pairing, the fields compared, rendering, and the CLI's exit codes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractor.datasets.diff import CONTENT_FIELDS, LOCATION_FIELDS, DiffResult, diff_records, subsystem
from extractor.errors import ExtractorError
from extractor.records.model import ErrorRecord
from extractor.render.diff import DiffFormat, render, render_markdown
from tests.conftest import run_in_process
from tests.diff_factory import SHA_NEW, SHA_OLD, VERSION_NEW, make_record, regenerate, write

GOLDEN = Path(__file__).parent / "fixtures" / "diff"
SCHED = "python/sglang/srt/managers/scheduler.py"
MEM = "python/sglang/srt/mem_cache/memory_pool.py"


def kinds(result: DiffResult) -> tuple[int, int, int, int]:
    s = result.summary()
    return s["added"], s["removed"], s["changed"], s["unchanged"]


# -- the fields compared ---------------------------------------------------------------------


def test_content_and_location_fields_split_the_record() -> None:
    assert set(CONTENT_FIELDS) | set(LOCATION_FIELDS) == set(ErrorRecord.model_fields)
    assert not set(CONTENT_FIELDS) & set(LOCATION_FIELDS)
    assert {"errorMessage", "errorClass", "filePath", "validationCode", "id"} <= set(CONTENT_FIELDS)


def test_only_location_and_provenance_changed_is_unchanged() -> None:
    old = make_record(line=40)
    new = regenerate(old, line=95, indent="        ", above=("class Scheduler:", "    # moved here"))
    assert new.sourceCode != old.sourceCode and new.githubUrl != old.githubUrl
    result = diff_records([old], [new])
    assert kinds(result) == (0, 0, 0, 1)
    assert not result.has_differences
    assert (result.from_sha, result.to_sha) == (SHA_OLD, SHA_NEW)


def test_a_content_field_changed_under_the_same_id() -> None:
    old = make_record()
    new = regenerate(old).model_copy(update={"severity": "critical", "tags": ["validation", "tp"]})
    result = diff_records([old], [new])
    assert kinds(result) == (0, 0, 1, 0)
    change = result.changed[0]
    assert change.fields == ("severity", "tags")
    assert change.paired_by == "id"


# -- the scenarios of the issue --------------------------------------------------------------


def base() -> list[ErrorRecord]:
    return [
        make_record(file=SCHED, scope="check_tp", message="tp_size must be a positive integer", line=12),
        make_record(
            file=SCHED,
            scope="check_dp",
            message="dp_size {dp_size} must divide tp_size {tp_size}",
            guard="tp_size % dp_size",
            line=30,
        ),
        make_record(
            file=MEM,
            scope="alloc",
            cls="RuntimeError",
            message="Out of memory while allocating {n} KV slots",
            guard="n > free",
            line=50,
        ),
    ]


def test_added_and_removed() -> None:
    old = base()
    extra = make_record(
        file=MEM, scope="free", message="double free of slot {i}", guard="i in freed", line=80
    )
    new = [regenerate(r) for r in old[1:]] + [regenerate(extra)]
    result = diff_records(old, new)
    assert kinds(result) == (1, 1, 0, 2)
    assert result.added[0].errorMessage == "double free of slot {i}"
    assert result.removed[0].errorMessage == "tp_size must be a positive integer"


def test_reworded_message_is_one_change() -> None:
    old = base()
    new = [
        regenerate(old[0], message="tp_size must be a positive integer, got {tp_size}"),
        *map(regenerate, old[1:]),
    ]
    assert new[0].id != old[0].id  # the id follows the message, so only similarity can pair them
    result = diff_records(old, new)
    assert kinds(result) == (0, 0, 1, 2)
    change = result.changed[0]
    assert change.paired_by == "similar"
    assert change.fields == ("id", "slug", "errorMessage", "messagePattern")


def test_move_within_a_file_is_unchanged() -> None:
    old = base()
    moved = regenerate(old[0], line=200, indent="        ", above=("class TpChecks:",))
    result = diff_records(old, [moved, *map(regenerate, old[1:])])
    assert kinds(result) == (0, 0, 0, 3)


def test_move_within_a_file_under_a_new_scope_pairs_by_similarity() -> None:
    old = base()
    # A new enclosing scope: the extractor gives another id and the documentation names the scope.
    moved = regenerate(old[0], line=200, scope="validate_tp")
    result = diff_records(old, [moved, *map(regenerate, old[1:])])
    assert kinds(result) == (0, 0, 1, 2)
    assert result.changed[0].fields == ("id", "documentation", "triggerScenarios")


def test_move_to_another_file_is_one_change() -> None:
    old = base()
    moved = regenerate(old[0], file="python/sglang/srt/server_args.py", line=900)
    result = diff_records(old, [moved, *map(regenerate, old[1:])])
    assert kinds(result) == (0, 0, 1, 2)
    change = result.changed[0]
    assert change.paired_by == "moved-file"
    assert change.fields == ("id", "filePath")


def test_renamed_file_pairs_through_the_rename_map() -> None:
    old = base()
    renamed = "python/sglang/srt/managers/scheduler_core.py"
    # Renamed and reworded at once: only the rename map puts both versions in one bucket.
    new = [
        regenerate(old[0], file=renamed, message="tp_size must be positive (got {tp_size})"),
        regenerate(old[1], file=renamed),
        regenerate(old[2]),
    ]
    without = diff_records(old, new)
    assert kinds(without) == (1, 1, 1, 1)
    result = diff_records(old, new, renames={SCHED: renamed, "python/sglang/gone.py": None})
    assert kinds(result) == (0, 0, 2, 1)
    assert {c.fields for c in result.changed} == {
        ("id", "slug", "errorMessage", "messagePattern", "filePath"),
        ("id", "filePath"),
    }
    assert sorted(c.paired_by for c in result.changed) == ["exact", "similar"]


def test_pure_line_shift_is_no_difference() -> None:
    old = base()
    new = [regenerate(r, line=r.lineNumber + 17) for r in old]
    result = diff_records(old, new)
    assert kinds(result) == (0, 0, 0, 3)
    assert not result.has_differences


def test_unrelated_sites_in_one_file_do_not_pair() -> None:
    old = base()
    other = make_record(
        file=SCHED,
        scope="load_lora",
        message="LoRA adapter {name} not found",
        guard="name not in adapters",
        line=70,
    )
    result = diff_records(old, [regenerate(other), *map(regenerate, old[1:])])
    assert kinds(result) == (1, 1, 0, 2)


def test_bare_messages_pair_only_on_their_surroundings() -> None:
    stub = make_record(
        file=SCHED, scope="forward", cls="NotImplementedError", message="", guard="True", line=20
    )
    elsewhere = make_record(
        file=SCHED, scope="backward", cls="NotImplementedError", message="", guard="self.training", line=60
    )
    # One stub removed, an unrelated one added: not the same site.
    assert kinds(diff_records([stub], [regenerate(elsewhere)])) == (1, 1, 0, 0)
    # The same stub moved to another file: the surroundings match.
    moved = regenerate(stub, file=MEM, line=300)
    result = diff_records([stub], [moved])
    assert kinds(result) == (0, 0, 1, 0)
    assert result.changed[0].fields == ("id", "filePath")


def test_assert_turned_into_raise_keeps_its_pairing() -> None:
    old = make_record(cls="AssertionError", message="page_size must be a power of two", guard="page_size & 1")
    new = regenerate(old, cls="ValueError")
    result = diff_records([old], [new])
    assert kinds(result) == (0, 0, 1, 0)
    assert result.changed[0].paired_by == "class-changed"
    assert result.changed[0].fields == ("id", "errorClass", "documentation")


def test_the_best_candidate_wins() -> None:
    a = make_record(
        scope="f", message="expected dtype float16 but got {dtype}", guard="dtype != torch.float16", line=10
    )
    b = make_record(
        scope="g", message="expected dtype bfloat16 but got {dtype}", guard="dtype != torch.bfloat16", line=40
    )
    a2 = regenerate(a, message="expected dtype float16, got {dtype}")
    b2 = regenerate(b, message="expected dtype bfloat16, got {dtype}")
    result = diff_records([a, b], [b2, a2])
    assert kinds(result) == (0, 0, 2, 0)
    assert {(c.old.id, c.new.id) for c in result.changed} == {(a.id, a2.id), (b.id, b2.id)}


def test_duplicate_ids_are_refused() -> None:
    r = make_record()
    with pytest.raises(ExtractorError) as info:
        diff_records([r], [r, r], new_label="new.jsonl")
    assert info.value.where == "new.jsonl" and r.id in info.value.what


def test_output_is_sorted_and_deterministic() -> None:
    old = base()
    new = [regenerate(r, message=r.errorMessage + "!") for r in reversed(old)]
    first = render(diff_records(old, new), DiffFormat.json)
    second = render(diff_records(list(reversed(old)), list(reversed(new))), DiffFormat.json)
    assert first == second
    paths = [c["new"]["filePath"] for c in orjson.loads(first)["changed"]]
    assert paths == sorted(paths)


# -- subsystems and the changelog ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("python/sglang/srt/mem_cache/x.py", "srt/mem_cache"),
        ("python/sglang/srt/layers/attention/flashinfer_backend.py", "srt/layers"),
        ("python/sglang/srt/server_args.py", "srt"),
        ("python/sglang/utils.py", "sglang"),
        ("sgl-kernel/python/sgl_kernel/ops/x.py", "ops"),
        ("sgl-kernel/python/sgl_kernel/x.py", "sgl_kernel"),
        ("tools/x.py", "tools"),
        ("x.py", "(top level)"),
    ],
)
def test_subsystem(path: str, expected: str) -> None:
    assert subsystem(path) == expected


def scenario() -> tuple[list[ErrorRecord], list[ErrorRecord]]:
    """Every kind of difference once, plus an unchanged site and one that only moved."""
    old = base()
    gone = make_record(
        file=MEM, scope="evict", message="cannot evict a locked `node`", guard="node.lock_ref", line=90
    )
    added = make_record(
        file="python/sglang/srt/layers/quantization/fp8.py",
        scope="apply",
        message="FP8 needs compute capability >= 8.9 | got {cap}",
        guard="cap < 89",
        line=15,
    )
    new = [
        regenerate(old[0], message="tp_size must be a positive integer, got {tp_size}"),
        regenerate(old[1], line=33),
        regenerate(old[2], file="python/sglang/srt/mem_cache/allocator.py", line=20),
        regenerate(added),
    ]
    return [*old, gone], new


def test_markdown_changelog_matches_golden() -> None:
    old, new = scenario()
    text = render_markdown(diff_records(old, new))
    golden = GOLDEN / "changelog.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text()


def test_markdown_groups_by_subsystem() -> None:
    old, new = scenario()
    text = render_markdown(diff_records(old, new))
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == ["## srt/layers", "## srt/managers", "## srt/mem_cache"]
    assert "`` cannot evict a locked `node` ``" in text  # a backtick inside the message survives


# -- counts add up under any edit ------------------------------------------------------------

FILES = (SCHED, MEM, "python/sglang/srt/server_args.py")
WORDS = ("tp", "dp", "size", "must", "be", "positive", "page", "kv", "cache", "dtype", "got", "{x}")

edit = st.sampled_from(["keep", "remove", "shift", "reword", "severity", "move-file"])


@st.composite
def datasets(draw: st.DrawFn) -> tuple[list[ErrorRecord], list[ErrorRecord]]:
    n = draw(st.integers(0, 12))
    old: list[ErrorRecord] = []
    seen: set[str] = set()
    for i in range(n):
        message = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=6)))
        record = make_record(
            file=draw(st.sampled_from(FILES)),
            scope=f"fn{i}",
            cls=draw(st.sampled_from(["ValueError", "RuntimeError", "AssertionError"])),
            message=message,
            guard=f"x{draw(st.integers(0, 3))} > 0",
            line=draw(st.integers(3, 500)),
        )
        if record.id not in seen:
            seen.add(record.id)
            old.append(record)
    new: list[ErrorRecord] = []
    for record in old:
        op = draw(edit)
        if op == "remove":
            continue
        if op == "shift":
            new.append(regenerate(record, line=record.lineNumber + draw(st.integers(1, 50))))
        elif op == "reword":
            new.append(regenerate(record, message=record.errorMessage + " now"))
        elif op == "severity":
            new.append(regenerate(record).model_copy(update={"severity": "warning"}))
        elif op == "move-file":
            new.append(regenerate(record, file="python/sglang/srt/moved.py"))
        else:
            new.append(regenerate(record))
    for j in range(draw(st.integers(0, 4))):
        new.append(
            make_record(
                file=draw(st.sampled_from(FILES)), scope=f"added{j}", message=f"added site {j}", sha=SHA_NEW
            )
        )
    return old, new


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets())
def test_counts_add_up(pair: tuple[list[ErrorRecord], list[ErrorRecord]]) -> None:
    old, new = pair
    result = diff_records(old, new)
    s = result.summary()
    assert len(new) == len(old) - s["removed"] + s["added"]
    assert len(old) == s["removed"] + s["changed"] + s["unchanged"]
    # Every record is accounted for exactly once on its side.
    old_ids = (
        [r.id for r in result.removed]
        + [c.old.id for c in result.changed]
        + [a.id for a, _ in result.unchanged]
    )
    new_ids = (
        [r.id for r in result.added]
        + [c.new.id for c in result.changed]
        + [b.id for _, b in result.unchanged]
    )
    assert sorted(old_ids) == sorted(r.id for r in old)
    assert sorted(new_ids) == sorted(r.id for r in new)
    for change in result.changed:
        assert change.fields and not set(change.fields) & set(LOCATION_FIELDS)
    assert not diff_records(old, old).has_differences


@settings(max_examples=40, deadline=None)
@given(datasets(), st.integers(1, 200))
def test_line_shifts_alone_are_never_differences(
    pair: tuple[list[ErrorRecord], list[ErrorRecord]], by: int
) -> None:
    old, _ = pair
    result = diff_records(old, [regenerate(r, line=r.lineNumber + by) for r in old])
    assert not result.has_differences
    assert len(result.unchanged) == len(old)


# -- the real CLI ----------------------------------------------------------------------------


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    # In this process: the real process is run in test_cli_conventions.
    return run_in_process("diff", *args)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    old, new = scenario()
    return write(tmp_path / "old.jsonl", old), write(tmp_path / "new.jsonl", new, VERSION_NEW)


def test_cli_same_dataset_exits_0(files: tuple[Path, Path]) -> None:
    old, _ = files
    run = cli(old, old)
    assert run.returncode == 0, run.stderr
    assert "0 added, 0 removed, 0 changed, 4 unchanged" in run.stdout


def test_cli_differences_exit_1_as_json(files: tuple[Path, Path]) -> None:
    run = cli(*files, "--format", "json")
    assert run.returncode == 1, run.stderr
    doc = orjson.loads(run.stdout)
    assert list(doc) == ["from", "to", "summary", "added", "removed", "changed"]
    assert (doc["from"], doc["to"]) == (SHA_OLD, SHA_NEW)
    assert doc["summary"] == {"added": 1, "removed": 1, "changed": 2, "unchanged": 1}
    assert doc["added"][0]["filePath"] == "python/sglang/srt/layers/quantization/fp8.py"
    assert {tuple(c["fields"]) for c in doc["changed"]} == {
        ("id", "slug", "errorMessage", "messagePattern"),
        ("id", "filePath"),
    }
    ErrorRecord.model_validate(doc["changed"][0]["old"])  # records exactly as the datasets hold them


def test_cli_table_and_markdown(files: tuple[Path, Path], tmp_path: Path) -> None:
    table = cli(*files)
    assert table.returncode == 1, table.stderr
    assert "removed" in table.stdout and "cannot evict a locked `node`" in table.stdout
    assert "1 added, 1 removed, 2 changed, 1 unchanged" in table.stdout
    out = tmp_path / "changes.md"
    md = cli(*files, "--format", "markdown", "--out", out)
    assert md.returncode == 1, md.stderr
    assert md.stdout == ""
    assert out.read_text() == render_markdown(diff_records(*scenario()))


def test_cli_bad_format_and_mixed_modes_exit_2(files: tuple[Path, Path]) -> None:
    bad = cli(*files, "--format", "yaml")
    assert bad.returncode == 2 and "--format" in bad.stderr
    mixed = cli(files[0], "--from", "HEAD~1", "--to", "HEAD")
    assert mixed.returncode == 2 and "two dataset files" in mixed.stderr
    for run in (bad, mixed):
        assert "Traceback" not in run.stderr


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize(
    ("damage", "line", "what"),
    [
        (lambda ls: [*ls[:-1], ls[-1][:-40]], 4, "truncated line"),
        (lambda ls: [ls[0], b"{not json\n", *ls[1:]], 2, "invalid JSON"),
        (lambda ls: [*ls, ls[1]], 5, "duplicate id"),
        (lambda ls: [ls[0].replace(b'"severity":"error"', b'"severity":"fatal"'), *ls[1:]], 1, "severity"),
    ],
    ids=["truncated", "bad-json", "duplicate-id", "bad-value"],
)
def test_cli_invalid_input_exits_2_naming_file_and_line(
    files: tuple[Path, Path], damage: Callable[[list[bytes]], list[bytes]], line: int, what: str
) -> None:
    old, new = files
    new.write_bytes(b"".join(damage(lines_of(new))))
    run = cli(old, new)
    assert run.returncode == 2
    assert f"{new}:{line}" in run.stderr.replace("\n", "")
    assert what in run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


def test_cli_missing_file_exits_2(files: tuple[Path, Path], tmp_path: Path) -> None:
    run = cli(files[0], tmp_path / "nope.jsonl")
    assert run.returncode == 2
    assert "nope.jsonl" in run.stderr and "Traceback" not in run.stderr


def test_trusted_unchanged_file_hides_prose_drift_only() -> None:
    old = make_record(file=SCHED)
    # Same site, same file; only prose differs (a flag's help text changed in another file).
    drifted = regenerate(old).model_copy(
        update={"documentation": "Raised when --tp-size (now: tensor parallel) <= 0."}
    )
    gone = make_record(file=SCHED, scope="other", message="another message entirely", line=60)
    assert kinds(diff_records([old], [drifted])) == (0, 0, 1, 0)
    trusted = diff_records([old, gone], [drifted], renames={}, trust_unchanged_files=True)
    assert kinds(trusted) == (0, 1, 0, 1)  # an unpaired record is still reported
    # Once git says the file changed, the drift is a change again.
    touched = diff_records([old], [drifted], renames={SCHED: SCHED}, trust_unchanged_files=True)
    assert kinds(touched) == (0, 0, 1, 0)
    assert touched.changed[0].fields == ("documentation",)


def test_prose_is_compared_without_the_sites_own_position() -> None:
    old = make_record(file=SCHED, line=40)
    shifted = regenerate(old, line=95)
    assert "line 95" in shifted.documentation and "scheduler.py:95" in shifted.triggerScenarios
    assert kinds(diff_records([old], [shifted])) == (0, 0, 0, 1)
    # Other numbers in prose are content: a port, a version, a size.
    port = old.model_copy(update={"documentation": old.documentation + " Port 8080 is used."})
    other_port = shifted.model_copy(update={"documentation": shifted.documentation + " Port 8081 is used."})
    assert diff_records([port], [other_port]).changed[0].fields == ("documentation",)
    # A number that happens to equal the old line, quoted after ':', is masked only on its own side.
    quoted = shifted.model_copy(update={"triggerScenarios": shifted.triggerScenarios + " See x.py:40."})
    assert diff_records([old], [quoted]).changed[0].fields == ("triggerScenarios",)


def test_near_identical_message_pairs_even_when_its_surroundings_changed() -> None:
    old = make_record(
        file=MEM,
        scope="load_moe_scheme",
        message='Missing MoE quantization description for layer {prefix}: {", ".join(missing)}',
        guard="missing",
        line=254,
    )
    new = regenerate(
        old,
        scope="resolve_scheme",
        message='Missing MoE quantization description for layer {prefix}: {"; ".join(tried)}',
        guard="not found and tried",
        above=("    # Try every naming convention before giving up.", "    for name in candidates: pass"),
        line=289,
    )
    result = diff_records([old], [new])
    assert kinds(result) == (0, 0, 1, 0)
    assert result.changed[0].paired_by == "similar"


def test_class_change_with_a_small_rewording_pairs() -> None:
    old = make_record(
        file=MEM,
        cls="AssertionError",
        message="expand width must be R ({R}) or 2*R ({2 * R})",
        guard="w != R",
        line=184,
    )
    new = regenerate(
        old, cls="ValueError", message="expand width must be R ({rank}) or 2*R ({2 * rank})", line=147
    )
    result = diff_records([old], [new])
    assert kinds(result) == (0, 0, 1, 0)
    assert result.changed[0].paired_by == "class-changed"
    assert {"errorClass", "errorMessage"} <= set(result.changed[0].fields)
    # A different message under a different class is another site.
    other = regenerate(
        old, cls="ValueError", message="rank {rank} exceeds the kernel's limit of 64", line=147
    )
    assert kinds(diff_records([old], [other])) == (1, 1, 0, 0)


def test_cli_unwritable_out_exits_2(files: tuple[Path, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    run = cli(*files, "--out", blocker / "changes.json", "--format", "json")
    assert run.returncode == 2
    assert "changes.json" in run.stderr and "Traceback" not in run.stderr


def test_a_new_id_scheme_pairs_every_site_exactly() -> None:
    old = [*base(), make_record(file=MEM, scope="evict", message="cannot evict a locked node", line=90)]
    new = [regenerate(r, rid=f"{i:016x}", line=r.lineNumber + 2) for i, r in enumerate(old)]
    result = diff_records(old, new)
    assert kinds(result) == (0, 0, 4, 0)
    assert {c.paired_by for c in result.changed} == {"exact"}
    assert {c.fields for c in result.changed} == {("id",)}
