"""Layer 3: the database lint — files, keys, ids, regexes, cross-references, docs in sync."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from diagnoser.match.database import Database, builtin_root, load_database
from diagnoser.match.literals import nesting_problem
from diagnoser.match.schema import FIELD_ORDER, placeholder_names
from diagnoser.report.catalog import markdown_table

from .conftest import SHARED_IDS, SIGNATURES

FILES = sorted(p for p in SIGNATURES.rglob("*.yaml"))


def test_builtin_root_is_the_project_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIAGNOSER_BUILTIN_SIGNATURES", raising=False)
    assert builtin_root().resolve() == SIGNATURES.resolve()


def test_every_file_loads(db: Database) -> None:
    assert len(db.signatures) == len(FILES)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_file_shape(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["id"] == path.stem
    keys = list(data)
    assert keys == [k for k in FIELD_ORDER if k in data], f"fields out of order: {keys}"
    layer = path.parent.relative_to(SIGNATURES).as_posix()
    assert data.get("layer", layer) == layer


def test_ids_unique(db: Database) -> None:
    ids = [cs.sig.id for cs in db.signatures]
    assert len(ids) == len(set(ids))


def test_every_rule_has_a_literal_gate(db: Database) -> None:
    """The fast path skips lines without a gate literal; a gateless rule would slow every line."""
    missing = [f"{db.signatures[r.sig_index].sig.id} {r.where}" for r in db.rules if r.gate is None]
    missing += [f"{f.owner} facts.{f.name}" for f in db.facts if f.gate is None]
    assert not missing, f"rules without a literal of 3+ characters: {missing}"


def test_no_risky_nesting(db: Database) -> None:
    for cs in db.signatures:
        for p in cs.sig.any:
            assert nesting_problem(p) is None, (cs.sig.id, p)


def test_symptoms_name_their_causes(db: Database) -> None:
    ids = {cs.sig.id for cs in db.signatures}
    for cs in db.signatures:
        if cs.sig.kind == "symptom":
            assert cs.sig.symptom_of, f"{cs.sig.id}: a symptom names the causes it echoes"
            assert set(cs.sig.symptom_of) <= ids


def test_both_languages_and_same_placeholders(db: Database) -> None:
    for cs in db.signatures:
        sig = cs.sig
        assert sig.title.en and sig.title.zh and sig.why.en and sig.why.zh, sig.id
        for variant in sig.remedy:
            assert placeholder_names(variant.text.en) == placeholder_names(variant.text.zh), sig.id
        assert re.search(r"[\u4e00-\u9fff]", sig.why.zh + sig.title.zh), f"{sig.id}: zh text has no Chinese"


def test_references_are_urls(db: Database) -> None:
    for cs in db.signatures:
        for ref in cs.sig.references:
            assert ref.startswith("https://"), (cs.sig.id, ref)


def test_required_ids_present(db: Database) -> None:
    if not SHARED_IDS.exists():
        pytest.skip("../shared/signature-ids.md is not beside this checkout")
    wanted = set(re.findall(r"^\| `([a-z0-9-]+)` \|", SHARED_IDS.read_text(encoding="utf-8"), re.M))
    assert wanted, "could not read the required ids"
    have = {cs.sig.id for cs in db.signatures}
    assert not wanted - have, f"missing required signatures: {sorted(wanted - have)}"


def test_readme_table_in_sync(db: Database) -> None:
    readme = (SIGNATURES / "README.md").read_text(encoding="utf-8")
    table = markdown_table(load_database())
    assert table in readme, "signatures/README.md table is stale; paste this in:\n" + table


def test_a_fact_name_means_one_thing(db: Database) -> None:
    """Facts share one namespace (the first value seen wins), so two signatures that declare the same
    name must read it the same way; otherwise one's value silently answers the other's remedy."""
    seen: dict[str, tuple[str, tuple[str, ...]]] = {}
    for cs in db.signatures:
        for name, patterns in cs.sig.facts:
            if name in seen and seen[name][1] != patterns:
                pytest.fail(f"fact {name!r} is read differently by {seen[name][0]} and {cs.sig.id}: share the "
                            "exact same regexes or use distinct names")
            seen.setdefault(name, (cs.sig.id, patterns))
