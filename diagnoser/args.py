"""The command line's grammar: every option of `diagnose`, `diagnose run`, `bundle`, `learn` and
`check-signatures` in one table, parsed with the standard library's argparse (a start-up imports nothing
heavy before it knows the mode), and the shell completion scripts written from the same table.

Parse errors come out as ParseError (a UsageError) in the tool's own words (usage.py's messages), never as argparse's
text; abbreviated long options are not accepted (a later option would change what they mean).
"""

from __future__ import annotations

import argparse
import difflib
import shlex
from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .i18n import Msg

FORMATS = ("text", "json", "markdown", "jsonl")
EXIT_ON = ("none", "cause", "health")
SHELLS = ("bash", "zsh", "fish")
SUBCOMMANDS = ("run", "learn", "check-signatures", "bundle")


@dataclass(frozen=True)
class Opt:
    """One option: its names, the value it takes (metavar; "" for a flag), whether it repeats, what a shell
    completes for its value (a word list, "file" or "dir"), and its help in English where phrases.py holds none."""

    dest: str
    names: tuple[str, ...]
    metavar: str = ""
    many: bool = False
    default: Any = None
    complete: tuple[str, ...] | str = ""
    help: str = ""


RAY = (Opt("ray_address", ("--ray",), "ADDRESS", help="A live Ray cluster: every node's session logs, merged "
           "(auto: the cluster this machine belongs to; HOST:PORT; ray://HOST:PORT needs ray[client])."),
       Opt("ray_paths", ("--ray-paths",), "PATH", many=True, complete="file",
           help="With --ray: also read this file or folder on every node (repeatable)."),
       Opt("ray_timeout", ("--ray-timeout",), "SECONDS", help="With --ray: how long to wait for the cluster and "
           "for each node; a node that has not answered is reported unreachable."))
SIGNATURES = Opt("signatures", ("-s", "--signatures"), "DIR", many=True, complete="dir",
                 help="A folder of your own signature files (repeatable); same id replaces a built-in one.")
LANG = Opt("lang", ("--lang",), "en|zh", complete=("en", "zh"), help="Report language.")
FORMAT = Opt("fmt", ("-f", "--format"), "|".join(FORMATS), default="text", complete=FORMATS)
HANG = Opt("hang_after", ("--hang-after",), "DURATION")
EXIT = Opt("exit_on", ("--exit-on",), "|".join(EXIT_ON), default="none", complete=EXIT_ON)
VERBOSE = Opt("verbose", ("-v", "--verbose", "--all"))


@dataclass(frozen=True)
class Command:
    """A command: its positional arguments (dest, metavar, how many: "*" or "?"), what they complete, its options."""

    name: str
    args: tuple[tuple[str, str, str], ...]
    options: tuple[Opt, ...]
    about: str = ""  # where phrases.py holds none (bundle, learn, check-signatures keep English help)


COMMANDS = {
    "main": Command("diagnose", (("paths", "[LOG|DIR]...", "*"),), (
        FORMAT, Opt("list_signatures", ("--list",)), Opt("explain", ("--explain",), "ID"), SIGNATURES, LANG,
        Opt("job_status", ("--job-status",), "STATUS"), Opt("exit_code", ("--exit-code",), "N"),
        Opt("jobs", ("-j", "--jobs"), "N"), Opt("follow_paths", ("-F", "--follow")),
        Opt("from_start", ("--from-start",)),
        HANG, EXIT, VERBOSE, *RAY, Opt("version", ("--version",)),
        Opt("completion", ("--completion",), "|".join(SHELLS), complete=SHELLS))),
    "run": Command("diagnose run", (("command", "COMMAND [ARGS]...", "*"),), (
        Opt("log", ("--log",), "FILE", complete="file"), FORMAT, SIGNATURES, LANG, HANG, EXIT, VERBOSE)),
    "bundle": Command("diagnose bundle", (("paths", "[LOG|DIR]...", "*"),), (
        Opt("output", ("-o", "--output"), "FILE", default="job-report.tar.gz", complete="file",
            help="The tarball to write (default: job-report.tar.gz)."),
        *RAY, SIGNATURES, LANG, Opt("jobs", ("-j", "--jobs"), "N", help="Processes for scanning.")),
        "Pack what a maintainer asks for into one tarball: the report (Markdown, JSON), each rank's first error "
        "with its context, facts and versions, flight-recorder / py-spy dumps; secrets redacted (and counted)."),
    "learn": Command("diagnose learn", (("paths", "[LOG|DIR]...", "*"),), (
        Opt("to", ("--to",), "DIR", complete="dir", help="The folder to write the signatures to (required)."),
        Opt("signatures", ("-s", "--signatures"), "DIR", many=True, complete="dir",
            help="Signature folders already in use (their errors are known)."), LANG),
        "Write a signature skeleton for each error of LOG that no signature knows; fill in its TODOs. "
        "LOG: files or a job's folder; none or - reads standard input."),
    "check-signatures": Command("diagnose check-signatures", (("folder", "DIR", "?"),), (LANG,),
                                "Run a signature folder's examples as the built-in tests do (through the whole "
                                "database) and lint it."),
}


class ParseError(UsageError):
    """The command line does not parse (cli.py adds where to read the help)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # whatever argparse would print and exit 2 with
        raise ParseError(message)


class _Formatter(argparse.HelpFormatter):
    """Never shown (usage.py writes the help); a fixed width spares argparse importing shutil to ask the terminal."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=80)


