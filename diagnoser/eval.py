"""Measure accuracy over a folder of labelled cases: `python -m diagnoser.eval sample_logs/`.

A case is `NAME.expected.yaml` beside its input (`NAME.log`, `NAME.log.gz`, ... or a folder `NAME/`).
The expected file names the root cause (or null), ids that must / must not appear, the exit status,
extra command-line arguments, and where the text came from. `UPDATE_EXPECTED=1` re-blesses.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .cli import main as cli_main

EXPECTED_SUFFIX = ".expected.yaml"
KEYS = ("root_cause", "must", "must_not", "exit_code", "args", "verdict", "culprit", "input", "unrecognized",
        "health",
        "provenance", "notes")


@dataclass(slots=True)
class Case:
    """One sample log of the evaluation and the report expected of it."""

    name: str
    input: Path
    expected_path: Path
    expected: dict[str, Any]

    @property
    def negative(self) -> bool:
        return self.expected.get("root_cause") is None and int(self.expected.get("exit_code", 0)) == 0


@dataclass(slots=True)
class Outcome:
    """What `diagnose` gave on a case: its exit code, report, and where it differs from the expected one."""

    case: Case
    exit_code: int
    report: dict[str, Any]
    problems: list[str] = field(default_factory=list)

    @property
    def root_cause(self) -> str | None:
        rc = self.report.get("root_cause")
        return rc["id"] if isinstance(rc, dict) else None

    @property
    def ids(self) -> list[str]:
        return [f["id"] for f in self.report.get("findings", [])]


def find_cases(root: Path) -> list[Case]:
    cases: list[Case] = []
    for exp in sorted(root.rglob("*" + EXPECTED_SUFFIX)):
        name = exp.name[: -len(EXPECTED_SUFFIX)]
        data = yaml.safe_load(exp.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{exp}: must be a mapping")
        unknown = set(data) - set(KEYS)
        if unknown:
            raise ValueError(f"{exp}: unknown keys {sorted(unknown)}")
        cases.append(Case(name, _input_for(exp, name, data), exp, data))
    return cases


def _input_for(exp: Path, name: str, data: dict[str, Any]) -> Path:
    if data.get("input"):
        return exp.parent / str(data["input"])
    folder = exp.parent / name
    if folder.is_dir():
        return folder
    matches = [p for p in exp.parent.iterdir()
               if p.name.startswith(name + ".") and not p.name.endswith(EXPECTED_SUFFIX) and p.is_file()]
    if len(matches) != 1:
        raise ValueError(f"{exp}: expected exactly one input named {name}.* (found {len(matches)})")
    return matches[0]


def run_case(case: Case) -> Outcome:
    args = [str(case.input), "--format", "json", "--lang", "en", *[str(a) for a in case.expected.get("args", [])]]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(args)
    try:
        report = json.loads(out.getvalue())
    except json.JSONDecodeError:
        report = {}
    outcome = Outcome(case, code, report)
    outcome.problems = check(case, outcome, err.getvalue())
    return outcome


def check(case: Case, o: Outcome, stderr: str) -> list[str]:
    exp = case.expected
    problems: list[str] = []
    if not o.report:
        return [f"no JSON report (exit {o.exit_code}; stderr: {stderr.strip()[:200]})"]
    if o.root_cause != exp.get("root_cause"):
        problems.append(f"root cause {o.root_cause!r}, expected {exp.get('root_cause')!r}")
    for sig_id in exp.get("must", []) or []:
        if sig_id not in o.ids:
            problems.append(f"missing {sig_id}")
    for sig_id in exp.get("must_not", []) or []:
        if sig_id in o.ids:
            problems.append(f"unexpected {sig_id}")
    if "exit_code" in exp and o.exit_code != int(exp["exit_code"]):
        problems.append(f"exit status {o.exit_code}, expected {exp['exit_code']}")
    for wanted in exp.get("unrecognized", []) or []:  # "KeyError" or "KeyError: message start"
        seen = [f"{u['exception']}: {u['message']}" for u in o.report.get("unrecognized", [])]
        if not any(s == wanted or s.startswith(wanted if ":" in wanted else wanted + ":") for s in seen):
            problems.append(f"unrecognised error {wanted!r} not summarised (saw {seen[:3]})")
    if "verdict" in exp and o.report.get("verdict") != exp["verdict"]:
        problems.append(f"verdict {o.report.get('verdict')!r}, expected {exp['verdict']!r}")
    if "culprit" in exp:  # {rank, host, reason, error}: each key given must agree (null: no culprit named)
        got = o.report.get("culprit")
        want = exp["culprit"]
        if want is None and got is not None:
            problems.append(f"culprit rank {got.get('rank')!r}, expected none")
        for key, value in (want or {}).items():
            if not isinstance(got, dict) or got.get(key) != value:
                problems.append(f"culprit {key} {None if not isinstance(got, dict) else got.get(key)!r}, "
                                f"expected {value!r}")
    problems += _check_health(exp.get("health") or {}, o.report)
    return problems


def _check_health(wanted: dict[str, Any], report: dict[str, Any]) -> list[str]:
    """`health: {id: {metric, step, start_step}}`: the health finding names that metric and trips (and its trend
    begins) at those steps."""
    problems: list[str] = []
    found = {f["id"]: f.get("health") or {} for f in report.get("findings", [])}
    for sig_id, want in wanted.items():
        got = found.get(sig_id)
        if got is None:
            problems.append(f"missing health finding {sig_id}")
            continue
        for key in ("metric", "step", "start_step"):
            if key in (want or {}) and got.get(key) != want[key]:
                problems.append(f"{sig_id}: {key} {got.get(key)!r}, expected {want[key]!r}")
    return problems


def bless(o: Outcome) -> None:
    """Write what the tool found back into the case's expected file (keeping its provenance)."""
    exp = dict(o.case.expected)
    exp["root_cause"] = o.root_cause
    exp["must"] = sorted(set(exp.get("must", []) or []) & set(o.ids)) or [i for i in o.ids[:3]]
    exp["must_not"] = [i for i in (exp.get("must_not", []) or []) if i not in o.ids]
    exp["exit_code"] = o.exit_code
    ordered = {k: exp[k] for k in KEYS if k in exp}
    o.case.expected_path.write_text(yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=100),
                                    encoding="utf-8")


