"""Input and signatures from the worst day: never a traceback, a clear line, the scan goes on."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import SAMPLES

OOM_LINE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
            "of 79.15 GiB of which 1.00 GiB is free.")
SAMPLE = SAMPLES / "chatlearn" / "cuda-oom-fsdp-packing.log"
ENV = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"}


def run(*args: str, stdin: object = subprocess.DEVNULL, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "diagnoser", *args], stdin=stdin, capture_output=True,
                          env=ENV, timeout=timeout, check=False)  # type: ignore[call-overload]


# The peak resident memory of the diagnose process itself. Not getrusage's ru_maxrss: Linux keeps that
# high-water mark across fork and exec, so a child of a big pytest process reports the parent's size
# (CI saw the same 295 MiB from two different tests). VmHWM belongs to the process's own address space.
PEAK = ("import resource, sys\nfrom diagnoser.cli import main\ntry:\n    code = main(sys.argv[1:])\nfinally:\n"
        "    try:\n        hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "    except OSError:\n        hwm = str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
        "    print('peak-kib', hwm, file=sys.stderr)\nsys.exit(code)\n")


def run_measured(*args: str) -> tuple[subprocess.CompletedProcess[bytes], int]:
    """Run diagnose with `args`; its result and the peak resident memory of that process, in KiB."""
    proc = subprocess.run([sys.executable, "-c", PEAK, *args], stdin=subprocess.DEVNULL, capture_output=True,
                          env=ENV, timeout=300, check=False)
    last = proc.stderr.strip().splitlines()[-1].split()
    assert last[0] == b"peak-kib", proc.stderr.decode(errors="replace")
    return proc, int(last[1])


def no_traceback(proc: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")


@pytest.mark.parametrize("data", [
    b"\xff\xfe\xfd garbage \x80\x81\n" + OOM_LINE.encode() + b"\n",  # invalid UTF-8
    "训练开始：显存不足\n".encode("gbk") + OOM_LINE.encode() + b"\n",  # GBK text from a Chinese setup
    b"nul\x00bytes\x00here\n" + OOM_LINE.encode() + b"\x00\n",  # NUL bytes
    b"crlf line\r\n" + OOM_LINE.encode() + b"\r\n",  # CRLF
    b"lone cr line\r" + OOM_LINE.encode() + b"\rlast\r",  # classic Mac line ends
])
def test_odd_bytes_still_find_the_error(tmp_path: Path, data: bytes) -> None:
    log = tmp_path / "odd.log"
    log.write_bytes(data)
    proc = run(str(log), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1 and b'"cuda-oom"' in proc.stdout


def test_binary_file_in_a_folder_is_skipped_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "core.dump").write_bytes(os.urandom(4096) + b"\x00" * 100)
    (tmp_path / "rank0.log").write_text(OOM_LINE + "\n")
    proc = run(str(tmp_path), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1 and b"skipped 1 file(s)" in proc.stderr


def test_a_huge_single_line_keeps_memory_bounded(tmp_path: Path) -> None:
    log = tmp_path / "one-line.log"
    with open(log, "wb") as fh:
        for _ in range(20):
            fh.write(b"x" * (1 << 20))  # 20 MiB and no newline at all
    proc, peak_kib = run_measured(str(log), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 0
    assert peak_kib < 250 * 1024  # generous: the line is cut at 64 KiB, not held whole


def test_empty_inputs(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_bytes(b"")
    for proc in (run(str(tmp_path / "empty.log")), run(stdin=subprocess.DEVNULL)):
        no_traceback(proc)
    assert run(str(tmp_path / "empty.log")).returncode == 3  # nothing to diagnose (README: exit status)


def test_stdin_closed_is_a_usage_error() -> None:
    proc = subprocess.run([sys.executable, "-c",
                           "import os, sys; os.close(0); sys.stdin = None; from diagnoser.cli import main; "
                           "sys.exit(main([]))"], capture_output=True, env=ENV, timeout=60, check=False)
    assert proc.returncode == 2 and b"no input" in proc.stderr
    no_traceback(proc)  # type: ignore[arg-type]


def test_truncated_gzip_reports_what_it_read(tmp_path: Path) -> None:
    data = gzip.compress((OOM_LINE + "\n" + "filler line\n" * 20000).encode())
    gz = tmp_path / "rank1.log.gz"
    gz.write_bytes(data[: len(data) // 2])
    proc = run(str(gz), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1 and b"corrupt or cut short" in proc.stderr and b'"cuda-oom"' in proc.stdout


def test_unreadable_file_in_a_folder_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from diagnoser.cli import main
    from diagnoser.read import sources
    (tmp_path / "a.log").write_text(OOM_LINE + "\n")
    (tmp_path / "b.log").write_text("fine\n")
    real_open = open

    def guarded(path: object, *args: object, **kw: object):  # type: ignore[no-untyped-def]
        if str(path).endswith("b.log"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kw)  # type: ignore[call-overload]

    monkeypatch.setattr(sources, "open", guarded, raising=False)
    assert main([str(tmp_path), "-f", "json", "-j", "1"]) == 1
    assert main([str(tmp_path / "b.log"), "-j", "1"]) == 2  # named on the command line: an error


def test_fifo_is_read_as_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat '{SAMPLE}' > '{fifo}'"])
    proc = run(str(fifo), "-f", "json")
    writer.wait(timeout=60)
    assert proc.returncode == 1 and b'"cuda-oom"' in proc.stdout


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    # the reader is gone before diagnose writes a byte (like `| head` that already exited): the write fails
    # with EPIPE whatever the report's size. typer's command runner quiets it (exit 1, no traceback).
    big = tmp_path / "big.log"
    big.write_text((OOM_LINE + "\n") * 2 + "".join(f"line {i}\n" for i in range(20000)))
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "diagnoser", str(big), "--format", "markdown"],
                              stdout=write_end, stderr=subprocess.PIPE, env=ENV, timeout=120, check=False)
    finally:
        os.close(write_end)
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr


def _wait_reading(pid: int, limit: float = 60.0) -> None:
    """Until the process waits on its input pipe (so it runs our code, not the interpreter's start-up, which
    a SIGINT kills outright): on a loaded machine a fixed sleep was not enough."""
    wchan = Path(f"/proc/{pid}/wchan")
    deadline = time.monotonic() + limit
    time.sleep(0.5)
    while time.monotonic() < deadline:
        try:
            if "pipe" in wchan.read_text():
                break
        except OSError:
            break  # no /proc: the fixed wait below is all there is
        time.sleep(0.1)
    time.sleep(0.5)


def test_ctrl_c_exits_130_without_a_traceback() -> None:
    # diagnose reads a pipe whose writer never finishes: Ctrl-C is the only way out
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV)
    assert proc.stdin is not None
    proc.stdin.write(b"step 1\n" * 1000)
    proc.stdin.flush()
    _wait_reading(proc.pid)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err  # not 0 (an interrupt lost in a finaliser), not killed by SIGINT
    assert b"Traceback" not in err


def _sig(tmp_path: Path, name: str, body: str) -> Path:
    folder = tmp_path / "sigs"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(body, encoding="utf-8")
    return folder


GOOD = """id: my-sig
title: {en: My error, zh: 我的错误}
kind: cause
severity: error
match:
  any: ['MyFrameworkError: (?P<what>.+)']
