"""The words of the hardening (issue 19), in en and zh: output that failed, bounds reached, inputs refused, what was
left out. Part of i18n.py's table (which merges them in), in a file of their own so that table stays readable."""

from __future__ import annotations

ROBUST_MESSAGES: dict[str, dict[str, str]] = {
    "err_output": {"en": "the report could not be written to standard output ({reason}): what was written is "
                         "incomplete",
                   "zh": "报告无法写入标准输出（{reason}）：已写出的部分不完整"},
    "warn_passthrough": {"en": "cannot pass the command's output on ({reason}); the command runs on and is still "
                               "diagnosed",
                         "zh": "无法转发命令的输出（{reason}）；命令继续运行，诊断照常进行"},
    "unlisted": {"en": "{n} more unrecognised error(s) of other kinds are not listed (only the first {kinds} kinds "
                       "are kept)",
                 "zh": "另有 {n} 个其他类型的未识别错误未列出（只保留前 {kinds} 种）"},
    "warn_follow_own": {"en": "{path}: diagnose writes its own output there; not followed",
                        "zh": "{path}：diagnose 自身的输出写在这里，不跟踪该文件"},
    "warn_unreadable_dirs": {"en": "{n} folder(s) could not be read and were not diagnosed: {sample}",
                             "zh": "{n} 个文件夹无法读取，未被诊断：{sample}"},
    "warn_jobs": {"en": "--jobs {asked}: using {n}, the cores available (more processes would only take memory)",
                  "zh": "--jobs {asked}：只使用 {n} 个进程，即可用的核数（更多进程只会占用内存）"},
    "err_sig_not_file": {"en": "not a regular file (a FIFO, a device or a socket); not a signature file",
                         "zh": "不是普通文件（FIFO、设备或套接字），不是特征文件"},
    "err_sig_alias": {"en": "YAML aliases are not allowed in a signature file (an alias repeats another part of "
                            "the file)",
                      "zh": "特征文件中不允许使用 YAML 别名（别名会重复文件的其他部分）"},
    "warn_regex_budget": {"en": "{where}: regex spent {seconds} s on {n} slow line(s); it is switched off for the "
                                "rest of this run",
                          "zh": "{where}：正则表达式在 {n} 行慢速匹配上共耗时 {seconds} 秒；本次运行余下部分不再使用"},
    # a file that changed while a post-mortem read it (issue 19, modes/batch.py)
    "warn_changed_deleted": {"en": "{name}: deleted while it was read; the report holds what was read, to its end",
                             "zh": "{name}：读取期间被删除；报告包含已读取的内容（读到了文件末尾）"},
    "warn_changed_replaced": {"en": "{name}: replaced by another file while it was read; the report holds the file "
                                    "that was there when the scan began",
                              "zh": "{name}：读取期间被另一个文件替换；报告包含扫描开始时的那个文件"},
    "warn_changed_truncated": {"en": "{name}: truncated while it was read (from {before} to {after} bytes); the report "
                                     "holds what was read before the cut",
                               "zh": "{name}：读取期间被截断（从 {before} 字节到 {after} 字节）；"
                                     "报告包含截断前读到的内容"},
    "warn_part_failed": {"en": "{name}: could not be read from byte {start} ({reason}); the report holds what was read",
                         "zh": "{name}：从第 {start} 字节起无法读取（{reason}）；报告包含已读取的内容"},
}
