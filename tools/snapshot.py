"""Write every sample's report in every format to a folder, so two checkouts can be compared byte for byte.

    python tools/snapshot.py OUT_DIR [--checkout PATH]

Runs `python -m diagnoser` from the checkout (default: this one) on each labelled case in sample_logs/
(with the case's own arguments) as text (80 and 120 columns, English and Chinese), JSON and Markdown,
plus `--list` and `--explain` of every signature. Run times are masked. Compare two snapshots with
`diff -r BEFORE AFTER`: a refactoring that changes no behaviour leaves no difference.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent.parent
_SECONDS = (
    re.compile(r'("seconds": )[0-9.]+'),
    re.compile(r"(in )[0-9.]+( s\.)"),
    re.compile(r"(用时 )[0-9.]+( 秒)"),
    re.compile(r"(\| seconds \| )[0-9.]+"),
)


def _mask(text: str) -> str:
    for rx in _SECONDS:
        text = rx.sub(lambda m: m.group(1) + "<t>" + (m.group(2) if m.lastindex and m.lastindex > 1 else ""), text)
    return text


def _cases(root: Path) -> list[tuple[str, Path, list[str]]]:
    out = []
    for exp in sorted(root.rglob("*.expected.yaml")):
        name = exp.name[: -len(".expected.yaml")]
        data = yaml.safe_load(exp.read_text(encoding="utf-8")) or {}
        if data.get("input"):
            target = exp.parent / str(data["input"])
        elif (exp.parent / name).is_dir():
            target = exp.parent / name
        else:
            target = next(p for p in exp.parent.iterdir()
                          if p.name.startswith(name + ".") and not p.name.endswith(".expected.yaml"))
        rel = str(exp.relative_to(root).with_name(name))
        out.append((rel, target, [str(a) for a in data.get("args", []) or []]))
    return out


def _run(checkout: Path, args: list[str], columns: int) -> str:
    env = dict(os.environ, COLUMNS=str(columns), NO_COLOR="1", PYTHONPATH=str(checkout), LANG="C.UTF-8")
    env.pop("LC_ALL", None)
    proc = subprocess.run([sys.executable, "-m", "diagnoser", *args], cwd=HERE, env=env, capture_output=True,
                          text=True, check=False)
    return _mask(f"exit {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--checkout", type=Path, default=HERE)
    ns = parser.parse_args()
    checkout = ns.checkout.resolve()
    ns.out.mkdir(parents=True, exist_ok=True)
    runs: list[tuple[str, list[str], int]] = []
    for rel, target, extra in _cases(HERE / "sample_logs"):
        base = [str(target.relative_to(HERE)), *extra]
        runs += [
            (f"{rel}.text80", [*base, "--lang", "en"], 80),
            (f"{rel}.text120", [*base, "--lang", "en"], 120),
            (f"{rel}.zh", [*base, "--lang", "zh"], 100),
            (f"{rel}.json", [*base, "--lang", "en", "--format", "json"], 100),
            (f"{rel}.md", [*base, "--lang", "en", "--format", "markdown"], 100),
        ]
    runs += [("list.80", ["--list", "--lang", "en"], 80), ("list.140", ["--list", "--lang", "en"], 140),
             ("list.json", ["--list", "--format", "json", "--lang", "en"], 100)]
    ids = sorted(p.stem for p in (HERE / "signatures").rglob("*.yaml"))
    runs += [(f"explain/{i}", ["--explain", i, "--lang", "en"], 100) for i in ids]
    for name, args, columns in runs:
        path = ns.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_run(checkout, args, columns), encoding="utf-8")
    print(f"{len(runs)} reports written to {ns.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