@dataclass(slots=True)
class Metrics:
    """The evaluation's scores over all cases."""

    cases: int
    top1: float
    recall: float
    fp_rate: float
    negatives: int
    misses: list[tuple[str, list[str]]]


def evaluate(outcomes: list[Outcome]) -> Metrics:
    correct = sum(1 for o in outcomes if o.root_cause == o.case.expected.get("root_cause"))
    wanted = found = 0
    for o in outcomes:
        for sig_id in o.case.expected.get("must", []) or []:
            wanted += 1
            found += sig_id in o.ids
    negatives = [o for o in outcomes if o.case.negative]
    false_pos = sum(1 for o in negatives if o.exit_code != 0 or o.root_cause is not None)
    n = len(outcomes)
    return Metrics(
        cases=n,
        top1=correct / n if n else 1.0,
        recall=found / wanted if wanted else 1.0,
        fp_rate=false_pos / len(negatives) if negatives else 0.0,
        negatives=len(negatives),
        misses=[(o.case.name, o.problems) for o in outcomes if o.problems],
    )


def iter_outcomes(root: Path, only: str = "") -> Iterator[Outcome]:
    for case in find_cases(root):
        if only in str(case.expected_path):
            yield run_case(case)


def table(m: Metrics) -> str:
    return "\n".join([
        "| metric | value |",
        "|---|---|",
        f"| labelled cases | {m.cases} ({m.negatives} negatives) |",
        f"| top-1 root-cause accuracy | {m.top1:.1%} |",
        f"| recall of expected ids | {m.recall:.1%} |",
        f"| false-positive rate on negatives | {m.fp_rate:.1%} |",
        f"| misses | {len(m.misses)} |",
    ])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    only = ""
    if len(args) == 3 and args[1] == "--only":
        only, args = args[2], args[:1]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: python -m diagnoser.eval FOLDER [--only TEXT]   (UPDATE_EXPECTED=1 re-blesses failing cases)")
        return 2 if len(args) != 1 else 0
    root = Path(args[0])
    if not root.is_dir():
        print(f"diagnose eval: error: {root}: not a folder", file=sys.stderr)
        return 2
    outcomes = list(iter_outcomes(root, only))
    if os.environ.get("UPDATE_EXPECTED") == "1":
        for o in outcomes:
            if o.problems:
                bless(o)
                print(f"re-blessed {o.case.expected_path}")
    metrics = evaluate(outcomes)
    print(table(metrics))
    for name, problems in metrics.misses:
        print(f"MISS {name}: {'; '.join(problems)}")
    return 0 if not metrics.misses else 1


if __name__ == "__main__":
    sys.exit(main())
