"""`diagnose bundle`: what a maintainer gets, with every planted secret redacted and the tarball safe to unpack.

The planted values are built here from pieces (a committed token-shaped string would trip secret scanners), one
of each shape report/redact.py knows, and put where real jobs leak them: Ray's runtime_env_agent.log (every env
var in clear), a printed config, `KEY=value` echoes, a logged Authorization header, a URL with a password, a
traceback's message, the lines around the error, a py-spy dump.
"""

from __future__ import annotations

import io
import json
import os
import random
import string
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from diagnoser.cli import main
from diagnoser.modes import bundle_parts
from diagnoser.modes.bundle import safe_name
from diagnoser.report.redact import Redactor

RNG = random.Random(18)


def _chars(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


HEX = "0123456789abcdef"
SECRETS = {
    "hf": "hf_" + _chars(34, string.ascii_letters),
    "hf_org": "api_org_" + _chars(34, string.ascii_letters),
    "openai": "sk-proj-" + _chars(58) + "T3Blbk" + "FJ" + _chars(58),
    "openai_legacy": "sk-" + _chars(20) + "T3Blbk" + "FJ" + _chars(20),
    "anthropic": "sk-ant-" + "api03-" + _chars(93) + "AA",
    "dashscope": "sk-" + _chars(32, string.ascii_lowercase + string.digits),
    "aws_id": "AK" + "IA" + _chars(16, string.ascii_uppercase + "234567"),
    "aws_secret": _chars(40, string.ascii_letters + string.digits + "/+"),
    "github": "gh" + "p_" + _chars(36),
    "github_fine": "github_" + "pat_" + _chars(82, string.ascii_letters + string.digits + "_"),
    "wandb_v1": "wandb_" + "v1_" + _chars(77),
    "wandb_hex": _chars(40, HEX),
    "alibaba_id": "LT" + "AI" + _chars(20),
    "alibaba_secret": _chars(30),
    "google": "AI" + "za" + _chars(35, string.ascii_letters + string.digits + "_-"),
    "slack": "xo" + "xb-" + _chars(12, string.digits) + "-" + _chars(12, string.digits) + "-" + _chars(24),
    "jwt": "ey" + _chars(30) + ".ey" + _chars(40) + "." + _chars(43),
    "ray_token": _chars(64, HEX),
    "bearer": _chars(48),
    "url_password": "Pw-" + _chars(18),
    "password": "pw" + _chars(14),
    "key_body": _chars(64, string.ascii_letters + string.digits + "/+"),
}


def _job(folder: Path) -> Path:
    s = SECRETS
    logs = folder / "job"
    node = logs / "10.0.0.2" / "logs"
    node.mkdir(parents=True)
    env = {"HF_TOKEN": s["hf"], "WANDB_API_KEY": s["wandb_hex"], "OPENAI_API_KEY": s["openai"],
           "AWS_ACCESS_KEY_ID": s["aws_id"], "AWS_SECRET_ACCESS_KEY": s["aws_secret"], "GITHUB_TOKEN": s["github"],
           "ALIBABA_CLOUD_ACCESS_KEY_ID": s["alibaba_id"], "ALIBABA_CLOUD_ACCESS_KEY_SECRET": s["alibaba_secret"],
           "RAY_AUTH_TOKEN": s["ray_token"], "MY_SERVICE_PASSWORD": s["password"]}
    # Ray 2.60's runtime_env_agent.log, as in the secrets_in_logs run (every env var of the runtime env in clear)
    (node / "runtime_env_agent.log").write_text(
        "2026-11-25 21:58:40,101\tINFO runtime_env_agent.py:361 -- Creating runtime env: "
        + json.dumps({"env_vars": env}) + "\n", encoding="utf-8")
    lines = [
        "config: {'data': {'hf_token': '" + s["hf"] + "', 'prompt_key': 'prompt'}, 'trainer': {'project_name': 'x'}}",
        "WANDB_API_KEY=" + s["wandb_v1"],
        "export ANTHROPIC_API_KEY=" + s["anthropic"] + " DASHSCOPE_API_KEY=" + s["dashscope"],
        "--hf_token " + s["hf_org"] + " --gh_token=" + s["github_fine"],
        "request headers: {'Authorization': 'Bearer " + s["bearer"] + "', 'X-Api-Key': '" + s["google"] + "'}",
        "reward url https://alice:" + s["url_password"] + "@rm.example.internal/v1 slack " + s["slack"],
        "jwt " + s["jwt"] + " legacy key " + s["openai_legacy"],
        "-----BEGIN OPENSSH PRIVATE KEY-----", s["key_body"], s["key_body"][::-1], "-----END OPENSSH PRIVATE KEY-----",
        # the error itself (the sample cuda-oom example's text), with a secret in the lines the evidence shows
        "[rank5]: Traceback (most recent call last):",
        "[rank5]:   File \"/workspace/train.py\", line 67, in <module>",
        "[rank5]:     trainer.train(token=\"" + s["hf"] + "\")",
        "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 5 has a total capacity "
        "of 23.43 GiB of which 210.06 MiB is free.",
        "RuntimeError: upload failed for key " + s["aws_id"] + " secret_access_key=" + s["aws_secret"],
    ]
    (node / "worker-ab12-01000000-4242.err").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # a py-spy dump (py-spy's own layout) with a secret in a frame's argument
    (logs / "pyspy-rank5.txt").write_text(
        "Process 4242: python train.py --wandb_key " + s["wandb_hex"] + "\nPython v3.11.7 (/usr/bin/python3.11)\n\n"
        "Thread 4242 (active): \"MainThread\"\n    wait (threading.py:320)\n", encoding="utf-8")
    (logs / "nccl_trace_rank_5").write_bytes(b"\x80\x04\x95" + b"\x00" * 64 + b"flight recorder entries")
    # credentials files a bundle never reads, a link out of the folder, and a file name that is a path trick
    (logs / ".netrc").write_text("machine api.wandb.ai login user password " + s["wandb_hex"] + "\n")
    (logs / "auth_token").write_text(s["ray_token"] + "\n")
    outside = folder / "outside.log"
    outside.write_text("RuntimeError: outside " + s["password"] + "\n" + "OUTSIDE-MARKER\n")
    (logs / "linked.log").symlink_to(outside)
    (logs / "..;rm -rf;trace_rank_7").write_bytes(b"fr")
    return logs


def _unpack(path: Path, into: Path) -> list[str]:
    with tarfile.open(path) as tar:
        names = tar.getnames()
        for member in tar.getmembers():
            assert member.isreg() and not member.name.startswith("/") and ".." not in member.name.split("/")
        tar.extractall(into, filter="data")
    return names


def test_bundle_has_the_report_and_pieces_and_no_planted_secret(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    logs = _job(tmp_path)
    out = tmp_path / "job-report.tar.gz"
    code = main(["bundle", str(logs), "-o", str(out), "--lang", "en", "-j", "1"])
    printed = capsys.readouterr().out
    assert code == 1 and out.is_file()
    names = _unpack(out, tmp_path / "unpacked")
    top = tmp_path / "unpacked" / "job-report"
    assert {"job-report/README.txt", "job-report/report.md", "job-report/report.json",
            "job-report/first-errors.md"} <= set(names)
    report = json.loads((top / "report.json").read_text())
    assert report["root_cause"]["id"] == "cuda-oom"
    first = (top / "first-errors.md").read_text()
    assert "torch.OutOfMemoryError: CUDA out of memory" in first and "> " in first  # the error, in its context
    artifacts = sorted(p.name for p in (top / "artifacts").iterdir())
    assert any("pyspy-rank5" in a for a in artifacts) and any("nccl_trace_rank_5" in a for a in artifacts)
    assert all("/" not in a and not a.startswith(".") for a in artifacts)
    everything = b"".join(p.read_bytes() for p in (tmp_path / "unpacked").rglob("*") if p.is_file())
    for kind, value in SECRETS.items():
        assert value.encode() not in everything, f"{kind} leaked"
        assert value[4:24].encode() not in everything, f"part of {kind} leaked"
    assert b"OUTSIDE-MARKER" not in everything  # the link out of the folder was not followed
    readme = (top / "README.txt").read_text()
    assert "huggingface-token" in readme and "secret-by-name" in readme and "private-key" in readme
    assert "redacted:" in printed and "huggingface-token" in printed


def test_redactor_leaves_rl_config_alone() -> None:
    r = Redactor()
    lines = ["data.prompt_key=extra_info data.response_key=response 'reward_fn_key': 'data_source'",
             "eos_token: <|im_end|> pad_token_id: 151643 max_new_tokens=1024 'balance_dp_token': False",
             "hf_config_path: /models/x git 0123456789abcdef0123456789abcdeffeedface",
             "Lease ID: 010000009e88d2bb500158d44187bbf36941844562614b424e4fea300eba8793 sk-learn scikit-learn",
             "password: ${DB_PASSWORD} https://user:$PASS@host/"]
    assert [r.line(x) for x in lines] == lines and not r.counts


def test_member_names_are_one_plain_component() -> None:
    assert safe_name("../../etc/passwd") == "etc_passwd"
    assert safe_name("..") == "unnamed"
    assert "/" not in safe_name("a/b\\c\x00d") and not safe_name(".hidden").startswith(".")


def test_bundle_cli_from_a_subprocess(tmp_path: Path) -> None:
    logs = _job(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "diagnoser", "bundle", str(logs), "-o", "b.tar.gz"],
                          cwd=tmp_path, capture_output=True, text=True, check=False,
                          env={**os.environ, "LANG": "C.UTF-8"})
    assert proc.returncode == 1, proc.stderr
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        data = b"".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isreg())  # type: ignore[union-attr]
    assert SECRETS["hf"].encode() not in data and b"cuda-oom" in data


