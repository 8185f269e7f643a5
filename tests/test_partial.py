"""Partial evidence on real-log shapes: a whole traceback indented (its header cut), a worker's lone exception line
above the driver's cut traceback, the wording of newer CPython / gRPC for a port in use, Ray's headline of a CUDA
out-of-memory. Tracebacks are printed by this Python (traceback.format_exc), not written by hand."""

from __future__ import annotations

import textwrap
import traceback

import pytest

from diagnoser.match.database import Database, load_database
from diagnoser.modes.batch import diagnose_text

from .test_traceback import group


@pytest.fixture(scope="module")
def db() -> Database:
    return load_database()


def _retry_failed() -> str:
    def request() -> None:
        raise RuntimeError("Failed after 1 retries each. Payload: {'input_ids': [1, 2]}")

    try:
        request()
    except RuntimeError:
        return traceback.format_exc()
    raise AssertionError("unreachable")


def _headless_indented(indent: str) -> str:
    """The traceback without its header, every line indented (a paste, a logger's block)."""
    body = _retry_failed().splitlines()[1:]
    return textwrap.indent("\n".join(body), indent)


def test_an_indented_headless_traceback_keeps_its_exception_line() -> None:
    tbs = group("INFO step 3\n" + _headless_indented("  ") + "\nINFO next")
    assert [(t.exc_type, t.cut) for t in tbs] == [("RuntimeError", False)]
    assert tbs[0].message.startswith("Failed after 1 retries each.")


def test_the_exception_line_must_sit_where_python_puts_it() -> None:
    # the same line further right is the source of a frame or a message continuation, not the exception line
    text = _headless_indented("  ").splitlines()
    text[-1] = "  " + text[-1]
    tbs = group("\n".join(text))
    assert tbs and tbs[0].exc_type == "?"


def test_an_indented_traceback_is_an_unrecognised_error(db: Database) -> None:
    report = diagnose_text(db, _headless_indented("    "))
    assert report.root_cause is None
    assert [u.exc_type for u in report.unrecognized] == ["RuntimeError"]


def test_a_worker_error_above_a_cut_driver_traceback_comes_first(db: Database) -> None:
    driver = _retry_failed().splitlines()[:3]  # the driver's traceback, cut inside its frames
    text = "\n".join(["(VllmGenerationWorker pid=1845477) ImportError: vLLM is not installed.", *driver])
    report = diagnose_text(db, text)
    assert [u.exc_type for u in report.unrecognized] == ["ImportError", "?"]
    only_cut = diagnose_text(db, "\n".join(driver))
    assert [u.exc_type for u in only_cut.unrecognized] == ["?"]


def _not_divisible() -> str:
    def ensure_divisibility(numerator: int, denominator: int) -> None:
        # megatron/core/utils.py asserts this; raised by hand, as pytest rewrites the asserts of a test module
        if numerator % denominator != 0:
            raise AssertionError(f"{numerator} is not divisible by {denominator}")

    try:
        ensure_divisibility(151851, 4)
    except AssertionError:
        return traceback.format_exc()
    raise AssertionError("unreachable")


def test_an_exception_line_a_conditional_rule_let_go_is_still_a_lone_error(db: Database) -> None:
    # "... is not divisible by ..." is a line some rule reads only with its context (parallel-size-mismatch's); the
    # paste puts the exception line above its own traceback, cut in its first frame (before the frame that names
    # ensure_divisibility, the context that rule needs)
    lines = _not_divisible().splitlines()
    text = "\n".join([lines[-1], *lines[:2]])
    report = diagnose_text(db, text)
    assert report.root_cause is None
    assert [u.exc_type for u in report.unrecognized] == ["AssertionError", "?"]


@pytest.mark.parametrize("line", [
    # CPython >= 3.12 asyncio create_server: str(err).lower() keeps the errno (uvicorn logs it)
    "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): [errno 98] address already in use",
    # gRPC core's error JSON, the OS error nested (Ray's raylet before Ray 2)
    '{"created":"@1","description":"Failed to add any wildcard listeners","referenced_errors":[{"created":"@1",'
    '"description":"Address already in use","errno":98,"file":"tcp_server_utils_posix_common.cc"}]}',
])
def test_port_in_use_in_other_wordings(db: Database, line: str) -> None:
    report = diagnose_text(db, line)
    assert report.root_cause is not None and report.root_cause.sig.id == "port-in-use"


def test_ray_headline_of_a_torch_oom_is_cuda_oom(db: Database) -> None:
    text = "ray.exceptions.RayTaskError(OutOfMemoryError): ray::TrainActor.train() (pid=1, ip=10.0.0.1)"
    report = diagnose_text(db, text)
    assert report.root_cause is not None and report.root_cause.sig.id == "cuda-oom"
    other = diagnose_text(db, text.replace("OutOfMemoryError", "ValueError"))
    assert other.root_cause is None


def test_frames_the_input_ends_in_are_a_cut_traceback_not_a_printed_stack(db: Database) -> None:
    # DeepSpeed#6737 as posted: the header and the exception line outside the excerpt, the log ends in the frames
    frames = _retry_failed().splitlines()[1:3]
    cut = diagnose_text(db, "\n".join(frames))
    assert cut.failed and [u.exc_type for u in cut.unrecognized] == ["?"]
    # the same frames with the next log line after them are a printed stack (logging's stack_info)
    printed = diagnose_text(db, "\n".join([*frames, "step 41 done"]))
    assert not printed.failed and not printed.unrecognized


def test_a_traceback_cut_at_its_raise_names_what_it_raises(db: Database) -> None:
    lines = _retry_failed().splitlines()
    assert lines[-2].lstrip().startswith("raise RuntimeError(")
    report = diagnose_text(db, "\n".join(lines[:-1]))  # cut just before 'RuntimeError: Failed after ...'
    assert [u.exc_type for u in report.unrecognized] == ["RuntimeError"]
    assert report.unrecognized[0].message.startswith("(traceback cut off before its message")
    # a re-raise of a variable (Ray's worker.py 'raise value.as_instanceof_cause()') names no class
    ray = [*lines[:-2], "    raise value.as_instanceof_cause()"]
    assert [u.exc_type for u in diagnose_text(db, "\n".join(ray)).unrecognized] == ["?"]
