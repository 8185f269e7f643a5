"""The `diagnose` command: options → pipeline → renderer; the only place errors become exit codes.

Exit status: 0 no failure found, 1 a failure found, 2 usage / input / signature-database error,
74 the report could not be written whole (stdout closed, disk full), 130 interrupted, 128 + N stopped by signal N
(143 SIGTERM, 129 SIGHUP, 131 SIGQUIT, 138 SIGUSR1).
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
from enum import Enum
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
from .errors import STOP_SIGNALS, DiagnoserError, InputError, Terminated, UsageError, on_stop_signal
from .i18n import Msg, localized, msg
from .match.database import load_database
from .modes.batch import default_jobs, diagnose
from .modes.live import StopLive, follow
from .modes.ray import RayTarget, diagnose_cluster
from .modes.ray_follow import follow_cluster
from .modes.run import run_command
from .output import EXIT_OUTPUT, Output, encodable, stderr_or_null
from .report.catalog import list_json, render_list
from .report.nodes import NodeState
from .teach import check_app, learn_app

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


def _click_exceptions() -> Any:
    # Newer typer carries its own copy of click; older typer uses click itself.
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("typer needs click or its bundled copy of it")


_CLICK = _click_exceptions()
_ABORTS: tuple[type[BaseException], ...] = tuple(
    {getattr(_CLICK, "Abort", typer.Abort), typer.Abort}
)


class ExitOn(str, Enum):
    none = "none"
    cause = "cause"
    health = "health"  # a root cause, or the first training-health finding (a metric rule tripped)


FOLLOW_HANG_DEFAULT = "10m"


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def diagnose_command(
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Log files, .gz files or folders of a job's logs; none (or -) reads standard input.",
        show_default=False)] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Report format.")] = Format.text,
    list_signatures: Annotated[bool, typer.Option("--list", help="List the signatures and exit.")] = False,
    explain: Annotated[str | None, typer.Option("--explain", metavar="ID",
                                                help="Show one signature in full and exit.")] = None,
    signatures: Signatures = None,
    lang: Lang = None,
    job_status: Annotated[str | None, typer.Option(
        "--job-status", metavar="STATUS",
        help="What the scheduler reported (e.g. succeeded): a success with failing logs is flagged.")] = None,
    exit_code: Annotated[int | None, typer.Option(
        "--exit-code", metavar="N",
        help="The exit code the scheduler recorded (0 with failing logs is flagged).")] = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", metavar="N", help="Processes for scanning many files (default: all cores).")] = None,
    follow_paths: Annotated[bool, typer.Option(
        "--follow", "-F", help="Follow the files/folders as they grow (tail -F); tell each finding at once.")] = False,
    from_start: Annotated[bool, typer.Option(
        "--from-start", help="With --follow: read what the files already hold first.")] = False,
    hang_after: Annotated[str | None, typer.Option(
        "--hang-after", metavar="DURATION",
        help=f"Report a hang after this much silence (e.g. 600, 10m; off). Default: {FOLLOW_HANG_DEFAULT} "
             "with --follow, off otherwise.")] = None,
    exit_on: Annotated[ExitOn, typer.Option(
        "--exit-on", help="With --follow: exit 1 at the first root cause (or health finding).")] = ExitOn.none,
    ray_address: RayAddress = None,
    ray_paths: RayPaths = None,
    ray_timeout: RayTimeout = None,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    """Read a training job's logs and name the root cause of its failure, with the remedy.

    Also: `diagnose run [--log FILE] -- CMD ARGS...` runs a training command and diagnoses it live.
    `diagnose bundle DIR... -o job-report.tar.gz` packs the report and the evidence for a maintainer, secrets redacted.
    """
    ray = ray_target(ray_address, ray_paths, ray_timeout)
    if follow_paths:
        raise typer.Exit(_follow(paths or [], fmt, signatures, lang, from_start, hang_after, exit_on, ray))
    if from_start or exit_on is not ExitOn.none:
        raise UsageError(Msg("err_follow_only"))
    if hang_after is not None and parse_duration_option(hang_after) > 0:
        raise UsageError(Msg("err_hang_live"))
    raise typer.Exit(_diagnose(paths, fmt, list_signatures, explain, signatures, lang, job_status, exit_code,
                               jobs, version, ray))


def _diagnose(paths: list[Path] | None, fmt: Format, list_signatures: bool, explain: str | None,
              signatures: list[Path] | None, lang: str | None, job_status: str | None, exit_code: int | None,
              jobs: int | None, version: bool, ray: RayTarget | None = None) -> int:
    if version:
        print(f"diagnose {__version__}")
        return EXIT_OK
    language = choose_language(lang)
    warn = Warner(language)
    db = load_database(signatures or [])
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
              else diagnose(db, sources, language, warn, status, jobs or cores))
    emit_report(report, fmt, sys.stdout)
    return EXIT_FAILURE if report.failed else EXIT_OK


def _follow(paths: list[Path], fmt: Format, signatures: list[Path] | None, lang: str | None, from_start: bool,
            hang_after: str | None, exit_on: ExitOn, ray: RayTarget | None = None) -> int:
    language = choose_language(lang)
    warn = Warner(language)
    if not paths and ray is None:
        raise UsageError(Msg("err_follow_paths"))
    for p in paths:
        if not p.exists():
            raise InputError(Msg("err_no_such_path", path=p))
    db = load_database(signatures or [])
    session = live_session(db, fmt, language, warn, hang_after, FOLLOW_HANG_DEFAULT, exit_on.value, sys.stdout)
    code = EXIT_OK
    nodes: list[NodeState] = []
    try:  # main() turns SIGTERM (and the other STOP_SIGNALS) into Terminated
        if ray is not None:
            follow_cluster(ray, paths, session, from_start, warn, nodes)
        else:
            follow(paths, session, from_start, warn)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except Terminated as exc:
        code = exc.status
    except StopLive:
        code = EXIT_OK if session.output_gone else EXIT_FAILURE  # main() tells a failed output
    report = session.finish()
    if ray is not None:
        report.nodes = nodes
    final_report(report, fmt, sys.stdout)
    if code == EXIT_OK:
        code = EXIT_FAILURE if report.failed else EXIT_OK
    return code


run_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@run_app.command(context_settings={"help_option_names": ["-h", "--help"]})
def run_command_cli(
    command: Annotated[list[str], typer.Argument(help="The training command and its arguments (after --).",
                                                 show_default=False)],
    log: Annotated[Path | None, typer.Option("--log", metavar="FILE",
                                             help="Also append the command's output to this file.")] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Report format (on stderr).")] = Format.text,
    signatures: Annotated[list[Path] | None, typer.Option("--signatures", "-s", metavar="DIR")] = None,
    lang: Annotated[str | None, typer.Option("--lang", metavar="en|zh")] = None,
    hang_after: Annotated[str | None, typer.Option(
        "--hang-after", metavar="DURATION", help="Report a hang after this much silence (default: off).")] = None,
    exit_on: Annotated[ExitOn, typer.Option(
        "--exit-on", help="Stop the command (SIGTERM) at the first root cause (or health finding).")] = ExitOn.none,
) -> None:
    """Run CMD, pass its output through unchanged, diagnose it live; exit with CMD's own status.

    Findings and the final report go to stderr, so stdout stays the command's own.
    """
    language = choose_language(lang)
    warn = Warner(language)
    db = load_database(signatures or [])
    session = live_session(db, fmt, language, warn, hang_after, "off", exit_on.value, sys.stderr)
    try:
        code = run_command(command, session, str(log) if log else None, warn)
    except StopLive:
        code = EXIT_FAILURE
    report = session.finish(succeeded=code == 0)
    final_report(report, fmt, sys.stderr)
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
    subcommands = {"run": run_app, "learn": learn_app, "check-signatures": check_app, "bundle": bundle_app}
    target = subcommands.get(args[0] if args else "", app)
    if target is not app:
        args = args[1:]
    command = typer.main.get_command(target)
    # stop the workers (engine.py) and exit 128 + N; `diagnose run` forwards them to the command instead
    previous = {sig: signal.signal(sig, on_stop_signal) for sig in STOP_SIGNALS}
    try:
        result = command.main(args=args, prog_name="diagnose", standalone_mode=False)
    except _CLICK.UsageError as exc:
        print(msg("error_prefix", lang) + one_line(exc.format_message()) + msg("see_help", lang), file=sys.stderr)
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
