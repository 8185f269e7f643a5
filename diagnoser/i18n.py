"""Language choice (en/zh) and the report's own words in both languages."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .i18n_health import HEALTH
from .i18n_ranks import RANK_MESSAGES
from .i18n_ray import RAY_MESSAGES
from .i18n_robust import ROBUST_MESSAGES
from .phrases import PHRASES

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
    "checkpoint_step": {"en": "step {step} ({where})", "zh": "第 {step} 步（{where}）"},
    "checkpoint_path": {"en": "{path} ({where})", "zh": "{path}（{where}）"},
    "checkpoint_none": {
        "en": "none seen in the logs: a restart begins where the job began (or at the checkpoint it loaded).",
        "zh": "日志中未见保存记录：重启将从任务开始处（或其加载的检查点）开始。",
    },
    "echo_delay": {"en": ", {minutes} min later", "zh": "，{minutes} 分钟后"},
    "explained_by": {"en": "explained by", "zh": "由此解释"},
    "rank": {"en": "rank / file", "zh": "rank / 文件"},
    "first_failure": {"en": "first failure", "zh": "首个故障"},
    "more_rows": {"en": "… and {n} more", "zh": "…… 另有 {n} 条"},
    "job_ranks": {"en": "{ranks} rank(s) on {hosts} host(s)", "zh": "{hosts} 台主机上的 {ranks} 个 rank"},
    "first_error": {"en": "First unrecognised error", "zh": "第一个未识别的错误"},
    # the panel of an unrecognised error: where to start (a traceback, or a lone line), then how to teach diagnose
    "unrecognized_hint": {
        "en": "No signature recognises this error. It is the earliest error in the logs, so start there: read "
        "its traceback at the place above.",
        "zh": "没有特征能识别此错误。它是日志中最早出现的错误，请从这里开始：查看上述位置的调用栈。",
    },
    "unrecognized_hint_lone": {
        "en": "No signature recognises this error, and no traceback comes with it in the logs (it may have been "
        "cut off). Start there: read the lines around the place above.",
        "zh": "没有特征能识别此错误，日志中也没有与之对应的调用栈（可能已被截断）。"
        "请从这里开始：查看上述位置附近的日志行。",
    },
    "unrecognized_teach": {
        "en": " If it is a known problem, a signature file teaches diagnose to recognise it (diagnose --signatures "
        "DIR; how to write one: {guide}).",
        "zh": "若这是已知问题，可编写特征文件让 diagnose 识别它"
        "（diagnose --signatures DIR；编写方法见 {guide}）。",
    },
    # causal roles and partial evidence (issue 16): a finding made from a cut traceback's frames alone
    "from_frames": {
        "en": "from the traceback's frames only (its exception line is missing: confirm in the full log)",
        "zh": "仅根据调用栈的栈帧识别（缺少异常行：请在完整日志中确认）",
    },
    # diagnose learn / check-signatures (issue 16)
    "learn_nothing": {
        "en": "Nothing to learn: every error in this log is one a signature knows (or has no message to match).",
        "zh": "没有可学习的内容：此日志中的错误都已有特征识别（或没有可匹配的错误信息）。",
    },
    "learn_wrote": {"en": "wrote {path}  (from {where}; fast-search literal: {literal!r})",
                    "zh": "已写入 {path}（来自 {where}；快速搜索字面量：{literal!r}）"},
    "learn_next": {
        "en": "Next: write the TODOs (why, remedy, references, the Chinese title), then run "
        "`diagnose check-signatures {dir}`; use it with `diagnose --signatures {dir} LOG`.",
        "zh": "下一步：填写各处 TODO（原因、解决方法、参考链接、中文标题），然后运行 "
        "`diagnose check-signatures {dir}`；使用方式：`diagnose --signatures {dir} LOG`。",
    },
    "err_learn_not_dir": {"en": "--to {path}: not a folder", "zh": "--to {path}：不是文件夹"},
    "check_error": {"en": "error: {problem}", "zh": "错误：{problem}"},
    "check_warning": {"en": "warning: {problem}", "zh": "警告：{problem}"},
    "check_example_failed": {"en": "error: {path}: {where}: {problem}", "zh": "错误：{path}：{where}：{problem}"},
    "check_summary": {
        "en": "{sigs} signature(s), {examples} example(s): {failed} failed; {errors} lint error(s), "
        "{warnings} warning(s).",
        "zh": "{sigs} 条特征，{examples} 个示例：{failed} 个失败；检查错误 {errors} 个，警告 {warnings} 个。",
    },
    "last_checkpoint": {"en": "Last checkpoint", "zh": "最近的检查点"},
    "none_seen": {"en": "none seen in the logs", "zh": "日志中未见"},
    "timeline": {"en": "Timeline", "zh": "时间线"},
    "job": {"en": "Job", "zh": "作业"},
    "echoes": {"en": "Echoes", "zh": "连锁反应"},
    "cause": {"en": "cause", "zh": "起因"},
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
    "n_files": {"en": "{n} file(s)", "zh": "{n} 个文件"},
    "see_help": {"en": " (see diagnose --help)", "zh": "（见 diagnose --help）"},
    # one-line errors (exit status 2) and warnings
    "err_no_input": {
        "en": "no input: name a log file or folder, or pipe a log in (cat job.log | diagnose)",
        "zh": "没有输入：请给出日志文件或文件夹，或通过管道输入日志（cat job.log | diagnose）",
    },
    "err_status_both": {"en": "give --job-status or --exit-code, not both",
                        "zh": "--job-status 与 --exit-code 只能给出其一"},
    "err_jobs": {"en": "--jobs must be 1 or more", "zh": "--jobs 必须大于等于 1"},
    "err_live_format": {"en": "a live diagnosis prints text, jsonl or json",
                        "zh": "实时诊断只支持 text、jsonl 或 json 格式"},
    "err_duration": {"en": "not a duration: {text!r} (use e.g. 600, 90s, 10m, 1h, or off)",
                     "zh": "不是有效的时长：{text!r}（例如 600、90s、10m、1h 或 off）"},
    "err_follow_paths": {"en": "--follow needs files or folders to follow",
                         "zh": "--follow 需要给出要跟踪的文件或文件夹"},
    "err_follow_only": {"en": "--from-start and --exit-on go with --follow",
                        "zh": "--from-start 和 --exit-on 只能与 --follow 一起使用"},
    "err_hang_live": {"en": "--hang-after needs a live input: --follow, or diagnose run",
                      "zh": "--hang-after 需要实时输入：--follow 或 diagnose run"},
    "err_lang": {"en": "--lang must be one of {langs}, not {value!r}",
                 "zh": "--lang 只能是 {langs} 之一，而不是 {value!r}"},
    "err_no_signature": {"en": "no signature with id {sig_id!r}{hint}", "zh": "没有标识为 {sig_id!r} 的特征{hint}"},
    "hint_did_you_mean": {"en": " (did you mean {ids}?)", "zh": "（是否想找 {ids}？）"},
    "hint_see_list": {"en": " (see diagnose --list)", "zh": "（见 diagnose --list）"},
    "err_no_such_path": {"en": "{path}: no such file or folder", "zh": "{path}：文件或文件夹不存在"},
    "err_no_such_file": {"en": "{path}: no such file", "zh": "{path}：文件不存在"},
    "err_is_folder": {"en": "{path}: is a folder", "zh": "{path}：是文件夹"},
    "err_permission": {"en": "{path}: permission denied", "zh": "{path}：没有读取权限"},
    "err_cannot_open": {"en": "{path}: cannot open: {reason}", "zh": "{path}：无法打开：{reason}"},
    "err_cmd_not_found": {"en": "{command}: command not found", "zh": "{command}：找不到该命令"},
    "err_cannot_run": {"en": "cannot run {command}: {reason}", "zh": "无法运行 {command}：{reason}"},
    # signature-file problems: the CLI puts "path: field: " before them
    "err_sig_too_big": {"en": "larger than {kib} KiB; not a signature file", "zh": "大于 {kib} KiB，不是特征文件"},
    "err_sig_read": {"en": "cannot read: {reason}", "zh": "无法读取：{reason}"},
    "err_sig_utf8": {"en": "not UTF-8 text (byte {at})", "zh": "不是 UTF-8 文本（第 {at} 字节）"},
    "err_sig_yaml": {"en": "invalid YAML: {problem}", "zh": "YAML 格式错误：{problem}"},
    "err_sig_folder": {"en": "not a folder of signature files", "zh": "不是特征文件所在的文件夹"},
    "err_sig_id_file": {"en": "is {sig_id!r} but the file is named {name!r} (they must agree)",
                        "zh": "为 {sig_id!r}，但文件名是 {name!r}（两者必须一致）"},
    "err_sig_dup": {"en": "{sig_id!r} is also the id of {other}", "zh": "{sig_id!r} 也是 {other} 的标识"},
    # robustness (issue 19): the output side, signature files, follow and run under stress
    "err_stdout_closed": {"en": "standard output is closed: there is nowhere to write the report",
                          "zh": "标准输出已关闭：报告无处可写"},
    "warn_log_failed": {"en": "{path}: cannot write the log copy ({reason}); the command runs on and is still "
                              "diagnosed, the log stops here",
                        "zh": "{path}：无法写入日志副本（{reason}）；命令继续运行，诊断照常进行，日志到此为止"},
    "warn_no_logs": {"en": "{path}: no log files found in this folder", "zh": "{path}：该文件夹中没有日志文件"},
    "warn_skipped_files": {"en": "{path}: skipped {n} file(s) that are binary or not logs ({sample})",
                           "zh": "{path}：跳过了 {n} 个二进制或非日志文件（{sample}）"},
    "warn_skipped": {"en": "{problem}; skipped", "zh": "{problem}；已跳过"},
    "warn_corrupt_at": {
        "en": "{name}: compressed data is corrupt or cut short after line {line} ({reason}); "
        "the rest of this file is skipped",
        "zh": "{name}：压缩数据在第 {line} 行之后损坏或被截断（{reason}）；该文件其余部分已跳过",
    },
    "warn_corrupt": {
        "en": "{name}: compressed data is corrupt or cut short ({reason}); the rest of this file is skipped",
        "zh": "{name}：压缩数据损坏或被截断（{reason}）；该文件其余部分已跳过",
    },
    "warn_read_at": {"en": "{name}: read error after line {line}: {reason}; the rest is skipped",
                     "zh": "{name}：第 {line} 行之后读取出错：{reason}；其余部分已跳过"},
    "warn_read": {"en": "{name}: read error: {reason}; the rest is skipped",
                  "zh": "{name}：读取出错：{reason}；其余部分已跳过"},
    "warn_regex_slow": {
        "en": "{where}: regex gave up after {seconds} s on a {chars}-character line; "
        "that line was skipped for this pattern",
        "zh": "{where}：正则表达式在一行 {chars} 个字符的文本上 {seconds} 秒后放弃；该行对此模式已跳过",
    },
    "warn_regex_off": {"en": "{where}: regex timed out {n} times; it is switched off for the rest of this run",
                       "zh": "{where}：正则表达式已超时 {n} 次；本次运行余下部分不再使用"},
    # the live pump (issue 13): a diagnosis that fell behind reads only the lines holding a gate literal
    "warn_shed": {"en": "the diagnosis fell behind the command's output; {n} line(s) holding no failure keyword "
                        "were passed through unread (every line holding one was diagnosed)",
                  "zh": "诊断跟不上命令的输出；有 {n} 行不含任何故障关键词的输出未经诊断直接输出"
                        "（含关键词的行均已诊断）"},
    "warn_fell_behind": {"en": "the diagnosis fell behind the command's output; {n} line(s) were not diagnosed",
                         "zh": "诊断跟不上命令的输出；有 {n} 行未被诊断"},
    "warn_cannot_follow": {"en": "{path}: cannot follow: {reason}", "zh": "{path}：无法跟踪：{reason}"},
    "warn_follow_gz": {"en": "{path}: a compressed file cannot grow; it is read once by a normal scan, not followed",
                       "zh": "{path}：压缩文件不会增长；只做一次普通扫描，不跟踪"},
    "warn_reopen": {"en": "{path}: cannot reopen after rotation: {reason}",
                    "zh": "{path}：日志轮转后无法重新打开：{reason}"},
}
_MESSAGES.update(PHRASES)  # the verdict, the first screen, --explain and --help (phrases.py)
# words in their own files: i18n_ranks.py (issue 15), i18n_ray.py (issue 18), i18n_health.py (issue 17),
# i18n_robust.py (issue 19)
_MESSAGES.update({**RANK_MESSAGES, **RAY_MESSAGES, **HEALTH, **ROBUST_MESSAGES})


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
    if not values:
        return text
    return text.format(**{k: v.in_lang(lang) if isinstance(v, Msg) else v for k, v in values.items()})


class Msg(str):
    """A message for the user that can be shown in either language. It is the English text (so it goes
    wherever a str goes: exceptions, warnings, logs of worker processes); the CLI shows `in_lang(lang)`."""

    key: str
    values: dict[str, object]

    def __new__(cls, key: str, **values: object) -> Msg:
        obj = super().__new__(cls, msg(key, "en", **values))
        obj.key = key
        obj.values = values
        return obj

    def __reduce__(self) -> tuple[object, ...]:
        return (_make_msg, (self.key, self.values))

    def in_lang(self, lang: str) -> str:
        return msg(self.key, lang, **self.values)


def _make_msg(key: str, values: dict[str, object]) -> Msg:
    return Msg(key, **values)


def localized(text: object, lang: str) -> str:
    """`text` in `lang` when it is a Msg (or an exception raised with one), else as it is."""
    own = getattr(text, "in_lang", None)
    if own is not None and callable(own):
        return str(own(lang))
    if isinstance(text, BaseException):
        first = text.args[0] if len(text.args) == 1 else None
        return first.in_lang(lang) if isinstance(first, Msg) else str(text)
    return text.in_lang(lang) if isinstance(text, Msg) else str(text)
