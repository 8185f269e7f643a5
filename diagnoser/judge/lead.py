"""What leads the report, and what is only an echo of it.

The lead is the root cause; without one, a cascade (unless an unrecognised error came first: an echo never leads when
the error it echoes was read before it or from the same lines, the NCCL watchdog's `terminated with exception:` /
`what():` text; a traceback of its own lines cut before its exception line holds no such error, nor does a launcher's
wrapper exception such as ChildFailedError), or in its place a confirmation read beside it that says how that process
ended (a SIGKILL); then the first unrecognised error, or a confirmation; without any, the command's own exit status.
An unrecognised error on the root cause's rank (or process) after it, or a launcher's report that a worker failed, is
the root cause seen again: it is folded into it, not listed as a second unknown error.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding, Location, Unrecognized, earlier

COMMAND_ID = "command-failed"  # the command's (or scheduler's) non-zero exit status: leads only when nothing else does
# Exceptions that only report that a worker failed elsewhere: launchers and actor runtimes re-raise them
WRAPPERS = ("ChildFailedError", "RayTaskError", "ActorDiedError", "RayActorError", "RaySystemError",
            "ActorUnavailableError", "WorkerCrashedError")
ECHO_REACH = 200  # lines after the root cause within which an error of the same process is its echo
BESIDE = 60  # lines before a cascade's own within which a confirmation tells how that process ended (_near)


@dataclass(slots=True)
class Lead:
    """What the report's first line is about."""

    role: str  # cause | symptom | unrecognized | exit | health | none | empty
    finding: Finding | None = None
    unrecognized: Unrecognized | None = None


def echoes_root(u: Unrecognized, root: Finding) -> bool:
    """The unrecognised error is the root cause seen again: a launcher's or actor runtime's report that a worker
    failed, or an error after the root cause on its rank (ranks unknown: in its process, shortly after)."""
    if u.exc_type.rsplit(".", 1)[-1].split("(", 1)[0] in WRAPPERS:
        return True
    if earlier(u.first, root.first):
        return False
    if u.first.rank is not None:
        return u.first.rank in root.ranks or u.first.rank == root.first.rank
    where = root.first
    return (u.first.source == where.source and u.first.pid == where.pid and u.first.actor == where.actor
            and 0 <= u.first.line - where.line <= ECHO_REACH)


def bare_wrapper(u: Unrecognized) -> bool:
    """A launcher's or actor runtime's exception that carries no error of its own (torchrun's ChildFailedError, whose
    table can run past the traceback's end; not a RayTaskError(KeyError), which names the remote error)."""
    name = u.exc_type.rsplit(".", 1)[-1]
    return "(" not in name and name in WRAPPERS


def fold_echoes(unrecognized: list[Unrecognized], root: Finding | None) -> None:
    if root is None:
        return
    for u in unrecognized:
        if echoes_root(u, root):
            u.echo_of = root.sig.id


def _near(where: Location, f: Finding, before: int = 0) -> bool:
    """`where` is on the symptom's own lines (its evidence, in the same source), or `before` lines above them."""
    if where.source != f.first.source or not f.evidence:
        return False
    lines = [e.lineno for e in f.evidence]
    return min(lines) - before <= where.line <= max(lines)


def choose_lead(ranked: list[Finding], root: Finding | None, unrecognized: list[Unrecognized],
                failed: bool, empty: bool) -> Lead:
    """The root cause; else a cascade (unless an unrecognised error came before it or was read from its own lines);
    else the first unrecognised error; else a confirmation or teardown finding; else the command's exit status."""
    if root is not None:
        return Lead("cause", root)
    symptoms = [f for f in ranked if f.sig.kind == "symptom" and f.sig.id != COMMAND_ID]
    first: Unrecognized | None = None
    for u in unrecognized:
        if u.echo_of is not None or (symptoms and bare_wrapper(u)):
            continue  # an echo of the root cause; a wrapper that says less than the symptom reporting it
        if first is None or earlier(u.first, first.first):
            first = u
    cascade = next((f for f in symptoms if f.sig.role == "cascade"), None)
    # a traceback read from the symptom's own lines blocks it only with an error of its own: one cut before its
    # exception line (type "?") is the symptom's traceback (vLLM's "Invocation of collective_rpc method failed" logs
    # one), no more
    if cascade is not None and not (first is not None and (earlier(first.first, cascade.first)
                                                          or (_near(first.first, cascade) and first.exc_type != "?"))):
        # a confirmation read from the cascade's own lines, or just before them, says how that process ended
        # (torchrun's agent logs "failed (exitcode: -9)" and its report holds "Signal 9 (SIGKILL) received by PID"):
        # it says more than "a worker failed", so it leads
        detail = next((f for f in symptoms if f.sig.role == "confirmation" and _near(f.first, cascade, BESIDE)), None)
        return Lead("symptom", detail or cascade)
    if first is not None:
        return Lead("unrecognized", unrecognized=first)
    if symptoms:
        return Lead("symptom", symptoms[0])
    command = next((f for f in ranked if f.sig.id == COMMAND_ID), None)
    if command is not None:
        return Lead("exit", command)
    health = next((f for f in ranked if f.health is not None), None)
    if health is not None and not failed:  # no failure, but the training metrics went bad (a health rule tripped)
        return Lead("health", health)
    return Lead("empty" if empty and not failed else "none")
