"""The words of an honest verdict, the report's first screen, `--explain` and the command line's help (issue 14), in
English and Chinese; `i18n.msg` looks them up with the rest of the report's words."""

from __future__ import annotations

PHRASES: dict[str, dict[str, str]] = {
    "warn_follow_waiting": {"en": "{path}: does not exist yet; waiting for it (as tail -F does)",
                            "zh": "{path}：尚不存在；等待它出现（与 tail -F 相同）"},
    "on_rank": {"en": "on rank {rank}", "zh": "rank：{rank}"},
    "echo_line": {"en": "→ {ranks}{title} ({count}×){delay}",
                  "zh": "→ {ranks}{title}（{count} 次）{delay}"},
    # a user's signature whose own examples say otherwise, refused when its folder is loaded
    "err_example_match": {"en": "this example does not match the signature (a match example must)",
                          "zh": "该示例未匹配此特征（match 示例必须匹配）"},
    "err_example_no_match": {"en": "this example matches the signature (a no_match example must not)",
                             "zh": "该示例匹配了此特征（no_match 示例不得匹配）"},
    # honest verdicts and the first screen (issue 14)
    "verdict_empty": {"en": "none: nothing to diagnose, no log line was read.",
                      "zh": "无：没有可诊断的内容，未读到任何日志行。"},
    "nothing_read": {"en": "Nothing to diagnose: no log line was read", "zh": "没有可诊断的内容：未读到任何日志行"},
    "nothing_read_detail": {
        "en": "{sources} source(s) read, 0 lines; {skipped} skipped. Name the job's log files or folder, or pipe "
        "a log in.",
        "zh": "读取了 {sources} 个来源，共 0 行；跳过 {skipped} 个。请给出任务的日志文件或文件夹，或通过管道输入日志。",
    },
    "warn_missing": {"en": "{path}: no such file or folder; skipped (the other inputs are diagnosed)",
                     "zh": "{path}：文件或文件夹不存在；已跳过（其余输入照常诊断）"},
    "warn_binary": {"en": "{path}: binary content, not a log; skipped", "zh": "{path}：二进制内容，不是日志；已跳过"},
    "exit_command_signal": {"en": "the command was killed by signal {n} ({signal}), exit status {status}",
                            "zh": "命令被信号 {n}（{signal}）杀死，退出码 {status}"},
    "exit_command_status": {"en": "the command exited with status {status}", "zh": "命令以退出码 {status} 退出"},
    "exit_scheduler_signal": {"en": "the job was killed by signal {n} ({signal}): the scheduler recorded exit code "
                              "{status}", "zh": "任务被信号 {n}（{signal}）杀死：调度器记录的退出码为 {status}"},
    "exit_scheduler_status": {"en": "the job failed: the scheduler recorded exit code {status}",
                              "zh": "任务失败：调度器记录的退出码为 {status}"},
    "failed_heading": {"en": "Failed", "zh": "失败"},
    "exit_lead": {
        "en": "No line of the output explains the failure; the exit status is all there is.",
        "zh": "输出中没有任何一行说明失败原因；只有退出码可循。",
    },
    "first_step": {"en": "first step", "zh": "第一步"},
    "at": {"en": "at", "zh": "位置"},
    "summary_cause": {"en": "root cause: {id}{where}", "zh": "根本原因：{id}{where}"},
    "summary_health": {"en": "no failure; training health: {id}{where}", "zh": "未发现故障；训练健康：{id}{where}"},
    "summary_symptom": {"en": "no root cause; first symptom: {id}{where}",
                        "zh": "未找到根本原因；首个症状：{id}{where}"},
    "summary_unrecognized": {"en": "no root cause; first unrecognised error: {id}{where}",
                             "zh": "未找到根本原因；首个未识别的错误：{id}{where}"},
    "summary_exit": {"en": "failed: {id}{where}", "zh": "失败：{id}{where}"},
    "summary_none": {"en": "no failure found", "zh": "未发现故障"},
    "summary_empty": {"en": "nothing to diagnose", "zh": "没有可诊断的内容"},
    "summary_where_rank": {"en": " on {ranks}", "zh": "，{ranks}"},
    "summary_host": {"en": " (host {host})", "zh": "（主机 {host}）"},
    "summary_echoes": {"en": "{n} echoes", "zh": "{n} 个连锁反应"},
    "summary_echo": {"en": "1 echo", "zh": "1 个连锁反应"},
    "summary_verdict": {"en": "verdict {verdict}", "zh": "结论 {verdict}"},
    "summary_read": {"en": "{files}, {lines}", "zh": "{files}，{lines}"},
    "n_files_exact": {"en": "{n} files", "zh": "{n} 个文件"},
    "one_file": {"en": "1 file", "zh": "1 个文件"},
    "n_lines": {"en": "{n} lines", "zh": "{n} 行"},
    "one_line": {"en": "1 line", "zh": "1 行"},
    "n_ranks": {"en": "{n} ranks", "zh": "{n} 个 rank"},
    "one_rank": {"en": "1 rank", "zh": "1 个 rank"},
    "ranks_of_world": {"en": "{seen} of {world} ranks seen", "zh": "见到 {world} 个 rank 中的 {seen} 个"},
    "world_size": {"en": "world size {n}", "zh": "world size {n}"},
    "on_n_hosts": {"en": "on {n} hosts", "zh": "分布在 {n} 台主机"},
    "on_one_host": {"en": "on 1 host", "zh": "在 1 台主机上"},
    "nnodes": {"en": "{n} nodes", "zh": "{n} 个节点"},
    "global_batch": {"en": "global batch {n}", "zh": "global batch {n}"},
    "micro_batch": {"en": "micro batch {n}", "zh": "micro batch {n}"},
    "rollout_batch": {"en": "rollout batch {n}", "zh": "rollout batch {n}"},
    "rank_word": {"en": "rank {rank}", "zh": "rank {rank}"},
    "ranks_word": {"en": "ranks {ranks}", "zh": "rank {ranks}"},
    "host_word": {"en": "host {host}", "zh": "主机 {host}"},
    "echo_unrecognized": {"en": "→ {who}{exception}: {message} (the same failure, seen again after it)",
                          "zh": "→ {who}{exception}：{message}（同一故障在其后再次出现）"},
    "cut_traceback": {"en": "traceback cut off in {func}", "zh": "调用栈在 {func} 处被截断"},
    "more_findings": {"en": "(--verbose shows each in full)", "zh": "（--verbose 可完整显示每一项）"},
    "fatal": {"en": "fatal", "zh": "致命"},
    "error": {"en": "error", "zh": "错误"},
    "warning": {"en": "warning", "zh": "警告"},
    "info": {"en": "info", "zh": "提示"},
    "watching": {
        "en": "diagnose: watching {files} file(s) ({lines} lines read so far); each finding is told here as it "
        "comes; Ctrl-C ends with the report",
        "zh": "diagnose：正在跟踪 {files} 个文件（已读 {lines} 行）；每个发现出现时即在此报告；"
        "按 Ctrl-C 结束并输出报告",
    },
    "watching_status": {"en": "diagnose: watching {files} file(s) · {lines} lines read · {findings} finding(s)",
                        "zh": "diagnose：跟踪 {files} 个文件 · 已读 {lines} 行 · {findings} 个发现"},
    "told_at_end": {"en": "(why and remedy: in the report when the command ends)",
                    "zh": "（原因与解决方法：见命令结束时的报告）"},
    "scanning": {"en": "diagnose: scanning {done}/{total} file(s), {mb} MB read",
                 "zh": "diagnose：正在扫描 {done}/{total} 个文件，已读 {mb} MB"},
    # --explain: a remedy's conditions in words (issue 14)
    "when_heading": {"en": "When {cond}:", "zh": "当{cond}时："},
    "otherwise": {"en": "Otherwise:", "zh": "其他情况："},
    "and_word": {"en": " and ", "zh": "且"},
    "when_eq": {"en": "{name} is {value}", "zh": "{name} 为 {value}"},
    "when_ne": {"en": "{name} is not {value}", "zh": "{name} 不为 {value}"},
    "when_gt": {"en": "{name} is above {value}", "zh": "{name} 大于 {value}"},
    "when_ge": {"en": "{name} is {value} or more", "zh": "{name} 不小于 {value}"},
    "when_lt": {"en": "{name} is below {value}", "zh": "{name} 小于 {value}"},
    "when_le": {"en": "{name} is {value} or less", "zh": "{name} 不大于 {value}"},
    "when_in": {"en": "{name} is one of {value}", "zh": "{name} 为 {value} 之一"},
    "when_present": {"en": "the log shows {name}", "zh": "日志中给出了 {name}"},
    "when_absent": {"en": "the log does not show {name}", "zh": "日志中没有 {name}"},
    "name_framework": {"en": "the framework", "zh": "框架"},
    "name_phase": {"en": "the phase it failed in", "zh": "失败时所处的阶段"},
    "remedy_values": {
        "en": "(<name> is a value read from your log when diagnose shows this remedy; the first variant whose "
        "condition holds is shown)",
        "zh": "（<名称> 是 diagnose 显示该方法时从日志中读到的值；显示第一个条件成立的方案）",
    },
    "patterns": {"en": "Patterns", "zh": "匹配模式"},
    "metric_rule": {"en": "Metric rule", "zh": "指标规则"},
    "and_scope": {"en": "and", "zh": "且"},
    "not_scope": {"en": "not", "zh": "排除"},
    "or_frames": {"en": "or frames", "zh": "或栈帧"},
    "file": {"en": "File", "zh": "文件"},
    "symptom_of": {"en": "Usually the echo of", "zh": "通常是以下故障的连锁反应"},
    # the command line's own words (issue 14): --help of diagnose and diagnose run, usage errors
    "err_choice": {"en": "{option} must be one of {choices}, not {value!r}",
                   "zh": "{option} 只能是 {choices} 之一，而不是 {value!r}"},
    "err_integer": {"en": "{option} needs a whole number, not {value!r}",
                    "zh": "{option} 需要一个整数，而不是 {value!r}"},
    "err_number": {"en": "{option} needs a number, not {value!r}", "zh": "{option} 需要一个数字，而不是 {value!r}"},
    "err_at_least": {"en": "{option} must be {minimum} or more", "zh": "{option} 必须大于等于 {minimum}"},
    "err_no_option": {"en": "unknown option {option}{hint}", "zh": "未知选项 {option}{hint}"},
    "err_option_value": {"en": "{option} needs a value", "zh": "{option} 需要一个值"},
    "err_option_missing": {"en": "{option} is required", "zh": "必须给出 {option}"},
    "err_run_command": {"en": "diagnose run needs a command: diagnose run [OPTIONS] -- COMMAND [ARGS]...",
                        "zh": "diagnose run 需要一条命令：diagnose run [选项] -- 命令 [参数]..."},
    "err_extra_args": {"en": "unexpected argument {value!r}", "zh": "多余的参数 {value!r}"},
    "usage_main": {"en": "Usage: diagnose [OPTIONS] [LOG|DIR]...\n       diagnose run [OPTIONS] -- COMMAND [ARGS]...\n"
                         "       diagnose learn LOG --to DIR\n       diagnose check-signatures DIR\n"
                         "       diagnose bundle DIR... -o job-report.tar.gz",
                   "zh": "用法：diagnose [选项] [日志|文件夹]...\n      diagnose run [选项] -- 命令 [参数]...\n"
                         "      diagnose learn 日志 --to 文件夹\n      diagnose check-signatures 文件夹\n"
                         "      diagnose bundle 文件夹... -o job-report.tar.gz"},
    "usage_run": {"en": "Usage: diagnose run [OPTIONS] -- COMMAND [ARGS]...",
                  "zh": "用法：diagnose run [选项] -- 命令 [参数]..."},
    "about_main": {
        "en": "Read a training job's logs and name the root cause of its failure, where it happened, why, and "
        "what to change. `diagnose run -- COMMAND` runs a training command and diagnoses it live "
        "(diagnose run --help).",
        "zh": "读取训练任务的日志，指出失败的根本原因、发生位置、原因说明和修改方法。"
        "`diagnose run -- 命令` 运行训练命令并实时诊断（见 diagnose run --help）。",
    },
    "about_run": {
        "en": "Run COMMAND, pass its output through unchanged, and diagnose it live. Findings and the final report "
        "go to stderr, so stdout stays the command's own; diagnose exits with the command's own status.",
        "zh": "运行命令，原样转发其输出并实时诊断。发现与最终报告写到 stderr，stdout 仍只属于该命令；"
        "diagnose 以该命令自身的退出码退出。",
    },
    "help_arguments": {"en": "Arguments:", "zh": "参数："},
    "help_options": {"en": "Options:", "zh": "选项："},
    "arg_main": {"en": "[LOG|DIR]...\tLog files, .gz files or folders of a job's logs; none (or -) reads "
                       "standard input.",
                 "zh": "[日志|文件夹]...\t日志文件、.gz 文件或任务日志所在的文件夹；"
                       "不给出（或给出 -）时读取标准输入。"},
    "arg_run": {"en": "-- COMMAND [ARGS]...\tThe training command and its arguments, after --.",
                "zh": "-- 命令 [参数]...\t训练命令及其参数，写在 -- 之后。"},
    "help_fmt": {"en": "Report format (default: text). jsonl: one JSON object per finding, then the summary.",
                 "zh": "报告格式（默认 text）。jsonl：每个发现一行 JSON，最后是汇总。"},
    "help_list_signatures": {"en": "List the signatures and exit.", "zh": "列出所有特征后退出。"},
    "help_explain": {"en": "Show one signature in full (why, remedy and when each variant applies) and exit.",
                     "zh": "完整显示一条特征（原因、解决方法及各方案的适用条件）后退出。"},
    "help_signatures": {"en": "A folder of your own signature files (repeatable); the same id replaces a built-in one.",
                        "zh": "自定义特征文件所在的文件夹（可重复）；同一标识会替换内置特征。"},
    "help_lang": {"en": "Report language (default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG).",
                  "zh": "报告语言（默认取自 LANGUAGE、LC_ALL、LC_MESSAGES 或 LANG）。"},
    "help_job_status": {"en": "What the scheduler reported (e.g. succeeded): a success with failing logs is flagged.",
                        "zh": "调度器报告的状态（如 succeeded）：日志显示失败却报告成功时会被标出。"},
    "help_exit_code": {"en": "The exit code the scheduler recorded: 0 with failing logs is flagged; a non-zero one is "
                       "a failure even when no line explains it (137: killed by SIGKILL).",
                       "zh": "调度器记录的退出码：日志显示失败而退出码为 0 时会被标出；非 0 即使没有日志行说明也算失败"
                       "（137：被 SIGKILL 杀死）。"},
    "help_jobs": {"en": "Processes for scanning many files (default: all cores).",
                  "zh": "扫描多个文件时使用的进程数（默认：全部 CPU 核）。"},
    "help_follow_paths": {"en": "Follow the files and folders as they grow (tail -F); tell each finding at once.",
                          "zh": "跟踪文件和文件夹的增长（如 tail -F）；每个发现立即报告。"},
    "help_from_start": {"en": "With --follow: read what the files already hold first.",
                        "zh": "与 --follow 一起使用：先读取文件中已有的内容。"},
    "help_hang_after": {"en": "Report a hang after this much silence (e.g. 600, 10m; off). Default: 10m with --follow, "
                        "off otherwise.",
                        "zh": "静默超过此时长即报告卡住（如 600、10m；off 关闭）。--follow 默认 10m，其余默认关闭。"},
    "help_exit_on": {"en": "cause: stop at the first root cause; health: also at the first training-health finding "
                     "(--follow exits 1; diagnose run stops the command with SIGTERM). Default: none.",
                     "zh": "cause：遇到第一个根本原因即停止；health：遇到第一个训练健康问题也停止（--follow 以 1 退出；"
                     "diagnose run 用 SIGTERM 停止命令）。默认 none。"},
    "help_verbose": {"en": "Show every finding in full, not only the root cause (--all is the same).",
                     "zh": "完整显示每个发现，而不只是根本原因（--all 相同）。"},
    "help_version": {"en": "Print the version and exit.", "zh": "显示版本后退出。"},
    "help_help": {"en": "Show this help and exit.", "zh": "显示本帮助后退出。"},
    "help_log": {"en": "Also append the command's output to this file.", "zh": "同时把命令的输出追加到此文件。"},
    "help_completion": {"en": "Print the completion script of this shell and exit (e.g. eval \"$(diagnose "
                        "--completion bash)\" in ~/.bashrc).",
                        "zh": "输出该 shell 的命令补全脚本后退出（如在 ~/.bashrc 中写入 eval \"$(diagnose "
                        "--completion bash)\"）。"},
    "epilog_main": {
        "en": "Exit status: 0 no failure found, 1 a failure found, 2 usage error or no input could be read, 3 nothing "
        "to diagnose (the input held no line), 130 interrupted, 143 terminated.",
        "zh": "退出码：0 未发现故障，1 发现故障，2 用法错误或所有输入都无法读取，"
        "3 没有可诊断的内容（输入中没有任何行），130 被中断，143 被终止。",
    },
    "epilog_run": {
        "en": "Exit status: the command's own (2 if it cannot be started). Example: diagnose run --log job.log -- "
        "torchrun --nproc_per_node 8 train.py",
        "zh": "退出码：与命令自身相同（无法启动时为 2）。例如：diagnose run --log job.log -- "
        "torchrun --nproc_per_node 8 train.py",
    },
}
