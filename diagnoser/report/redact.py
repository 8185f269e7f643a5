"""Redact secrets from text that leaves the machine (a maintainer's bundle): tokens of a known shape anywhere,
values behind a secret's name, passwords in URLs, authorization headers, private key blocks. What was redacted
is counted by kind; the secret itself is never kept.

Shapes (gitleaks config/gitleaks.toml rule ids in brackets, unless said otherwise):
- prefixed tokens: Hugging Face `hf_` + 34 letters [huggingface-access-token], `api_org_` + 34
  [huggingface-organization-api-token]; OpenAI `sk-proj-`/`sk-svcacct-`/`sk-admin-` and legacy `sk-...T3BlbkFJ...`
  [openai-api-key]; Anthropic `sk-ant-api03-...` [anthropic-api-key]; other `sk-` + 32 alphanumerics (DashScope and
  OpenAI-compatible servers); AWS access key ids `AKIA`/`ASIA`/`ABIA`/`ACCA` + 16 [aws-access-token]; GitHub
  `ghp_ gho_ ghu_ ghs_ ghr_` + 36+ and `github_pat_` [github-pat, github-fine-grained-pat, ...]; W&B `wandb_v1_` +
  77 (betterleaks weights-and-biases-api-key-v1); Alibaba Cloud `LTAI` + 20 [alibaba-access-key-id]; Google `AIza`
  + 35 [gcp-api-key]; Slack `xox?-` [slack-bot-token]; JWTs `ey...ey...` [jwt]; PEM private key blocks [private-key].
- by name (the value after `NAME=`, `"NAME": "`, `'name': '`, `--name `, `name: `): names whose last part is a
  password, secret, token, key or credential (`HF_TOKEN`, `WANDB_API_KEY`, `AWS_SECRET_ACCESS_KEY`,
  `OSS_ACCESS_KEY_SECRET`, `RAY_AUTH_TOKEN`, ...). The names RL configs use for data (`prompt_key`, `eos_token`,
  `max_new_tokens`, `pad_token_id`) are no secrets: a `_token`/`_key` value counts only when it looks like one
  (16+ characters, letters and digits, no path).
- a URL's password (`https://user:PASSWORD@host`, trufflehog's uri detector; a `$VAR` is left), an
  `Authorization: Bearer|Basic|Token <value>` or `X-Api-Key: <value>` header [curl-auth-header].
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from collections import Counter
from typing import Any, TypeVar

from ..lazyre import lazy_re

T = TypeVar("T")
MARK = "[REDACTED:{kind}]"

_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, lazy_re(rx)) for kind, rx in (
    ("huggingface-token", r"\b(?:hf_[A-Za-z]{34}|api_org_[A-Za-z]{34})(?![A-Za-z0-9])"),
    ("anthropic-key", r"\bsk-ant-(?:api03|admin01)-[A-Za-z0-9_-]{80,}"),
    ("openai-key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"),
    ("api-key", r"\bsk-[A-Za-z0-9]{32,}(?![A-Za-z0-9_-])"),
    ("aws-access-key-id", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_\w{82})\b"),
    ("wandb-key", r"\bwandb_v1_[A-Za-z0-9_]{77}\b"),
    ("alibaba-access-key-id", r"\bLTAI[A-Za-z0-9]{20}\b"),
    ("google-api-key", r"\bAIza[\w-]{35}(?![\w-])"),
    ("slack-token", r"\bxox[abposr]-[0-9]{10,13}-[0-9]{10,13}[A-Za-z0-9-]*"),
    ("jwt", r"\bey[A-Za-z0-9]{17,}\.ey[A-Za-z0-9/\\_-]{17,}\.(?:[A-Za-z0-9/\\_-]{10,}={0,2})?"),
))
_KEY_BEGIN = lazy_re(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = lazy_re(r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
_URL = lazy_re(r"\b([A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s:/@'\"]{1,128}):([^\s@/'\"]{1,256})@")
_HEADER = lazy_re(r"(?i)\b(authorization\\?[\"']?\s*[:=]\s*\\?[\"']?(?:bearer|basic|token|api-token)\s+)"
                     r"([A-Za-z0-9._~+/=-]{8,})|\b((?:x-)?(?:api-key|auth-token|access-token)\\?[\"']?\s*[:=]\s*\\?[\"']?)"
                     r"([A-Za-z0-9._~+/=-]{8,})")
# NAME, then = / : (with quotes, maybe JSON-escaped) or, for --name, a space; then the value
_NAMED = lazy_re(
    r"(?i)(?<![A-Za-z0-9])(?P<name>(?:--)?[A-Za-z0-9_.-]{0,60}?(?:pass(?:word|wd)?|pwd|secret|token|credentials?|"
    r"api[_-]?key|apikey|access[_-]?key|key))(?![A-Za-z0-9])"
    r"(?P<sep>\\?[\"']?\s*(?:[:=]|(?<=[A-Za-z0-9_-])\s(?=\S))\s*\\?[\"']?)"
    r"(?P<value>[^\s\"'`,;}\]\\)]{4,512})")
_STRONG = lazy_re(r"(?i)(?:pass(?:word|wd)?|pwd|secret|credentials?|api[_-]?key|apikey|access[_-]?key|"
                     r"secret[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|hub[_-]?token|^hf[_-]?token|"
                     r"session[_-]?token|github[_-]?token|gh[_-]?token|refresh[_-]?token)$")
_PLACEHOLDER = lazy_re(r"(?i)^(?:\$\{?\w+\}?|<[^>]*>|\*+|x{3,}|none|null|nil|true|false|\{\}|\[\]|redacted|"
                          r"\[redacted[^\]]*|changeme|your[_-].*|\.\.\.|…)$")


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _looks_secret(name: str, value: str) -> bool:
    if _PLACEHOLDER.match(value) or value.startswith(("/", "./", "~/")) or "://" in value:
        return False
    bare = name.lstrip("-").lower()
    if _STRONG.search(bare):
        return len(value) >= 6 or bare.endswith(("password", "passwd", "pwd", "secret"))
    # a `*_token` / `*_key` name: data keys and tokenizer fields are full of these; only a secret-looking value
    # (long, letters and digits mixed or random-looking, no dots: not a model name, a path or a word)
    letters, digits = any(ch.isalpha() for ch in value), any(ch.isdigit() for ch in value)
    return len(value) >= 16 and letters and "." not in value and (digits or _entropy(value) >= 4.0)


@dataclasses.dataclass
class Redactor:
    """Redacts line by line (a private key block spans lines); `counts` says what was redacted, by kind."""

    counts: Counter[str] = dataclasses.field(default_factory=Counter)
    in_key: bool = False

    def _mark(self, kind: str) -> str:
        self.counts[kind] += 1
        return MARK.format(kind=kind)

    def line(self, text: str) -> str:
        if self.in_key:  # inside a key block: nothing of it is kept, its end leaves what follows
            end = _KEY_END.search(text)
            if end is None:
                return ""
            self.in_key = False
            text = text[end.end():]
        begin = _KEY_BEGIN.search(text)
        if begin is not None:
            end = _KEY_END.search(text, begin.end())
            if end is None:
                self.in_key = True
                return text[: begin.start()] + self._mark("private-key")
            text = text[: begin.start()] + self._mark("private-key") + text[end.end():]
        for kind, rx in _TOKENS:
            if rx.search(text):
                text = rx.sub(lambda _m, k=kind: self._mark(k), text)  # type: ignore[misc]
        text = _URL.sub(self._url, text)
        text = _HEADER.sub(self._header, text)
        return _NAMED.sub(self._named, text)

    def text(self, text: str) -> str:
        return "\n".join(self.line(line) for line in text.split("\n"))

    def _url(self, m: re.Match[str]) -> str:
        if m.group(2).startswith("$") or m.group(2).startswith("[REDACTED:"):
            return m.group(0)
        return f"{m.group(1)}:{self._mark('url-password')}@"

    def _header(self, m: re.Match[str]) -> str:
        prefix = m.group(1) if m.group(1) is not None else m.group(3)
        value = m.group(2) if m.group(2) is not None else m.group(4)
        if value.startswith("[REDACTED"):
            return m.group(0)
        return prefix + self._mark("auth-header")

    def _named(self, m: re.Match[str]) -> str:
        value = m.group("value")
        if "[REDACTED:" in value or not _looks_secret(m.group("name"), value):
            return m.group(0)
        return m.group("name") + m.group("sep") + self._mark("secret-by-name")

    def obj(self, obj: T, keep: list[object] | None = None) -> T:
        """A copy of `obj` (dataclasses, dicts, lists, tuples, sets of them) with every string redacted; the objects
        in `keep` (the signatures: the database's own text, not the logs') are shared as they are."""
        kept = {id(k): k for k in keep or []}
        return self._walk(copy.deepcopy(obj, dict(kept)), dict(kept))  # type: ignore[no-any-return]

    def _walk(self, obj: Any, seen: dict[int, Any]) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if id(obj) in seen:
            return seen[id(obj)]
        if isinstance(obj, dict):
            out = {self._walk(k, seen): self._walk(v, seen) for k, v in obj.items()}
            obj.clear()
            obj.update(out)
        elif isinstance(obj, list):
            obj[:] = [self._walk(v, seen) for v in obj]
        elif isinstance(obj, tuple):
            return type(obj)(*(self._walk(v, seen) for v in obj)) if hasattr(obj, "_fields") else \
                tuple(self._walk(v, seen) for v in obj)
        elif isinstance(obj, (set, frozenset)):
            return type(obj)(self._walk(v, seen) for v in obj)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            seen[id(obj)] = obj
            for f in dataclasses.fields(obj):
                object.__setattr__(obj, f.name, self._walk(getattr(obj, f.name), seen))
        return obj

    def summary(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))
