"""`match.frames`: a signature recognises a traceback cut before its exception line by the frames it holds (file and
function, in call order); the scanner tries these when such a traceback closes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..read.frames import Frame
from .compiled import LazyPattern
from .schema import Signature

Compile = Callable[[str, str, str], LazyPattern]


@dataclass(frozen=True, slots=True)
class FrameRule:
    """One frame sequence of a signature: (file, function) regexes, outermost call first; None takes any."""

    sig_index: int
    where: str  # e.g. "match.frames[0]", for warnings
    frames: tuple[tuple[LazyPattern | None, LazyPattern | None], ...]

    @classmethod
    def compile_all(cls, sig: Signature, index: int, compile_pattern: Compile) -> list[FrameRule]:
        out: list[FrameRule] = []
        for i, seq in enumerate(sig.frames):
            where = f"match.frames[{i}]"
            out.append(cls(index, where, tuple(
                (compile_pattern(fp.file, sig.path, f"{where}[{j}].file") if fp.file else None,
                 compile_pattern(fp.function, sig.path, f"{where}[{j}].function") if fp.function else None)
                for j, fp in enumerate(seq))))
        return out

    def match(self, frames: list[Frame], timeout: float) -> tuple[list[Frame], dict[str, str]] | None:
        """The frames that hold this sequence in order (not necessarily next to each other) and what their named
        groups captured, or None."""
        found: list[Frame] = []
        captures: dict[str, str] = {}
        k = 0
        for frame in frames:
            if k == len(self.frames):
                break
            file_re, func_re = self.frames[k]
            try:
                fm = file_re.search(frame.file, timeout=timeout) if file_re is not None else None
                if file_re is not None and fm is None:
                    continue
                gm = func_re.search(frame.function, timeout=timeout) if func_re is not None else None
                if func_re is not None and gm is None:
                    continue
            except TimeoutError:
                return None
            for m in (fm, gm):
                if m is not None:
                    captures.update({k2: v.strip() for k2, v in m.groupdict().items() if v and v.strip()})
            found.append(frame)
            k += 1
        return (found, captures) if k == len(self.frames) else None
