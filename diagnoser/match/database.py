"""Find, load, validate and compile the signature YAML files (built-in and user folders)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import regex

from .. import lazyre, started
from ..errors import SignatureError
from ..i18n import Msg
from ..read.marks import LINE_READER_LITERALS, MARK_LITERALS, SPLIT_FREE_LITERALS
from ..search.engine import engine_name, preload
from ..search.index import GateSpec, SearchIndex
from . import cache, metrics
from .compiled import CompiledCondition as CompiledCondition
from .compiled import CompiledSignature as CompiledSignature
from .compiled import FactRule as FactRule
from .compiled import LazyPattern as LazyPattern
from .compiled import Rule as Rule
from .compiled import regex_forms
from .framerules import FrameRule
from .literals import Gate, nesting_problem, required_gate
from .observe import OBSERVATIONS
from .schema import Condition, Signature, placeholder_names
from .sigfile import MAX_FILE_BYTES as MAX_FILE_BYTES
from .sigfile import display_name, read_signature_file, yaml_files
from .sigfile import signature_files as signature_files

_GATES: dict[str, Gate | None] = {}  # every gate derived in this process (by _Compiler.gate)


@dataclass(frozen=True, slots=True)
class Database:
    """The compiled database: signatures, their rules and facts, and the literal index the fast search and the
    matcher use (built once here; nothing below derives literal sets again)."""

    signatures: tuple[CompiledSignature, ...]
    rules: tuple[Rule, ...]
    facts: tuple[FactRule, ...]
    search: SearchIndex
    # derived once here, not per scanned file
    max_window: int = 0
    cond_keys: dict[int, str] = field(default_factory=dict)  # id(condition) -> a name stable across processes
    file_conds: tuple[tuple[CompiledSignature, CompiledCondition], ...] = ()
    frame_rules: tuple[FrameRule, ...] = ()  # read when a traceback closes with no exception line

    def by_id(self) -> dict[str, Signature]:
        """Each signature under its id (what a Collector labels its findings with)."""
        return {cs.sig.id: cs.sig for cs in self.signatures}

    def get(self, sig_id: str) -> CompiledSignature | None:
        for cs in self.signatures:
            if cs.sig.id == sig_id:
                return cs
        return None

    def only(self, ids: Iterable[str]) -> Database:
        """A database of just these signatures (the example tests run each one alone)."""
        wanted = set(ids)
        return build_database([cs.sig for cs in self.signatures if cs.sig.id in wanted], check_refs=False)


def builtin_root() -> Path:
    """The built-in signatures: inside the installed package, else the source checkout's folder.

    DIAGNOSER_BUILTIN_SIGNATURES points at another folder instead (for developing signatures).
    """
    override = os.environ.get("DIAGNOSER_BUILTIN_SIGNATURES")
    if override:
        return Path(override)
    packaged = Path(__file__).resolve().parents[1] / "signatures"  # importlib.resources: 15 ms of imports
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "signatures"


def load_file(path: Path, root: Path) -> Signature:
    """Read and validate one signature file; its folder below `root` is its layer."""
    import yaml  # only to build the database: a start-up from the cache reads no YAML

    from .parse import parse_signature
    from .sigfile import no_aliases, signature_text

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser is several times faster
    shown = display_name(path, root)
    text = signature_text(read_signature_file(path, shown), shown)
    try:
        no_aliases(text, shown, loader)
        data = yaml.load(text, Loader=loader)  # a safe loader (libyaml's when present)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "yaml"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SignatureError(shown, where, Msg("err_sig_yaml", problem=problem)) from None
    layer = path.parent.relative_to(root).as_posix() if path.parent != root else None
    sig = parse_signature(data, shown, layer)
    if sig.id != path.stem:
        raise SignatureError(shown, "id", Msg("err_sig_id_file", sig_id=sig.id, name=path.name))
    return sig


def load_signatures(extra_dirs: Iterable[Path] = (), *, builtin: bool = True) -> list[Signature]:
    """Built-in signatures, then each user folder in turn; a later id replaces an earlier one."""
    roots: list[tuple[Path, bool]] = []
    if builtin:
        roots.append((builtin_root(), True))
    for d in extra_dirs:
        if not d.is_dir():
            raise SignatureError(str(d), "", Msg("err_sig_folder"))
        roots.append((d, False))
    by_id: dict[str, Signature] = {}
    for root, _is_builtin in roots:
        seen_here: dict[str, str] = {}
        for path in yaml_files(root):
            sig = load_file(path, root)
            if sig.id in seen_here:
                raise SignatureError(sig.path, "id", Msg("err_sig_dup", sig_id=sig.id, other=seen_here[sig.id]))
            seen_here[sig.id] = sig.path
            by_id[sig.id] = sig  # a user folder replaces the built-in signature of the same id
    return list(by_id.values())


def compile_pattern(pattern: str, path: str, where: str) -> regex.Pattern[str]:
    problem = nesting_problem(pattern)
    if problem:
        raise SignatureError(path, where, problem)
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise SignatureError(path, where, str(exc)) from None
    except (ValueError, OverflowError, RecursionError) as exc:
        raise SignatureError(path, where, f"cannot compile: {exc}") from None


class _Compiler:
    """Compiles the patterns and derives the gates of a database. `checked`: validate and compile every regex
    now (a database from the cache was checked when it was cached: its regexes compile on first use).
    `gates`: the gates derived so far, by pattern (the cache stores them)."""

    def __init__(self, checked: bool, gates: dict[str, Gate | None]) -> None:
        self.checked = checked
        self.gates = gates

    def pattern(self, pattern: str, path: str, where: str) -> LazyPattern:
        return LazyPattern(pattern, compile_pattern(pattern, path, where) if self.checked else None)

    def gate(self, pattern: str, declared: tuple[str, ...] = ()) -> Gate | None:
        key = "\0".join((pattern, *declared))
        if key not in self.gates:
            # a pure function of the pattern: derived once per process (only() builds a database per user signature)
            self.gates[key] = _GATES[key] = _GATES[key] if key in _GATES else required_gate(pattern, declared)
        return self.gates[key]

    def condition(self, cond: Condition, path: str, where: str) -> CompiledCondition:
        return CompiledCondition(cond, self.pattern(cond.pattern, path, where), self.gate(cond.pattern))


def build_database(signatures: Iterable[Signature], check_refs: bool = True, *, checked: bool = True,
                   gates: dict[str, Gate | None] | None = None) -> Database:
    """Compile every regex, derive the literal gates, check cross-references (see _Compiler)."""
    c = _Compiler(checked, {} if gates is None else gates)
    compiled: list[CompiledSignature] = []
    rules: list[Rule] = []
    facts: list[FactRule] = []
    sigs = list(signatures)
    known = {s.id for s in sigs}
    for index, sig in enumerate(sigs):
        conds_all = tuple(c.condition(x, sig.path, f"match.all[{i}]") for i, x in enumerate(sig.all))
        conds_not = tuple(c.condition(x, sig.path, f"match.not[{i}]") for i, x in enumerate(sig.not_))
        sig_rules = []
        for i, pattern in enumerate(sig.any):
            where = f"match.any[{i}]"
            declared = sig.any_literals[i] if i < len(sig.any_literals) else ()
            own_all = sig.any_all[i] if i < len(sig.any_all) else ()
            own_not = sig.any_not[i] if i < len(sig.any_not) else ()
            rule = Rule(index, c.pattern(pattern, sig.path, where), c.gate(pattern, tuple(declared)), where,
                        conds_all + tuple(c.condition(x, sig.path, f"{where}.all[{k}]") for k, x in enumerate(own_all)),
                        conds_not + tuple(c.condition(x, sig.path, f"{where}.not[{k}]") for k, x in enumerate(own_not)))
            sig_rules.append(rule)
        for name, patterns in sig.facts:
            for j, pattern in enumerate(patterns):
                where = f"facts.{name}[{j}]"
                compiled_fact = c.pattern(pattern, sig.path, where)
                if checked and name not in compiled_fact.groupindex:
                    raise SignatureError(sig.path, where, f"needs a named group (?P<{name}>...) for the value")
                facts.append(FactRule(name, compiled_fact, c.gate(pattern), sig.id, head_only=True))
        if checked:
            for other in sig.symptom_of if check_refs else ():
                if other not in known:
                    raise SignatureError(sig.path, "symptom_of", f"names {other!r}, which is no signature's id")
            _check_placeholders(sig)
        compiled.append(CompiledSignature(sig, index, tuple(sig_rules), conds_all, conds_not))
        rules.extend(sig_rules)
    for obs in OBSERVATIONS:
        facts.append(FactRule(obs.name, LazyPattern(obs.pattern), c.gate(obs.pattern), "job", obs.mode,
                              head_only=obs.mode == "first", job=obs.mode == "first"))
    keys: dict[int, str] = {}
    file_conds: dict[int, tuple[CompiledSignature, CompiledCondition]] = {}
    for cs in compiled:
        for k, cond in enumerate(cs.conditions()):
            keys.setdefault(id(cond), f"{cs.sig.id}#{k}")
            if cond.cond.scope == "file":
                file_conds.setdefault(id(cond), (cs, cond))
    window, conds = max((cs.window for cs in compiled), default=0), tuple(file_conds.values())
    search = _search_index(rules, facts, any(x.metric for x in sigs), conds)  # health rules: their readers' literals
    frames = tuple(fr for cs in compiled for fr in FrameRule.compile_all(cs.sig, cs.index, c.pattern))
    started()  # a command's start-up ends with its first database (diagnoser.pause_gc)
    return Database(tuple(compiled), tuple(rules), tuple(facts), search, window, keys, conds, frames)


def _literals(gate: Gate | None) -> GateSpec:
    return (gate.literals, gate.also) if gate is not None else None


def _search_index(rules: list[Rule], facts: list[FactRule], health: bool,
                  file_conds: tuple[tuple[CompiledSignature, CompiledCondition], ...]) -> SearchIndex:
    kinds = [(f.name, "job" if f.job else f.mode) for f in facts]
    return SearchIndex.build([_literals(r.gate) for r in rules], [_literals(f.gate) for f in facts], kinds,
                             [_literals(c.gate) for _cs, c in file_conds], LINE_READER_LITERALS,
                             metrics.reader_gates() if health else (), MARK_LITERALS, SPLIT_FREE_LITERALS)


def _check_placeholders(sig: Signature) -> None:
    for i, variant in enumerate(sig.remedy):
        en = placeholder_names(variant.text.en)
        zh = placeholder_names(variant.text.zh)
        if en != zh:
            diff = sorted(en ^ zh)
            raise SignatureError(
                sig.path, f"remedy[{i}]", f"English and Chinese texts use different placeholders: {', '.join(diff)}"
            )
    if placeholder_names(sig.why.en) != placeholder_names(sig.why.zh):
        raise SignatureError(sig.path, "why", "English and Chinese texts use different placeholders")


def load_database(extra_dirs: Iterable[Path] = (), *, builtin: bool = True,
                  files: list[tuple[str, bytes]] | None = None) -> Database:
    """The database of the built-in signatures and those of `extra_dirs`: from the on-disk cache when it holds
    this very set of files (cache.py), else read, validated and compiled, and cached for the next run. `files`:
    what `signature_files` gave for these roots, when the caller read them already."""
    roots = signature_roots(extra_dirs, builtin)
    if files is None:
        with contextlib.suppress(OSError):  # else load_signatures says what is wrong
            files = signature_files(roots)
    key = cache.key(files, engine_name()) if files is not None else None
    data = cache.load(key) if key is not None else None
    if data is not None:
        with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError, RecursionError):
            return _from_cache(data)
    gates: dict[str, Gate | None] = {}
    db = build_database(load_signatures(extra_dirs, builtin=builtin), gates=gates)
    if key is not None:
        cache.store(key, _to_cache(db, gates))
    return db


def signature_roots(extra_dirs: Iterable[Path] = (), builtin: bool = True) -> list[Path]:
    """The folders signatures are read from, in order: the built-in one, then each of `extra_dirs` (a SignatureError
    for one that is not a folder)."""
    roots = [builtin_root()] if builtin else []
    for d in extra_dirs:
        if not d.is_dir():
            raise SignatureError(str(d), "", Msg("err_sig_folder"))
        roots.append(d)
    return roots


def _to_cache(db: Database, gates: dict[str, Gate | None]) -> dict[str, object]:
    lazy = [c.pattern for cs in db.signatures for c in cs.conditions()] + [r.pattern for r in db.rules]
    lazy += [f.pattern for f in db.facts] + [p for fr in db.frame_rules for pair in fr.frames for p in pair if p]
    texts = [p for cs in db.signatures for m in cs.sig.metric for p in (*m.names, *m.not_names, *m.excused_by)]
    texts += [m.divide_by for cs in db.signatures for m in cs.sig.metric if m.divide_by] + sorted(lazyre.OWN)
    return cache.pack([cs.sig for cs in db.signatures], gates, db.search.compiled_engines(),
                      (regex.__version__, regex_forms(lazy, texts)))


def _from_cache(data: dict[str, object]) -> Database:
    signatures, gates, engines, (version, forms) = cache.unpack(data)
    preload(engines)
    if version == regex.__version__:  # a form is code for one version of `regex` (--ray sends it to other machines)
        lazyre.remember_forms(forms)
    return build_database(signatures, checked=False, gates=gates)
