"""The pipeline's reuse of earlier work: per-file results keyed by what they read, the knowledge
cache, validation in the workers, and the same bytes whatever was reused or however many jobs ran."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from extractor.api import ExtractOptions, ExtractResult, ExtractStats, extract
from extractor.engine import pipeline, workers
from extractor.engine.cache import ResultCache
from extractor.engine.commit_files import commit_files
from extractor.engine.dataset_store import DatasetStore
from extractor.engine.read_kinds import READ_KINDS, ReadKind
from extractor.engine.reads import ReadsCheck, RecordingKnowledge
from extractor.prose.flag_spelling import FINDERS, declared_flag, find_flag
from extractor.reasons import Reason
from extractor.records.jsonl import dumps_line
from extractor.source.git import open_target
from extractor.types import Failed, Parsed
from tests.gitrepos import make_repo

ROOT = Path(__file__).resolve().parents[1]
ARGS = "python/sglang/srt/server_args.py"
GATE = "python/sglang/srt/layers/gate.py"
PLAIN = "python/sglang/srt/utils/plain.py"

SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    tp_size: int = 1
    max_queue: int = 8
    draft_path: str = ""
{extra}
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, help="{tp_help}")
        parser.add_argument("--max-queue", type=int, help="Requests allowed to wait.")
        parser.add_argument("--draft-path", type=str, help="Where the draft model is.")
"""


def server_args(tp_help: str = "Tensor parallel size.", extra: str = "") -> bytes:
    return SERVER_ARGS.format(tp_help=tp_help, extra=extra).encode()


# Reads a flag in its guard: its prose depends on what the knowledge says about --tp-size.
GATE_SRC = b"""\
def check(server_args):
    if server_args.tp_size > 8:
        raise ValueError("tp_size must be at most 8")
"""

# Reads no flag at all.
PLAIN_SRC = b"""\
def parse_port(text):
    if not text.isdigit():
        raise ValueError(f"port must be a number, got {text!r}")
    return int(text)
"""


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")


def filler(i: int) -> bytes:
    return f"def f{i}(x):\n    assert x != {i}, 'x must not be {i}'\n    return x\n".encode()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    tmp = tmp_path_factory.mktemp("repo")
    first = {ARGS: server_args(), GATE: GATE_SRC, PLAIN: PLAIN_SRC}
    # Enough files that a run with two jobs uses the worker pool.
    first.update({f"python/sglang/srt/fill/m{i}.py": filler(i) for i in range(10)})
    repo, shas = make_repo(
        tmp,
        [
            first,
            # 1: a new flag: no existing file read it, so nothing but server_args.py is redone.
            {ARGS: server_args(extra="    new_flag: bool = False\n")},
            # 2: the help of a flag the gate reads: the gate is redone, the rest is not.
            {ARGS: server_args(tp_help="Tensor parallel degree.", extra="    new_flag: bool = False\n")},
            # 3: a rename keeps the blob; the record must name the new path.
            {PLAIN: None, "python/sglang/srt/utils/renamed.py": PLAIN_SRC},
        ],
    )
    return repo, shas


def run(repo: Path, sha: str, cache: Path | None, jobs: int = 1) -> ExtractResult:
    options = ExtractOptions.build(source=str(repo), sha=sha, jobs=jobs, cache_dir=cache)
    if cache is None:
        options = ExtractOptions.build(source=str(repo), sha=sha, jobs=jobs, use_cache=False)
    return extract(options)


def dataset_bytes(result: ExtractResult) -> bytes:
    return b"".join(dumps_line(r, "2026-01-01T00:00:00.000Z") for r in result.records)


