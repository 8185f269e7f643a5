"""Lone exception lines (read/lone.py): one a signature explains is not also told as an unrecognised error."""

from __future__ import annotations

from diagnoser.match.database import load_database
from diagnoser.modes.batch import diagnose_text

# Ray's ActorDiedError as a ROLL user posted it (alibaba/ROLL issue 80): the excerpt starts at the headline, so no
# traceback holds it, and the death cause ray-actor-died reads comes seven lines below
ACTOR_DIED = """ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.
\tclass_name: ActorWorker
\tactor_id: 3e7272acace78763d2e9b9b101000000
\tpid: 17871
\tname: actor_infer-12
\tnamespace: roll
\tip: 33.195.34.104
The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker \
unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process \
is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed \
unexpectedly due to SIGSEGV or other unexpected errors.
"""


def test_the_headline_of_a_message_a_signature_read_is_not_unrecognised() -> None:
    report = diagnose_text(load_database(), ACTOR_DIED)
    assert [f.sig.id for f in report.findings] == ["ray-actor-died"]
    assert report.findings[0].captures.get("exit_type") == "SYSTEM_ERROR"
    assert not report.unrecognized


def test_the_headline_alone_is_the_finding_and_not_unrecognised_too() -> None:
    report = diagnose_text(load_database(), ACTOR_DIED.splitlines()[0])
    assert [f.sig.id for f in report.findings] == ["ray-actor-died"]
    assert not report.unrecognized


def test_an_error_no_signature_read_stays_unrecognised_beside_the_hit() -> None:
    report = diagnose_text(load_database(), "ValueError: reward function returned a string\n" + ACTOR_DIED)
    assert [u.exc_type for u in report.unrecognized] == ["ValueError"]


def test_a_line_a_signature_read_is_explained_only_by_a_hit() -> None:
    # an intended exit: ray-actor-died reads the headline but leaves it to the death cause, which it does not take
    # (INTENDED_USER_EXIT), so no hit explains the headline and it is told as it was before
    intended = ACTOR_DIED.replace("Worker exit type: SYSTEM_ERROR", "Worker exit type: INTENDED_USER_EXIT")
    report = diagnose_text(load_database(), intended)
    assert not report.findings
    assert [u.message for u in report.unrecognized] == ["The actor died unexpectedly before finishing this task."]
