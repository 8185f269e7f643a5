"""One exception hierarchy; cli.py turns these into one-line messages and exit codes."""

from __future__ import annotations


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
