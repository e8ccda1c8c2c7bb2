"""Benchmark of the extractor against the C parser, on a real mirror of sglang (issue 7).

    .venv/bin/python bench/bench.py --source /path/to/sglang.git --sha <commit> [--jobs N] [--out t.md]

Measures, in one run:

* the reference: a single-process ``ast.parse`` of every in-scope file (blobs are read first,
  only the parsing is timed);
* a cold extract (empty temporary cache), a warm extract (same sha, same cache) and an
  incremental extract at ``<sha>~N`` (same cache, so only files that differ are analysed), each
  the real CLI run as a subprocess, wall-clock from start to exit;
* match query latency (``bench/match_queries.py``), and on pasted inputs the latency, the rank-1
  share and the time for a 25 MB server log (``bench/match_eval.py``).

Each extract is reported as a ratio to a reference parse measured just before it (the machine may
be shared and its load change between phases), with its CPU time over the reference's, the peak
memory of its process tree (the sum of the RSS of the CLI process and its workers, sampled from
``/proc``; pages shared by forked workers count once per process, so this is an upper bound) and
the largest single process (``ru_maxrss``). Output is a markdown table on stdout (and ``--out``).
Speed is never a test: this script only measures and reports.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# A fixed build time: the cold and warm outputs must then be byte-identical, which the bench checks.
EPOCH = "1700000000"
TARGETS = {"cold": 3.0, "warm": 0.3, "incremental": 0.5}
MEMORY_LIMIT_MB = 2048


@dataclass
class Phase:
    name: str
    seconds: float
    cpu: float = 0.0
    ref: Phase | None = None  # the reference measured just before this phase
    tree_peak_mb: float = 0.0
    process_peak_mb: float = 0.0
    note: str = ""
    stats: dict[str, str] = field(default_factory=dict)


# ----------------------------------------------------------------------------------- reference


def load_blobs(source: str, sha: str) -> tuple[str, list[bytes]]:
    """The full sha and the bytes of every in-scope file (default scope), read once."""
    from extractor.config import Scope
    from extractor.source.git import open_target

    with open_target(source, sha) as target:
        files = target.files(Scope())
        blobs = dict(target.read_many(sorted({f.blob_sha for f in files})))
        full = target.sha
    return full, [blobs[f.blob_sha] for f in files]


def reference(datas: list[bytes]) -> Phase:
    """Single-process ``ast.parse`` of the in-scope files, bytes already in memory."""
    lines = sum(d.count(b"\n") for d in datas)
    failed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started, cpu = time.perf_counter(), time.process_time()
        for data in datas:
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                failed += 1
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    note = f"{len(datas)} files, {lines:,} lines" + (f", {failed} unparsable" if failed else "")
    return Phase("reference: `ast.parse`, 1 process", seconds, cpu=cpu, note=note)


# ----------------------------------------------------------------------------------- extracts


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                kids.extend(int(k) for k in fh.read().split())
    except OSError:
        pass
    return kids


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree_rss_kb(root: int) -> int:
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss_kb(pid)
        todo.extend(_children(pid))
    return total


class _Sampler(threading.Thread):
    """Polls the summed RSS of a process tree until stopped; keeps the peak."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.peak_kb = pid, every, 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak_kb = max(self.peak_kb, _tree_rss_kb(self.pid))
            self._stop_event.wait(self.every)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def run_extract(name: str, args: list[str], env: dict[str, str]) -> Phase:
    """One CLI extract as a subprocess: wall time, peak tree RSS, largest process, its summary."""
    cmd = [sys.executable, "-m", "extractor", "extract", *args]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=env.get("PYTHONPATH", ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    sampler = _Sampler(proc.pid)
    sampler.start()
    chunks: dict[str, bytes] = {}

    def drain() -> None:
        assert proc.stdout is not None and proc.stderr is not None
        chunks["err"] = proc.stderr.read()
        chunks["out"] = proc.stdout.read()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    # wait4 gives this child's own rusage; its ru_maxrss covers the workers it waited for too.
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.stop()
    reader.join()
    out_b, err_b = chunks.get("out", b""), chunks.get("err", b"")
    if proc.returncode != 0:
        sys.stderr.write(err_b.decode("utf-8", "replace"))
        raise SystemExit(f"bench: `{' '.join(cmd)}` exited {proc.returncode}")
    stats = _summary(err_b.decode("utf-8", "replace") + out_b.decode("utf-8", "replace"))
    note = ", ".join(f"{stats[k]} {k}" for k in ("files parsed", "files from cache", "records") if k in stats)
    return Phase(
        name,
        seconds,
        cpu=usage.ru_utime + usage.ru_stime,
        tree_peak_mb=sampler.peak_kb / 1024,
        process_peak_mb=usage.ru_maxrss / 1024,
        note=note,
        stats=stats,
    )


def _summary(text: str) -> dict[str, str]:
    """The figures of the CLI's summary table (``files parsed 12`` rows)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("│|").split("│") if c.strip()]
        if len(cells) == 2:
            found[cells[0]] = cells[1]
    return found


# ----------------------------------------------------------------------------------- match


def match_latency(dataset: Path) -> Phase | None:
    """Mean / p95 query latency over queries made from the dataset's own messages, if offered."""
    import orjson
    from match_eval import bench_pasted
    from match_queries import bench_queries

    queries: list[str] = []
    with dataset.open("rb") as fh:
        for i, line in enumerate(fh):
            if i % 97:
                continue
            rec = orjson.loads(line)["record"]
            message = rec["errorMessage"].replace("{", "").replace("}", "") or "failed"
            queries.append(f"{rec['errorClass'].rsplit('.', 1)[-1]}: {message}")
            if len(queries) >= 50:
                break
    queries.append(
        "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nKeyError: 'zzz'"
    )
    result = bench_queries(dataset, queries)
    pasted = bench_pasted(dataset)
    note = (
        f"{int(result['queries'])} queries: mean {result['mean_ms']:.1f} ms, p95 {result['p95_ms']:.1f} ms, "
        f"max {result['max_ms']:.1f} ms; dataset load {result['load_s']:.2f} s; "
        f"{int(pasted['inputs'])} pasted inputs (bench/match_eval.py): mean {pasted['mean_ms']:.1f} ms, "
        f"p95 {pasted['p95_ms']:.1f} ms, max {pasted['max_ms']:.1f} ms (target < 100), rank-1 "
        f"{pasted['rank1']:.1%}; a {pasted['log_mb']:.0f} MB log in {pasted['log_s']:.2f} s (target < 5), "
        f"{int(pasted['log_groups'])} errors"
    )
    return Phase(
        "match: load + queries", result["load_s"] + result["mean_ms"] * result["queries"] / 1000, note=note
    )


# ----------------------------------------------------------------------------------- report


def table(
    refs: list[Phase], phases: list[Phase], match: Phase | None, cores: int, jobs: int, load: str
) -> str:
    secs = sorted(r.seconds for r in refs)
    cpus = sorted(r.cpu for r in refs)
    rows = [
        f"Machine: {cores} cores ({platform.machine()}, Python {platform.python_version()}); extracts with "
        f"`--jobs {jobs}`; load average {load}.",
        "",
        "| phase | seconds | reference just before (s) | ratio to it | target | CPU s, all processes "
        "| CPU ratio | peak RSS, process tree | largest process | notes |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| {refs[0].name} (median of {len(refs)}) | {secs[len(secs) // 2]:.2f} | "
        f"{secs[0]:.2f}-{secs[-1]:.2f} | 1.00 | | {cpus[len(cpus) // 2]:.2f} | 1.00 | | | {refs[0].note} |",
    ]
    for p in phases:
        ref = p.ref or refs[0]
        ratio = p.seconds / ref.seconds if ref.seconds else float("inf")
        cpu_ratio = p.cpu / ref.cpu if ref.cpu else float("inf")
        target = TARGETS.get(p.name.split()[0])
        mark = "" if target is None else f"≤ {target:.1f} {'ok' if ratio <= target else 'MISSED'}"
        mem_ok = "" if p.tree_peak_mb < MEMORY_LIMIT_MB else " (over 2 GB)"
        rows.append(
            f"| {p.name} | {p.seconds:.2f} | {ref.seconds:.2f} | {ratio:.2f} | {mark} | {p.cpu:.2f} | {cpu_ratio:.2f} "
            f"| {p.tree_peak_mb:,.0f} MB{mem_ok} | {p.process_peak_mb:,.0f} MB | {p.note} |"
        )
    if match is not None:
        rows.append(f"| {match.name} | {match.seconds:.2f} | | | | | | | | {match.note} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--source", required=True, help="Local clone or bare mirror of sglang.")
    ap.add_argument("--sha", required=True, help="Commit-ish to analyse.")
    ap.add_argument("--back", type=int, default=40, help="Commits back for the incremental run (default 40).")
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="Worker processes (default: cores)."
    )
    ap.add_argument("--out", type=Path, help="Also write the markdown table here.")
    ap.add_argument(
        "--keep", type=Path, help="Keep the cache and datasets in this folder (default: a temp dir)."
    )
    args = ap.parse_args(argv)

    cores = os.cpu_count() or 1
    work = args.keep or Path(tempfile.mkdtemp(prefix="sge-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    # The extracts run a frozen copy of the extractor: the result cache is keyed by a hash of the
    # code, so an edit in the checkout between two phases would otherwise turn "warm" into "cold".
    code = work / "code"
    shutil.rmtree(code, ignore_errors=True)
    shutil.copytree(ROOT / "extractor", code / "extractor", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH, PYTHONPATH=str(code))
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    full, datas = load_blobs(args.source, args.sha)
    refs: list[Phase] = []

    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    common = ["--source", args.source, "--cache-dir", str(cache), "--jobs", str(args.jobs)]
    phases: list[Phase] = []
    try:
        for name, sha, out in (
            ("cold extract (empty cache)", full, "cold.jsonl"),
            ("warm extract (same sha)", full, "warm.jsonl"),
            (f"incremental extract (`sha~{args.back}`)", f"{full}~{args.back}", "incremental.jsonl"),
        ):
            # The machine may be shared: each phase is compared with a reference measured just
            # before it, so a change of load between phases does not skew its ratio.
            ref = reference(datas)
            refs.append(ref)
            print(f"reference: {ref.seconds:.2f} s ({ref.note})", file=sys.stderr)
            phase = run_extract(name, [*common, "--sha", sha, "--out", str(work / out)], env)
            phase.ref = ref
            print(f"{name}: {phase.seconds:.2f} s ({phase.note})", file=sys.stderr)
            phases.append(phase)
        same = (work / "cold.jsonl").read_bytes() == (work / "warm.jsonl").read_bytes()
        phases[1].note += "; output identical to cold" if same else "; OUTPUT DIFFERS FROM COLD"
        match = match_latency(work / "cold.jsonl")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    # Other processes on the machine slow the phases unevenly; the 1-minute load says how busy it was.
    text = table(
        refs, phases, match, cores, args.jobs, f"{load_before:.1f} at start, {load_after:.1f} at end"
    )
    text += f"\nBench process itself (reference parse, match): peak {own:,.0f} MB.\n"
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
