"""Run a signature's own examples: the test every signature gets (built-in ones in the test suite, a user's folder
in `diagnose check-signatures`), in one place so both run exactly the same checks.

A `match` example must match its own signature alone (with the captures it lists; from the traceback's frames alone
when it says `matched_on: frames`) and, through the whole
database, rank that signature first; its remedy must hold what `remedy_contains` lists, and the Chinese report must
have a why and a remedy. A `no_match` example must not match.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import SignatureError
from ..i18n import Msg
from ..match import cache
from ..match.database import Database, load_database, load_signatures, signature_files, signature_roots
from ..match.schema import Example
from .batch import diagnose_text
from .pipeline import Pipeline


@dataclass(frozen=True, slots=True)
class ExampleCase:
    """One example of a signature, as the example checks run it."""

    sig_id: str
    kind: str  # "match" | "no_match"
    index: int
    example: Example

    @property
    def name(self) -> str:
        return f"{self.sig_id}.{self.kind}.{self.index}"


def example_cases(db: Database, ids: Iterable[str] | None = None) -> list[ExampleCase]:
    wanted = set(ids) if ids is not None else None
    out: list[ExampleCase] = []
    for cs in db.signatures:
        if wanted is not None and cs.sig.id not in wanted:
            continue
        out += [ExampleCase(cs.sig.id, "match", i, ex) for i, ex in enumerate(cs.sig.examples_match)]
        out += [ExampleCase(cs.sig.id, "no_match", i, ex) for i, ex in enumerate(cs.sig.examples_no_match)]
    return out


def check_example(db: Database, case: ExampleCase, alone: Database | None = None) -> str | None:
    """What is wrong with one example, or None when it holds. `alone` is the database of this signature only
    (made here when not given)."""
    sig_id, example = case.sig_id, case.example
    cs = db.get(sig_id)
    if cs is None:
        return f"no signature {sig_id!r}"
    found = Pipeline(alone or db.only([sig_id])).scan_lines(example.text.splitlines()).findings.get(sig_id)
    if case.kind == "no_match":
        return f"{sig_id} matched a no_match example" if found is not None else None
    if found is None:
        return f"{sig_id} did not match its own example"
    for name, value in example.captures.items():
        if found.captures.get(name) != value:
            return f"capture {name}: {found.captures.get(name)!r} != {value!r}"
    if example.matched_on and found.matched_on != example.matched_on:
        return f"recognised from its {found.matched_on}, the example says from its {example.matched_on}"
    report = diagnose_text(db, example.text)
    ranked = [f.sig.id for f in report.findings]
    if cs.sig.only_with_failure:
        # a meta signature speaks beside the failure it explains, never instead of it
        if sig_id not in ranked:
            return f"through the whole database {sig_id} is missing: {ranked[:3]}"
    elif not ranked or ranked[0] != sig_id:
        return f"through the whole database the first finding is {ranked[:3]}"
    remedy = report.remedy[sig_id]
    for snippet in example.remedy_contains:
        if snippet not in remedy:
            return f"remedy lacks {snippet!r}:\n{remedy}"
    zh = diagnose_text(db, example.text, "zh")
    if not (zh.remedy[sig_id].strip() and zh.why[sig_id].strip()):
        return "the Chinese report has no why or no remedy"
    return None


def run_examples(db: Database, ids: Iterable[str] | None = None) -> Iterator[tuple[ExampleCase, str | None]]:
    """Every example of the signatures (of `ids`, when given), each with its problem or None."""
    alone: dict[str, Database] = {}
    for case in example_cases(db, ids):
        if case.sig_id not in alone:
            alone[case.sig_id] = db.only([case.sig_id])
        yield case, check_example(db, case, alone[case.sig_id])


def load_checked(extra_dirs: Iterable[Path] = ()) -> Database:
    """The database (built-in signatures and the user's folders); each signature of a user's folder must do what
    its own examples say (a `match` example matches it alone, a `no_match` example does not), or the run stops
    with `path: field: problem` (exit status 2) before a wrong signature can mislead a diagnosis. Once they held,
    the on-disk cache remembers it for these files' bytes (and this code), so a later run does not check them
    again (522 signatures took 20 s a run). The built-in signatures are held to the full check (`run_examples`)
    by the test suite."""
    dirs = list(extra_dirs)
    if not dirs:
        return load_database()
    try:  # every file read once: for the database's cache key, and the user's for the key of their examples' check
        files: list[tuple[str, bytes]] | None = signature_files(signature_roots(dirs))
    except OSError:
        files = None
    db = load_database(dirs, files=files)
    # files whose examples held once (under this very code) hold again: checked once, remembered in the cache
    checked = cache.key([f for f in files if not f[0].startswith("0:")], "examples") if files is not None else None
    if checked is not None and cache.load(checked) is not None:
        return db
    for sig in load_signatures(dirs, builtin=False):
        alone = db.only([sig.id])
        for case in example_cases(alone):
            found = Pipeline(alone).scan_lines(case.example.text.splitlines()).findings.get(sig.id)
            if (found is None) == (case.kind == "match"):
                key = "err_example_match" if case.kind == "match" else "err_example_no_match"
                raise SignatureError(sig.path, f"examples.{case.kind}[{case.index}]", Msg(key))
    if checked is not None:
        cache.store(checked, {"examples": "held"})
    return db
