"""The JSON contract: the schema that ships in the package matches what the tool prints (every sample's report, the
jsonl events of every mode) and what the README documents."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from diagnoser.cli import main
from diagnoser.eval import find_cases

from .conftest import ROOT, SAMPLES
from .test_samples import outcome_of

SAMPLE = SAMPLES / "chatlearn" / "cuda-oom-fsdp-packing.log"


def _schema() -> dict[str, Any]:
    text = resources.files("diagnoser").joinpath("report", "report.schema.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def _validator(ref: str = "report") -> jsonschema.protocols.Validator:
    schema = _schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{ref}"})


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    out, _err = capsys.readouterr()
    return code, out


CASES = find_cases(SAMPLES)


@pytest.mark.parametrize("case", CASES, ids=[str(c.expected_path.relative_to(SAMPLES)).replace(".expected.yaml", "")
                                             for c in CASES])
def test_every_sample_report_matches_the_schema(case) -> None:  # type: ignore[no-untyped-def]
    errors = sorted(_validator().iter_errors(outcome_of(case).report), key=str)
    assert not errors, "; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5])


def test_jsonl_without_follow_prints_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run([str(SAMPLE), "--format", "jsonl"], capsys)
    events = [json.loads(line) for line in out.splitlines()]  # every line is JSON: never the text report
    assert code == 1 and [e["event"] for e in events] == ["finding", "finding", "summary"]
    assert events[0]["finding"]["id"] == "cuda-oom" and events[-1]["report"]["root_cause"]["id"] == "cuda-oom"
    validator = _validator("event")
    for event in events:
        validator.validate(event)


def test_json_says_none_not_null_and_only_what_the_logs_told(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    log = tmp_path / "ok.log"
    log.write_text("step 1 loss 0.5\nstep 2 loss 0.4\n")
    code, out = _run([str(log), "-f", "json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["verdict"] == "none"
    assert None not in report["job"].values()  # no framework: null, model: null
    _validator().validate(report)


def test_symptom_of_and_explained_by_say_what_explained_the_echo_in_this_log(
        capsys: pytest.CaptureFixture[str]) -> None:
    _code, out = _run([str(SAMPLE), "-f", "json"], capsys)
    report = json.loads(out)
    watchdog = next(f for f in report["findings"] if f["id"] == "nccl-watchdog-timeout")
    assert watchdog["symptom_of"] == ["cuda-oom"] and report["root_cause"]["symptom_of"] == []
    echoes = [m for m in report["timeline"] if m["what"] == "nccl-watchdog-timeout"]
    assert echoes and all(m["explained_by"] and m["explained_by"]["id"] == "cuda-oom" for m in echoes)
    assert [m["explained_by"] for m in report["timeline"] if m["what"] == "cuda-oom"] == [None] * len(
        [m for m in report["timeline"] if m["what"] == "cuda-oom"])


def _readme_json_keys() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## JSON report"):]
    section = section[:section.index("\n## ", 4)]
    return set(re.findall(r'"([a-z_]+)"', section)) | set(re.findall(r"`([a-z_]+)`", section))


def test_readme_documents_every_key_of_the_schema() -> None:
    documented = _readme_json_keys()
    defs = _schema()["$defs"]
    missing = {f"{where}.{key}" for where in ("report", "finding", "unrecognized", "job", "moment", "checkpoint")
               for key in defs[where]["properties"] if key not in documented}
    assert not missing, f"keys in the schema the README's JSON section does not name: {sorted(missing)}"


def test_a_user_signature_whose_no_match_example_matches_is_refused(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    text = (ROOT / "signatures" / "cuda" / "cuda-oom.yaml").read_text(encoding="utf-8")
    example = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert "  no_match:\n" in text
    (tmp_path / "cuda-oom.yaml").write_text(text.replace("  no_match:\n", f"  no_match:\n    - {example!r}\n", 1),
                                            encoding="utf-8")
    code = main(["--signatures", str(tmp_path), str(SAMPLE)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "cuda-oom.yaml: examples.no_match[0]: this example matches" in err


def test_help_shows_each_value_and_each_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(["--help"], capsys)
    assert code == 0 and "--ray ADDRESS" in out and "--ray-timeout SECONDS" in out and "--jobs N" in out
    assert "diagnose learn LOG --to DIR" in out and "diagnose check-signatures DIR" in out
    assert "<list" not in out and "{command}" not in out and "[paths]" not in out
