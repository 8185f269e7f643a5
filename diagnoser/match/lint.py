"""The database lint: what a signature folder must hold beyond what the loader already rejects (literal gates,
look-alikes that exercise the regex, field order, shared fact names, symptoms that name their causes).

One function, used by the test suite on the built-in database and by `diagnose check-signatures DIR` on a user's
folder, so a user's database is held to the same rules as ours. The loader (database.py) has already rejected
what cannot run at all: unknown keys, bad regexes, risky nesting, a role that contradicts the kind.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..search.rarity import line_share
from .database import Database
from .literals import spellings
from .schema import FIELD_ORDER, Signature
from .sigfile import yaml_files

ERROR, WARNING = "error", "warning"
# what `diagnose learn` writes where a person must fill in the text
SKELETON_MARK = "TODO"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in a signature file."""

    path: str
    where: str
    message: str
    level: str = ERROR

    def __str__(self) -> str:
        where = f"{self.where}: " if self.where else ""
        return f"{self.path}: {where}{self.message}"


def lint(db: Database, folders: Iterable[Path] = (), only: Iterable[str] | None = None) -> list[Problem]:
    """The problems of the signatures of `db` (those whose id is in `only`, when given); `folders` are the
    folders they were read from, for the checks that need the file as written (field order)."""
    wanted = set(only) if only is not None else None
    sigs = [cs for cs in db.signatures if wanted is None or cs.sig.id in wanted]
    problems: list[Problem] = []
    known = {cs.sig.id for cs in db.signatures}
    for cs in sigs:
        sig = cs.sig
        for rule in cs.rules:
            if rule.gate is None:
                problems.append(Problem(sig.path, rule.where, "no literal of 3+ characters: every line would be a "
                                        "candidate (declare `literals:` or add distinctive text)"))
        for cond in cs.conditions():
            if cond.cond.scope == "file" and cond.gate is None:
                problems.append(Problem(sig.path, "match", "a `within: file` condition needs a literal of 3+ "
                                        f"characters: {cond.cond.pattern}"))
            elif cond.cond.scope == "file" and cond.gate is not None:
                # every line holding a whole-file condition's literal is read, wherever it is in the file
                common = [lit for lit in cond.gate.literals if line_share(lit.encode("utf-8")) > 0]
                if common:
                    problems.append(Problem(sig.path, "match", "a `within: file` condition's literal is in ordinary "
                                            "log lines (search/background.txt), so every line holding it is read: "
                                            f"{', '.join(map(repr, common))}; use a `within: N` window"))
        problems += _declared_literals(sig)
        problems += _look_alikes(sig, [r.gate.literals for r in cs.rules if r.gate is not None],
                                 any(r.gate is not None and r.gate.fold for r in cs.rules))
        for other in sig.leads_to:
            if other not in known:
                problems.append(Problem(sig.path, "leads_to", f"names {other!r}, which is no signature's id here",
                                        WARNING))
        if sig.kind == "symptom" and not sig.symptom_of:
            problems.append(Problem(sig.path, "symptom_of", f"a {sig.role} names the causes it echoes or confirms"))
        for i, ref in enumerate(sig.references):
            if not ref.startswith(("https://", "http://")) and SKELETON_MARK not in ref:
                problems.append(Problem(sig.path, f"references[{i}]", f"must be a URL, not {ref!r}"))
        problems += _skeleton(sig)
    for name, _patterns in db_facts(db):
        readers = [cs.sig for cs in db.signatures if any(n == name for n, _ in cs.sig.facts)]
        spelled = {p for s in readers for n, p in s.facts if n == name}
        if len(spelled) > 1 and any(wanted is None or s.id in wanted for s in readers):
            who = ", ".join(sorted(s.id for s in readers))
            problems.append(Problem(readers[-1].path, f"facts.{name}", f"read differently by {who}: facts share one "
                                    "namespace, so share the exact same regexes or use distinct names"))
    for root in folders:
        problems += _field_order(root, wanted)
    return problems


def db_facts(db: Database) -> list[tuple[str, tuple[str, ...]]]:
    seen: dict[str, tuple[str, ...]] = {}
    for cs in db.signatures:
        for name, patterns in cs.sig.facts:
            seen.setdefault(name, patterns)
    return list(seen.items())


def _declared_literals(sig: Signature) -> list[Problem]:
    """Declared literals stand in for the regex's own: some match example must hold one of them, or nothing shows
    that real lines carry them."""
    out: list[Problem] = []
    texts = [ex.text for ex in sig.examples_match]
    for i, declared in enumerate(sig.any_literals):
        if declared and not any(lit in t for lit in declared for t in texts):
            out.append(Problem(sig.path, f"match.any[{i}].literals", "no match example holds any of them, so nothing "
                               "shows that real lines carry them", WARNING))
    return out


def _look_alikes(sig: Signature, gates: list[tuple[str, ...]], fold: bool) -> list[Problem]:
    """A no_match example that holds none of the literals is dropped by the prefilter before any regex runs:
    it tests nothing about the pattern. Worth a warning, not an error (it still documents a look-alike)."""
    literals = {s for gate in gates for lit in gate for s in (spellings(lit) if fold else {lit})}
    out: list[Problem] = []
    for i, ex in enumerate(sig.examples_no_match):
        if literals and not any(lit in ex.text for lit in literals):
            out.append(Problem(sig.path, f"examples.no_match[{i}]", "holds none of the signature's literals, so "
                               "no regex ever runs on it: a look-alike should share the literal and differ after it",
                               WARNING))
    return out


def _skeleton(sig: Signature) -> list[Problem]:
    """What `diagnose learn` left for a person to write."""
    fields = {"why": sig.why.en + sig.why.zh, "title": sig.title.en + sig.title.zh,
              "remedy": "".join(v.text.en + v.text.zh for v in sig.remedy), "references": " ".join(sig.references)}
    return [Problem(sig.path, name, f"still holds {SKELETON_MARK}: write it before sharing the signature")
            for name, text in fields.items() if SKELETON_MARK in text]


def _field_order(root: Path, wanted: set[str] | None) -> list[Problem]:
    out: list[Problem] = []
    for path in yaml_files(root):
        if wanted is not None and path.stem not in wanted:
            continue
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # the loader reports a file it cannot read
        if not isinstance(data, dict):
            continue
        keys = [k for k in data if isinstance(k, str)]
        expected = [k for k in FIELD_ORDER if k in data]
        if keys != expected:
            shown = str(Path(root.name) / path.relative_to(root))
            out.append(Problem(shown, "", f"fields out of order: write them as {', '.join(expected)}"))
    return out
