"""The tree shows the pipeline: imports flow one way (read → search → match → judge → report → modes → cli), no
module imports another that imports it back, and modules stay small enough to read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "diagnoser"
# Each stage may import its own modules and those of the stages before it. errors, i18n, safe, lazyre and output are
# the base every stage uses (one-line errors, words in two languages, untrusted text made safe, regexes compiled on
# first use, writes that fail loudly); console, teach (learn, check-signatures), cli and its usage (--help) and eval
# sit on top.
ORDER = {"errors": 0, "i18n": 0, "i18n_ranks": 0, "i18n_ray": 0, "i18n_health": 0, "i18n_robust": 0, "phrases": 0,
         "safe": 0, "lazyre": 0, "output": 0, "usercache": 0, "read": 1, "search": 2, "match": 3, "judge": 4, "report": 5, "modes": 6,
         "console": 7, "teach": 8, "cli": 8, "usage": 7, "args": 7, "eval": 9, "__main__": 9, "__init__": 0}
MAX_LINES = 300


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Modules of the package this file imports, at any depth of its code (lazy imports count too)."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if not target.startswith("diagnoser"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                          or (PACKAGE.parent / sub.replace(".", "/")).is_dir() else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("diagnoser"))
    found.discard(module)
    return found


def _stage(module: str) -> int:
    parts = module.split(".")
    return ORDER[parts[1]] if len(parts) > 1 else 0


MODULES = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_flow_one_way(module: str) -> None:
    here = _stage(module)
    backwards = sorted(m for m in _imports(MODULES[module]) if _stage(m) > here)
    assert not backwards, f"{module} (stage {here}) imports later stages: {backwards}"


def test_no_import_cycles() -> None:
    graph = {m: {t for t in _imports(p) if t in MODULES} for m, p in MODULES.items()}
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1 and not (m.startswith(t + ".") or t == m):
                raise AssertionError("import cycle: " + " → ".join([*trail[trail.index(t):], m, t]))
            if t not in state:
                visit(t, [*trail, t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_readable(module: str) -> None:
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines: split it by responsibility"
