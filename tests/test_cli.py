"""The command line: options, formats, exit codes, one-line errors, a real pipe."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from diagnoser.cli import main

from .conftest import SAMPLES

SAMPLE = SAMPLES / "chatlearn" / "cuda-oom-fsdp-packing.log"


class Result:
    def __init__(self, code: int, output: str) -> None:
        self.exit_code, self.output = code, output


def invoke(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
           env: dict[str, str] | None = None) -> Result:
    """main() with these environment variables set; stdout and stderr together (as a terminal shows them)."""
    with monkeypatch.context() as m:
        for name, value in (env or {}).items():
            m.setenv(name, value)
        code = main(args)
    out, err = capsys.readouterr()
    return Result(code, out + err)


def run_main(args: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None,
             monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None and monkeypatch is not None:
        buf = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", buf)
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main([str(SAMPLE), "--format", "json"], capsys)
    assert code == 1
    report = json.loads(out)
    assert report["schema"] == 1
    assert set(report) >= {"schema", "root_cause", "findings", "unrecognized", "stats"}
    rc = report["root_cause"]
    assert rc["id"] == "cuda-oom" and report["findings"][0] == rc
    assert set(rc) >= {"id", "title", "kind", "role", "severity", "count", "first", "ranks", "captures", "why", "remedy",
                       "references", "evidence"}
    assert set(rc["first"]) >= {"source", "line", "rank", "time"}
    assert isinstance(rc["first"]["line"], int) and rc["first"]["rank"] == 3
    assert "32768" in rc["remedy"] and "16384" in rc["remedy"]
    assert set(report["stats"]) == {"sources", "lines", "bytes", "seconds", "unlisted"}
    assert report["stats"]["lines"] > 50


def test_text_report_plain_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main([str(SAMPLE)], capsys)
    assert code == 1 and "\x1b[" not in out
    assert "Root cause" in out and "cuda-oom" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _ = run_main([str(SAMPLE), "--format", "markdown"], capsys)
    assert out.startswith("# diagnose report") and "```" in out and "`cuda-oom`" in out


def test_healthy_input_exits_zero(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "ok.log"
    log.write_text("step 1 loss 0.5\nstep 2 loss 0.4\n")
    code, out, _ = run_main([str(log)], capsys)
    assert code == 0 and "No failure found" in out


def test_unrecognised_traceback_is_never_silent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "odd.log"
    log.write_text('Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nZeroDivisionError: division by zero\n')
    code, out, _ = run_main([str(log), "--format", "json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["root_cause"] is None
    assert report["unrecognized"][0]["exception"] == "ZeroDivisionError"
    code, out, _ = run_main([str(log)], capsys)
    assert "ZeroDivisionError" in out and "First unrecognised error" in out


def test_a_lone_exception_line_is_never_silent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # a paste that kept only the exception line: no traceback, no signature; it is still summarised
    log = tmp_path / "paste.log"
    log.write_text("Epoch: 3\nINFO: ValueError: handled and logged\n  KeyError: indented, part of a message\n"
                   "ImportError: /x/te_ext.so: undefined symbol: nvte_foo\n")
    code, out, _ = run_main([str(log), "--format", "json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["root_cause"] is None
    assert [(u["exception"], u["line"], u["lone"]) for u in report["unrecognized"]] == [("ImportError", 4, True)]
    _code, out, _ = run_main([str(log)], capsys)
    assert "First unrecognised error: ImportError" in out and "no traceback comes with it" in out
    # a traceback, or a cause, explains more than a lone line: then the lone line is not listed
    log.write_text("ImportError: optional plugin missing\nTraceback (most recent call last):\n"
                   '  File "x.py", line 1, in <module>\nZeroDivisionError: division by zero\n')
    _code, out, _ = run_main([str(log), "--format", "json"], capsys)
    assert [(u["exception"], u["lone"]) for u in json.loads(out)["unrecognized"]] == [("ZeroDivisionError", False)]
    log.write_text("ImportError: optional plugin missing\n" + SAMPLE.read_text(encoding="utf-8"))
    _code, out, _ = run_main([str(log), "--format", "json"], capsys)
    report = json.loads(out)
    assert report["root_cause"]["id"] == "cuda-oom" and not report["unrecognized"]


def test_a_failed_cxx_check_is_summarised(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Ray's RAY_CHECK (glog's CHECK alike) aborts a native process with no Python exception
    log = tmp_path / "driver.log"
    log.write_text("(TaskRunner pid=2915798) [2025-07-06 07:14:27,052 C 2915798 2915798] task_receiver.cc:219:  "
                   "Check failed: objects_valid \n(TaskRunner pid=2915798) *** StackTrace Information ***\n"
                   "a comment: the check failed: twice\n")
    code, out, _ = run_main([str(log), "--format", "json"], capsys)
    assert code == 1
    assert [(u["exception"], u["message"]) for u in json.loads(out)["unrecognized"]] == [
        ("Check failed", "objects_valid")]
    # glog's form, whose "F0706 ... file.cc:219] " prefix the normaliser strips
    log.write_text("F0706 07:14:27.052131 2915798 task_receiver.cc:219] Check failed: objects_valid \n")
    code, out, _ = run_main([str(log), "--format", "json"], capsys)
    assert code == 1 and json.loads(out)["unrecognized"][0]["exception"] == "Check failed"
    # Ray's CHECK at the exit of a run that went well
    log.write_text("step 9 done\n[2021-12-21 10:00:01,000 C 4242 4242] core_worker.cc:194:  Check failed: "
                   "core_worker_process The core worker process is not initialized yet or already shutdown.\n")
    code, out, _ = run_main([str(log), "--format", "json"], capsys)
    assert code == 0 and not json.loads(out)["unrecognized"]


def test_a_lone_error_counts_only_near_the_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # a recovered error mid-run, an optional import at start-up: not the failure of a run that went on
    log = tmp_path / "train.log"
    steps = "".join(f"step:{i} - actor/pg_loss:0.1\n" for i in range(150))
    log.write_text("ModuleNotFoundError: No module named 'flash_attn'\n" + steps
                   + "ValueError: bad sample 17, skipped\n" + steps)
    code, out, _ = run_main([str(log), "--format", "json"], capsys)
    assert code == 0 and not json.loads(out)["unrecognized"]
    # the same lines at the end: the run stopped there; bare "Exception" counts, repeats are counted
    log.write_text(steps + "ValueError: bad sample 17, skipped\n" * 5 + "Exception: boom\n")
    code, out, _ = run_main([str(log), "--format", "json"], capsys)
    got = [(u["exception"], u["count"]) for u in json.loads(out)["unrecognized"]]
    assert code == 1 and got == [("ValueError", 5), ("Exception", 1)]


def test_a_lone_line_a_signature_knows_is_not_unrecognised(capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path) -> None:
    log = tmp_path / "driver.log"
    log.write_text("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n")
    _code, out, _ = run_main([str(log), "--format", "json"], capsys)
    report = json.loads(out)
    assert [f["id"] for f in report["findings"]] == ["ray-actor-died"] and not report["unrecognized"]


def test_gzip_and_stdin(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip
    gz = tmp_path / "rank1.log.gz"
    gz.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    code, out, _ = run_main([str(gz), "-f", "json"], capsys)
    assert code == 1 and json.loads(out)["root_cause"]["id"] == "cuda-oom"
    code, out, _ = run_main(["-f", "json"], capsys, stdin=SAMPLE.read_text(encoding="utf-8"), monkeypatch=monkeypatch)
    assert code == 1 and json.loads(out)["root_cause"]["first"]["source"] == "<stdin>"


@pytest.mark.parametrize(("args", "needle"), [
    (["--bogus"], "unknown option --bogus"),
    (["/no/such/file.log"], "no such file"),
    (["--explain", "no-such-id"], "no signature with id"),
    (["--lang", "fr", "x"], "--lang must be one of"),
    (["--format", "xml", "x"], "xml"),
    (["--hang-after", "abc", "sample_logs/chatlearn/cuda-oom-fsdp-packing.log"], "not a duration: 'abc'"),
])
def test_usage_errors_are_one_line_exit_2(args: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(args, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_bad_user_signature_is_reported_as_path_field_problem(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("id: bad\ntitle: {en: x, zh: 中}\nkind: cause\nseverity: fatal\n"
                                       "match: {any: ['(unclosed']}\nwhy: {en: x, zh: 中}\nremedy: {en: x, zh: 中}\n"
                                       "references: [https://x]\nexamples: {match: [a], no_match: [b]}\n")
    code, _, err = run_main(["--signatures", str(tmp_path), str(SAMPLE)], capsys)
    assert code == 2
    assert err.startswith("diagnose: error: ") and "bad.yaml: match.any[0]:" in err


def test_user_signature_replaces_builtin(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = (Path(__file__).parent.parent / "signatures" / "cuda" / "cuda-oom.yaml").read_text(encoding="utf-8")
    text = text.replace('en: "CUDA out of memory: a GPU ran out of memory"', 'en: "MY OWN OOM TITLE"')
    (tmp_path / "cuda-oom.yaml").write_text(text, encoding="utf-8")
    _code, out, _ = run_main(["--signatures", str(tmp_path), str(SAMPLE), "-f", "json"], capsys)
    assert json.loads(out)["root_cause"]["title"] == "MY OWN OOM TITLE"


def test_list_and_explain(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    result = invoke(["--list"], capsys, monkeypatch)
    assert result.exit_code == 0 and "cuda-oom" in result.output
    result = invoke(["--explain", "cuda-oom"], capsys, monkeypatch)
    assert result.exit_code == 0 and "max_token_in_packing" in result.output and "References" in result.output
    result = invoke(["--list", "--format", "json"], capsys, monkeypatch)
    assert any(row["id"] == "cuda-oom" for row in json.loads(result.output))


@pytest.mark.parametrize("columns", [80, 160])
def test_list_is_readable_at_80_columns(columns: int, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # every title comes out whole and within the width, in at most three lines a signature (a table at
    # 80 columns squeezed the titles into a thin column, ten lines each)
    result = invoke(["--list"], capsys, monkeypatch, env={"COLUMNS": str(columns), "NO_COLOR": "1"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    count = len(json.loads(invoke(["--list", "--format", "json"], capsys, monkeypatch).output))
    assert lines and max(len(line) for line in lines) <= columns and len(lines) <= 3 * count + 3
    words = " ".join(line.strip() for line in lines).split()
    title = ["CUDA", "out", "of", "memory:", "a", "GPU", "ran", "out", "of", "memory"]
    assert any(words[i:i + len(title)] == title for i in range(len(words)))


def test_diagnose_json_options_after_the_paths(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    result = invoke([str(SAMPLE), "--format", "json"], capsys, monkeypatch)
    assert result.exit_code == 1 and json.loads(result.output)["root_cause"]["id"] == "cuda-oom"


def test_job_status_flags_masked_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main([str(SAMPLE), "-f", "json", "--job-status", "succeeded"], capsys)
    report = json.loads(out)
    assert code == 1 and report["root_cause"]["id"] == "cuda-oom"
    assert report["job_status"] == {"reported": "succeeded", "masked": True}
    assert "dlc-exit-code-masked" in [f["id"] for f in report["findings"]]
    _code, out, _ = run_main([str(SAMPLE), "-f", "json", "--exit-code", "1"], capsys)
    assert json.loads(out)["job_status"]["masked"] is False


@pytest.mark.parametrize(("lang", "words"), [
    ("zh", ["根本原因", "解决方法", "max_token_in_packing（当前为 32768", "结论："]),
    ("en", ["Root cause", "Remedy", "max_token_in_packing (now 32768", "Verdict:"]),
])
def test_report_in_each_language(lang: str, words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _ = run_main([str(SAMPLE), "--lang", lang], capsys)
    for word in words:
        assert word in out
    # wide CJK characters take two cells: the report stays inside 80 terminal cells, not 80 characters
    assert max(cell_len(line) for line in out.splitlines()) <= 80
    assert ("根本原因" in out) == (lang == "zh")


@pytest.mark.parametrize(("args", "en", "zh"), [
    (["/no/such.log"], "no such file or folder", "文件或文件夹不存在"),
    (["--explain", "cuda"], "did you mean", "是否想找"),
    ([str(SAMPLE), "--jobs", "0"], "--jobs must be 1 or more", "--jobs 必须大于等于 1"),
    ([str(SAMPLE), "--job-status", "Failed", "--exit-code", "1"], "not both", "只能给出其一"),
    (["--follow"], "--follow needs files", "--follow 需要给出"),
    ([str(SAMPLE), "--no-such-option"], "(see diagnose --help)", "（见 diagnose --help）"),
])
def test_one_line_errors_follow_the_language(args: list[str], en: str, zh: str,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    code, _out, err = run_main(args, capsys)
    assert code == 2 and err.startswith("diagnose: error: ") and en in err and len(err.splitlines()) == 1
    code, _out, err = run_main([*args, "--lang", "zh"], capsys)
    assert code == 2 and err.startswith("diagnose：错误：") and zh in err, err
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    code, _out, err = run_main(args, capsys)
    assert code == 2 and zh in err, err


def test_a_bad_signature_file_is_reported_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.yaml").write_text("id: [\n", encoding="utf-8")
    code, _out, err = run_main(["--list", "--signatures", str(tmp_path), "--lang", "zh"], capsys)
    assert code == 2 and "broken.yaml: line 2: YAML 格式错误" in err, err


def test_warnings_follow_the_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rank0.log.gz").write_bytes(b"\x1f\x8b" + b"not really gzip" * 4)
    code, _out, err = run_main([str(tmp_path / "rank0.log.gz"), "--lang", "zh"], capsys)
    assert code == 3 and "diagnose：警告：" in err and "压缩数据损坏或被截断" in err, err  # 3: nothing was read


def test_real_pipe_subprocess() -> None:
    env = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"}
    cat = subprocess.Popen(["cat", str(SAMPLE)], stdout=subprocess.PIPE)
    proc = subprocess.run([sys.executable, "-m", "diagnoser", "--format", "json"], stdin=cat.stdout,
                          capture_output=True, env=env, timeout=120, check=False)
    cat.wait()
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["root_cause"]["id"] == "cuda-oom"


@pytest.mark.parametrize("columns", ["0", "1", "100000000"])
def test_any_columns_gives_a_readable_report(columns: str, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # COLUMNS=0 printed an empty report (rich took it as the width); a huge one padded each line to it
    result = invoke([str(SAMPLE)], capsys, monkeypatch, env={"COLUMNS": columns, "NO_COLOR": "1"})
    lines = result.output.splitlines()
    assert result.exit_code == 1 and "cuda-oom" in result.output
    assert 40 <= max(len(line) for line in lines) <= 1000
    listing = invoke(["--list"], capsys, monkeypatch, env={"COLUMNS": columns, "NO_COLOR": "1"}).output
    assert "cuda-oom" in listing and max(len(line) for line in listing.splitlines()) <= 1000


def test_jobs_are_capped_at_the_cores(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # -j 150 on 2 cores started 150 processes (4.4 GB)
    result = invoke([str(SAMPLE), "-j", "150", "--format", "json"], capsys, monkeypatch, env={"NO_COLOR": "1"})
    assert result.exit_code == 1 and "--jobs 150: using" in result.output
