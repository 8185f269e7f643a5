"""The shortcuts of the scanner's per-line path (issue 13) give what the plain steps they stand for give: each is
compared with its plain step on every line of the sample logs and on lines made to exercise it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from diagnoser.match import metrics
from diagnoser.match.database import load_database
from diagnoser.match.matcher import Matcher
from diagnoser.match.metrics import READERS, ReaderState, number, pairs_of, read_record
from diagnoser.match.metricwatch import read_values
from diagnoser.read import normalize
from diagnoser.read.frames import RICH_END, RICH_FRAME, RICH_START
from diagnoser.read.normalize import Normalizer
from diagnoser.read.prefixes import TRANSPORT
from diagnoser.read.traceback import CHAIN_RE, FRAME, TB_START, TB_START_TAIL, classify

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"


def sample_lines() -> list[str]:
    out: list[str] = []
    for path in sorted(SAMPLES.rglob("*")):
        if path.is_file() and path.suffix in (".log", ".txt", ".jsonl", ".out", ".err"):
            out += path.read_text(encoding="utf-8", errors="replace").splitlines()
    assert len(out) > 5000
    return out


# prefixes seen on thousands of lines of one file, with bodies that follow them
PREFIXES = ["(TaskRunner pid=2100) ", "\x1b[36m(PolicyTrainer pid=16446, ip=10.0.190.72)\x1b[0m ",
            "(WorkerDict pid=77, ip=10.0.0.7) ", "(WorkerDict pid=77, ip=10.0.0.7, repr=x) ", "[rank3]: ",
            "[default0]:", "[default0]:[rank4]: ", "(raylet, ip=10.0.0.8) ", "(pid=gcs_server) ", "[1,2]<stdout>: ",
            "node-3: ", "10.0.0.9: ", "", "  ", "(A (x) pid=5) ", "(A pid=5)", "[I1121 07:00:00.5 a.cc:3] ",
            "[2025-01-01 10:00:00,123] ", "INFO 05-09 16:18:30 [engine.py:310] ", "Jan  3 10:00:00 host kernel: "]
BODIES = ["step:895 - actor/pg_loss:0.1783 - actor/grad_norm:2.492", "dlc1-master-0:16446:17043 [3] NCCL INFO "
          "ncclCommInitRank comm 0x3b33f rank 3 nranks 32 cudaDev 3 nvmlDev 3 busId 2d000 commId 0x1 - Init START",
          "Traceback (most recent call last):", '  File "a.py", line 3, in f', "x: y", "plain words", "[rank5]: boom",
          " lead space", "ValueError: bad", "(Inner pid=9) nested", ") x", "(raylet) y"]


class PlainNormalizer(Normalizer):
    """The normaliser without its memo of first prefixes."""

    def _absorb_first(self, pattern, m, info):  # type: ignore[no-untyped-def]
        self._absorb(m, info)
        if pattern in TRANSPORT:
            info.stream += m.group(0).strip() + "|"
        return None  # nothing remembered: no Ray prefix by its text either


def test_the_prefix_shortcuts_change_no_logical_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memos of first prefixes (Normalizer._absorb_first, and Ray prefixes by their text) and the ": " test before the patterns that need one
    (prefixes.COLON_SPACE) give the lines the plain steps give, on the samples read twice (the memo full) and on
    made lines in a random order, past the head where the year is settled and in it."""
    made = [p + b for p in PREFIXES for b in BODIES]
    random.Random(13).shuffle(made)
    lines = sample_lines() + sample_lines() + made * 3
    fast = Normalizer("x", 0, None, None, 2024)
    got = [fast.lines(i, raw) for i, raw in enumerate(lines, 1)]
    monkeypatch.setattr(normalize, "COLON_SPACE", frozenset())
    plain = PlainNormalizer("x", 0, None, None, 2024)
    want = [plain.lines(i, raw) for i, raw in enumerate(lines, 1)]
    assert got == want
    assert len(fast._first) > 20 and len(fast._paren) > 5  # the memos were used
    assert not plain._paren


