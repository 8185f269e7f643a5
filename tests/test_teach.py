"""`diagnose learn LOG --to DIR` writes a skeleton that already names its log's error, and `diagnose check-signatures
DIR` runs and lints a user folder as the built-in tests do (exit 0, 1, 2)."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
import regex

from diagnoser.cli import main
from diagnoser.match.database import build_database, load_signatures
from diagnoser.match.literals import nesting_problem
from diagnoser.modes.batch import diagnose_text
from diagnoser.modes.learn import generalise


def real_traceback() -> str:
    """A traceback CPython prints here (its message no signature knows)."""
    try:
        _ = [1, 2] + "3"  # type: ignore[operator]
    except TypeError:
        return "[rank0]: step 3 starting\n" + "".join(f"[rank0]: {x}" for x in traceback.format_exc().splitlines(True))
    raise AssertionError("unreachable")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    path = tmp_path / "job.log"
    path.write_text(real_traceback(), encoding="utf-8")
    return path


def fill_todos(folder: Path) -> None:
    for path in folder.glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        text = text.replace('"TODO（中文标题）"', '"列表与字符串相加"')
        text = text.replace('"TODO: the URL of the code that prints this message, and of the issue where it was solved"',
                            '"https://github.com/python/cpython/blob/main/Objects/listobject.c"')
        text = regex.sub(r'"TODO[:：][^"]*"', '"A list was added to a string. 列表与字符串相加。"', text)
        path.write_text(text, encoding="utf-8")


def test_learn_writes_a_skeleton_that_names_its_log(log: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "mine"
    code, out, _ = run(["learn", str(log), "--to", str(out_dir)], capsys)
    assert code == 0 and "typeerror-can-only-concatenate-list-not.yaml" in out
    sigs = load_signatures([out_dir])
    mine = [s for s in sigs if s.path.startswith("mine/")]
    assert [s.id for s in mine] == ["typeerror-can-only-concatenate-list-not"]
    assert mine[0].examples_match[0].text == 'TypeError: can only concatenate list (not "str") to list'
    assert mine[0].any_literals == (('can only concatenate list (not "str") to list',),)
    report = diagnose_text(build_database(sigs), log.read_text(encoding="utf-8"))
    assert report.root_cause is not None and report.root_cause.sig.id == mine[0].id
    # the skeleton still has its TODOs: check-signatures says so (exit 1) ...
    code, out, _ = run(["check-signatures", str(out_dir)], capsys)
    assert code == 1 and "still holds TODO" in out and "0 failed" in out
    # ... and passes once they are written
    fill_todos(out_dir)
    code, out, _ = run(["check-signatures", str(out_dir)], capsys)
    assert code == 0, out
    # learning the same log again knows the error now
    code, out, _ = run(["learn", str(log), "--to", str(tmp_path / "again"), "--signatures", str(out_dir)], capsys)
    assert code == 1 and "Nothing to learn" in out and not (tmp_path / "again").exists()


BAD_NO_MATCH = """id: my-store-error
title: {en: My store failed, zh: 我的存储失败}
kind: cause
severity: error
match:
  any: ['MyStoreError: (?P<what>.+)']
