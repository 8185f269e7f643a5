"""The compiled forms of the database's regexes and the package's own in its cache (lazyre.py, issue 13: a regex
reached by a line is made from its form instead of being parsed again): each makes the very pattern its text
compiles to, a form the regex module refuses or of another shape is compiled from its text, and the forms are read
only from a cache file of the user's own."""

from __future__ import annotations

import copyreg
import marshal
import os
from pathlib import Path
from typing import Any

import pytest
import regex

from diagnoser import lazyre
from diagnoser.match import cache, compiled
from diagnoser.match.database import _from_cache, _to_cache, builtin_root, load_database, signature_files
from diagnoser.read import marks
from diagnoser.search.engine import engine_name


@pytest.fixture(scope="module")
def forms() -> dict[str, Any]:
    version, got = _to_cache(load_database(), {})["regexes"]  # type: ignore[misc]
    assert version == regex.__version__
    return got


@pytest.fixture()
def clean_forms(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The process's remembered forms, empty for the test and given back after it."""
    mine: dict[str, Any] = {}
    monkeypatch.setattr(lazyre, "_FORMS", mine)
    return mine


def _lines() -> list[str]:
    db = load_database()
    return sorted({line for cs in db.signatures for e in (*cs.sig.examples_match, *cs.sig.examples_no_match)
                   for line in e.text.splitlines()})


def test_every_regex_of_the_database_has_a_form(forms: dict[str, Any]) -> None:
    db = load_database()
    texts = {*(r.pattern.pattern for r in db.rules), *(f.pattern.pattern for f in db.facts),
             *(c.pattern.pattern for cs in db.signatures for c in cs.conditions()),
             *(p for cs in db.signatures for m in cs.sig.metric for p in m.names)}
    assert texts <= set(forms)
    assert {marks.STEP, marks.RANK_SELF, *(rx for _k, _lits, rx in marks.PROBES)} <= set(forms)  # the package's own
    assert len(lazyre.OWN & set(forms)) > 60  # ... and its lazy ones


def test_the_package_s_own_regexes_are_made_from_their_forms(forms: dict[str, Any], clean_forms: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    lazyre.remember_forms(forms)
    monkeypatch.setattr(marks, "_rx", marks._rx.__wrapped__)  # type: ignore[attr-defined]  # not the one cached
    rx = lazyre.lazy(marks.PID_SELF)
    text = "(TaskRunner pid=4242) step 7"
    assert rx.search(text) is not None and rx.search(text).group("pid") == "4242"  # type: ignore[union-attr]
    assert rx.search.__self__ is not regex.compile(marks.PID_SELF)  # type: ignore[attr-defined]
    assert marks._rx(marks.STEP) is not regex.compile(marks.STEP)
    assert marks.step_of(text) == 7


def test_a_regex_made_from_its_form_matches_as_the_one_compiled_from_its_text(forms: dict[str, Any],
                                                                               clean_forms: dict[str, Any]) -> None:
    """Every regex of the database, on every line of every signature's examples: the same spans and groups. About 3 s."""
    lazyre.remember_forms(forms)
    lines = _lines()
    assert len(lines) > 500
    for pattern in forms:
        made, text = lazyre.compile_known(pattern), regex.compile(pattern)
        assert made is not text  # made from the form, not regex's own cache of the compiled text
        assert (made.pattern, made.flags, made.groups, made.groupindex) == (
            text.pattern, text.flags, text.groups, text.groupindex)
        for line in lines:
            a, b = made.search(line), text.search(line)
            assert (a is None) == (b is None), (pattern, line)
            if a is not None and b is not None:
                assert (a.span(), a.groups()) == (b.span(), b.groups()), (pattern, line)


def test_a_remembered_form_is_used_instead_of_the_parser(forms: dict[str, Any], clean_forms: dict[str, Any],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lazyre.remember_forms(forms)
    pattern = next(iter(forms))

    def parser(*_args: Any, **_kw: Any) -> Any:
        raise AssertionError("parsed again")

    monkeypatch.setattr(regex, "compile", parser)
    assert lazyre.compile_known(pattern).pattern == pattern
    assert compiled.LazyPattern(pattern).compiled.pattern == pattern  # a database's regexes: through compile_known


@pytest.mark.parametrize("how", ["another pattern's form", "a field of another type", "a field too few",
                                 "code the engine refuses", "bytes that are no marshal data"])
def test_a_form_that_does_not_fit_is_compiled_from_its_text(forms: dict[str, Any], clean_forms: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    pattern, other = sorted(forms)[:2]
    form = list(marshal.loads(forms[pattern]))
    if how == "another pattern's form":
        form = list(marshal.loads(forms[other]))
    elif how == "a field of another type":
        form[2] = form[2].decode("latin-1")
    elif how == "a field too few":
        form = form[:-1]
    elif how == "bytes that are no marshal data":
        lazyre.remember_forms({pattern: b"\xff not marshal"})
    else:  # what the regex module says of code it refuses ("invalid RE code"); not tried on real garbage, which
        # can crash it (that is why the forms are read only from the user's own file: see the last test)
        def refuses(*_form: Any) -> Any:
            raise RuntimeError("invalid RE code")

        lazyre._rebuilder.cache_clear()
        monkeypatch.setattr(lazyre, "_rebuilder", lambda: refuses)
    if how != "bytes that are no marshal data":
        lazyre.remember_forms({pattern: marshal.dumps(tuple(form))})
    got = lazyre.compile_known(pattern)
    assert got.pattern == pattern
    # compiled from its text: the same code as regex.compile gives (not the same object: regex's own cache of
    # compiled patterns is bounded, and the suite compiles more than it keeps)
    assert lazyre.packed_form(got) == lazyre.packed_form(regex.compile(pattern))


def test_the_forms_of_another_regex_version_are_not_used(clean_forms: dict[str, Any]) -> None:
    data = _to_cache(load_database(), {})
    _version, got = data["regexes"]  # type: ignore[misc]
    clean_forms.clear()  # load_database read the cache
    _from_cache({**data, "regexes": ("0.0", got)})
    assert clean_forms == {}
    _from_cache(data)
    assert clean_forms == got


def _reduce(pattern: regex.Pattern[str]) -> tuple[Any, Any]:
    return copyreg.dispatch_table[regex.Pattern](pattern)  # type: ignore[no-any-return]


def test_a_form_is_what_regex_pickles_a_pattern_as(forms: dict[str, Any]) -> None:
    pattern = next(iter(forms))
    made, form = _reduce(regex.compile(pattern))
    assert form == marshal.loads(forms[pattern]) and made is lazyre._rebuilder()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file owners")
def test_the_forms_are_read_only_from_a_file_no_one_else_may_write(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    load_database()
    key = cache.key(signature_files([builtin_root()]), engine_name())
    path = tmp_path / "diagnoser" / f"db-{key[:40]}.bin"
    assert path.stat().st_mode & 0o777 == 0o600
    data = cache.load(key)
    assert data is not None and data["regexes"][1]
    assert data["engines"] or engine_name() != "hyperscan"
    path.chmod(0o664)  # a group may write it
    data = cache.load(key)
    assert data is not None and "regexes" not in data and data["engines"] == {}  # Hyperscan's bytes neither
    assert cache.unpack(data)[3] == ("", {})  # the rest is read as before
