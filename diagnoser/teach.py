"""Teaching diagnose new errors: `diagnose learn LOG --to DIR` (a signature skeleton for each error no signature
knows) and `diagnose check-signatures DIR` (a user folder's examples run and linted as the built-in ones are).

check-signatures exits 0 when every example holds and the lint finds no error (warnings are printed), 1 when an
example fails or the lint finds an error (a TODO left by learn is one), 2 when the folder cannot be read or a file
in it is not a valid signature (the one-line `path: field: problem` of every other command).
"""

from __future__ import annotations

import sys
from argparse import Namespace
from pathlib import Path

from .args import ParseError
from .console import Warner, choose_language, input_sources
from .errors import InputError
from .i18n import Msg, msg
from .match.database import build_database, load_database, load_signatures
from .match.lint import ERROR, lint
from .modes.batch import default_jobs
from .modes.examples import run_examples
from .modes.learn import learn

EXIT_OK, EXIT_FAILURE = 0, 1

def learn_command(a: Namespace) -> int:
    """Write a signature skeleton for each error of LOG that no signature knows; fill in its TODOs."""
    if a.to is None:
        raise ParseError(Msg("err_option_missing", option="--to"))
    language = choose_language(a.lang)
    warn = Warner(language)
    to = Path(a.to)
    db = load_database([Path(d) for d in a.signatures or []])
    sources = input_sources([Path(p) for p in a.paths or []], warn)
    if to.exists() and not to.is_dir():
        raise InputError(Msg("err_learn_not_dir", path=to))
    written = learn(db, sources, to, warn, default_jobs())
    if not written:
        print(msg("learn_nothing", language))
        return EXIT_FAILURE
    for sk in written:
        print(msg("learn_wrote", language, path=sk.path, where=sk.where, literal=sk.literal))
    print(msg("learn_next", language, dir=to))
    return EXIT_OK


def check_command(a: Namespace) -> int:
    """Run a signature folder's examples as the built-in tests do (through the whole database) and lint it."""
    if a.folder is None:
        raise ParseError(Msg("err_option_missing", option="DIR"))
    language = choose_language(a.lang)
    folder = Path(a.folder)
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
    return EXIT_FAILURE if failed or errors else EXIT_OK