def test_bundle_needs_an_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bundle", "--lang", "en"]) == 2
    assert "needs the job's log files or folders" in capsys.readouterr().err


def test_unpacking_is_safe_with_pythons_data_filter(tmp_path: Path) -> None:
    logs = _job(tmp_path)
    out = tmp_path / "x.tar.gz"
    main(["bundle", str(logs), "-o", str(out), "-j", "1"])
    with tarfile.open(out) as tar:
        buf = io.BytesIO()
        for m in tar.getmembers():
            assert m.mode == 0o644 and m.uid == 0 and m.type == tarfile.REGTYPE
            buf.write(m.name.encode())
    assert b".." not in buf.getvalue()


def test_the_bundle_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # smaller limits than the shipped ones (8 MB an artifact, 24 MB in all), the same code paths
    monkeypatch.setattr(bundle_parts, "MAX_ARTIFACT", 4096)
    monkeypatch.setattr(bundle_parts, "MAX_ARTIFACTS_BYTES", 10_000)
    logs = tmp_path / "logs"
    logs.mkdir()
    head = "Process 4242: python train.py\nPython v3.11.7 (/usr/bin/python3.11)\n\nThread 4242 (active)\n"
    for rank in range(5):
        (logs / f"py-spy-rank{rank}.txt").write_text(head + "    wait (threading.py:320)\n" * 2000, encoding="utf-8")
    long_line = "x" * 100_000
    (logs / "rank5.log").write_text(long_line + "\n" + "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried "
                                    "to allocate 1.96 GiB.\n" + long_line + "\n", encoding="utf-8")
    out = tmp_path / "b.tar.gz"
    assert main(["bundle", str(logs), "-o", str(out), "-j", "1"]) == 1
    with tarfile.open(out) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isreg()}  # type: ignore[union-attr]
    kept = [name for name in files if name.startswith("job-report/artifacts/")]
    assert 0 < len(kept) < 5 and all(len(files[name]) <= 4096 for name in kept)
    assert sum(len(files[name]) for name in kept) <= 10_000 + 4096  # the last one taken may pass the total
    first = files["job-report/first-errors.md"].decode()
    assert "over the bundle's size limit" in first and ", cut)" in first
    assert max(len(line) for line in first.splitlines()) < 1000  # a 100,000-character line is cut
    assert len(files["job-report/report.md"]) < 200_000