def test_reuse_follows_what_each_file_read(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, shas = history
    cache = tmp_path / "cache"
    cold = run(repo, shas[0], cache)
    assert cold.stats.files_parsed == cold.stats.files_in_scope == 13

    warm = run(repo, shas[0], cache)
    assert warm.stats.files_parsed == 0
    assert dataset_bytes(warm) == dataset_bytes(cold)

    added_flag = run(repo, shas[1], cache)
    # Only server_args.py itself changed blob; the gate read --tp-size, which did not change.
    assert added_flag.stats.files_parsed == 1
    assert dataset_bytes(added_flag) == dataset_bytes(run(repo, shas[1], None))

    new_help = run(repo, shas[2], cache)
    assert new_help.stats.files_parsed == 2  # server_args.py and the gate that reads --tp-size
    fresh = run(repo, shas[2], None)
    assert dataset_bytes(new_help) == dataset_bytes(fresh)
    (gate,) = [r for r in new_help.records if r.filePath == GATE]
    assert "Tensor parallel degree" in gate.documentation


def test_a_renamed_file_is_analysed_under_its_new_path(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = history
    cache = tmp_path / "cache"
    run(repo, shas[2], cache)
    moved = run(repo, shas[3], cache)
    assert moved.stats.files_parsed == 1
    (rec,) = [r for r in moved.records if "port must be a number" in r.errorMessage]
    assert rec.filePath == "python/sglang/srt/utils/renamed.py"
    assert "utils/plain.py" not in rec.documentation + rec.triggerScenarios
    assert dataset_bytes(moved) == dataset_bytes(run(repo, shas[3], None))


def test_jobs_do_not_change_the_output(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, shas = history
    one = run(repo, shas[0], tmp_path / "a", jobs=1)
    two = run(repo, shas[0], tmp_path / "b", jobs=2)
    assert two.stats.files_parsed == 13
    assert dataset_bytes(one) == dataset_bytes(two)
    # The workers wrote the cache entries: a second run with two jobs reuses all of them.
    again = run(repo, shas[0], tmp_path / "b", jobs=2)
    assert again.stats.files_parsed == 0
    assert dataset_bytes(again) == dataset_bytes(one)


def test_assemble_without_revalidation_builds_the_same_records(history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    with open_target(str(repo), shas[0]) as target:
        files = target.files(ExtractOptions.build().scope)
        knowledge = pipeline.load_knowledge(target)
        payloads = dict(workers.analyse_all(target, files, 1, "o/r", knowledge, None, lambda key: None))
        sha = target.sha
    fast = pipeline.assemble(files, payloads, sha, "o/r", "2026-01-01T00:00:00.000Z", ExtractStats())
    slow = pipeline.assemble(
        files, payloads, sha, "o/r", "2026-01-01T00:00:00.000Z", ExtractStats(), revalidate=True
    )
    assert len(fast) == len(slow) == 12  # server_args.py raises nothing
    assert [r.model_dump(mode="json") for r in fast] == [r.model_dump(mode="json") for r in slow]
    assert fast == slow


def test_a_record_the_model_rejects_fails_its_file_not_the_run() -> None:
    payload = pipeline.analyse_file(GATE, GATE_SRC, "o/r", pipeline.Knowledge.empty())
    assert isinstance(payload, Parsed)
    assert pipeline.check_outcome(payload, GATE, "o/r") is payload
    bad = Parsed([{**payload.records[0], "severity": "catastrophic"}, *payload.records[1:]], payload.sites)
    checked = pipeline.check_outcome(bad, GATE, "o/r")
    assert isinstance(checked, Failed) and checked.reason is Reason.INVALID_RECORD
    assert "line 3" in checked.text and "severity" in checked.text


def test_a_stale_answer_in_a_cache_entry_forces_a_new_analysis(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = history
    cache = tmp_path / "cache"
    run(repo, shas[0], cache)
    results = ResultCache(cache, pipeline.namespace(ExtractOptions.build().scope))
    with open_target(str(repo), shas[0]) as target:
        (gate,) = [f for f in target.files(ExtractOptions.build().scope) if f.path == GATE]
    key = pipeline.file_key(gate)
    raw = results.get(key)
    assert raw is not None
    reads, payload = raw.split(b"\n", 1)
    answers = orjson.loads(reads)
    assert [ReadKind.FLAG.value, GATE, "tp_size"] in [a[:3] for a in answers]  # the gate's read of --tp-size
    forged = [[*a[:3], "0000000000000000"] if a[2] == "tp_size" else a for a in answers]
    results.put(key, orjson.dumps(forged) + b"\n" + payload)
    # A rerun at the same commit reads the kept records before any file's entry: without them,
    # the forged answer is checked and the gate analysed again.
    DatasetStore(cache, ExtractOptions.build().scope).forget()
    assert run(repo, shas[0], cache).stats.files_parsed == 1


def test_a_rerun_at_the_same_commit_reads_the_kept_records(
    history: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, shas = history
    cache = tmp_path / "cache"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    cold = run(repo, shas[0], cache)
    monkeypatch.setattr(pipeline, "assemble", _no_assembly)
    again = run(repo, shas[0], cache)
    assert again.records == cold.records and again.dataset_version == cold.dataset_version
    assert (again.stats.files_parsed, again.stats.files_from_cache) == (0, cold.stats.files_in_scope)
    assert (again.stats.sites, again.stats.records, again.stats.failures) == (
        cold.stats.sites,
        cold.stats.records,
        cold.stats.failures,
    )
    # Another build time is every record's analyzedAt, and nothing else changes.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")
    later = run(repo, shas[0], cache)
    assert {r.analyzedAt for r in later.records} == {later.dataset_version} != {cold.dataset_version}
    assert [r.model_dump(exclude={"analyzedAt"}) for r in later.records] == [
        r.model_dump(exclude={"analyzedAt"}) for r in cold.records
    ]
    monkeypatch.undo()
    # Another commit assembles (and then keeps its own records in place of these).
    with pytest.raises(AssertionError, match="assembled"):
        monkeypatch.setattr(pipeline, "assemble", _no_assembly)
        run(repo, shas[1], cache)


def test_a_damaged_kept_dataset_is_assembled_again(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, shas = history
    cache = tmp_path / "cache"
    cold = run(repo, shas[0], cache)
    path = DatasetStore(cache, ExtractOptions.build().scope).path
    path.write_bytes(path.read_bytes()[:-10])  # truncated: the checksum fails
    again = run(repo, shas[0], cache)
    assert dataset_bytes(again) == dataset_bytes(cold)
    assert again.stats.files_from_cache == cold.stats.files_in_scope


def _no_assembly(*args: object, **kwargs: object) -> None:
    raise AssertionError("assembled")


def test_every_read_kind_is_recorded_under_its_code_and_checked_again(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = history
    with open_target(str(repo), shas[0]) as target:
        knowledge = pipeline.load_knowledge(target, tmp_path / "cache")
        files = commit_files(target)
    recorder = RecordingKnowledge(knowledge)
    files.reads = recorder.reads
    assert files.blob_of(ARGS) is not None
    assert recorder.namespace_of(GATE) == knowledge.namespace_of(GATE)
    assert recorder.is_arg_class(ARGS, "ServerArgs")
    assert recorder.flags_for(GATE)["tp_size"].flag == "--tp-size"
    assert "max_queue" in list(recorder.flags_for(GATE))
    assert declared_flag("--tp-size", recorder.flags_for(GATE)) is not None
    assert recorder.env_of("SGLANG_NOT_DECLARED") is None
    # Whether the launch code turns a variable on is one answer per name, not the whole knowledge.
    assert recorder.launches_env("SGLANG_NOT_DECLARED") is knowledge.launches_env("SGLANG_NOT_DECLARED")
    assert recorder.checks_for(GATE, "tp_size") == knowledge.checks_for(GATE, "tp_size")
    assert recorder.distribution_for("torch") == knowledge.distribution_for("torch")
    assert recorder.knows_distributions() == knowledge.knows_distributions()
    assert recorder.default_namespace == knowledge.default_namespace  # any other use
    encoded = recorder.encoded()
    assert {row[0] for row in orjson.loads(encoded)} == {kind.value for kind in ReadKind}
    assert ReadsCheck(knowledge, files.blobs).holds(encoded)
    # Other knowledge gives other answers; a code this version does not write never holds.
    assert not ReadsCheck(pipeline.Knowledge.empty(), files.blobs).holds(encoded)
    assert not ReadsCheck(knowledge, files.blobs).holds(orjson.dumps([["f", GATE, "tp_size", None]]))


def test_every_flag_finder_answers_alike_through_the_recording_flags(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = history
    with open_target(str(repo), shas[0]) as target:
        knowledge = pipeline.load_knowledge(target, None)
    plain = knowledge.flags_for(GATE)
    keys = [
        "--tp-size",
        "--tensor-parallel-size",
        "tensor_parallel_size",
        "--max-queue",
        "draft model",
        "x",
        "--tp",
    ]
    for finder in FINDERS:
        recorder = RecordingKnowledge(knowledge)
        recorded = recorder.flags_for(GATE)
        answers = [find_flag(finder, key, recorded) for key in keys]
        assert answers == [FINDERS[finder](plain, key) for key in keys]
        rows = orjson.loads(recorder.encoded())
        # One answer per key, never the whole table.
        assert sorted(row[2] for row in rows) == sorted(f"{finder}:{key}" for key in keys)
        assert {row[0] for row in rows} == {ReadKind.FOUND_FLAG.value}
        assert ReadsCheck(knowledge).holds(recorder.encoded())
    # Each finder finds something here, so the comparison above is not of two misses.
    assert all(any(FINDERS[f](plain, k) is not None for k in keys) for f in FINDERS)


def test_read_kinds_are_one_registry() -> None:
    codes = [kind.value for kind in ReadKind]
    assert len(set(codes)) == len(codes) and set(READ_KINDS) == set(ReadKind)
    assert all(kind.summary and len(kind.value) > 1 for kind in ReadKind)


class _Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch boom-marker",))


def test_knowledge_cache_hits_and_refuses_foreign_pickles(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = history
    cache = tmp_path / "cache"
    with open_target(str(repo), shas[0]) as target:
        built = pipeline.load_knowledge(target, cache)
        assert built.flags_for(GATE)["tp_size"].flag == "--tp-size"
        store = pipeline.knowledge_cache(cache)
        (entry,) = store.folder.rglob("*.bin")
        cached = pipeline.load_knowledge(target, cache)
        assert cached is not built and cached.fingerprint() == built.fingerprint()
        # A cache entry naming code to run is refused and rebuilt, never executed.
        store.put(entry.stem, pickle.dumps(_Boom()))
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            rebuilt = pipeline.load_knowledge(target, cache)
        finally:
            os.chdir(cwd)
        assert not (tmp_path / "boom-marker").exists()
        assert rebuilt.fingerprint() == built.fingerprint()


ABANDON = """
import sys
from pathlib import Path
from extractor.engine import pipeline
from extractor.api import ExtractOptions, extract
from extractor.engine.cache import ResultCache
from extractor.errors import ExtractorError
from extractor.source.git import open_target

def broken(*args, **kwargs):
    raise ExtractorError("knowledge", "cannot read it")

pipeline.load_knowledge = broken
repo, sha, cache = sys.argv[1], sys.argv[2], Path(sys.argv[3])
options = ExtractOptions.build(source=repo, sha=sha, jobs=2, cache_dir=cache)
try:
    extract(options)
except ExtractorError as exc:
    print("refused:", exc.what)
results = ResultCache(cache, pipeline.namespace(options.scope))
with open_target(repo, sha) as target:
    for f in target.files(options.scope):
        if f.path.endswith("gate.py"):
            print("gate cached:", results.get(pipeline.file_key(f)) is not None)
"""


def test_workers_started_early_are_released_when_the_run_fails(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, shas = history
    # The workers start on the files before the knowledge exists; if building it fails they must
    # neither wait for it forever nor cache a result made without it.
    proc = subprocess.run(
        [sys.executable, "-c", ABANDON, str(repo), shas[0], str(tmp_path / "cache")],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "refused: cannot read it" in proc.stdout
    assert "gate cached: False" in proc.stdout


# Tells the user which flag to pass by its command-line spelling ("use --max-queue 16").
TOLD_SRC = b"""\
def admit(queue, limit):
    if len(queue) >= limit:
        raise RuntimeError("The request queue is full; use --max-queue 16 to allow more waiting requests.")
"""

# A tool script with its own command line: ``args.rounds`` there is its own ``--rounds``.
SCRIPT_SRC = b"""\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--rounds", type=int, default=3)
args = parser.parse_args()
if args.rounds < 1:
    raise ValueError("--rounds must be at least 1")
"""


# Reads one declared flag straight from the raw command line before the parser runs.
RAW_SRC = b"""\
def queue_limit(argv):
    at = argv.index("--max-queue")
    if int(argv[at + 1]) < 0:
        raise RuntimeError("Internal error: the raw queue limit did not parse.")
    return int(argv[at + 1])
"""


def test_a_flag_added_elsewhere_keeps_files_that_looked_flags_up_by_name(tmp_path: Path) -> None:
    told = "python/sglang/srt/managers/admit.py"
    script = "python/sglang/srt/tools/rounds.py"
    raw = "python/sglang/srt/entrypoints/raw.py"
    first = {ARGS: server_args(), told: TOLD_SRC, script: SCRIPT_SRC, raw: RAW_SRC}
    declared = '        parser.add_argument("--max-queue", type=int, help="Requests allowed to wait.")\n'
    with_flag = server_args(extra="    warmups: int = 0\n").replace(
        declared.encode(),
        (declared + '        parser.add_argument("--warmups", type=int, help="Warm-up rounds.")\n').encode(),
    )
    assert with_flag.count(b"--warmups") == 1
    repo, shas = make_repo(tmp_path / "repo", [first, {ARGS: with_flag}])
    cache = tmp_path / "cache"
    run(repo, shas[0], cache)
    with open_target(str(repo), shas[0]) as target:
        knowledge = pipeline.load_knowledge(target, None)
    recorder = RecordingKnowledge(knowledge)
    assert declared_flag("--max-queue", recorder.flags_for(told)) is not None
    assert [row[:3] for row in orjson.loads(recorder.encoded())] == [
        [ReadKind.FOUND_FLAG.value, told, "declared:--max-queue"]
    ]

    added = run(repo, shas[1], cache)
    # Each file looked flags up one by one (by spelling, or through the script's own flags
    # laid over the target's), so a new flag of server_args.py leaves their results standing.
    assert added.stats.files_parsed == 1
    assert dataset_bytes(added) == dataset_bytes(run(repo, shas[1], None))
