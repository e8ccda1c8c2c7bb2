"""Rank-1 accuracy of ``match`` on realistic pasted inputs made from a dataset's own records.

Each input kind imitates what users paste into an issue or a chat, built from a record whose
site is then the expected answer:

* ``full``: ``Class: message`` as raised (the control);
* ``title80``: that line cut at an issue title's 80 characters, sometimes ending in "…";
* ``cut_tail``: the message with its tail dropped at a word boundary, sometimes with "...";
* ``first_line``: the first line of a multi-line message;
* ``traceback``: a traceback whose innermost frame is the site, its line number moved as in
  another release, the printed source line, then the exception line;
* ``bare_assert``: such a traceback ending in a bare ``AssertionError`` (or another class with
  no message), its line number moved;
* ``log2``: a server log holding two different errors (each error counts as one case, right when
  its own result group ranks it first);
* ``reworded``: the message as an older release might have worded it (a field renamed, a clause
  dropped or added, one more item in a list; one or two such edits);
* ``moved_file``: a traceback with the message whose file sits in another folder (an older
  release's layout), its lines shifted;
* ``json_body``: the OpenAI-compatible server's JSON error body;
* ``reach_log``: a server log whose launch arguments or model config name a choice that reaches
  the site (``attention_backend='fa3'``, ``--enable-lora``, ``architectures=['XForCausalLM']``),
  then an exception line whose message another site, not reached by that choice, raises too. A
  tie does not count here: the named choice is what tells the two sites apart.

A case is right when the first result is the record it was made from, or one that no input of
that kind can tell apart from it (the same ``messagePattern`` and class, and for inputs with
frames the same file; for ``reach_log`` also reached by the named choice), or, except for
``reach_log``, one that scores exactly as high (a tie the input cannot break).

Usage: ``python bench/match_eval.py DATASET [--per-kind N] [--seed S] [--show-misses K]``.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from match_queries import render_message

from extractor.datasets.match import Matcher, analyse_pattern, last_name
from extractor.datasets.match.ranking import MIN_SPECIFICITY
from extractor.records.model import ErrorRecord
from extractor.records.reach_tags import arch_tag, kebab

KINDS = (
    "full",
    "title80",
    "cut_tail",
    "first_line",
    "traceback",
    "bare_assert",
    "log2",
    "reworded",
    "moved_file",
    "json_body",
    "reach_log",
)


@dataclass(frozen=True)
class Case:
    kind: str
    text: str
    expected: tuple[str, ...]  # one id per error the input holds, in order
    names: frozenset[str] = frozenset()  # the choices (as tags) a reach_log input names


def _installed(path: str) -> str:
    k = path.find("sglang/")
    return path[k:] if k >= 0 else path


def _source_line(record: ErrorRecord) -> str:
    lines = record.sourceCode.split("\n")
    k = record.lineNumber - record.sourceCodeStart
    return lines[k].strip() if 0 <= k < len(lines) else ""


def _function(record: ErrorRecord) -> str:
    m = re.match(r"In the [\w ]+? `([^`]+)`", record.documentation)
    return m.group(1).rsplit(".", 1)[-1] if m else "<module>"


def _traceback(record: ErrorRecord, rng: random.Random, last_line: str, shift: int) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/managers/scheduler.py", '
        "line 2711, in run_scheduler_process\n"
        "    scheduler.event_loop_normal()\n"
        f'  File "/usr/local/lib/python3.11/dist-packages/{_installed(record.filePath)}", '
        f"line {max(1, record.lineNumber + shift)}, in {_function(record)}\n"
        f"    {_source_line(record)}\n"
        f"{last_line}\n"
    )


def _reword(message: str, rng: random.Random, edits_wanted: int = 1) -> str | None:
    """The message as an older release may have put it; None when no edit applies."""
    edits: list[Callable[[str], str | None]] = []

    def rename(m: str) -> str | None:
        names = re.findall(r"\b([a-z]+(?:_[a-z]+)+|[a-z]{3,})(?==|:)", m)
        if not names:
            return None
        name = rng.choice(names)
        # Either way round: a field gained a prefix since (mode -> run_mode) or lost one.
        if "_" in name and rng.random() < 0.5:
            return m.replace(name, name.split("_", 1)[1], 1)
        return m.replace(name, "old_" + name if "_" in name else "run_" + name, 1)

    def drop_clause(m: str) -> str | None:
        parts = re.split(r"(?<=[.;,])\s+", m)
        if len(parts) < 2 or len(" ".join(parts[:-1])) < 25:
            return None
        return " ".join(parts[:-1]).rstrip(".,;")

    def add_clause(m: str) -> str | None:
        return m.rstrip(".") + ". Please check your configuration." if len(m) > 20 else None

    def one_more(m: str) -> str | None:
        lists = list(re.finditer(r"\[([^\[\]]+)\]", m))
        if not lists:
            return None
        x = lists[-1]
        return m[: x.end(1)] + ", 'legacy'" + m[x.end(1) :]

    def swap_word(m: str) -> str | None:
        for a, b in (("Unsupported", "Not supported"), ("must be", "should be"), ("not ", "no longer ")):
            if a in m:
                return m.replace(a, b, 1)
        return None

    edits = [rename, drop_clause, add_clause, one_more, swap_word]
    rng.shuffle(edits)
    out = message
    done = 0
    for edit in edits:
        new = edit(out)
        if new and new != out:
            out, done = new, done + 1
            if done == edits_wanted:
                break
    return out if done else None


_REACH_SENTENCE = re.compile(r"This code runs only (.+?)\.(?: |$)")
_TICKED = re.compile(r"`([^`]+)`")


def _choices(record: ErrorRecord) -> list[tuple[str, str, str]]:
    """``(kind, name, value)`` of the choices the record's reach sentence names first (its first
    alternative): flags with a value, switches, architectures."""
    m = _REACH_SENTENCE.search(record.documentation)
    if not m:
        return []
    out = []
    for part in m.group(1).split("; or ")[0].split(", "):
        for ticked in _TICKED.findall(part):
            if ticked.startswith("--"):
                name, _, value = ticked.partition(" ")
                out.append(("flag", name, value))
            elif part.startswith("for ") and not ticked.endswith(" set"):
                out.append(("arch", ticked, ""))
    return out


def _choice_tag(kind: str, name: str, value: str) -> str:
    return arch_tag(name) if kind == "arch" else kebab(value or name)


def _launch_log(kind: str, name: str, value: str, k: int) -> str:
    """A log's start naming one choice: a ServerArgs dump, a command line or a model config."""
    if kind == "arch":
        if k % 2:
            return f'[2026-01-01 12:00:00] config.json: {{\n  "architectures": [\n    "{name}"\n  ],\n  "hidden_size": 4096\n}}\n'
        return f"[2026-01-01 12:00:00] Load model: model_type=custom, architectures=['{name}'], dtype=torch.bfloat16\n"
    if k % 2:
        arg = f"{name} {value}" if value else name
        return f"$ python -m sglang.launch_server --model-path org/some-model --tp 2 {arg} --port 30000\n"
    field = name.removeprefix("--").replace("-", "_")
    arg = f"{field}='{value}'" if value else f"{field}=True"
    return (
        "[2026-01-01 12:00:00] server_args=ServerArgs(model_path='org/some-model', tp_size=2, "
        f"mem_fraction_static=0.88, {arg}, enable_metrics=False, log_level='info')\n"
    )


