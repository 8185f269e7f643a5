"""The `diagnose` command: options → pipeline → renderer; the only place errors become exit codes.

Exit status: 0 no failure found, 1 a failure found, 2 usage / input / signature-database error, 3 nothing to
diagnose (no line read), 74 the report could not be written whole (stdout closed, disk full), 130 interrupted,
128 + N stopped by signal N (143 SIGTERM, 129 SIGHUP, 131 SIGQUIT, 138 SIGUSR1).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from . import __version__
from .args import SUBCOMMANDS, ParseError, completion, parse
from .console import (
    Format,
    TerminalProgress,
    Warner,
    choose_language,
    emit_report,
    explain_signature,
    final_report,
    input_sources,
    lang_of,
    live_session,
    one_line,
    parse_duration_option,
    ray_target,
    use_color,
)
from .errors import STOP_SIGNALS, DiagnoserError, Terminated, UsageError, on_stop_signal
from .i18n import Msg, localized, msg
from .modes.examples import load_checked
from .output import EXIT_OUTPUT, Output, encodable, stderr_or_null
from .read.startmarks import take as take_marks
from .read.startmarks import taken as taken_marks
from .usage import EXIT_ON, FORMATS, choice, integer, print_help, wants_help

if TYPE_CHECKING:
    from .modes.ray import RayTarget
    from .report.nodes import NodeState

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_EMPTY, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 3, 130, 143
FOLLOW_HANG_DEFAULT = "10m"


def diagnose_command(a: Namespace) -> int:
    """Read a training job's logs and name the root cause of its failure, with the remedy."""
    if a.completion is not None:
        print(completion(choice(a.completion, "--completion", ("bash", "zsh", "fish"))), end="")
        return EXIT_OK
    form = Format(choice(a.fmt, "--format", FORMATS))
    stop_on = choice(a.exit_on, "--exit-on", EXIT_ON)
    ray = ray_target(a.ray_address, a.ray_paths, a.ray_timeout)
    paths = [Path(p) for p in a.paths or []]
    if a.follow_paths:
        return _follow(paths, form, a.signatures, a.lang, a.from_start, a.hang_after, stop_on, ray, a.verbose)
    if a.from_start or stop_on != "none":
        raise UsageError(Msg("err_follow_only"))
    if a.hang_after is not None and parse_duration_option(a.hang_after) > 0:
        raise UsageError(Msg("err_hang_live"))
    return _diagnose(paths, form, a.list_signatures, a.explain, a.signatures, a.lang, a.job_status,
                     integer(a.exit_code, "--exit-code"), integer(a.jobs, "--jobs", 1), a.version, ray, a.verbose)


def _diagnose(paths: list[Path] | None, fmt: Format, list_signatures: bool, explain: str | None,
              signatures: list[str] | None, lang: str | None, job_status: str | None, exit_code: int | None,
              jobs: int | None, version: bool, ray: RayTarget | None = None, verbose: bool = False) -> int:
    if version:
        print(f"diagnose {__version__}")
        return EXIT_OK
    language = choose_language(lang)
    warn = Warner(language)
    db = load_checked([Path(d) for d in signatures or []])
    if list_signatures:
        from .report.catalog import list_json, render_list

        if fmt is Format.json:
            print(list_json(db, language))
        else:
            render_list(db, sys.stdout, language, use_color(sys.stdout))
        return EXIT_OK
    if explain is not None:
        return explain_signature(db, explain, language)
    sources = input_sources(paths or [], warn) if ray is None or paths else []  # with --ray, no stdin
    if job_status is not None and exit_code is not None:
        raise UsageError(Msg("err_status_both"))
    status = job_status if exit_code is None else f"exit code {exit_code}"
    if jobs is not None and jobs < 1:
        raise UsageError(Msg("err_jobs"))
    from .modes.batch import default_jobs, diagnose

    cores = default_jobs()
    if jobs is not None and jobs > cores:  # more processes than cores is no faster; -j 150 took 4.4 GB
        warn(Msg("warn_jobs", asked=jobs, n=cores))
        jobs = cores
    if ray is not None:
        from .modes.ray import diagnose_cluster
    report = (diagnose_cluster(db, ray, sources, language, warn, status, jobs or cores) if ray is not None
              else diagnose(db, sources, language, warn, status, jobs or cores, exit_code=exit_code,
                            progress=TerminalProgress(len(sources), language)))
    emit_report(report, fmt, sys.stdout, verbose=verbose)
    if report.failed:
        return EXIT_FAILURE
    return EXIT_EMPTY if report.empty else EXIT_OK


