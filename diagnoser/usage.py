"""The command line's own words: `--help` for `diagnose` and `diagnose run` (every option described, in the
report's language, no parser internals), and option values checked here so that a bad one is told in the
tool's words rather than the argument library's."""

from __future__ import annotations

from typing import Any, TextIO

from .args import COMMANDS, EXIT_ON, FORMATS, Opt
from .errors import UsageError
from .i18n import Msg, msg

__all__ = ["EXIT_ON", "FORMATS", "choice", "integer", "number", "print_help", "wants_help"]


def choice(value: str, option: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UsageError(Msg("err_choice", option=option, value=value, choices=", ".join(choices)))
    return value


def integer(value: str | None, option: str, minimum: int | None = None) -> int | None:
    if value is None:
        return None
    try:
        number = int(value.strip(), 10)
    except ValueError:
        raise UsageError(Msg("err_integer", option=option, value=value)) from None
    if minimum is not None and number < minimum:
        raise UsageError(Msg("err_at_least", option=option, minimum=minimum))
    return number


def number(value: str | None, option: str) -> float | None:
    if value is None:
        return None
    try:
        return float(value.strip())
    except ValueError:
        raise UsageError(Msg("err_number", option=option, value=value)) from None


def _option_row(o: Opt, lang: str) -> tuple[str, str]:
    names = ", ".join(sorted(o.names, key=lambda n: n.startswith("--")))
    try:
        text = msg(f"help_{o.dest}", lang)
    except KeyError:
        text = o.help
    return (f"{names} {o.metavar}".rstrip(), text)


COLUMN = 28  # where descriptions begin; longer option names get a line of their own


def print_help(which: str, lang: str, out: TextIO, width: int | None = None) -> None:
    """The help of `diagnose` (which="main") or `diagnose run` (which="run") in the report's language, from the
    command's own options; that of bundle, learn and check-signatures in English."""
    from rich.text import Text  # rich only when the help is rendered

    from .report.term import terminal
    from .report.wrap import Wrapped

    cmd = COMMANDS[which]
    own = which in ("main", "run")
    console = terminal(out, False, width)
    args = " ".join(metavar for _dest, metavar, _n in cmd.args)
    console.print(Text(msg(f"usage_{which}", lang) if own else f"Usage: {cmd.name} [OPTIONS] {args}"))
    console.print()
    console.print(Wrapped(msg(f"about_{which}", lang) if own else cmd.about))
    console.print()
    if own:
        console.print(Text(msg("help_arguments", lang)))
        _rows(console, [tuple(msg(f"arg_{which}", lang).split("\t", 1))])
        console.print()
    console.print(Text(msg("help_options", lang)))
    _rows(console, [*(_option_row(o, lang) for o in cmd.options), ("-h, --help", msg("help_help", lang))])
    if own:
        console.print()
        console.print(Wrapped(msg(f"epilog_{which}", lang)))


def _rows(console: Any, rows: list[tuple[str, ...]]) -> None:
    from rich.cells import cell_len
    from rich.text import Text

    from .report.wrap import Wrapped

    for names, text in rows:
        if cell_len(names) + 4 > COLUMN:
            console.print(Text("  " + names))
            console.print(Wrapped(text, indent=COLUMN))
        else:
            console.print(Wrapped("  " + names + " " * (COLUMN - 2 - cell_len(names)) + text, hang=COLUMN))


def wants_help(args: list[str]) -> bool:
    for arg in args:
        if arg == "--":
            return False
        if arg in ("-h", "--help"):
            return True
    return False