def _parser(cmd: Command) -> _Parser:
    # usage: never shown either; one given spares parse_known_intermixed_args formatting it (a few ms of a start-up)
    p = _Parser(prog=cmd.name, usage=cmd.name, add_help=False, allow_abbrev=False, exit_on_error=False,
                formatter_class=_Formatter)
    for dest, _metavar, nargs in cmd.args:
        p.add_argument(dest, nargs=nargs, default=None)
    for o in cmd.options:
        if not o.metavar:
            p.add_argument(*o.names, dest=o.dest, action="store_true")
        else:
            p.add_argument(*o.names, dest=o.dest, action="append" if o.many else "store", default=o.default)
    return p


def parse(which: str, args: list[str]) -> argparse.Namespace:
    """The options of one command, or a ParseError: an unknown option (with the ones it may have meant), an
    option without its value, an argument too many, a missing one."""
    cmd = COMMANDS[which]
    tail: list[str] = []
    if which == "run" and "--" in args:  # everything after the first -- is the command's, options included
        cut = args.index("--")
        args, tail = args[:cut], args[cut + 1:]
    try:
        ns, extra = _parser(cmd).parse_known_intermixed_args(args)
    except argparse.ArgumentError as exc:
        option = (exc.argument_name or "").split("/")[-1]
        if option.startswith("-") and "expected" in exc.message:
            raise ParseError(Msg("err_option_value", option=option)) from None
        raise ParseError(f"{option}: {exc.message}" if option else exc.message) from None
    for word in extra:
        if word.startswith("-") and word != "-":
            known = [n for o in cmd.options for n in o.names if n.startswith("--")] + ["--help"]
            close = difflib.get_close_matches(word.split("=", 1)[0], known)
            hint = Msg("hint_did_you_mean", ids=", ".join(sorted(close))) if close else ""
            raise ParseError(Msg("err_no_option", option=word.split("=", 1)[0], hint=hint))
        raise ParseError(Msg("err_extra_args", value=word))
    if which == "run":
        ns.command = [*(ns.command or []), *tail]
    return ns


# -- shell completion: scripts written from the table above ------------------------------------------------
def completion(shell: str) -> str:
    """The completion script for `shell` (bash, zsh or fish)."""
    if shell == "fish":
        return _fish()
    script = _bash()
    if shell == "zsh":  # zsh runs the bash function through its own bashcompinit
        return "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n" + script
    return script


def _words(values: tuple[str, ...]) -> str:
    return shlex.quote(" ".join(values))


def _bash() -> str:
    cases, opts = [], []
    for which, cmd in COMMANDS.items():
        sub = "" if which == "main" else which
        names = [n for o in cmd.options for n in o.names] + ["-h", "--help"]
        opts.append(f"    {sub or 'main'}) opts={_words(tuple(names))};;")
        for o in cmd.options:
            if not o.metavar:
                continue
            pattern = "|".join(f"{sub or 'main'}:{n}" for n in o.names)
            if isinstance(o.complete, tuple):
                action = f"COMPREPLY=($(compgen -W {_words(o.complete)} -- \"$cur\"))"
            elif o.complete == "dir":
                action = 'COMPREPLY=($(compgen -d -- "$cur"))'
            elif o.complete == "file":
                action = 'COMPREPLY=($(compgen -f -- "$cur"))'
            else:
                action = "COMPREPLY=()"
            cases.append(f"    {pattern}) {action}; return 0;;")
    subs = " ".join(SUBCOMMANDS)
    return "\n".join([
        "# diagnose: bash completion (diagnose --completion bash)",
        "_diagnose() {",
        '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" sub=main opts i',
        "  COMPREPLY=()",
        f'  case "${{COMP_WORDS[1]}}" in {"|".join(SUBCOMMANDS)})',
        '    [[ $COMP_CWORD -gt 1 ]] && sub="${COMP_WORDS[1]}";;',
        "  esac",
        "  for ((i = 1; i < COMP_CWORD; i++)); do",
        '    [[ "${COMP_WORDS[i]}" == "--" ]] && return 0  # the command of diagnose run: the shell\'s own',
        "  done",
        '  case "$sub:$prev" in',
        *cases,
        "  esac",
        '  case "$sub" in',
        *opts,
        "  esac",
        '  if [[ "$cur" == -* ]]; then',
        '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        '  elif [[ $sub == main && $COMP_CWORD -eq 1 ]]; then',
        f'    COMPREPLY=($(compgen -W "{subs}" -- "$cur") $(compgen -f -- "$cur"))',
        "  else",
        '    COMPREPLY=($(compgen -f -- "$cur"))',
        "  fi",
        "}",
        "complete -o filenames -o bashdefault -F _diagnose diagnose",
        "",
    ])


def _fish() -> str:
    lines = ["# diagnose: fish completion (diagnose --completion fish)",
             f"complete -c diagnose -n __fish_use_subcommand -a {_words(SUBCOMMANDS)}"]
    for which, cmd in COMMANDS.items():
        cond = (f"not __fish_seen_subcommand_from {' '.join(SUBCOMMANDS)}" if which == "main"
                else f"__fish_seen_subcommand_from {which}")
        for o in cmd.options:
            flags = " ".join(f"-l {n[2:]}" if n.startswith("--") else f"-s {n[1:]}" for n in o.names)
            if not o.metavar:
                value = ""
            elif isinstance(o.complete, tuple):
                value = f" -x -a {_words(o.complete)}"
            elif o.complete == "dir":
                value = " -x -a '(__fish_complete_directories)'"
            else:
                value = " -r" if o.complete == "file" else " -x"
            lines.append(f"complete -c diagnose -n {shlex.quote(cond)} {flags}{value}")
    return "\n".join([*lines, ""])
