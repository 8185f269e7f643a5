"""The words of `diagnose --ray` (a live Ray cluster's nodes) and `diagnose bundle`, in en and zh: part of
i18n.py's table (which merges them in), kept in a file of their own so that table stays small enough to read."""

from __future__ import annotations

RAY_MESSAGES: dict[str, dict[str, str]] = {
    "ray_nodes": {"en": "Ray nodes", "zh": "Ray 节点"},
    "node": {"en": "node", "zh": "节点"},
    "state": {"en": "state", "zh": "状态"},
    "note": {"en": "note", "zh": "说明"},
    "node_scanned": {"en": "scanned", "zh": "已扫描"},
    "node_followed": {"en": "followed", "zh": "已跟踪"},
    "node_followed_note": {"en": "{files} file(s) from {log_dir}", "zh": "{log_dir} 中的 {files} 个文件"},
    "node_dead": {"en": "dead", "zh": "已死亡"},
    "node_unreachable": {"en": "unreachable", "zh": "无法连接"},
    "node_failed": {"en": "scan failed", "zh": "扫描失败"},
    "node_scanned_note": {"en": "{files} file(s) in {seconds} s from {log_dir}",
                          "zh": "{log_dir} 中的 {files} 个文件，用时 {seconds} 秒"},
    "node_fetch": {
        "en": "its logs were not read; they stay on that machine in {log_dir}: copy them "
        "(scp -r {ip}:{log_dir} ./{ip}/) and add that folder to the command",
        "zh": "未能读取其日志；日志仍在该机器的 {log_dir} 中：请复制出来（scp -r {ip}:{log_dir} ./{ip}/）"
        "并把该文件夹加到命令中",
    },
    "node_timeout": {"en": "did not answer within {seconds} s", "zh": "{seconds} 秒内没有响应"},
    "node_died_during": {"en": "the node died during the scan: {reason}", "zh": "扫描期间节点死亡：{reason}"},
    "node_lost": {"en": "Ray node {ip} lost: {reason}", "zh": "Ray 节点 {ip} 已失去：{reason}"},
    "node_following": {"en": "Ray node {ip}: following {files} file(s)",
                       "zh": "Ray 节点 {ip}：正在跟踪 {files} 个文件"},
    "node_auth_hint": {
        "en": "the node could not fetch this command's data from it: if this machine has ~/.ray/auth_token but the "
        "cluster runs without token authentication, run with RAY_AUTH_MODE=disabled",
        "zh": "该节点无法从本命令取得数据：若本机有 ~/.ray/auth_token 而集群未启用 token 认证，"
        "请设置 RAY_AUTH_MODE=disabled 后运行",
    },
    "ray_driver_hint": {
        "en": "An exception raised in an actor's method is printed only in the driver's output, not in any node's "
        "logs (except for Ray Jobs: job-driver-*.log on the head). Add the driver's log to the command: "
        "diagnose --ray ADDRESS driver.log",
        "zh": "actor 方法中抛出的异常只打印在 driver 的输出中，不在任何节点的日志里"
        "（Ray Jobs 除外：head 上的 job-driver-*.log）。"
        "请把 driver 的日志加到命令中：diagnose --ray ADDRESS driver.log",
    },
    "err_bundle_input": {"en": "diagnose bundle needs the job's log files or folders, or --ray ADDRESS",
                         "zh": "diagnose bundle 需要任务的日志文件或文件夹，或 --ray ADDRESS"},
    "bundle_written": {"en": "wrote {path} ({kib} KiB, {members} files); redacted: {redacted}",
                       "zh": "已写入 {path}（{kib} KiB，{members} 个文件）；已脱敏：{redacted}"},
    "nothing": {"en": "nothing", "zh": "无"},
    "err_ray_missing": {"en": "--ray needs Ray, which is not installed here: pip install 'diagnoser[ray]'",
                        "zh": "--ray 需要 Ray，但本机未安装：pip install 'diagnoser[ray]'"},
    "err_ray_client": {"en": "a ray:// address needs Ray Client: pip install 'ray[client]'",
                       "zh": "ray:// 地址需要 Ray Client：pip install 'ray[client]'"},
    "err_ray_connect": {"en": "cannot connect to the Ray cluster at {address}: {reason}",
                        "zh": "无法连接到 {address} 的 Ray 集群：{reason}"},
    "err_ray_address": {"en": "--ray needs an address: auto, HOST:PORT or ray://HOST:PORT",
                        "zh": "--ray 需要地址：auto、HOST:PORT 或 ray://HOST:PORT"},
    "err_ray_only": {"en": "--ray-paths and --ray-timeout go with --ray",
                     "zh": "--ray-paths 和 --ray-timeout 需与 --ray 一起使用"},
    "err_ray_timeout": {"en": "--ray-timeout must be more than 0 seconds", "zh": "--ray-timeout 必须大于 0 秒"},
    "warn_ray_dropped": {"en": "{ip}: {n} event(s) were dropped because the node produced them faster than they "
                         "could be sent", "zh": "{ip}：节点产生事件的速度超过发送速度，丢弃了 {n} 个事件"},
    "warn_ray_no_path": {"en": "{ip}: {path}: no such file or folder on that node",
                         "zh": "{ip}：{path}：该节点上不存在此文件或文件夹"},
}