def plain_classify(text: str) -> str:
    """traceback.classify as it was, every regex tried on every line."""
    if not text.strip():
        return "blank"
    if TB_START.match(text):
        return "tb_start"
    if "Traceback (most" in text and (TB_START_TAIL.search(text) or RICH_START.match(text)):
        return "tb_start"
    if FRAME.match(text):
        return "frame"
    if text[0] in "│╰":
        if RICH_FRAME.match(text):
            return "frame"
        if text[0] == "│" or RICH_END.match(text):
            return "indented"
    if CHAIN_RE.match(text):
        return "chain"
    if text[0] in " \t" or (text[0] in "^~" and not text.strip("^~ ")):
        return "indented"
    return "text"


def test_classify_tries_a_regex_only_where_its_literal_is() -> None:
    texts = [line.text for i, raw in enumerate(sample_lines(), 1) for line in Normalizer("x").lines(i, raw)]
    texts += [b for b in BODIES] + ["+ Exception Group Traceback (most recent call last):", "  | File \"x\", line 1",
                                    "During handling of the above exception, another exception occurred:",
                                    "-- Process 1 terminated with the following error:", "^^^^^^~~~~", "^ caret"]
    kinds = [classify(t) for t in texts]
    assert kinds == [plain_classify(t) for t in texts]
    assert {"tb_start", "frame", "chain", "indented", "text", "blank"} <= set(kinds)


VERL = ["(TaskRunner pid=1) step:3 - actor/pg_loss:0.17 - response_length/clip_ratio:0.7 - bad item - "
        "a key:1 -  actor/entropy:np.float64(0.5)  - critic/score/mean:nan - :5 - actor/grad_norm:",
        "step:4 - actor/entropy:0.1 - token/total_response_length/clip:30 - system/batch_size:40 - x/y:1"]


def test_verl_values_read_without_making_every_pair() -> None:
    """read_values on a verl console record reads only the pieces a clause may read; it gives what reading every
    pair gives (values, ratios, excuses), on the verl samples and on lines with pieces that are no pairs."""
    db = load_database()
    watch = Matcher(db).metrics
    assert watch is not None
    lines = [raw for raw in sample_lines() if " - actor/" in raw or " - critic/" in raw] + VERL
    verl = [i for i, r in enumerate(READERS) if r.name == "verl"]
    seen = 0
    for raw in lines:
        text = Normalizer("x").lines(1, raw)[0].text
        fast = read_record(text, verl, ReaderState())
        if fast is None:
            continue
        plain = read_record(text, verl, ReaderState())
        assert plain is not None
        pairs_of(plain)  # every pair made first: the plain path
        assert fast.items is not None and plain.items is None
        assert repr(read_values(fast, watch)) == repr(read_values(plain, watch))  # NaN is no NaN's equal
        assert pairs_of(fast) == plain.pairs
        seen += bool(read_values(plain, watch)[0])
    assert seen > 50


def plain_number(value: object) -> float | None:
    """metrics.number as it was: every text read by its regex."""
    if isinstance(value, bool) or not isinstance(value, str) or len(value) > 64:
        return None
    m = metrics._NUMBER.match(value)
    if m is None:
        return None
    try:
        return float(m.group(1))
    except (ValueError, OverflowError):
        return None


def test_a_plain_number_is_read_as_the_regex_reads_it() -> None:
    texts = ["0.1783", "2.492", "-1", "+.5", "1.", ".", "-", "+-1", "1e5", "1E-05", "1e", "e5", "1.2.3", "00.5", "",
             "1e999", "-.5e-3", "5e+", "nan", "NaN", "inf", "-Infinity", "np.float64(0.5)", "'3'", "1_0", "١٢", " 1",
             "1 ", "12s", "0x10", "1-2", "--", "e", "E", "..5", "5..", "+", "7" * 64, "7" * 65]
    texts += [item.rpartition(":")[2] for raw in sample_lines() if " - " in raw for item in raw.split(" - ")]
    got = [repr(number(t)) for t in texts]
    assert got == [repr(plain_number(t)) for t in texts]
    assert "None" in got and "0.1783" in got


def health_of(path: Path) -> str:
    """What the health book made of a sample: its findings and every clause state of every series."""
    from diagnoser.judge.collector import Collector
    from diagnoser.match.scanner import SourceScanner

    db = load_database()
    collector = Collector(db.by_id())
    scanner = SourceScanner(db, Matcher(db), path.name, 0, collector)
    for i, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        scanner.feed_raw(i, raw)
    scanner.finish()
    series = collector.health.series
    return repr((sorted(collector.findings), [(k, s.states, list(s.values), s.early) for k, s in sorted(series.items())]))


