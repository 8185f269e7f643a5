"""Start-up: what a command imports before it answers (issue 13: a 40-line log diagnosed from the warm cache
without the libraries only other modes need), and the shell completion that replaced typer's.

No timing here: the imports are checked by name, in a fresh interpreter (benchmarks/run.py times start-up)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from diagnoser.args import COMMANDS, completion

# heavy libraries (and our own modules) no plain diagnosis needs: the parser, validation and YAML of building
# the database, the pool of -j, the other modes
NEVER = ("typer", "click", "pydantic", "jsonschema", "yaml", "ray", "tarfile", "importlib.metadata",
         "importlib.resources", "multiprocessing", "concurrent.futures", "diagnoser.modes.bundle",
         "diagnoser.modes.ray", "diagnoser.modes.learn", "diagnoser.match.parse", "diagnoser.match.lint",
         "diagnoser.teach")
WARM_NEVER = ("calendar",)  # read only for a Slurm time (judge/table.py)
PROBE = ("import json, sys\nfrom diagnoser.__main__ import main\nreal = sys.stdout\n"
         "sys.stdout = open('/dev/null', 'w')\ncode = main(sys.argv[1:])\nsys.stdout = real\n"
         "print(json.dumps([code, sorted(sys.modules)]))\n")


def _modules(args: list[str], cache: Path) -> tuple[int, set[str]]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    code, modules = json.loads(proc.stdout.splitlines()[-1])
    return code, set(modules)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.fixture(scope="module")
def log40(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("startup")
    log = root / "40.log"
    log.write_text("".join(f"line {i}\n" for i in range(1, 41)), encoding="utf-8")
    cache = root / "cache"
    _modules([str(log), "--format", "json"], cache)  # builds the cache: YAML, validation
    return log, cache


def test_version_imports_nothing_heavy(log40: tuple[Path, Path]) -> None:
    code, modules = _modules(["--version"], log40[1])
    assert code == 0 and not _loaded(modules, (*NEVER, "rich", "regex", "argparse", "diagnoser.match"))


def test_a_warm_start_reads_no_yaml_and_loads_no_other_mode(log40: tuple[Path, Path]) -> None:
    log, cache = log40
    code, modules = _modules([str(log), "--format", "json"], cache)
    assert code == 0 and "diagnoser.match.database" in modules  # the check below would hold on a crash
    assert not _loaded(modules, (*NEVER, *WARM_NEVER, "rich", "diagnoser.report.text")), "imported for a JSON report"
    code, modules = _modules([str(log)], cache)
    assert code == 0 and "rich" in modules and not _loaded(modules, (*NEVER, *WARM_NEVER)), "imported for a text report"


def test_help_of_each_command_in_its_own_words(capsys: pytest.CaptureFixture[str]) -> None:
    from diagnoser.cli import main

    for which in COMMANDS:
        args = ["--help"] if which == "main" else [which, "--help"]
        assert main(args) == 0
        out = capsys.readouterr().out
        for opt in COMMANDS[which].options:
            assert f"{opt.names[-1]} {opt.metavar}".strip() in out, (which, opt.names)


def _bash_complete(line: str) -> list[str]:
    words = line.split(" ")
    script = completion("bash") + (f"COMP_WORDS=({' '.join(repr(w) for w in words)})\nCOMP_CWORD={len(words) - 1}\n"
                                   "_diagnose\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_bash_completion_completes_options_values_and_subcommands() -> None:
    assert sorted(_bash_complete("diagnose --fo")) == ["--follow", "--format"]
    assert _bash_complete("diagnose run --lo") == ["--log"]
    assert sorted(_bash_complete("diagnose --format j")) == ["json", "jsonl"]
    assert "check-signatures" in _bash_complete("diagnose ch")
    assert _bash_complete("diagnose bundle --ou") == ["--output"]
    assert _bash_complete("diagnose run -- python --fo") == []  # the command's own words: the shell's


def test_each_shell_gets_a_script_from_the_same_table(capsys: pytest.CaptureFixture[str]) -> None:
    from diagnoser.cli import main

    for shell in ("bash", "zsh", "fish"):
        assert main(["--completion", shell]) == 0
        script = capsys.readouterr().out
        assert script == completion(shell) and "diagnose" in script
        assert ("exit-on" in script) and ("hang-after" in script)
    assert "bashcompinit" in completion("zsh") and "complete -c diagnose" in completion("fish")
    assert main(["--completion", "tcsh"]) == 2 and "--completion must be one of" in capsys.readouterr().err


GC_PROBE = ("import gc, json, sys\nfrom diagnoser.__main__ import main\nreal = sys.stdout\n"
            "sys.stdout = open('/dev/null', 'w')\ncode = main({argv})\nsys.stdout = real\n"
            "print(json.dumps([code, gc.isenabled(), gc.get_freeze_count()]))\n")


@pytest.mark.parametrize("argv", ["None", "sys.argv[1:]"])
def test_the_command_collects_no_cycles_while_it_starts(log40: tuple[Path, Path], argv: str) -> None:
    """The command (main() with no argv) pauses the cycle collector until its database is loaded, then freezes what
    exists and collects again; a caller in its own process (main(argv)) keeps its collector as it was."""
    log, cache = log40
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-c", GC_PROBE.format(argv=argv), str(log)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    code, enabled, frozen = json.loads(proc.stdout.splitlines()[-1])
    assert code == 0 and enabled
    assert (frozen > 10_000) if argv == "None" else frozen == 0
