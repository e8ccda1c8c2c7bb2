"""Do Python ``re``, RE2 and JavaScript (with and without the ``u`` flag) read a dataset's patterns alike?

For every distinct ``messagePattern`` of a dataset (JSONL) this compiles the pattern in each engine
and full-matches generated renderings (each dynamic part filled with empty, plain, multi-line and
syntax-heavy text, each choice's options) and near-misses (a literal character dropped, changed
or added) in every engine and in the project's linear matcher, then prints the compile rate of
each engine and how often each agrees with Python ``re``. An engine whose runtime is missing (no
``node`` on PATH, no ``google-re2`` installed) is reported as skipped, not as a failure.

    python bench/pattern_engines.py DATASET.jsonl [--json] [--limit N]

Exit status: 0 when every available engine compiles every pattern and agrees on every text,
1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor.records import message_pattern as mp  # noqa: E402

_FILLS = ("", "7", "a b", "x\ny\n", "(?:[.*]) {0} |$^\\", "ünï €")

# One node process reads every pattern and text as JSON on stdin and answers in kind.
_NODE = r"""
let data = '';
process.stdin.on('data', (c) => { data += c; });
process.stdin.on('end', () => {
  const out = JSON.parse(data).map(([p, texts]) => {
    const row = {};
    for (const flags of ['u', '']) {
      try {
        const rx = new RegExp('^(?:' + p + ')$', flags);
        row[flags || 'plain'] = texts.map((t) => rx.test(t));
      } catch (e) {
        row[flags || 'plain'] = null;
      }
    }
    return row;
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def renderings(pattern: str) -> list[str]:
    """Texts the pattern should match, and near-misses, generated from its parsed form."""
    try:
        seq = mp._parse(pattern)
    except mp.PatternError:
        return ["", pattern]  # outside the dialect: only whether each engine compiles it says much
    texts: list[str] = []
    for k, fill in enumerate(_FILLS):
        texts.append(_render(seq, fill, k))
    base = texts[0]
    misses = {base + "!", "!" + base}
    if base:
        misses |= {base[:-1], base[1:], chr(ord(base[0]) ^ 1) + base[1:]}
    return texts + sorted(misses)


def _render(seq: list[Any], fill: str, k: int) -> str:
    out = []
    for item in seq:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, list):
            out.append(_render(item[k % len(item)], fill, k))
        elif item.any:
            out.append(fill)
        elif not item.repeats:
            out.append(str(k % 10))
        else:
            out.append(" \t"[: k % 3])
    return "".join(out)


def _python(patterns: list[str], texts: list[list[str]]) -> list[list[bool] | None]:
    out: list[list[bool] | None] = []
    for p, ts in zip(patterns, texts, strict=True):
        try:
            rx = re.compile(p)
        except re.error:
            out.append(None)
            continue
        out.append([rx.fullmatch(t) is not None for t in ts])
    return out


def _linear(patterns: list[str], texts: list[list[str]]) -> list[list[bool] | None]:
    out: list[list[bool] | None] = []
    for p, ts in zip(patterns, texts, strict=True):
        try:
            m = mp.matcher_for(p)
        except mp.PatternError:
            out.append(None)
            continue
        out.append([m.fullmatch(t) for t in ts])
    return out


def _re2(patterns: list[str], texts: list[list[str]]) -> list[list[bool] | None] | None:
    try:
        import re2  # type: ignore[import-not-found]
    except ImportError:
        return None
    options = re2.Options()
    options.max_mem = 64 << 20
    out: list[list[bool] | None] = []
    for p, ts in zip(patterns, texts, strict=True):
        try:
            rx = re2.compile(p, options)
        except re2.error:
            out.append(None)
            continue
        out.append([rx.fullmatch(t) is not None for t in ts])
    return out


def _node(patterns: list[str], texts: list[list[str]]) -> dict[str, list[list[bool] | None]] | None:
    node = shutil.which("node")
    if node is None:
        return None
    payload = json.dumps(list(zip(patterns, texts, strict=True)))
    proc = subprocess.run([node, "-e", _NODE], input=payload, capture_output=True, text=True, check=True)
    rows = json.loads(proc.stdout)
    return {"js-u": [r["u"] for r in rows], "js": [r["plain"] for r in rows]}


def compare(patterns: list[str]) -> dict[str, Any]:
    """Compile and agreement figures for ``patterns`` in every available engine."""
    texts = [renderings(p) for p in patterns]
    reference = _python(patterns, texts)
    engines: dict[str, list[list[bool] | None] | None] = {
        "linear": _linear(patterns, texts),
        "re2": _re2(patterns, texts),
    }
    js = _node(patterns, texts)
    engines.update(js if js is not None else {"js-u": None, "js": None})
    report: dict[str, Any] = {"patterns": len(patterns), "texts": sum(len(t) for t in texts)}
    report["python"] = {"compiled": sum(r is not None for r in reference)}
    report["python"]["renderings matched"] = sum(sum(r[: len(_FILLS)]) for r in reference if r is not None)
    for name, results in engines.items():
        if results is None:
            report[name] = "skipped (runtime not available)"
            continue
        compiled = sum(r is not None for r in results)
        agree = total = 0
        disagreements = []
        for p, ref, got, ts in zip(patterns, reference, results, texts, strict=True):
            if ref is None or got is None:
                continue
            for t, a, b in zip(ts, ref, got, strict=True):
                total += 1
                agree += a == b
                if a != b and len(disagreements) < 5:
                    disagreements.append({"pattern": p, "text": t, "python": a, name: b})
        report[name] = {"compiled": compiled, "agree": agree, "of": total, "examples": disagreements}
    return report


def failed(report: dict[str, Any]) -> bool:
    n = report["patterns"]
    if report["python"]["compiled"] != n:
        return True
    return any(
        isinstance(v, dict) and (v["compiled"] != n or v["agree"] != v["of"])
        for k, v in report.items()
        if k not in ("python", "patterns", "texts")
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--limit", type=int, default=0, help="only the first N distinct patterns")
    args = ap.parse_args(argv)
    try:
        lines = args.dataset.read_text(encoding="utf-8").splitlines()
        patterns = sorted({json.loads(line)["record"]["messagePattern"] for line in lines if line.strip()})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"{args.dataset}: {exc}", file=sys.stderr)
        return 2
    if args.limit:
        patterns = patterns[: args.limit]
    report = compare(patterns)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        n = report["patterns"]
        print(f"{n} distinct patterns, {report['texts']} texts (renderings and near-misses)")
        for name in ("python", "linear", "re2", "js-u", "js"):
            v = report[name]
            if isinstance(v, str):
                print(f"{name:7} {v}")
                continue
            line = f"{name:7} compiled {v['compiled']}/{n} ({v['compiled'] / max(n, 1):.1%})"
            if "agree" in v:
                line += f", agrees with python on {v['agree']}/{v['of']} ({v['agree'] / max(v['of'], 1):.2%})"
                for ex in v["examples"]:
                    line += f"\n          differs: {ex}"
            print(line)
    return 1 if failed(report) else 0


if __name__ == "__main__":
    raise SystemExit(main())
