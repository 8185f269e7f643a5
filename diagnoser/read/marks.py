"""Lines that tell who did what across ranks: watchdog sequence numbers, gloo peer errors, the torchrun agent's
table and signals, scheduler kills, kernel kills, NCCL's GPU of each rank, a job's own success line.

Each probe is a regex with the literals one of which its line must hold (so the fast search feeds those
lines too: database.py gives MARK_LITERALS to the search index). A probe gives a Mark: a kind and its named
values, read from the cleaned line. Every text here is printed by the software named beside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import regex

from ..lazyre import compile_known, own
from .lone import LONE_LITERALS
from .pyspy import THREAD_LITERALS
from .traceback import GROUPER_LITERALS

_PG = (  # ProcessGroupNCCL::logPrefix(): 2.3 "[PG 0 Rank 2] ", 2.4 "[PG 0 (default_pg) Rank 1] ",
    # 2.5+ "[PG ID 0 PG GUID 0(default_pg) Rank 3] " (Rank is the rank inside that group)
    r"\[PG (?:ID (?P<pg_id>\d{1,6}) PG GUID (?P<pg_guid>[^\s()\]]{1,80})|(?P<pg_uid>\d{1,6}))"
    r"(?: ?\((?P<pg_desc>[^)\]]{0,80})\))? Rank (?P<pg_rank>\d{1,7})\] {0,2}"
)
_N = r"-?\d{1,20}"

# (kind, literals, regex): the regex is searched in the cleaned line when one of the literals is in it
PROBES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # ProcessGroupNCCL WorkNCCL::checkTimeout (all versions; NumelIn/Out from 2.1)
    ("wd_timeout", ("Watchdog caught collective operation timeout",),
     r"(?:\[Rank (?P<pg_rank>\d{1,7})\] )?Watchdog caught collective operation timeout: WorkNCCL\("
     r"(?:SeqNum=(?P<seq>\d{1,12}), )?OpType=(?P<op>[A-Z_]{1,40})(?:, NumelIn=(?P<numel_in>\d{1,15}), "
     r"NumelOut=(?P<numel_out>\d{1,15}))?, Timeout\(ms\)=(?P<timeout_ms>\d{1,12})\) ran for (?P<ran_ms>\d{1,15})"),
    # the sequence number the watchdog failed at and how far the group got: 2.3-2.5, 2.4-2.5, 2.6+
    ("wd_progress", ("Timeout at NCCL work: ",),
     rf"(?:{_PG})?Timeout at NCCL work: (?P<seq>\d{{1,12}}), last enqueued NCCL work: (?P<enq>{_N}), "
     rf"last completed NCCL work: (?P<done>{_N})"),
    ("wd_progress", ("detected by watchdog at work: ",),
     rf"(?:{_PG})?Exception \(either an error or timeout\) detected by watchdog at work: (?P<seq>\d{{1,12}}), "
     rf"last enqueued NCCL work: (?P<enq>{_N}), last completed NCCL work: (?P<done>{_N})"),
    ("wd_progress", ("failure detected by watchdog at work sequence id: ",),
     rf"(?:{_PG})?failure detected by watchdog at work sequence id: (?P<seq>\d{{1,12}}) PG status: "
     rf"last enqueued work: (?P<enq>{_N}), last completed work: (?P<done>{_N})"),
    # TORCH_NCCL_DESYNC_DEBUG report (TraceUtils.h retrieveDesyncReport): the only line naming the culprit
    ("lagging", ("are the lagging ranks that caused this timeout",),
     r"ranks \[(?P<ranks>[\d, ]{0,4000})\] are the lagging ranks that caused this timeout"),
    ("lagging", ("joined but didn't finish collective",),
     r"\[(?P<ranks>[\d, ]{0,4000})\] joined but didn't finish collective #(?P<seq>\d{1,12})"),
    # TORCH_NCCL_PROPAGATE_ERROR (2.9+): the rank an error came from
    ("remote_error", ("remote error detected from rank",), r"remote error detected from rank: (?P<src>\d{1,7})"),
    # gloo (real, torch 2.13 here; older wheels end the line earlier): a peer that hung, died or never came
    ("gloo_timeout", ("ms for recv operation", "ms for send operation"),
     r"Timed out waiting (?P<ms>\d{1,12})ms for (?P<dir>recv|send) operation to complete"),
    ("gloo_peer", ("Connection closed by peer [",),
     r"Connection closed by peer \[(?P<peer>[^\]]{1,64})\]:(?P<port>\d{1,5})"),
    ("gloo_peer", ("Connection reset by peer",),
     r"Read error \[(?P<peer>[^\]]{1,64})\]:(?P<port>\d{1,5}): Connection reset"),
    ("gloo_mesh", ("connectFullMesh failed",), r"Gloo connectFullMesh failed"),
    # torchelastic ChildFailedError table (errors/__init__.py), one row per line
    ("cfe_root", ("Root Cause (first observed failure)",), r"^Root Cause \(first observed failure\):"),
    ("cfe_failures", ("Failures:",), r"^Failures:\s*$"),
    ("cfe_time", ("time      : ",), r"^\s{1,4}time\s{1,8}: (?P<time>\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d)"),
    ("cfe_host", ("host      : ",), r"^\s{1,4}host\s{1,8}: (?P<host>[^\s]{1,255})\s*$"),
    ("cfe_rank", ("(local_rank: ",), r"^\s{1,4}rank\s{1,8}: (?P<rank>\d{1,7}) \(local_rank: (?P<local>\d{1,7})\)"),
    ("cfe_exit", ("exitcode  : ",),
     r"^\s{1,4}exitcode\s{1,4}: (?P<code>-?\d{1,4}) \(pid: (?P<pid>\d{1,9})\)(?:\s{1,4}\((?P<sig>SIG[A-Z]{1,8})\))?"),
    ("cfe_file", ("error_file: ",), r"^\s{1,4}error_file: (?P<file>.{1,4096}?)\s*$"),
    # torchelastic agent (multiprocessing/api.py, agent/server/api.py)
    ("agent_term", ("closing signal",), r"Sending process (?P<pid>\d{1,9}) closing signal (?P<sig>SIG[A-Z]{1,8})"),
    ("agent_failed", ("failed (exitcode: ",),
     r"failed \(exitcode: (?P<code>-?\d{1,4})\) local_rank: (?P<local>\d{1,7}) \(pid: (?P<pid>\d{1,9})\) of binary"),
    ("agent_death", ("death signal, shutting down workers",),
     r"Received (?P<sig>\d{1,3}|Signals\.SIG[A-Z]{1,8}|SIG[A-Z]{1,8}) death signal, shutting down workers"),
    ("agent_death", ("got signal: ",), r"SignalException: Process (?P<pid>\d{1,9}) got signal: (?P<sig>\S{1,20})"),
    ("rdzv", ("restart_count=", "group_rank=", "global_ranks=", "group_world_size=", "local_ranks="),
     r"^\s{1,4}(?P<key>restart_count|group_rank|group_world_size|local_ranks|global_ranks)"
     r"=(?P<val>[\d, \[\]]{1,20000})$"),
    ("restart", ("attempts left; will restart worker group",),
     r"Worker group FAILED\. (?P<left>\d{1,4})/(?P<max>\d{1,4}) attempts left; will restart worker group"),
    # SLURM (src/slurmd/slurmstepd/req.c, src/srun/launch.c, task_cgroup_memory.c)
    ("sched_kill", ("CANCELLED AT",),
     r"\*\*\* (?:JOB|STEP) (?P<job>[\w.+]{1,40}) (?:ON (?P<node>\S{1,255}) )?CANCELLED AT (?P<time>\S{1,40})"
     r"(?: DUE (?:TO|to) (?P<reason>[^*]{1,80}?))? \*\*\*"),
    ("srun_task", ("srun: error: ",),
     r"srun: error: (?P<host>[\w.\-]{1,255}): tasks? (?P<tasks>[\d,\-]{1,400}): (?P<how>.{1,120})$"),
    ("sched_oom", ("oom_kill event", "oom-kill event"), r"Detected (?P<n>\d{1,6}) oom[_-]kill event"),
    # kernel: NVIDIA Xid (kernel_rc.c krcReportXid), OOM killer (mm/oom_kill.c)
    ("xid", ("NVRM: Xid",),
     r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})[^)]{0,40}\): (?P<xid>\d{1,4})"
     r"(?:, pid=(?P<pid>\d{1,9}|'?<unknown>'?))?"),
    ("oom_kill", ("Killed process ",), r"Killed process (?P<pid>\d{1,9}) \((?P<comm>[^)]{0,64})\)"),
    ("oom_kill", ("oom-kill:",), r"oom-kill:.{0,2000}?,task=(?P<comm>[^,]{0,64}),pid=\s{0,5}(?P<pid>\d{1,9})"),
    # NCCL init (src/init.cc): the rank of a communicator, its GPU and PCI bus id, the host and pid in front
    ("nccl_init", ("cudaDev ",),
     r"(?:(?P<host>[\w.\-]{1,255}):(?P<pid>\d{1,9}):\d{1,9} \[\d{1,3}\] )?NCCL INFO .{0,200}?comm 0x[0-9a-f]{1,16} "
     r"rank (?P<rank>\d{1,7}) nranks (?P<nranks>\d{1,7}) cudaDev (?P<dev>\d{1,3})(?: nvmlDev \d{1,3})? "
     r"busId (?P<busid>[0-9a-fA-F]{1,16})"),
    # Ray: the actor a task error came from (python/ray/exceptions.py RayTaskError)
    ("ray_task_error", ("RayTaskError(",),
     r"RayTaskError\(\w{1,80}\): .{0,200}?\(pid=(?P<pid>\d{1,9}), ip=(?P<ip>[0-9A-Fa-f.:]{3,45})"),
    # Ray: the actor whose worker process died (python/ray/exceptions.py ActorDiedError, a system-level failure): the
    # headline, then "\tclass_name: …", "\tactor_id: …", "\tpid: N", "\tname: …", "\tnamespace: …", "\tip: A", each
    # on a line of its own (judge/table.py joins the pid and address to the headline above them)
    ("ray_actor_died", ("The actor died unexpectedly before finishing this task",),
     r"The actor died unexpectedly before finishing this task"),
    ("ray_died_pid", ("pid: ",), r"^\s{0,8}pid: (?P<pid>\d{1,9})\s*$"),
    # (the ip line by its tab: a bare "ip: " is in every Ray autoscaler "Tip: use `ray status` ..." line)
    ("ray_died_ip", ("\tip: ",), r"^\s{0,8}ip: (?P<ip>[0-9A-Fa-f.:]{3,45})\s*$"),
    # a job's own success line: Megatron-LM training.py pretrain(), HF transformers Trainer, verl ray_trainer fit()
    ("success", ("[after training is done]",), r"^\[after training is done\] datetime: "),
    ("success", ("Training completed. Do not forget to share your model",), r"^Training completed\. Do not forget"),
    ("success", ("Final validation metrics: ",), r"^Final validation metrics: "),
    # a failed call that is tried again (tenacity, urllib3/huggingface_hub, Ray, the frameworks' own retry loops)
    ("retry", ("retrying", "Retrying", "retry ", "Retry "), r"(?i)\bretry(?:ing)?\b"),
    # vLLM's shm_broadcast.py while a worker waits for the next request: not progress, not an error
    ("waiting", ("No available shared memory broadcast block",),
     r"No available shared memory broadcast block found in (?P<secs>\d{1,9}) second"),
)

# a training step in a progress line (the generic forms of match/observe.py PROGRESS, with the number)
STEP = (r"(?:\bstep[:=]\s?|\bglobal_step[:= ]\s?|\bGlobal step |\bstep |\biteration\s+|\bepisode |\bpipeline step )"
        r"(?P<step>\d{1,12})(?:\s?/\s?(?P<total>\d{1,12}))?\b")
# the rank a process says it is, read in the head of its file: torchelastic env dumps, vLLM's
# "rank 15 in world size 16" (distributed/parallel_state.py), an app's "rank 3/8"
RANK_SELF = (r"'RANK': '(?P<r1>\d{1,7})'|\bRANK=(?P<r2>\d{1,7})\b|\brank (?P<r3>\d{1,7}) in world size \d"
             r"|^(?:\S{1,40} )?rank (?P<r4>\d{1,7}) ?/ ?\d{1,7}\b")
RANK_SELF_LITERALS = ("RANK", "rank ")
PID_SELF = r"\bpid[=:] ?(?P<pid>\d{1,9})\b"


@dataclass(slots=True)  # never changed once made (not frozen: one is made for every mark line)
class Mark:
    """A line that tells who did what across ranks."""

    kind: str
    fields: dict[str, str]


MARK_LITERALS: tuple[str, ...] = tuple(sorted({lit for _k, lits, _rx in PROBES for lit in lits}))
# literal -> the probes (by position in PROBES) one of whose literals it is
_BY_LITERAL: dict[str, tuple[int, ...]] = {
    lit: tuple(i for i, (_k, lits, _rx) in enumerate(PROBES) if lit in lits) for lit in MARK_LITERALS}
# marks whose forensic entry a writer's later lines update (a watchdog's progress per process group, its count
# of waits): the lines holding their literals stay busy for the split of a big file (search/split.py); any other
# mark is read from its line alone, and the book (judge/book.py) keeps it the same from parts as from one pass
WRITER_STATE_KINDS = frozenset({"wd_timeout", "wd_progress", "gloo_timeout", "gloo_peer", "gloo_mesh"})
SPLIT_FREE_LITERALS: tuple[str, ...] = tuple(sorted(
    {lit for k, lits, _rx in PROBES if k not in WRITER_STATE_KINDS for lit in lits}
    - {lit for k, lits, _rx in PROBES if k in WRITER_STATE_KINDS for lit in lits}))
# a line holding no other literal than these, and NCCL's chatter (which each writer's activity ignores), changes
# nothing once a copy of it was read: the book keeps a writer's first communicator of the largest size (nccl_init,
# judge/book.py), and a copy (the same prefixes, the same text but for the hex numbers: a communicator's address)
# tells the same writer, size, device and bus id. The fast search feeds such a line once (search/repeats.py).
REPEAT_FREE_LITERALS = frozenset({"cudaDev "})
# with MARK_LITERALS (the marks of cross-rank forensics), every line a reader needs the fast search to feed it:
# tracebacks, lone errors, py-spy's thread headers
LINE_READER_LITERALS = GROUPER_LITERALS + LONE_LITERALS + THREAD_LITERALS


@cache
def _rx(pattern: str) -> regex.Pattern[str]:
    """Each pattern compiled on first use, alone: a start-up compiles only those its lines need (compiling all
    41 took longer than diagnosing a 40-line log); from its form in the database cache when it gave one (the
    cache keeps the forms of the patterns below)."""
    return compile_known(pattern)


for _pattern in (*(rx for _k, _lits, rx in PROBES), STEP, RANK_SELF, PID_SELF):
    own(_pattern)


def _step() -> regex.Pattern[str]:
    """STEP compiled (on first use; a global: the per-line path pays no cache lookup)."""
    global _STEP_RX
    if _STEP_RX is None:
        _STEP_RX = _rx(STEP)
    return _STEP_RX


_STEP_RX: regex.Pattern[str] | None = None


def probe(text: str, found: Iterable[str] | None = None) -> list[Mark]:
    """The marks a cleaned line holds. `found`: the literals its physical line holds as read (the literal
    search found them, match/scanner.py; None: every literal of a probe); a probe runs when one of its
    literals is in `found` and in `text` (most lines hold none, and nothing is searched)."""
    which: set[int] | None = None
    for lit in MARK_LITERALS if found is None else found:
        idx = _BY_LITERAL.get(lit)
        if idx is not None and lit in text:
            which = set(idx) if which is None else which.union(idx)
    if which is None:
        return []
    out: list[Mark] = []
    for i in sorted(which):
        kind, _lits, rx = PROBES[i]
        m = _rx(rx).search(text)
        if m is not None:
            got = m.groups()  # what groupdict() gives, in its order (the regex's groupindex), for a third of its cost
            out.append(Mark(kind, {k: got[n - 1] for k, n in _named(rx) if got[n - 1] is not None}))
    return out


@cache
def _named(pattern: str) -> tuple[tuple[str, int], ...]:
    """The named groups of a probe's regex and their numbers, in the order groupdict() gives them."""
    return tuple(_rx(pattern).groupindex.items())


