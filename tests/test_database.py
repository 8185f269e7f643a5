"""Layer 3: the database lint — files, keys, ids, regexes, cross-references, docs in sync."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from diagnoser.match.database import Database, builtin_root, load_database
from diagnoser.match.lint import ERROR, lint
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


def test_no_risky_nesting(db: Database) -> None:
    for cs in db.signatures:
        for p in cs.sig.any:
            assert nesting_problem(p) is None, (cs.sig.id, p)


def test_both_languages_and_same_placeholders(db: Database) -> None:
    for cs in db.signatures:
        sig = cs.sig
        assert sig.title.en and sig.title.zh and sig.why.en and sig.why.zh, sig.id
        for variant in sig.remedy:
            assert placeholder_names(variant.text.en) == placeholder_names(variant.text.zh), sig.id
        assert re.search(r"[\u4e00-\u9fff]", sig.why.zh + sig.title.zh), f"{sig.id}: zh text has no Chinese"


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


def test_lint_is_clean(db: Database) -> None:
    """match/lint.py (what `diagnose check-signatures` runs): literal gates, look-alikes, field order, symptoms that
    name their causes, URLs, one reading per fact name."""
    errors = [str(p) for p in lint(db, [SIGNATURES]) if p.level == ERROR]
    assert not errors, "\n".join(errors)
