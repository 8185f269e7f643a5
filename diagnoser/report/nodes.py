"""The nodes of a Ray cluster a report was read from (`diagnose --ray`): which were scanned, which could not be,
and how to fetch the logs of those."""

from __future__ import annotations

from dataclasses import dataclass

from ..i18n import msg
from ..safe import md_cell

DEFAULT_LOG_DIR = "/tmp/ray/session_latest/logs"
STATES = ("scanned", "followed", "dead", "unreachable", "failed")


@dataclass(slots=True)
class NodeState:
    """One Ray node, and how far reading its logs got."""

    node_id: str
    ip: str
    hostname: str = ""
    head: bool = False
    # scanned | followed (--follow) | dead (Ray says so) | unreachable (no answer in time) | failed (the scan raised)
    state: str = "scanned"
    reason: str = ""
    log_dir: str | None = None
    files: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"node_id": self.node_id, "ip": self.ip, "hostname": self.hostname, "head": self.head,
                "state": self.state, "reason": self.reason, "log_dir": self.log_dir, "files": self.files,
                "seconds": round(self.seconds, 3)}


def node_name(node: NodeState) -> str:
    name = node.ip + (f" ({node.hostname})" if node.hostname and node.hostname != node.ip else "")
    return name + (" · head" if node.head else "")


def node_note(node: NodeState, lang: str) -> str:
    """What happened to the node, and for one whose logs were not read, how to get them."""
    if node.state == "scanned":
        return msg("node_scanned_note", lang, files=node.files, seconds=f"{node.seconds:.1f}",
                   log_dir=node.log_dir or "?")
    if node.state == "followed":
        return msg("node_followed_note", lang, files=node.files, log_dir=node.log_dir or "?")
    fetch = msg("node_fetch", lang, ip=node.ip, log_dir=node.log_dir or DEFAULT_LOG_DIR)
    return f"{node.reason} — {fetch}" if node.reason else fetch


def node_rows(nodes: list[NodeState], lang: str) -> list[tuple[str, str, str]]:
    return [(node_name(n), msg(f"node_{n.state}", lang), node_note(n, lang)) for n in nodes]


def nodes_markdown(nodes: list[NodeState], lang: str, failed: bool = True) -> list[str]:
    out = [f"## {msg('ray_nodes', lang)}", "", f"| {msg('node', lang)} | {msg('state', lang)} | {msg('note', lang)} |",
           "|---|---|---|"]
    out += ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in node_rows(nodes, lang)]
    return [*out, "", *([msg("ray_driver_hint", lang), ""] if not failed else [])]
