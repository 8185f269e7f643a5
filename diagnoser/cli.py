"""The `diagnose` command: options → pipeline → renderer; the only place errors become exit codes.

Exit status: 0 no failure found, 1 a failure found, 2 usage / input / signature-database error, 3 nothing to
diagnose (no line read), 74 the report could not be written whole (stdout closed, disk full), 130 interrupted,
128 + N stopped by signal N (143 SIGTERM, 129 SIGHUP, 131 SIGQUIT, 138 SIGUSR1).
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from . import __version__
from .console import (
    Format,
    Lang,
    RayAddress,
    RayPaths,
    RayTimeout,
    Signatures,
    TerminalProgress,
    Warner,
    bundle_app,
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
from .modes.batch import default_jobs, diagnose
from .modes.examples import load_checked
from .modes.live import StopLive, follow
from .modes.ray import RayTarget, diagnose_cluster
from .modes.ray_follow import follow_cluster
from .modes.run import run_command
from .output import EXIT_OUTPUT, Output, encodable, stderr_or_null
from .read.startmarks import take as take_marks
from .read.startmarks import taken as taken_marks
from .report.catalog import list_json, render_list
from .report.nodes import NodeState
from .teach import check_app, learn_app
from .usage import EXIT_ON, FORMATS, choice, integer, print_help, usage_message, wants_help

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_EMPTY, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 3, 130, 143


def _click_exceptions() -> Any:
    # Newer typer carries its own copy of click; older typer uses click itself.
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("typer needs click or its bundled copy of it")


_CLICK = _click_exceptions()
_ABORTS: tuple[type[BaseException], ...] = tuple({getattr(_CLICK, "Abort", typer.Abort), typer.Abort})


FOLLOW_HANG_DEFAULT = "10m"


app = typer.Typer(add_completion=True, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def diagnose_command(
    paths: Annotated[list[Path] | None, typer.Argument(
        metavar="[LOG|DIR]...", help="Log files, .gz files or folders of a job's logs; none (or -): stdin.",
        show_default=False)] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="Report format: text, json, markdown or jsonl.",
                                     show_default=False)] = "text",
    list_signatures: Annotated[bool, typer.Option("--list", help="List the signatures and exit.")] = False,
    explain: Annotated[str | None, typer.Option("--explain", help="Show one signature in full and exit.")] = None,
    signatures: Signatures = None,
    lang: Lang = None,
    job_status: Annotated[str | None, typer.Option("--job-status", help="What the scheduler reported.")] = None,
    exit_code: Annotated[str | None, typer.Option("--exit-code", help="The exit code the scheduler recorded.")] = None,
    jobs: Annotated[str | None, typer.Option("--jobs", "-j", help="Processes for scanning many files.")] = None,
    follow_paths: Annotated[bool, typer.Option("--follow", "-F", help="Follow the files as they grow.")] = False,
    from_start: Annotated[bool, typer.Option("--from-start", help="With --follow: read the files from the start.")
                          ] = False,
    hang_after: Annotated[str | None, typer.Option("--hang-after", help="Report a hang after this much silence.")
                          ] = None,
    exit_on: Annotated[str, typer.Option("--exit-on", show_default=False,
                                         help="none, cause or health: stop at the first root cause (or health).")
                       ] = "none",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", "--all", help="Show every finding in full.")] = False,
    ray_address: RayAddress = None,
    ray_paths: RayPaths = None,
    ray_timeout: RayTimeout = None,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    """Read a training job's logs and name the root cause of its failure, with the remedy."""
    form = Format(choice(fmt, "--format", FORMATS))
    stop_on = choice(exit_on, "--exit-on", EXIT_ON)
    ray = ray_target(ray_address, ray_paths, ray_timeout)
    if follow_paths:
        raise typer.Exit(_follow(paths or [], form, signatures, lang, from_start, hang_after, stop_on, ray, verbose))
    if from_start or stop_on != "none":
        raise UsageError(Msg("err_follow_only"))
    if hang_after is not None and parse_duration_option(hang_after) > 0:
        raise UsageError(Msg("err_hang_live"))
    raise typer.Exit(_diagnose(paths, form, list_signatures, explain, signatures, lang, job_status,
                               integer(exit_code, "--exit-code"), integer(jobs, "--jobs", 1), version, ray, verbose))