def test_the_early_baseline_is_computed_again_only_while_it_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """HealthBook._judge keeps each series' early baseline (Series.baselines); forgetting it before every point
    (the plain path) judges every sample of sample_logs/health the same."""
    from diagnoser.judge.health import HealthBook

    paths = sorted((SAMPLES / "health").glob("*.log")) + sorted((SAMPLES / "health").glob("*.jsonl"))
    assert len(paths) > 10
    fast = [health_of(p) for p in paths]
    judge = HealthBook._judge

    def forgetful(self, c, st, s, prev, value, point):  # type: ignore[no-untyped-def]
        s.baselines.clear()
        judge(self, c, st, s, prev, value, point)

    monkeypatch.setattr(HealthBook, "_judge", forgetful)
    assert [health_of(p) for p in paths] == fast
    assert any("'health" in f or "collapse" in f for f in fast)


def test_marks_read_their_groups_as_groupdict_does() -> None:
    """probe builds a mark's fields from groups() and the regex's group numbers: the fields groupdict() gives, in
    its order, on every line of the samples and on lines of each probe's literals."""
    from diagnoser.read.marks import PROBES, _rx, probe

    texts = [line.text for i, raw in enumerate(sample_lines(), 1) for line in Normalizer("x").lines(i, raw)]
    texts += [BODIES[1], "x:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1a000"]
    count = 0
    for text in texts:
        marks = probe(text)
        want = []
        for kind, _lits, rx in PROBES:
            m = _rx(rx).search(text) if any(lit in text for lit in _lits) else None
            if m is not None:
                want.append((kind, [(k, v) for k, v in m.groupdict().items() if v is not None]))
        assert [(mk.kind, list(mk.fields.items())) for mk in marks] == want
        count += len(marks)
    assert count > 100


def test_a_logical_line_holds_each_field_where_its_name_says() -> None:
    """Normalizer.lines makes a LogLine by position: each value lands in the field of its name."""
    n = Normalizer("src", 4, None, None, 2024)
    for i in range(1, 4):
        n.lines(i, "3: x")
    (line,) = n.lines(4, "3: [default1]:(Act pid=5, ip=10.0.0.1) 2025-01-02 03:04:05 hi [repeated 2x across cluster]")
    assert (line.source, line.lineno, line.text, line.stream) == ("src", 4, "hi", "3:|[default1]:|(Act pid=5, ip=10.0.0.1)|")
    assert line.raw.startswith("3: [default1]:(Act") and line.raw.endswith("across cluster]")
    assert (line.rank, line.host, line.actor, line.pid) == (1, "10.0.0.1", "Act", 5)
    assert (line.time, line.ts, line.repeat, line.source_index) == ("2025-01-02T03:04:05", 1735787045.0, 2, 4)
    assert (line.has_prefix_time, line.lrank, line.task) == (True, 1, 3)


def test_a_verl_step_is_read_as_the_regex_reads_it() -> None:
    """step_of reads "step:N" at the start of a line without its regex where that regex would find N there."""
    from diagnoser.read.marks import STEP, _rx, step_of

    def plain(text: str) -> int | None:
        m = _rx(STEP).search(text)
        return int(m.group("step")) if m is not None else None

    texts = ["step:12", "step:895 - actor/pg_loss:0.1", "step:123456789012 x", "step:1234567890123 step 7",
             "step:5/10x", "step:5/10", "step:5x step 9", "step:", "step: 5", "step:5_", "step:٣ step 4", "step:5é",
             "step:5\tx", "step:5-", "step:5\x07", "step:0", "step:007", "step:x iteration 3", "step:5.5", "step:5:"]
    texts += [line.text.strip() for i, raw in enumerate(sample_lines(), 1) for line in Normalizer("x").lines(i, raw)
              if "step" in line.text]
    got = [step_of(t) for t in texts]
    assert got == [plain(t) for t in texts]
    assert sum(t.startswith("step:") for t in texts) > 50 and 895 in got