why: {en: because, zh: 因为}
remedy: {en: fix it, zh: 修复}
references: [https://example.com]
examples: {match: ['MyFrameworkError: x'], no_match: ['fine']}
"""


@pytest.mark.parametrize(("name", "body", "needle"), [
    ("my-sig.yaml", "id: my-sig\n  title: [unclosed", "invalid YAML"),
    ("my-sig.yaml", GOOD.replace("kind: cause", "kind: 42"), "kind: must be one of"),
    ("my-sig.yaml", GOOD.replace("severity: error", "severity: error\ncolour: red"), "colour: unknown key"),
    ("my-sig.yaml", GOOD.replace("kind: cause", "kind: cause\nrole: teardown"), "role: a cause has the role root"),
    ("my-sig.yaml", GOOD.replace("references: [https://example.com]\n", ""), "references: missing"),
    ("my-sig.yaml", GOOD.replace("'MyFrameworkError: (?P<what>.+)'", "'MyFrameworkError: ((unclosed'"), "match.any[0]"),
    ("my-sig.yaml", GOOD.replace("'MyFrameworkError: (?P<what>.+)'", "'MyFrameworkError(a+)+$'"), "nested unbounded"),
    ("other.yaml", GOOD, "is 'my-sig' but the file is named 'other.yaml'"),
    ("my-sig.yaml", "!!python/object/apply:os.system ['echo owned']\n", "invalid YAML"),
    ("my-sig.yaml", GOOD.replace("why: {en: because, zh: 因为}", "why: {en: because}"), "why.zh: missing"),
    ("my-sig.yaml", GOOD.replace("remedy: {en: fix it, zh: 修复}", "remedy: {en: 'fix {what', zh: 修复}"), "remedy"),
])
def test_bad_user_signatures_are_one_line_exit_2(tmp_path: Path, name: str, body: str, needle: str) -> None:
    folder = _sig(tmp_path, name, body)
    proc = run("--signatures", str(folder), str(SAMPLE))
    no_traceback(proc)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_duplicate_ids_in_one_folder(tmp_path: Path) -> None:
    folder = _sig(tmp_path, "my-sig.yaml", GOOD)
    (folder / "sub").mkdir()
    (folder / "sub" / "my-sig.yaml").write_text(GOOD.replace("kind: cause", "kind: cause\nlayer: sub"))
    proc = run("--signatures", str(folder), str(SAMPLE))
    assert proc.returncode == 2 and b"is also the id of" in proc.stderr


def test_a_runaway_regex_is_stopped_and_the_scan_goes_on(tmp_path: Path) -> None:
    body = GOOD.replace("'MyFrameworkError: (?P<what>.+)'", "'MyFramework(?:x|xx)+y'")
    body = body.replace("'MyFrameworkError: x'", "'MyFrameworkxxy'")
    folder = _sig(tmp_path, "my-sig.yaml", body)
    log = tmp_path / "slow.log"
    log.write_text("MyFramework" + "x" * 64 + "\n" + OOM_LINE + "\n")
    started = time.monotonic()
    proc = run("--signatures", str(folder), str(log), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1 and b'"cuda-oom"' in proc.stdout
    assert b"regex gave up" in proc.stderr and proc.stderr.count(b"regex gave up") == 1
    assert time.monotonic() - started < 60


def test_memory_stays_bounded_on_a_big_generated_log(tmp_path: Path) -> None:
    """The benchmark quotes the exact figures (50 MB vs 1 GB); here only a generous bound."""
    sys.path.insert(0, str(SAMPLES.parent))
    from benchmarks.generate import generate
    log = tmp_path / "big.log"
    generate(str(log), 24 << 20, seed=2)
    proc, peak_kib = run_measured(str(log), "-f", "json", "-j", "1")
    assert proc.returncode == 1 and b'"cuda-oom"' in proc.stdout
    assert peak_kib < 200 * 1024


def _descendants(pid: int) -> set[int]:
    out: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = {int(x) for x in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += list(kids - out)
            out |= kids
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_scan_leaves_no_worker_behind(sig: signal.Signals, tmp_path: Path) -> None:
    # two inputs, -j 2: the parent scans the first, a worker process the FIFO, which has no writer, so that worker
    # waits until it is stopped
    fifo = tmp_path / "rank1.log"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "-j", "2", str(SAMPLE), str(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and not workers:
        time.sleep(0.2)
        workers = _descendants(proc.pid)
    assert workers, "the worker process did not start"
    time.sleep(1.0)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == (143 if sig == signal.SIGTERM else 130)
    assert b"Traceback" not in err, err.decode(errors="replace")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.2)
    assert not [p for p in workers if _alive(p)], "a worker outlived diagnose"
