"""C++ exceptions in logs: the lines that state one on a line of their own (Ray's terminate handler), and the type
names C++ prints mangled (`typeid(e).name()`), read back into `boost::wrapexcept<boost::system::system_error>`."""

from __future__ import annotations

from ..lazyre import lazy

# Ray's C++ terminate handler (src/ray/util/logging.cc TerminateHandler):
#   RAY_LOG(ERROR) << "Unhandled exception: " << typeid(e).name() << ". what(): " << e.what();
RAY_UNHANDLED_CXX = lazy(r"Unhandled exception: (?P<type>[\w:<>,]{1,300})\. what\(\): (?P<msg>.*)")
MAX_NAME = 300


def demangle(name: str) -> str:
    """An Itanium-mangled type name (`N5boost10wrapexceptINS_6system12system_errorEEE`, `St13runtime_error`) as
    C++ writes it; a name that is not mangled, or that this small reader does not know, is returned as it is."""
    if len(name) > MAX_NAME or not name or not (name[0] in "NS" or name[0].isdigit()):
        return name
    try:
        out, pos = _Reader(name).type_name(0)
    except (IndexError, ValueError):
        return name
    return out if pos == len(name) and out else name


class _Reader:
    """Just enough of the Itanium C++ ABI name grammar for exception types: nested names (N...E), std:: (St),
    template arguments (I...E) and substitutions (S_, S0_ ...)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.subs: list[str] = []

    def type_name(self, pos: int) -> tuple[str, int]:
        t = self.text
        if t[pos] == "N":
            parts: list[str] = []
            pos += 1
            while t[pos] != "E":
                if t[pos] == "I":
                    args, pos = self.template_args(pos)
                    parts[-1] += args
                else:
                    part, pos = self.component(pos, "::".join(parts))
                    parts.append(part)
                self.subs.append("::".join(parts))
            return "::".join(parts), pos + 1
        name, pos = self.component(pos, "")
        if pos < len(t) and t[pos] == "I":
            args, pos = self.template_args(pos)
            name += args
        return name, pos

    def component(self, pos: int, prefix: str) -> tuple[str, int]:
        t = self.text
        if t.startswith("St", pos):
            name, pos = self.source_name(pos + 2)
            return ("std::" + name if not prefix else name), pos
        if t[pos] == "S":
            end = t.index("_", pos)
            seq = t[pos + 1:end]
            index = 0 if not seq else int(seq, 36) + 1
            return self.subs[index], end + 1
        return self.source_name(pos)

    def source_name(self, pos: int) -> tuple[str, int]:
        t = self.text
        end = pos
        while t[end].isdigit():
            end += 1
        if end == pos:
            raise ValueError("no length")
        length = int(t[pos:end])
        name = t[end:end + length]
        if len(name) != length:
            raise ValueError("short name")
        return name, end + length

    def template_args(self, pos: int) -> tuple[str, int]:
        args: list[str] = []
        pos += 1
        while self.text[pos] != "E":
            arg, pos = self.type_name(pos)
            args.append(arg)
        return "<" + ", ".join(args) + ">", pos + 1
