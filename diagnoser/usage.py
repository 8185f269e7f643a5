"""The command line's own words: `--help` for `diagnose` and `diagnose run` (every option described, in the
report's language, no parser internals), and option values checked here so that a bad one is told in the
tool's words rather than the argument library's."""

from __future__ import annotations

from typing import Any, TextIO

from rich.cells import cell_len
from rich.text import Text

from .errors import UsageError
from .i18n import Msg, msg
from .report.term import terminal
from .report.wrap import Wrapped
from .safe import printable

FORMATS = ("text", "json", "markdown", "jsonl")
EXIT_ON = ("none", "cause", "health")
# how each option's value is written in --help (and in usage errors)
METAVARS = {
    "fmt": "|".join(FORMATS), "exit_on": "|".join(EXIT_ON), "explain": "ID", "signatures": "DIR", "lang": "en|zh",
    "job_status": "STATUS", "exit_code": "N", "jobs": "N", "hang_after": "DURATION", "log": "FILE",
    "install_completion": "", "show_completion": "",
}


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


def _option_row(param: Any, lang: str) -> tuple[str, str] | None:
    if getattr(param, "hidden", False) or param.param_type_name != "option":
        return None
    names = ", ".join(sorted([*param.opts, *param.secondary_opts], key=lambda o: o.startswith("--")))
    metavar = METAVARS.get(param.name, getattr(param, "metavar", None) or "") if not param.is_flag else ""
    key = f"help_{param.name}"
    try:
        text = msg(key, lang)
    except KeyError:
        text = param.help or ""
    return (f"{names} {metavar}".rstrip(), text)


COLUMN = 28  # where descriptions begin; longer option names get a line of their own


def print_help(command: Any, which: str, lang: str, out: TextIO, width: int | None = None) -> None:
    """The help of `diagnose` (which="main") or `diagnose run` (which="run"), from the command's own options."""
    console = terminal(out, False, width)
    console.print(Text(msg(f"usage_{which}", lang)))
    console.print()
    console.print(Wrapped(msg(f"about_{which}", lang)))
    console.print()
    rows = [tuple(msg(f"arg_{which}", lang).split("\t", 1))]
    console.print(Text(msg("help_arguments", lang)))
    _rows(console, rows)
    console.print()
    console.print(Text(msg("help_options", lang)))
    options = [row for row in (_option_row(p, lang) for p in command.params) if row is not None]
    _rows(console, [*options, ("-h, --help", msg("help_help", lang))])
    console.print()
    console.print(Wrapped(msg(f"epilog_{which}", lang)))


def _rows(console: Any, rows: list[tuple[str, ...]]) -> None:
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


def usage_message(exc: Any, lang: str) -> str:
    """A parser error in the tool's own words (the argument library's wording changes between its versions)."""
    name = type(exc).__name__
    option = getattr(exc, "option_name", None)
    if name == "NoSuchOption" and option:
        close = sorted(getattr(exc, "possibilities", None) or [])
        hint = Msg("hint_did_you_mean", ids=", ".join(close)) if close else ""
        return msg("err_no_option", lang, option=option, hint=hint)
    if name == "BadOptionUsage" and option:
        return msg("err_option_value", lang, option=option)
    return printable(" ".join(exc.format_message().split()), one_line=True)
