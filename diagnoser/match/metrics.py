"""Read the per-step metrics RL frameworks print: which line is a metric record, its step, its key/value pairs.

One reader per print format, each gated by literals its lines always hold (the fast search feeds those lines;
see SearchIndex.metrics). The formats, from the frameworks' own code:

- verl console logger (`verl/utils/logger/aggregate_logger.py` concat_dict_to_str): `step:N - key:value - ...`
  (values `0.123`, `np.float64(0.123)`, `nan`; verl <= 0.4 printed `f"{v:.3f}"`)
- verl file logger (`verl/utils/tracking.py` FileLogger, orjson): `{"step":N,"data":{...}}` (NaN/Inf -> null)
- ROLL (`roll/utils/tracking.py` StdoutTracker): `metrics_tag: {"step": N, "metrics": {...}}`, and the bare
  `json.dumps(metrics)` of `roll/pipeline/rlvr/rlvr_pipeline.py` (keys tagged `@sum`, step in system/global_step)
- OpenRLHF (`openrlhf/trainer/ppo_trainer.py`): `✨ Global step N: {'policy_loss': ..., 'kl': ...}`, and the
  `Train epoch [e/E]: 100%|...| n/n [..., act_loss=..., reward=..., kl=...]` bar of ppo_actor.py
- Megatron-LM `training_log` (and ChatLearn's copy): `iteration N/ M | key: value | ... |`
- ChatLearn `MetricManager.log`: `step N prefix P: logging metric {'key': value, ...}` (keys become `P/key`)
- HF Trainer / TRL `ProgressCallback.on_log`: `{'loss': ..., 'grad_norm': ..., ...}` (no step: records are
  counted; transformers >= 5 quotes the values `'0.1234'`)
- NeMo-RL `grpo_train`: a `===== Step N/M =====` block with `• Loss: x`, `• Avg Reward: x`, ... lines
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..lazyre import lazy

Pair = tuple[str, object, str]  # key, value as printed (text, or a number from JSON), the text that printed it


@dataclass(slots=True)
class Record:
    """One metric record of a line (one step of one print format)."""
    reader: str
    step: int | None  # None: the format prints no step (records are counted instead)
    pairs: list[Pair]  # read them with pairs_of (verl's are made only when asked for)
    head: str  # the start of the line (prefix and step), for evidence
    items: list[str] | None = None  # verl console: the "key:value" pieces, not yet made pairs (see pairs_of)


def verl_pair(item: str) -> Pair | None:
    """One "key:value" piece of a verl console line as a pair (None when it is not one)."""
    key, sep, value = item.rpartition(":")
    return (key, value, item.strip()) if sep and key and " " not in key else None


def pairs_of(record: Record) -> list[Pair]:
    """The record's pairs, in the order printed."""
    if record.items is not None:
        record.pairs = [p for p in map(verl_pair, record.items) if p is not None]
        record.items = None
    return record.pairs


@dataclass(slots=True)
class ReaderState:
    """What a reader remembers within one source: NeMo-RL's step header, whether OpenRLHF's dict was seen."""

    nemo_step: int | None = None
    seen: set[str] = field(default_factory=set)


_NUMBER = lazy(
    r"""\s*['"]?(?:np\.(?:float|int|uint)\d*\(|tensor\()?\s*"""
    r"""([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|NaN|inf|Inf|Infinity|infinity))"""
    r"""\s*\)?['"]?s?\s*$"""
)
_PLAIN = "0123456789.+-eE"  # what a plain number is made of (see number)


