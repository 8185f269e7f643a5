"""The line numbers a pasted listing puts before each line of a log (an editor's, `cat -n`'s: ROLL issue 436), peeled
before the normaliser reads the line's own prefixes."""

from __future__ import annotations

from ..lazyre import lazy

# the line's number, right-aligned or not, and one tab or space
GUTTER_RE = lazy(r"^(?P<pad> {1,7})?(?P<n>\d{1,7})(?P<sep>\t| )")
PREAMBLE = 5  # lines a numbered listing may begin after (a title, a blank line)


class Gutter:
    """One source's gutter. Three lines in a row numbered n, n + 1, n + 2, the run beginning in the first PREAMBLE
    lines, make the source a numbered listing; until then only a right-aligned number or one before a tab is peeled."""

    def __init__(self) -> None:
        self.decided: bool | None = None  # None until decided, then whether the source is a listing
        self._run = (0, -1)  # (numbered lines in a row, the last one's number) while undecided

    def peel(self, text: str, lineno: int) -> str:
        m = GUTTER_RE.match(text)
        if self.decided:
            return text[m.end():] if m is not None else text
        (seen, last), n = self._run, int(m.group("n")) if m is not None else -1
        if m is not None and (seen == 0 or n == last + 1):
            self._run, self.decided = (seen + 1, n), True if seen + 1 >= 3 else None
            return text[m.end():] if self.decided or m.group("pad") or m.group("sep") == "\t" else text
        if lineno > PREAMBLE:
            self.decided = False
        self._run = (1, n) if m is not None else (0, -1)
        return text