def _diagnose(paths: list[Path] | None, fmt: Format, list_signatures: bool, explain: str | None,
              signatures: list[Path] | None, lang: str | None, job_status: str | None, exit_code: int | None,
              jobs: int | None, version: bool, ray: RayTarget | None = None, verbose: bool = False) -> int:
    if version:
        print(f"diagnose {__version__}")
        return EXIT_OK
    language = choose_language(lang)
    warn = Warner(language)
    db = load_checked(signatures or [])
    if list_signatures:
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
    cores = default_jobs()
    if jobs is not None and jobs > cores:  # more processes than cores is no faster; -j 150 took 4.4 GB
        warn(Msg("warn_jobs", asked=jobs, n=cores))
        jobs = cores
    report = (diagnose_cluster(db, ray, sources, language, warn, status, jobs or cores) if ray is not None
              else diagnose(db, sources, language, warn, status, jobs or cores, exit_code=exit_code,
                            progress=TerminalProgress(len(sources), language)))
    emit_report(report, fmt, sys.stdout, verbose=verbose)
    if report.failed:
        return EXIT_FAILURE
    return EXIT_EMPTY if report.empty else EXIT_OK


def _follow(paths: list[Path], fmt: Format, signatures: list[Path] | None, lang: str | None, from_start: bool,
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
    db = load_checked(signatures or [])
    session = live_session(db, fmt, language, warn, hang_after, FOLLOW_HANG_DEFAULT, exit_on, sys.stdout,
                           status=sys.stderr)
    code = EXIT_OK
    nodes: list[NodeState] = []
    try:  # main() turns SIGTERM (and the other STOP_SIGNALS) into Terminated
        if ray is not None:
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


run_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@run_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def run_command_cli(
    command: Annotated[list[str] | None, typer.Argument(metavar="COMMAND [ARGS]...", show_default=False,
                                                        help="The training command and its arguments, after --.")
                       ] = None,
    log: Annotated[Path | None, typer.Option("--log", help="Also append the command's output to this file.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="Report format (on stderr).", show_default=False)
                   ] = "text",
    signatures: Signatures = None,
    lang: Lang = None,
    hang_after: Annotated[str | None, typer.Option("--hang-after", help="Report a hang after this much silence.")
                          ] = None,
    exit_on: Annotated[str, typer.Option("--exit-on", show_default=False,
                                         help="none, cause or health: stop the command at the first root cause.")
                       ] = "none",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", "--all", help="Show every finding in full.")] = False,
) -> None:
    """Run COMMAND, pass its output through unchanged, diagnose it live; exit with the command's own status."""
    if not command:
        raise UsageError(Msg("err_run_command"))
    form = Format(choice(fmt, "--format", FORMATS))
    stop_on = choice(exit_on, "--exit-on", EXIT_ON)
    language = choose_language(lang)
    warn = Warner(language)
    db = load_checked(signatures or [])
    session = live_session(db, form, language, warn, hang_after, "off", stop_on, sys.stderr, brief=True)
    try:
        code = run_command(command, session, str(log) if log else None, warn)
    except StopLive:
        code = EXIT_FAILURE
    report = session.finish(exit_status=code, command=command)
    final_report(report, form, sys.stderr, verbose=verbose)
    raise typer.Exit(code)


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
    sub = args[0] if args else ""
    subcommands = {"run": run_app, "learn": learn_app, "check-signatures": check_app, "bundle": bundle_app}
    target = subcommands.get(sub, app)
    if target is not app:
        args = args[1:]
    command = typer.main.get_command(target)
    which = {app: "main", run_app: "run"}.get(target)
    if which is not None and wants_help(args):  # learn and check-signatures keep typer's own help
        print_help(command, which, lang, sys.stdout)
        return EXIT_OK
    # stop the workers (engine.py) and exit 128 + N; `diagnose run` forwards them to the command instead
    previous = {sig: signal.signal(sig, on_stop_signal) for sig in STOP_SIGNALS}
    try:
        name = "diagnose" if target is app else f"diagnose {sub}"  # `diagnose learn --help` says its own name
        result = command.main(args=args, prog_name=name, standalone_mode=False)
    except _CLICK.UsageError as exc:
        print(msg("error_prefix", lang) + usage_message(exc, lang) + msg("see_help", lang), file=sys.stderr)
        return EXIT_USAGE
    except _ABORTS:
        return EXIT_INTERRUPTED
    except _CLICK.ClickException as exc:
        print(msg("error_prefix", lang) + one_line(exc.format_message()), file=sys.stderr)
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
    return int(result) if isinstance(result, int) else EXIT_OK
