"""Find, load, validate and compile the signature YAML files (built-in and user folders)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import regex
import yaml

from ..errors import SignatureError
from ..i18n import Msg
from ..read.lone import LONE_LITERALS
from ..read.traceback import GROUPER_LITERALS
from ..search.index import SearchIndex
from .literals import Gate, nesting_problem, required_gate
from .observe import OBSERVATIONS
from .parse import parse_signature
from .schema import Condition, Signature, placeholder_names

_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser is several times faster

MAX_FILE_BYTES = 1 << 20
DEFAULT_WINDOW = 0


@dataclass(frozen=True, slots=True)
class CompiledCondition:
    cond: Condition
    pattern: regex.Pattern[str]
    gate: Gate | None


@dataclass(frozen=True, slots=True)
class Rule:
    """One `match.any` regex of a signature, with its literal gate and the conditions a hit must meet
    (the signature's own `match.all` / `match.not`, then this pattern's)."""

    sig_index: int
    pattern: regex.Pattern[str]
    gate: Gate | None
    where: str  # e.g. "match.any[1]", for warnings
    all: tuple[CompiledCondition, ...] = ()
    not_: tuple[CompiledCondition, ...] = ()

    @property
    def window(self) -> int:
        """How many lines after a hit must be seen before its window conditions can be decided."""
        return max((c.cond.lines for c in (*self.all, *self.not_) if c.cond.scope == "window"), default=0)

    @property
    def whole_file(self) -> bool:
        return any(c.cond.scope == "file" for c in (*self.all, *self.not_))


@dataclass(frozen=True, slots=True)
class CompiledSignature:
    sig: Signature
    index: int
    rules: tuple[Rule, ...]
    all: tuple[CompiledCondition, ...]
    not_: tuple[CompiledCondition, ...]

    @property
    def window(self) -> int:
        return max((r.window for r in self.rules), default=0)

    def conditions(self) -> tuple[CompiledCondition, ...]:
        """Every condition of the signature and of its patterns."""
        return (*self.all, *self.not_, *(c for r in self.rules for c in (*r.all, *r.not_)))


@dataclass(frozen=True, slots=True)
class FactRule:
    name: str
    pattern: regex.Pattern[str]
    gate: Gate | None
    owner: str  # id of the signature that declared it, or "job" for the built-in observations
    mode: str = "first"  # keep the first value seen, or the "last" (checkpoints)
    head_only: bool = False  # read only in the first FACT_LINES lines of a file (config dumps live there)
    job: bool = False  # a built-in observation of the job's shape: read only in the first HEAD_LINES lines


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
    packaged = resources.files("diagnoser").joinpath("signatures")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "signatures"


def _yaml_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith((".yaml", ".yml")) and not name.endswith(".expected.yaml"):
                yield Path(dirpath) / name


def _display(path: Path, root: Path) -> str:
    try:
        return str(Path(root.name) / path.relative_to(root))
    except ValueError:
        return str(path)


def load_file(path: Path, root: Path) -> Signature:
    """Read and validate one signature file; its folder below `root` is its layer."""
    shown = _display(path, root)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SignatureError(shown, "", Msg("err_sig_too_big", kib=MAX_FILE_BYTES // 1024))
        raw = path.read_bytes()
    except OSError as exc:
        raise SignatureError(shown, "", Msg("err_sig_read", reason=exc.strerror or exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SignatureError(shown, "", Msg("err_sig_utf8", at=exc.start)) from None
    try:
        data = yaml.load(text, Loader=_YamlLoader)  # a safe loader (libyaml's when present)
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
        for path in _yaml_files(root):
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


def build_database(signatures: Iterable[Signature], check_refs: bool = True) -> Database:
    """Compile every regex, derive the literal gates, check cross-references."""
    compiled: list[CompiledSignature] = []
    rules: list[Rule] = []
    facts: list[FactRule] = []
    sigs = list(signatures)
    known = {s.id for s in sigs}
    for index, sig in enumerate(sigs):
        conds_all = tuple(_compile_condition(c, sig.path, f"match.all[{i}]") for i, c in enumerate(sig.all))
        conds_not = tuple(_compile_condition(c, sig.path, f"match.not[{i}]") for i, c in enumerate(sig.not_))
        sig_rules = []
        for i, pattern in enumerate(sig.any):
            where = f"match.any[{i}]"
            declared = sig.any_literals[i] if i < len(sig.any_literals) else ()
            gate = Gate(tuple(sorted(set(declared))), False) if declared else required_gate(pattern)
            own_all = sig.any_all[i] if i < len(sig.any_all) else ()
            own_not = sig.any_not[i] if i < len(sig.any_not) else ()
            rule = Rule(index, compile_pattern(pattern, sig.path, where), gate, where,
                        conds_all + tuple(_compile_condition(c, sig.path, f"{where}.all[{k}]")
                                          for k, c in enumerate(own_all)),
                        conds_not + tuple(_compile_condition(c, sig.path, f"{where}.not[{k}]")
                                          for k, c in enumerate(own_not)))
            sig_rules.append(rule)
        for name, patterns in sig.facts:
            for j, pattern in enumerate(patterns):
                where = f"facts.{name}[{j}]"
                compiled_fact = compile_pattern(pattern, sig.path, where)
                if name not in compiled_fact.groupindex:
                    raise SignatureError(sig.path, where, f"needs a named group (?P<{name}>...) for the value")
                facts.append(FactRule(name, compiled_fact, required_gate(pattern), sig.id, head_only=True))
        for other in sig.symptom_of if check_refs else ():
            if other not in known:
                raise SignatureError(sig.path, "symptom_of", f"names {other!r}, which is no signature's id")
        _check_placeholders(sig)
        compiled.append(CompiledSignature(sig, index, tuple(sig_rules), conds_all, conds_not))
        rules.extend(sig_rules)
    for obs in OBSERVATIONS:
        facts.append(FactRule(obs.name, regex.compile(obs.pattern), required_gate(obs.pattern), "job", obs.mode,
                              head_only=obs.mode == "first", job=obs.mode == "first"))
    keys: dict[int, str] = {}
    file_conds: dict[int, tuple[CompiledSignature, CompiledCondition]] = {}
    for cs in compiled:
        for k, cond in enumerate(cs.conditions()):
            keys.setdefault(id(cond), f"{cs.sig.id}#{k}")
            if cond.cond.scope == "file":
                file_conds.setdefault(id(cond), (cs, cond))
    window = max((cs.window for cs in compiled), default=0)
    return Database(tuple(compiled), tuple(rules), tuple(facts), _search_index(compiled, rules, facts), window, keys,
                    tuple(file_conds.values()))


def _literals(gate: Gate | None) -> tuple[str, ...] | None:
    return gate.literals if gate is not None else None


def _search_index(compiled: list[CompiledSignature], rules: list[Rule], facts: list[FactRule]) -> SearchIndex:
    file_gates = [_literals(c.gate) for cs in compiled for c in cs.conditions() if c.cond.scope == "file"]
    kinds = [(f.name, "job" if f.job else f.mode) for f in facts]
    return SearchIndex.build([_literals(r.gate) for r in rules], [_literals(f.gate) for f in facts], kinds,
                             file_gates, (*GROUPER_LITERALS, *LONE_LITERALS))


def _compile_condition(cond: Condition, path: str, where: str) -> CompiledCondition:
    return CompiledCondition(cond, compile_pattern(cond.pattern, path, where), required_gate(cond.pattern))


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


def load_database(extra_dirs: Iterable[Path] = (), *, builtin: bool = True) -> Database:
    return build_database(load_signatures(extra_dirs, builtin=builtin))
