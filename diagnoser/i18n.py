"""Language choice (en/zh) and the report's own words in both languages."""

from __future__ import annotations

import os
from collections.abc import Mapping

LANGS = ("en", "zh")

_MESSAGES: dict[str, dict[str, str]] = {
    "root_cause": {"en": "Root cause", "zh": "根本原因"},
    "no_root_cause": {"en": "No root cause found", "zh": "未找到根本原因"},
    "only_symptoms": {
        "en": "Only symptoms were found: these errors are usually the echo of a failure "
        "elsewhere. Look for the cause where the first symptom points.",
        "zh": "只找到了症状：这些错误通常是别处故障的连锁反应。请到第一个症状所指的位置查找原因。",
    },
    "no_failure": {"en": "No failure found", "zh": "未发现故障"},
    "where": {"en": "Where", "zh": "位置"},
    "seen": {"en": "Seen", "zh": "出现"},
    "evidence": {"en": "Evidence", "zh": "证据"},
    "why": {"en": "Why", "zh": "原因"},
    "remedy": {"en": "Remedy", "zh": "解决方法"},
    "references": {"en": "References", "zh": "参考"},
    "other_findings": {"en": "Other findings", "zh": "其他发现"},
    "unrecognized": {"en": "Unrecognised errors", "zh": "未识别的错误"},
    "kind": {"en": "kind", "zh": "类别"},
    "id": {"en": "id", "zh": "标识"},
    "count": {"en": "count", "zh": "次数"},
    "first_seen": {"en": "first seen", "zh": "首次出现"},
    "exception": {"en": "exception", "zh": "异常"},
    "message": {"en": "message", "zh": "信息"},
    "times": {"en": "{n}×", "zh": "{n} 次"},
    "on_ranks": {"en": "on ranks {ranks}", "zh": "rank：{ranks}"},
    "on_hosts": {"en": "hosts {hosts}", "zh": "主机：{hosts}"},
    "stats": {
        "en": "Scanned {lines} lines ({mb} MB) from {sources} source(s) in {seconds} s.",
        "zh": "共扫描 {sources} 个来源的 {lines} 行（{mb} MB），用时 {seconds} 秒。",
    },
    "verdict": {"en": "Verdict", "zh": "结论"},
    "also": {"en": "Also", "zh": "另外"},
    "verdict_restart": {
        "en": "restart: a transient or hardware fault. Restart on healthy nodes (cordon the bad one) from the "
        "last checkpoint.",
        "zh": "restart：瞬时或硬件故障。隔离故障节点，在健康节点上从最近的检查点重启。",
    },
    "verdict_fix-then-restart": {
        "en": "fix-then-restart: a configuration or code error that will fail again the same way. Apply the "
        "remedy first, then restart from the last checkpoint.",
        "zh": "fix-then-restart：配置或代码错误，原样重启会以同样方式再次失败。"
        "先按解决方法修改，再从最近的检查点重启。",
    },
    "verdict_investigate": {
        "en": "investigate: no known cause. Read the first error before restarting.",
        "zh": "investigate：原因未知。重启之前先查看第一个错误。",
    },
    "verdict_investigate_known": {
        "en": "investigate: the cause above is known, but whether it will happen again is not. Follow its remedy "
        "and look at the evidence before restarting.",
        "zh": "investigate：原因已知，但是否会再次发生尚不确定。重启前请按解决方法检查证据。",
    },
    "verdict_none": {"en": "none: no failure found.", "zh": "无：未发现故障。"},
    "checkpoint_unconfirmed": {
        "en": " (the save began here; no message says it finished, so it may be incomplete)",
        "zh": "（保存从此处开始；没有完成的记录，可能不完整）",
    },
    "checkpoint_at": {"en": "step {step} → {path} ({where})", "zh": "第 {step} 步 → {path}（{where}）"},
    "checkpoint_none": {
        "en": "none seen in the logs: a restart begins where the job began (or at the checkpoint it loaded).",
        "zh": "日志中未见保存记录：重启将从任务开始处（或其加载的检查点）开始。",
    },
    "echo_line": {"en": "→ {ranks} rank(s): {title} ({count}×){delay}",
                  "zh": "→ {ranks} 个 rank：{title}（{count} 次）{delay}"},
    "echo_delay": {"en": ", {minutes} min later", "zh": "，{minutes} 分钟后"},
    "explained_by": {"en": "explained by", "zh": "由此解释"},
    "rank": {"en": "rank / file", "zh": "rank / 文件"},
    "first_failure": {"en": "first failure", "zh": "首个故障"},
    "more_rows": {"en": "… and {n} more", "zh": "…… 另有 {n} 条"},
    "job_ranks": {"en": "{ranks} rank(s) on {hosts} host(s)", "zh": "{hosts} 台主机上的 {ranks} 个 rank"},
    "first_error": {"en": "First unrecognised error", "zh": "第一个未识别的错误"},
    "unrecognized_hint": {
        "en": "No signature recognises this error. It is the earliest error in the logs, so start there: read "
        "its traceback at the place above. If it is a known problem, a signature file teaches diagnose to "
        "recognise it (diagnose --signatures DIR; see signatures/README.md).",
        "zh": "没有特征能识别此错误。它是日志中最早出现的错误，请从这里开始：查看上述位置的调用栈。若这是已知问题，"
        "可编写特征文件让 diagnose 识别它（diagnose --signatures DIR；见 signatures/README.md）。",
    },
    "last_checkpoint": {"en": "Last checkpoint", "zh": "最近的检查点"},
    "none_seen": {"en": "none seen in the logs", "zh": "日志中未见"},
    "timeline": {"en": "Timeline", "zh": "时间线"},
    "job": {"en": "Job", "zh": "作业"},
    "echoes": {"en": "Echoes", "zh": "连锁反应"},
    "cause": {"en": "cause", "zh": "原因"},
    "symptom": {"en": "symptom", "zh": "症状"},
    "advisory": {"en": "advisory", "zh": "建议"},
    "title": {"en": "title", "zh": "标题"},
    "layer": {"en": "layer", "zh": "层"},
    "examples": {"en": "Examples", "zh": "示例"},
    "falsepositives": {"en": "False positives", "zh": "误报情形"},
    "signatures_count": {"en": "{n} signatures", "zh": "共 {n} 条特征"},
    "frame": {"en": "frame", "zh": "栈帧"},
    "error_prefix": {"en": "diagnose: error: ", "zh": "diagnose：错误："},
    "warning_prefix": {"en": "diagnose: warning: ", "zh": "diagnose：警告："},
}


def detect_lang(env: Mapping[str, str] | None = None) -> str:
    """The report language the environment asks for: zh for a zh_* locale, else en."""
    env = os.environ if env is None else env
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if not value:
            continue
        # LANGUAGE may list several, e.g. "zh_CN:en_US"; the first one decides.
        first = value.split(":")[0].strip().lower()
        if first.startswith("zh"):
            return "zh"
        if first in ("c", "posix", "c.utf-8") and var != "LANGUAGE":
            return "en"
        return "en"
    return "en"


def msg(key: str, lang: str, **values: object) -> str:
    """The report's own text for `key` in `lang`, with `{name}` values filled in."""
    entry = _MESSAGES[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text