def number(value: object) -> float | None:
    """A metric value as a float (NaN and Inf kept), or None when it is no number (strings, booleans)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if value is None:
        return math.nan  # orjson (verl's file logger) writes NaN and Inf as null
    if not isinstance(value, str) or len(value) > 64:
        return None
    if not value.strip(_PLAIN):  # float() reads exactly what _NUMBER reads in such a text (its number's grammar)
        try:
            return float(value)
        except ValueError:
            pass
    m = _NUMBER.match(value)
    if m is None:
        return None
    try:
        return float(m.group(1))
    except (ValueError, OverflowError):
        return None


def _head(text: str, end: int) -> str:
    return text[: min(end, 120)].rstrip()


# -- the readers ----------------------------------------------------------------------------------------------
# a step is read only when it has at most 18 digits (int() fails past 4,300; issue 19)
_VERL = lazy(r"(?:^|\s)step:(\d{1,18}) - ")


def _verl_console(text: str, _state: ReaderState) -> Record | None:
    digits = 5
    if text.startswith("step:"):  # the usual line: _VERL matches at 0 when 1-18 ASCII digits and " - " follow
        while digits < 24 and digits < len(text) and "0" <= text[digits] <= "9":
            digits += 1
    if 5 < digits <= 23 and text.startswith(" - ", digits):
        step, end = text[5:digits], digits + 3
    elif (m := _VERL.search(text, 0, 200)) is not None:
        step, end = m.group(1), m.end()
    else:
        return None
    # dozens of keys, a few read by health rules: each piece is made a pair only when asked for (pairs_of)
    return Record("verl", int(step), [], _head(text, end), text[end:].split(" - "))


def _json_tail(text: str, start: int) -> dict[str, object] | None:
    try:
        data = json.loads(text[start:])
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _json_pairs(text: str, items: dict[str, object], strip_tag: bool = False) -> list[Pair]:
    pairs: list[Pair] = []
    for key, value in items.items():
        if isinstance(value, (dict, list, str)):
            continue
        at = text.find(f'"{key}"')
        token = text[at: at + len(key) + 30].split(",")[0].rstrip("}") if at >= 0 else f'"{key}": {value}'
        pairs.append((key.rsplit("@", 1)[0] if strip_tag else key, value, token))
    return pairs


def _verl_jsonl(text: str, _state: ReaderState) -> Record | None:
    at = text.find('{"step":')
    if at < 0 or at > 200 or '"data":' not in text:
        return None
    data = _json_tail(text, at)
    if data is None:
        return None
    step, items = data.get("step"), data.get("data")
    if not isinstance(step, int) or not isinstance(items, dict):
        return None
    return Record("verl-file", step, _json_pairs(text, items), _head(text, at + 12))


def _roll_tag(text: str, _state: ReaderState) -> Record | None:
    at = text.find("metrics_tag: {")
    if at < 0:
        return None
    data = _json_tail(text, at + 13)
    items = data.get("metrics") if data is not None else None
    if data is None or not isinstance(items, dict):
        return None
    step = data.get("step")
    end = text.find('"metrics"', at)
    return Record("roll", step if isinstance(step, int) else None, _json_pairs(text, items),
                  _head(text, end if end > 0 else at + 13))


def _roll_dict(text: str, _state: ReaderState) -> Record | None:
    at = text.find('{"')
    if at < 0 or at > 200:
        return None
    data = _json_tail(text, at)
    if data is None:
        return None
    step = data.get("system/global_step")
    return Record("roll", int(step) if isinstance(step, (int, float)) and not isinstance(step, bool) else None,
                  _json_pairs(text, data, strip_tag=True), _head(text, at))


_PY_PAIR = lazy(r"""'([^'\n]{1,200})': ('[^'\n]{0,64}'|[^,{}\[\]']{1,64})""")


def _py_pairs(text: str, start: int, prefix: str = "") -> list[Pair]:
    return [(prefix + m.group(1), m.group(2), m.group(0)) for m in _PY_PAIR.finditer(text, start)]


_OPENRLHF = lazy(r"Global step (\d{1,18}): \{")


def _openrlhf_dict(text: str, state: ReaderState) -> Record | None:
    m = _OPENRLHF.search(text)
    if m is None:
        return None
    state.seen.add("openrlhf")
    return Record("openrlhf", int(m.group(1)), _py_pairs(text, m.end() - 1), _head(text, m.end()))


_BAR = lazy(r"Train epoch \[\d+/\d+\]:\s*100%\|[^|]{0,200}\|\s*(\d+)/(\d+) \[[^\]]*?(?:it|s), "
                     r"(?=[a-z_]+=)([^\]]*)\]\s*$")
_BAR_PAIR = lazy(r"([\w/]+)=([^,\]]+)")


def _openrlhf_bar(text: str, state: ReaderState) -> Record | None:
    if "openrlhf" in state.seen:
        return None  # the per-step dict says the same, with its step number and more digits
    m = _BAR.search(text)
    if m is None or m.group(1) != m.group(2):
        return None
    pairs = [(p.group(1), p.group(2), p.group(0)) for p in _BAR_PAIR.finditer(m.group(3))]
    return Record("openrlhf-bar", None, pairs, _head(text, m.start(3)))


_MEGATRON = lazy(r"\biteration\s+(\d{1,18})/\s*(?:\d+|infinity) \|")


def _megatron(text: str, _state: ReaderState) -> Record | None:
    m = _MEGATRON.search(text)
    if m is None:
        return None
    pairs: list[Pair] = []
    for part in text[m.end():].split("|"):
        key, sep, value = part.strip().rpartition(": ")
        if sep and key:
            pairs.append((key, value, part.strip()))
    return Record("megatron", int(m.group(1)), pairs, _head(text, m.end()))


_CHATLEARN = lazy(r"\bstep (\d{1,18}) prefix (\S+): logging metric \{")


def _chatlearn(text: str, _state: ReaderState) -> Record | None:
    m = _CHATLEARN.search(text)
    if m is None:
        return None
    return Record("chatlearn", int(m.group(1)), _py_pairs(text, m.end() - 1, m.group(2) + "/"),
                  _head(text, m.end()))


def _hf_dict(text: str, _state: ReaderState) -> Record | None:
    at = text.find("{'")
    if at < 0:
        return None
    return Record("hf", None, _py_pairs(text, at), _head(text, at + 2))


_NEMO_STEP = lazy(r"^\s*=+ Step (\d{1,18})/\d+ =+\s*$")
_NEMO_VALUE = lazy(r"^\s*• (Loss|Generation KL Error|Avg Reward|Avg Filtered Reward|Avg Total Reward|"
                            r"Mean Generation Length|Total step time): (\S+?)s?\s*$")


def _nemo_step(text: str, state: ReaderState) -> Record | None:
    m = _NEMO_STEP.match(text)
    if m is not None:
        state.nemo_step = int(m.group(1))
    return None


def _nemo_value(text: str, state: ReaderState) -> Record | None:
    m = _NEMO_VALUE.match(text)
    if m is None:
        return None
    return Record("nemo-rl", state.nemo_step, [(m.group(1), m.group(2), m.group(0).strip())], "")


@dataclass(frozen=True, slots=True)
class Reader:
    """A print format of metrics: the literals of its lines and how to read one."""
    name: str
    literals: tuple[str, ...]  # a line this reader parses holds one of these (its gate for the fast search)
    read: Callable[[str, ReaderState], Record | None]


READERS: tuple[Reader, ...] = (
    Reader("verl", (" - actor/", " - critic/", " - timing_s/", " - training/", " - response_length/"),
           _verl_console),
    Reader("verl-file", ('{"step":',), _verl_jsonl),
    Reader("roll", ("metrics_tag: {",), _roll_tag),
    Reader("roll-dict", ('"system/global_step": ',), _roll_dict),
    Reader("openrlhf", ("Global step ",), _openrlhf_dict),
    Reader("openrlhf-bar", ("Train epoch [",), _openrlhf_bar),
    Reader("megatron", ("| consumed samples:",), _megatron),
    Reader("chatlearn", (": logging metric {",), _chatlearn),
    Reader("hf", ("'loss': ", "'grad_norm': "), _hf_dict),
    Reader("nemo-rl-step", ("= Step ",), _nemo_step),
    Reader("nemo-rl", ("• Loss: ", "• Generation KL Error: ", "• Avg Reward: ", "• Avg Filtered Reward: ",
                       "• Avg Total Reward: ", "• Mean Generation Length: ", "• Total step time: "), _nemo_value),
)


def reader_gates() -> list[tuple[str, ...]]:
    """Each reader's literals, in READERS order (the database puts them in its search index)."""
    return [r.literals for r in READERS]


def read_record(text: str, candidates: list[int], state: ReaderState) -> Record | None:
    """The first reader among `candidates` (indexes into READERS, in order) that reads `text` as a record."""
    for i in candidates:
        record = READERS[i].read(text, state)
        if record is not None:
            return record
    return None

