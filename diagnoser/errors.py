"""One exception hierarchy; cli.py turns these into one-line messages and exit codes."""

from __future__ import annotations

import signal


class DiagnoserError(Exception):
    """Base of every error the tool reports to the user as one line (exit status 2)."""


class SignatureError(DiagnoserError):
    """A signature file is invalid: reported as `path: field: problem`."""

    def __init__(self, path: str, field: str, message: str) -> None:
        self.path = path
        self.field = field
        self.message = message
        super().__init__(f"{path}: {field}: {message}" if field else f"{path}: {message}")

    def in_lang(self, lang: str) -> str:
        """The message in `lang` (the problem text is translated when it was given as an i18n Msg)."""
        from .i18n import localized  # errors.py stays import-free for every other module

        problem = localized(self.message, lang)
        return f"{self.path}: {self.field}: {problem}" if self.field else f"{self.path}: {problem}"


class InputError(DiagnoserError):
    """An input path cannot be read at all (missing, a directory where a file is needed, ...)."""


class UsageError(DiagnoserError):
    """The command line asks for something that cannot be done."""


class Terminated(BaseException):
    """SIGTERM, SIGHUP, SIGQUIT, SIGUSR1: stop like Ctrl-C (a live diagnosis still prints its summary); the exit
    status is the shell's for that signal, 128 + N (143 for SIGTERM). They killed --follow without a report."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.status = 128 + int(signum)


def on_stop_signal(signum: int, _frame: object) -> None:
    raise Terminated(signum)


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1")
                     if hasattr(signal, name))