why: {en: because, zh: 因为}
remedy: {en: fix it, zh: 修复}
references: [https://example.com]
examples: {match: ['MyStoreError: x'], no_match: ['MyStoreError: y']}
"""


def test_check_signatures_fails_on_a_no_match_that_matches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "sigs"
    folder.mkdir()
    (folder / "my-store-error.yaml").write_text(BAD_NO_MATCH, encoding="utf-8")
    code, out, _ = run(["check-signatures", str(folder)], capsys)
    assert code == 1 and "examples.no_match[0]: my-store-error matched a no_match example" in out
    (folder / "my-store-error.yaml").write_text(BAD_NO_MATCH.replace("'MyStoreError: y'", "'MyStoreError'"),
                                                encoding="utf-8")
    code, out, _ = run(["check-signatures", str(folder)], capsys)
    assert code == 0 and "1 signature(s), 2 example(s): 0 failed; 0 lint error(s)" in out


def test_a_user_folder_s_examples_are_checked_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`diagnose --signatures DIR` checks the folder's examples on its first run and remembers (in the cache) that
    these very files held: the next run does not check them again; a changed file is checked again, and stops the
    run when its examples do not hold."""
    from diagnoser.modes import examples
    folder = tmp_path / "sigs"
    folder.mkdir()
    (folder / "my-store-error.yaml").write_text(BAD_NO_MATCH.replace("'MyStoreError: y'", "'MyStoreError'"),
                                                encoding="utf-8")
    log = tmp_path / "job.log"
    log.write_text("MyStoreError: disk full\n", encoding="utf-8")
    checked: list[str] = []
    real = examples.example_cases
    monkeypatch.setattr(examples, "example_cases", lambda db, ids=None: checked.append("x") or real(db, ids))
    assert run(["--signatures", str(folder), str(log)], capsys)[0] == 1 and checked
    checked.clear()
    code, out, _ = run(["--signatures", str(folder), str(log)], capsys)
    assert code == 1 and "My store failed" in out and not checked
    (folder / "my-store-error.yaml").write_text(BAD_NO_MATCH, encoding="utf-8")
    code, _, err = run(["--signatures", str(folder), str(log)], capsys)
    assert code == 2 and checked and "examples.no_match[0]" in err


def test_check_signatures_exit_2_on_an_invalid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "sigs"
    folder.mkdir()
    (folder / "my-store-error.yaml").write_text(BAD_NO_MATCH.replace("kind: cause", "kind: reason"), encoding="utf-8")
    code, _, err = run(["check-signatures", str(folder)], capsys)
    assert code == 2 and "kind: must be one of" in err
    code, _, err = run(["check-signatures", str(tmp_path / "nowhere")], capsys)
    assert code == 2


@pytest.mark.parametrize(("message", "line"), [
    ("CUDA out of memory at 0x7f3a2b00 on device 3", "CUDA out of memory at 0xdeadbeef on device 11"),
    ("cannot open /data/ckpt/step_200/model.pt: No such file", "cannot open /mnt/x/y.pt: No such file"),
    ("worker 3f1d0d2a4f6b1c1e8a33d5a401000000 exited (10.0.0.7:6379)", "worker abc123def4567890 exited (192.168.1.2:29500)"),
    ("layer decoder.layers.17.mlp has 2.5 GiB", "layer decoder.layers.3.mlp has 11 GiB"),
])
def test_generalise_numbers_paths_hex_and_ids(message: str, line: str) -> None:
    pattern, literal = generalise(message)
    assert nesting_problem(pattern) is None
    assert regex.search(pattern, message) and regex.search(pattern, line), pattern
    assert literal and literal in message and literal in line


def test_a_generalised_pattern_does_not_backtrack_badly() -> None:
    pattern, _ = generalise("failed at /a/b/c.py:12 with 0x1f and 3.5 values  after   spaces")
    hostile = "failed at /" + "a" * 50_000 + ":x" + " 1" * 10_000
    assert regex.search(pattern, hostile, timeout=2.0) is None


# BAD_NO_MATCH with a whole-file condition on a line Ray's driver prints at every start, and a no_match it does not match
COMMON_FILE_COND = BAD_NO_MATCH.replace(
    "  any: ['MyStoreError: (?P<what>.+)']\n",
    "  any: ['MyStoreError: (?P<what>.+)']\n  not:\n    - {regex: 'Connected to Ray cluster\\.', within: file}\n",
).replace("no_match: ['MyStoreError: y']", "no_match: ['MyStoreErr: y']")


def test_a_whole_file_condition_on_a_common_literal_is_a_lint_error(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # every line holding a `within: file` literal is read: a literal ordinary logs print (Ray's driver says "Connected
    # to Ray cluster." at every start) costs a fed line each time; a window (`within: N`) is searched only while a hit
    # waits on it
    folder = tmp_path / "sigs"
    folder.mkdir()
    (folder / "my-store-error.yaml").write_text(COMMON_FILE_COND, encoding="utf-8")
    code, out, _ = run(["check-signatures", str(folder)], capsys)
    assert code == 1 and "a `within: file` condition's literal is in ordinary log lines" in out
    assert "'Connected to Ray cluster.'" in out
    (folder / "my-store-error.yaml").write_text(COMMON_FILE_COND.replace("within: file", "within: 100"),
                                                encoding="utf-8")
    code, out, _ = run(["check-signatures", str(folder)], capsys)
    assert code == 0, out