def self_rank(text: str) -> Mark | None:
    """The rank a process says it is (and its pid, when the same line gives it)."""
    m = _rx(RANK_SELF).search(text)
    if m is None:
        return None
    value = m.group("r1") or m.group("r2") or m.group("r3") or m.group("r4")
    if not value:
        return None
    fields = {"rank": value}
    p = _rx(PID_SELF).search(text)
    if p is not None:
        fields["pid"] = p.group("pid")
    return Mark("rank_self", fields)


def step_of(text: str) -> int | None:
    if text.startswith("step:"):  # verl's console line: STEP's first branch matches at 0 when 1-12 ASCII digits
        end = 5                    # follow, then no word character (what the regex would find, without it)
        while end < len(text) and end < 18 and "0" <= text[end] <= "9":
            end += 1
        if 5 < end <= 17 and (end == len(text) or text[end] in _NOT_WORD):
            return int(text[5:end])
    m = _step().search(text)
    return int(m.group("step")) if m is not None else None


_NOT_WORD = frozenset(" \t-,;/|)]}.:'\"=+*&%$#@!?<>([{~^`")  # ASCII characters \b tells from a digit


def busid_to_pci(busid: str) -> str | None:
    """NCCL's packed bus id (`3b000`, `1a1000`) as the PCI address an Xid line names (`0000:3b:00`)."""
    try:
        value = int(busid, 16)
    except ValueError:
        return None
    return f"{value >> 20:04x}:{(value & 0xFF000) >> 12:02x}:{(value & 0xFF0) >> 4:02x}"
