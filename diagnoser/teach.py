"""Teaching diagnose new errors: `diagnose learn LOG --to DIR` (a signature skeleton for each error no signature
knows) and `diagnose check-signatures DIR` (a user folder's examples run and linted as the built-in ones are).

check-signatures exits 0 when every example holds and the lint finds no error (warnings are printed), 1 when an
example fails or the lint finds an error (a TODO left by learn is one), 2 when the folder cannot be read or a file
in it is not a valid signature (the one-line `path: field: problem` of every other command).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .console import Warner, choose_language, input_sources
from .errors import InputError
from .i18n import Msg, msg
from .match.database import build_database, load_database, load_signatures
from .match.lint import ERROR, lint
from .modes.batch import default_jobs
from .modes.examples import run_examples
from .modes.learn import learn

EXIT_OK, EXIT_FAILURE = 0, 1

learn_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
check_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@learn_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def learn_command(
    to: Annotated[Path, typer.Option("--to", metavar="DIR", help="The folder to write the signatures to.")],
    paths: Annotated[list[Path] | None, typer.Argument(
        help="The log (files or a job's folder; none or - reads standard input).", show_default=False)] = None,
    signatures: Annotated[list[Path] | None, typer.Option(
        "--signatures", "-s", metavar="DIR", help="Signature folders already in use (their errors are known).")] = None,
    lang: Annotated[str | None, typer.Option("--lang", metavar="en|zh")] = None,
) -> None:
    """Write a signature skeleton for each error of LOG that no signature knows; fill in its TODOs."""
    language = choose_language(lang)
    warn = Warner(language)
    db = load_database(signatures or [])
    sources = input_sources(paths or [], warn)
    if to.exists() and not to.is_dir():
        raise InputError(Msg("err_learn_not_dir", path=to))
    written = learn(db, sources, to, warn, default_jobs())
    if not written:
        print(msg("learn_nothing", language))
        raise typer.Exit(EXIT_FAILURE)
    for sk in written:
        print(msg("learn_wrote", language, path=sk.path, where=sk.where, literal=sk.literal))
    print(msg("learn_next", language, dir=to))
    raise typer.Exit(EXIT_OK)


@check_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def check_command(
    folder: Annotated[Path, typer.Argument(help="A folder of your own signature files.", show_default=False)],
    lang: Annotated[str | None, typer.Option("--lang", metavar="en|zh")] = None,
) -> None:
    """Run a signature folder's examples as the built-in tests do (through the whole database) and lint it."""
    language = choose_language(lang)
    mine = load_signatures([folder], builtin=False)  # a file that is not a valid signature stops here (exit 2)
    db = build_database(load_signatures([folder]))
    ids = [s.id for s in mine]
    problems = lint(db, [folder], only=ids)
    errors = 0
    for p in problems:
        errors += p.level == ERROR
        print(msg("check_error" if p.level == ERROR else "check_warning", language, problem=str(p)))
    examples = failed = 0
    paths = {s.id: s.path for s in mine}
    for case, problem in run_examples(db, ids):
        examples += 1
        if problem is not None:
            failed += 1
            where = f"examples.{case.kind}[{case.index}]"
            print(msg("check_example_failed", language, path=paths[case.sig_id], where=where, problem=problem))
    warnings = len(problems) - errors
    print(msg("check_summary", language, sigs=len(ids), examples=examples, failed=failed, errors=errors,
              warnings=warnings), file=sys.stdout)
    raise typer.Exit(EXIT_FAILURE if failed or errors else EXIT_OK)