def test_a_verl_record_starts_where_its_regex_says() -> None:
    """_verl_console reads "step:N - " at the start of a line without _VERL where _VERL would match there."""
    def plain(text: str) -> tuple[int, str, list[str]] | None:
        m = metrics._VERL.search(text, 0, 200)
        return None if m is None else (int(m.group(1)), metrics._head(text, m.end()), text[m.end():].split(" - "))

    texts = ["step:3 - a:1", "step:123456789012345678 - a:1", "step:1234567890123456789 - a:1 step:4 - b:2",
             "step:5 -a:1", "step:5 - ", "step:5", "step: 5 - a:1", "step:٣ - a:1", "step:5x - a:1 step:6 - b:2",
             "x step:7 - a:1", "step:08 - a - b:2", "step:5 -  - a:1", *VERL]
    texts += [line.text for i, raw in enumerate(sample_lines(), 1) for line in Normalizer("x").lines(i, raw)
              if "step:" in line.text]
    verl = READERS[[r.name for r in READERS].index("verl")].read
    got = []
    for text in texts:
        record = verl(text, ReaderState())
        got.append(None if record is None else (record.step, record.head, record.items))
    assert got == [plain(t) for t in texts]
    assert sum(g is not None for g in got) > 50


def test_colour_codes_are_removed_as_the_ansi_pattern_removes_them() -> None:
    """strip_ansi removes the plain CSI codes with a simpler pattern and falls back to ANSI_RE whenever anything else
    it could remove is left: the same text as ANSI_RE on every sample line and on texts built from the pieces its
    forms are made of (lost ESC bytes, ESC written out, OSC titles, codes split or joined by a removal)."""
    from diagnoser.read.prefixes import ANSI_RE, strip_ansi

    def plain(text: str) -> str:
        return ANSI_RE.sub("", text)

    lines = sample_lines()
    assert sum("\x1b[" in x for x in lines) > 100
    assert [strip_ansi(x) for x in lines] == [plain(x) for x in lines]
    rng = random.Random(13)
    pieces = ["\x1b[36m", "\x1b[0m", "[36m", "[0m", "x", "1m", "[", "]", "\\", "#033[1m", "^[[2K", "\\x1b[3m", "\\e[0m",
              "\x1b]0;t\x07", "\x1bM", "é", "٣", "[1;32m", "a", " ", "m", "\x1b[", "_", "\x1b\\", "5", ";", "\x1b[1;2",
              "[٣m", "033", "^", "#", "e", "x1b", "\\033[0m", "\x1b\x1b[36m[0m", "(A pid=1) "]
    for _ in range(100_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 14)))
        assert strip_ansi(text) == plain(text), repr(text)


@pytest.mark.parametrize("fact_lines", [50000, 3])
def test_a_line_holding_only_lean_mark_literals_is_read_for_its_marks_alone(db, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                                            fact_lines: int) -> None:
    """The scanner skips the rules, facts, file conditions, lone errors and metric readers on a line whose literals
    are all marks' that none of those names (SearchIndex.lean), and after the fact region the rules, facts, file
    conditions and lone errors on a line holding only those and metric readers' literals (metric_lean), and after the
    head, where job facts are no longer read, with their literals too (job_only): every sample gives the report it
    gives without them, with the usual fact region and head and with both of 3 lines."""
    import json

    from diagnoser.console import Warner, input_sources
    from diagnoser.eval import find_cases
    from diagnoser.match import scanner
    from diagnoser.modes.batch import diagnose
    from diagnoser.report.contract import to_json
    from diagnoser.search.index import SearchIndex

    assert {"cudaDev ", "srun: error: "} <= db.search.lean and " - actor/" in db.search.metric_lean
    assert not db.search.lean & (db.search.rules.exact.keys() | db.search.facts.exact.keys() | set(db.search.metrics.exact))

    def reports() -> list[str]:
        out = []
        for case in find_cases(SAMPLES):
            data = to_json(diagnose(db, input_sources([case.input], Warner("en")), "en", fast=False))
            data["stats"]["seconds"] = 0
            out.append(json.dumps(data, sort_keys=True))
        return out

    assert {"verl/trainer", "WORLD_SIZE"} <= db.search.job_only and not db.search.job_only & db.search.head
    monkeypatch.setattr(scanner, "FACT_LINES", fact_lines)
    monkeypatch.setattr(scanner, "HEAD_LINES", min(fact_lines, scanner.HEAD_LINES))
    lean = reports()
    monkeypatch.setattr(SearchIndex, "lean", property(lambda self: frozenset()))
    monkeypatch.setattr(SearchIndex, "metric_lean", property(lambda self: frozenset()))
    monkeypatch.setattr(SearchIndex, "job_only", frozenset())
    assert reports() == lean