def _follow(paths: list[Path], fmt: Format, signatures: list[str] | None, lang: str | None, from_start: bool,
            hang_after: str | None, exit_on: str, ray: RayTarget | None = None, verbose: bool = False) -> int:
    language = choose_language(lang)
    warn = Warner(language)
    if not paths and ray is None:
        raise UsageError(Msg("err_follow_paths"))
    start = taken_marks()
    if start is None:  # not started by the console script (a test calling main()): the marks are taken now
        start = take_marks([str(p) for p in paths])
    for p in paths:
        if not p.exists():
            warn(Msg("warn_follow_waiting", path=p))  # as tail -F: read from its start once it appears
    from .modes.following import follow
    from .modes.live import StopLive

    db = load_checked([Path(d) for d in signatures or []])
    session = live_session(db, fmt, language, warn, hang_after, FOLLOW_HANG_DEFAULT, exit_on, sys.stdout,
                           status=sys.stderr)
    code = EXIT_OK
    nodes: list[NodeState] = []
    try:  # main() turns SIGTERM (and the other STOP_SIGNALS) into Terminated
        if ray is not None:
            from .modes.ray_follow import follow_cluster

            follow_cluster(ray, paths, session, from_start, warn, nodes)
        else:
            follow(paths, session, from_start, warn, start=start)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except Terminated as exc:
        code = exc.status
    except StopLive:
        code = EXIT_OK if session.output_gone else EXIT_FAILURE  # main() tells a failed output
    report = session.finish()
    if ray is not None:
        report.nodes = nodes
    final_report(report, fmt, sys.stdout, verbose=verbose)
    if code == EXIT_OK:
        code = EXIT_FAILURE if report.failed else (EXIT_EMPTY if report.empty else EXIT_OK)
    return code


def run_command_cli(a: Namespace) -> int:
    """Run COMMAND, pass its output through unchanged, diagnose it live; exit with the command's own status."""
    from .modes.live import StopLive
    from .modes.run import run_command

    command = a.command
    if not command:
        raise UsageError(Msg("err_run_command"))
    form = Format(choice(a.fmt, "--format", FORMATS))
    stop_on = choice(a.exit_on, "--exit-on", EXIT_ON)
    language = choose_language(a.lang)
    warn = Warner(language)
    db = load_checked([Path(d) for d in a.signatures or []])
    session = live_session(db, form, language, warn, a.hang_after, "off", stop_on, sys.stderr, brief=True)
    try:
        code = run_command(command, session, a.log, warn)
    except StopLive:
        code = EXIT_FAILURE
    report = session.finish(exit_status=code, command=command)
    final_report(report, form, sys.stderr, verbose=a.verbose)
    return code


def _subcommand(which: str, a: Namespace) -> int:
    """The subcommands that are not the diagnosis itself, each imported only when asked for."""
    if which == "run":
        return run_command_cli(a)
    if which == "bundle":
        from .console import bundle_command

        return bundle_command(a)
    from .teach import check_command, learn_command

    return learn_command(a) if which == "learn" else check_command(a)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `diagnose` console script and of `python -m diagnoser`."""
    args = sys.argv[1:] if argv is None else argv
    lang = lang_of(args)
    err = stderr_or_null()
    encodable(sys.stdout)
    encodable(err)
    out = Output(sys.stdout)
    if out.error is not None and args[:1] != ["run"]:  # `diagnose run` still runs the command (report: stderr)
        _tell(err, msg("error_prefix", lang) + msg("err_stdout_closed", lang))
        return EXIT_OUTPUT
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, Output(err)  # type: ignore[assignment]
    try:
        code = _main(args, lang)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = real_out, real_err
    if out.failed and args[:1] != ["run"]:  # the report is cut short: it must never look whole
        _tell(err, msg("error_prefix", lang) + one_line(msg("err_output", lang, reason=out.reason())))
        return EXIT_OUTPUT
    return code


def _tell(err: TextIO, line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(line, file=err, flush=True)


def _main(args: list[str], lang: str) -> int:
    which = args[0] if args and args[0] in SUBCOMMANDS else "main"
    if which != "main":
        args = args[1:]
    if wants_help(args):
        print_help(which, lang, sys.stdout)
        return EXIT_OK
    # stop the workers (engine.py) and exit 128 + N; `diagnose run` forwards them to the command instead
    previous = {sig: signal.signal(sig, on_stop_signal) for sig in STOP_SIGNALS}
    try:
        a = parse(which, args)
        return diagnose_command(a) if which == "main" else _subcommand(which, a)
    except ParseError as exc:
        print(msg("error_prefix", lang) + one_line(localized(exc, lang)) + msg("see_help", lang), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated as exc:
        return exc.status
    except DiagnoserError as exc:
        print(msg("error_prefix", lang) + one_line(localized(exc, lang)), file=sys.stderr)
        return EXIT_USAGE
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
