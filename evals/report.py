"""Reports of a suite run: the summary table, the `--json` object, and a JSON/HTML file with
every failing case's transcript."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

from .graders import GATING
from .runner import CaseRun, SuiteResult


def summary_json(result: SuiteResult) -> dict:
    """The `shardwise eval --json` contract: {total, passed, pass_rate, by_family, cases}.

    With --repeats N, total/passed count runs (cases × N) and each case entry says how many of
    its runs passed; `passed` is then true only when all of them did."""
    low, high = result.interval()
    cases: dict[str, dict] = {}
    for run in result.runs:
        entry = cases.setdefault(run.case.id, {"id": run.case.id, "family": run.case.family, "passed": True,
                                               "failures": [], "runs": 0, "passes": 0})
        entry["runs"] += 1
        entry["passes"] += run.passed
        entry["passed"] = entry["passed"] and run.passed
        for f in run.failures():
            if f not in entry["failures"]:
                entry["failures"].append(f)
    out = {"target": result.target, "total": result.total, "passed": result.passed,
           "pass_rate": round(result.pass_rate, 4), "pass_rate_ci95": [round(low, 4), round(high, 4)],
           "repeats": result.repeats, "by_family": result.by_family(), "by_tag": result.by_tag(),
           "by_grader_failures": result.by_grader(),
           "seconds": round(result.seconds, 2), "cases": list(cases.values())}
    judged = [t.judge.score for r in result.runs for t in r.turns if t.judge and t.judge.score is not None]
    if judged:
        out["judge_mean_score"] = round(sum(judged) / len(judged), 2)
    return out


def summary_table(result: SuiteResult) -> str:
    lines = [f"{'family':<16}{'cases':>7}{'passed':>8}{'rate':>8}   " + "  ".join(f"{g:>7}" for g in GATING)]
    failed_by: dict[str, dict[str, int]] = {}
    for run in result.runs:
        row = failed_by.setdefault(run.case.family, {g: 0 for g in GATING})
        for g in run.failed_graders() & set(GATING):
            row[g] += 1
    for family, counts in sorted(result.by_family().items()):
        rate = counts["passed"] / counts["total"]
        lines.append(f"{family:<16}{counts['total']:>7}{counts['passed']:>8}{rate:>8.0%}   "
                     + "  ".join(f"{failed_by[family][g]:>7}" for g in GATING))
    low, high = result.interval()
    by_grader = result.by_grader()
    lines.append(f"{'all':<16}{result.total:>7}{result.passed:>8}{result.pass_rate:>8.0%}   "
                 + "  ".join(f"{by_grader[g]:>7}" for g in GATING))
    lines.append(f"\npass rate {result.pass_rate:.1%} (95% Wilson interval {low:.1%}–{high:.1%}), "
                 f"{result.total} runs against {result.target} in {result.seconds:.1f} s; "
                 "grader columns count failing runs")
    for tag, counts in sorted(result.by_tag().items()):
        lines.append(f"cases tagged {tag}: {counts['passed']} of {counts['total']} passed")
    judged = [t.judge.score for r in result.runs for t in r.turns if t.judge and t.judge.score is not None]
    if judged:
        lines.append(f"LLM judge (advisory, not gating): mean {sum(judged) / len(judged):.2f}/5 over {len(judged)} answers")
    return "\n".join(lines)


def transcript(run: CaseRun) -> dict:
    return {
        "id": run.case.id, "family": run.case.family, "passed": run.passed, "error": run.error,
        "failures": run.failures(),
        "turns": [{"user": t.user, "answer": t.reply.answer, "error": t.reply.error,
                   "failures": {g: r for g, r in t.failures.items() if r},
                   "judge": ({"score": t.judge.score, "reason": t.judge.reason} if t.judge else None),
                   "seconds": round(t.seconds, 3),
                   "tool_calls": [c.model_dump(mode="json") for c in t.reply.tool_calls]} for t in run.turns],
    }


def write_report(result: SuiteResult, path: Path) -> None:
    path = Path(path)
    data = summary_json(result)
    data["failing"] = [transcript(r) for r in result.runs if not r.passed]
    if path.suffix.lower() in (".html", ".htm"):
        path.write_text(render_html(result, data), encoding="utf-8")
    else:
        path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")


def render_html(result: SuiteResult, data: dict) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(f)}</td><td>{c['total']}</td><td>{c['passed']}</td><td>{c['passed'] / c['total']:.0%}</td></tr>"
        for f, c in sorted(data["by_family"].items()))
    failing = []
    for case in data["failing"]:
        turns = []
        for t in case["turns"]:
            calls = "".join(f"<details><summary>{e(c['name'])}</summary><pre>{e(json.dumps(c, indent=1, default=str))}"
                            f"</pre></details>" for c in t["tool_calls"])
            fails = "".join(f"<li><b>{e(g)}</b>: {e(r)}</li>" for g, rs in t["failures"].items() for r in rs)
            turns.append(f"<div class=turn><p class=user>{e(t['user'])}</p>{calls}<pre class=answer>{e(t['answer'])}</pre>"
                         f"<ul class=fail>{fails}</ul></div>")
        failing.append(f"<section><h3>{e(case['id'])} <small>{e(case['family'])}</small></h3>"
                       f"{'<p class=fail>' + e(case['error']) + '</p>' if case['error'] else ''}{''.join(turns)}</section>")
    low, high = data["pass_rate_ci95"]
    return f"""<!doctype html><html><head><meta charset=utf-8><title>shardwise eval: {e(result.target)}</title>
<style>body{{font:14px system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:right}}td:first-child{{text-align:left}}
.user{{font-weight:bold}}.answer{{white-space:pre-wrap;background:#f6f6f6;padding:.5em}}.fail{{color:#a00}}
section{{border-top:1px solid #ddd;margin-top:1.5em}}</style></head><body>
<h1>shardwise eval — {e(result.target)}</h1>
<p>{data['passed']} of {data['total']} passed ({data['pass_rate']:.1%}; 95% Wilson interval {low:.1%}–{high:.1%}).</p>
<table><tr><th>family</th><th>runs</th><th>passed</th><th>rate</th></tr>{rows}</table>
<h2>Failing cases</h2>{''.join(failing) or '<p>none</p>'}</body></html>"""


class Progress:
    """Progress on stderr: a redrawn bar on a terminal, a line every tenth of the run otherwise
    (so CI logs stay readable). `enabled=False` silences it."""

    def __init__(self, stream=None, width: int = 30, enabled: bool = True):
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = enabled
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.failed = 0
        self._last_tenth = -1

    def __call__(self, done: int, total: int, run: CaseRun) -> None:
        self.failed += not run.passed
        if not self.enabled:
            return
        if self.tty:
            filled = int(self.width * done / max(total, 1))
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r[{bar}] {done}/{total}  failed {self.failed}  {run.case.id[:40]:<40}")
            if done == total:
                self.stream.write("\n")
        else:
            tenth = done * 10 // max(total, 1)
            if tenth == self._last_tenth:
                return
            self._last_tenth = tenth
            self.stream.write(f"eval: {done}/{total} cases, {self.failed} failed\n")
        self.stream.flush()