def _reach_cases(rendered: list[tuple[ErrorRecord, str]], records: Sequence[ErrorRecord]) -> list[Case]:
    """Sites that share a message with another site that the choice named does not reach."""
    by_message: dict[tuple[str, str], list[ErrorRecord]] = {}
    for r in records:
        by_message.setdefault((r.messagePattern, r.errorClass), []).append(r)
    cases: list[Case] = []
    for r, m in rendered:
        others = [o for o in by_message[(r.messagePattern, r.errorClass)] if o.id != r.id]
        for kind, name, value in _choices(r):
            tag = _choice_tag(kind, name, value)
            if tag not in r.tags or all(tag in o.tags for o in others):
                continue
            text = (
                _launch_log(kind, name, value, len(cases))
                + "[2026-01-01 12:00:05] INFO:     Started server process [4242]\n"
                + f"[2026-01-01 12:00:09 TP0] {last_name(r.errorClass)}: {m}\n"
            )
            cases.append(Case("reach_log", text, (r.id,), frozenset({tag})))
            break
    return cases


def build_cases(records: Sequence[ErrorRecord], per_kind: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    pool = sorted(records, key=lambda r: r.id)
    rng.shuffle(pool)
    rendered: list[tuple[ErrorRecord, str]] = []
    empty: list[ErrorRecord] = []
    for r in pool:
        if not r.errorMessage.strip():
            if _source_line(r):
                empty.append(r)
            continue
        if analyse_pattern(r.messagePattern).specificity < MIN_SPECIFICITY:
            continue
        text = render_message(r)
        if text is not None:
            rendered.append((r, text))
    cases: list[Case] = []

    def take(kind: str, items: list[Case]) -> None:
        cases.extend(items[:per_kind])

    take("full", [Case("full", f"{last_name(r.errorClass)}: {m}", (r.id,)) for r, m in rendered])
    titles = []
    for r, m in rendered:
        line = f"{last_name(r.errorClass)}: {m}".split("\n")[0]
        if len(line) > 95:
            titles.append(Case("title80", line[:80] + ("…" if rng.random() < 0.3 else ""), (r.id,)))
    take("title80", titles)
    cuts = []
    for r, m in rendered:
        words = m.split(" ")
        if len(words) >= 8 and "\n" not in m:
            k = rng.randint(len(words) // 2, len(words) - 2)
            cuts.append(Case("cut_tail", " ".join(words[:k]) + rng.choice(("", "...", " …")), (r.id,)))
    take("cut_tail", cuts)
    firsts = []
    for r, m in rendered:
        first = m.strip().split("\n")[0].strip()
        if "\n" in m.strip() and len(first) >= 20:
            firsts.append(Case("first_line", f"{last_name(r.errorClass)}: {first}", (r.id,)))
    take("first_line", firsts)
    take(
        "traceback",
        [
            Case(
                "traceback",
                _traceback(r, rng, f"{last_name(r.errorClass)}: {m}", rng.randint(-30, 30)),
                (r.id,),
            )
            for r, m in rendered
        ],
    )
    take(
        "bare_assert",
        [
            Case(
                "bare_assert",
                _traceback(r, rng, last_name(r.errorClass), rng.choice((-1, 1)) * rng.randint(3, 40)),
                (r.id,),
            )
            for r in empty
        ],
    )
    logs = []
    for k in range(0, len(rendered) - 1, 2):
        (a, ma), (b, mb) = rendered[k], rendered[k + 1]
        if a.messagePattern == b.messagePattern:
            continue
        text = (
            '[2026-01-01 12:00:00] INFO:     127.0.0.1:50000 - "POST /generate HTTP/1.1" 200 OK\n'
            "[2026-01-01 12:00:01 TP0] Scheduler hit an exception: "
            + _traceback(a, rng, f"{last_name(a.errorClass)}: {ma}", rng.randint(-20, 20))
            + "\n[2026-01-01 12:00:02] Received sigquit from a child process. It usually means the child failed.\n"
            + "[2026-01-01 12:05:00] INFO:     Started server process [4242]\n"
            + f"[2026-01-01 12:05:09 TP1] {last_name(b.errorClass)}: {mb}\n"
        )
        logs.append(Case("log2", text, (a.id, b.id)))
    take("log2", logs)
    reworded = []
    for r, m in rendered:
        if len(re.findall(r"[A-Za-z]{3,}", m)) < 5:
            continue
        new = _reword(m, rng, edits_wanted=1 + len(reworded) % 2)
        if new is not None:
            reworded.append(Case("reworded", f"{last_name(r.errorClass)}: {new}", (r.id,)))
    take("reworded", reworded)
    moved = []
    for r, m in rendered:
        parts = r.filePath.split("/")
        if len(parts) < 4:
            continue
        # The file moved to a sibling folder in an older release, its lines shifted too.
        old_path = "/".join([*parts[:-2], parts[-2] + "_old", parts[-1]])
        text = _traceback(
            r.model_copy(update={"filePath": old_path}),
            rng,
            f"{last_name(r.errorClass)}: {m}",
            rng.randint(-60, 60),
        )
        moved.append(Case("moved_file", text, (r.id,)))
    take("moved_file", moved)
    bodies = []
    for r, m in rendered:
        if "\n" in m or '"' in m or "\\" in m:
            continue
        bodies.append(
            Case(
                "json_body",
                f'{{"object":"error","message":"{m}","type":"BadRequestError","param":null,"code":400}}',
                (r.id,),
            )
        )
    take("json_body", bodies)
    take("reach_log", _reach_cases(rendered, records))
    return cases


def _equivalent(
    got: ErrorRecord, want: ErrorRecord, frames: bool, names: frozenset[str] = frozenset()
) -> bool:
    if got.id == want.id:
        return True
    same = got.messagePattern == want.messagePattern and got.errorClass == want.errorClass
    return same and (not frames or got.filePath == want.filePath) and names <= set(got.tags)


def evaluate(matcher: Matcher, cases: Sequence[Case]) -> dict[str, tuple[int, int, list[Case]]]:
    by_id = {r.id: r for r in matcher.records}
    out: dict[str, tuple[int, int, list[Case]]] = {}
    for case in cases:
        groups = matcher.match_groups(case.text, top=10)
        frames = case.kind in ("traceback", "bare_assert", "log2", "moved_file")
        hits = 0
        for k, want_id in enumerate(case.expected):
            want = by_id[want_id]
            found = groups[k].matches if k < len(groups) else []
            if len(case.expected) == 1 and groups:
                found = groups[0].matches
            if not found:
                continue
            scores = {m.record.id: m.score for m in found}
            first = found[0]
            tie = scores.get(want_id) == first.score and case.kind != "reach_log"
            if _equivalent(first.record, want, frames, case.names) or tie:
                hits += 1
        right, total, misses = out.get(case.kind, (0, 0, []))
        if hits < len(case.expected):
            misses.append(case)
        out[case.kind] = (right + hits, total + len(case.expected), misses)
    return out


def big_log(cases: Sequence[Case], megabytes: float) -> str:
    """A server log of about ``megabytes`` MB: progress lines with the tracebacks and exception
    lines of ``cases`` spread through it, each repeated by several ranks."""
    noise = (
        "[2026-01-01 12:00:00 TP0] Decode batch. #running-req: 37, #token: 40213, token usage: 0.41, "
        "cuda graph: True, gen throughput (token/s): 1874.22, #queue-req: 0\n"
    )
    errors = [c.text for c in cases if c.kind in ("traceback", "log2", "full")][:40]
    chunk = max(1, int(megabytes * 1e6 / len(noise)) // (len(errors) + 1))
    parts = []
    for k, text in enumerate(errors):
        parts.append(noise.replace("12:00:00", f"12:{k % 60:02d}:00") * chunk)
        for rank in range(2):
            parts.append("".join(f"[2026-01-01 12:00:01 TP{rank}] {line}\n" for line in text.split("\n")))
    parts.append(noise * chunk)
    return "".join(parts)


def bench_pasted(dataset: Path, per_kind: int = 40, log_mb: float = 25.0) -> dict[str, float]:
    """Latency and rank-1 share on pasted inputs, and the time to match a ``log_mb`` MB log."""
    matcher = Matcher.from_path(dataset)
    cases = build_cases(matcher.records, per_kind, seed=0)
    times = []
    for case in cases:
        t = time.perf_counter()
        matcher.match_groups(case.text)
        times.append((time.perf_counter() - t) * 1000)
    result = evaluate(matcher, cases)
    right = sum(r for r, _, _ in result.values())
    total = sum(t for _, t, _ in result.values())
    log = big_log(cases, log_mb)
    t = time.perf_counter()
    groups = matcher.match_groups(log)
    log_s = time.perf_counter() - t
    ordered = sorted(times) or [0.0]
    return {
        "inputs": float(len(cases)),
        "rank1": right / max(1, total),
        "mean_ms": sum(times) / max(1, len(times)),
        "p95_ms": ordered[int(0.95 * (len(ordered) - 1))],
        "max_ms": ordered[-1],
        "log_mb": len(log) / 1e6,
        "log_s": log_s,
        "log_groups": float(len(groups)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--per-kind", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show-misses", type=int, default=0)
    args = ap.parse_args(argv)
    matcher = Matcher.from_path(args.dataset)
    cases = build_cases(matcher.records, args.per_kind, args.seed)
    t0 = time.perf_counter()
    result = evaluate(matcher, cases)
    seconds = time.perf_counter() - t0
    right = total = 0
    print("| input kind | cases | rank-1 right | share |")
    print("|---|---:|---:|---:|")
    for kind in KINDS:
        if kind not in result:
            continue
        r, t, _ = result[kind]
        right, total = right + r, total + t
        print(f"| {kind} | {t} | {r} | {r / max(1, t):.1%} |")
    print(f"| all | {total} | {right} | {right / max(1, total):.1%} |")
    print(f"\n{len(cases)} inputs in {seconds:.2f} s ({1000 * seconds / max(1, len(cases)):.1f} ms each)")
    if args.show_misses:
        by_id = {r.id: r for r in matcher.records}
        for kind in KINDS:
            for case in result.get(kind, (0, 0, []))[2][: args.show_misses]:
                print(f"\n--- miss {kind}: {case.text[:600]!r}")
                for want in case.expected:
                    print(
                        f"    want {by_id[want].filePath}:{by_id[want].lineNumber} {by_id[want].messagePattern[:150]!r}"
                    )
                for g in matcher.match_groups(case.text, top=3):
                    for m in g.matches:
                        print(
                            f"    got  {m.score} {m.record.filePath}:{m.record.lineNumber} {m.record.messagePattern[:120]!r} {m.why}"
                        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
