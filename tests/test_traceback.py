"""Traceback grouping per stream: plain, chained, Ray-nested, C++ terminate, interleaved, bounded."""

from __future__ import annotations

from diagnoser.read.grouper import TracebackGrouper
from diagnoser.read.normalize import Normalizer
from diagnoser.read.traceback import MAX_TB_LINES, TracebackRecord


def group(text: str) -> list[TracebackRecord]:
    closed: list[TracebackRecord] = []
    g = TracebackGrouper(closed.append)
    n = Normalizer("x")
    for i, raw in enumerate(text.splitlines(), start=1):
        for line in n.lines(i, raw):
            g.feed(line)
    g.close_all()
    return closed


def test_plain_traceback() -> None:
    tbs = group('Traceback (most recent call last):\n  File "a.py", line 3, in f\n    g()\nValueError: bad value\nnext line')
    assert len(tbs) == 1
    assert (tbs[0].exc_type, tbs[0].message, tbs[0].frame) == ("ValueError", "bad value", "a.py:3 in f")


def test_chained_traceback_is_one_record_with_the_last_exception() -> None:
    text = """Traceback (most recent call last):
  File "a.py", line 3, in f
    g()
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "a.py", line 9, in main
    f()
RuntimeError: wrapped"""
    tbs = group(text)
    assert len(tbs) == 1
    assert tbs[0].exc_type == "RuntimeError" and tbs[0].chained == [("KeyError", "'x'")]


def test_interleaved_streams_do_not_mix() -> None:
    text = """[rank0]: Traceback (most recent call last):
[rank1]: Traceback (most recent call last):
[rank0]:   File "a.py", line 1, in f
[rank1]:   File "b.py", line 2, in g
[rank1]:     x()
[rank0]:     y()
[rank1]: KeyError: 'b'
[rank0]: ValueError: a"""
    tbs = sorted(group(text), key=lambda t: t.exc_type)
    assert [(t.exc_type, t.first.rank, t.frame) for t in tbs] == [
        ("KeyError", 1, "b.py:2 in g"), ("ValueError", 0, "a.py:1 in f")]


def test_ray_task_error_keeps_the_inner_exception() -> None:
    text = """Traceback (most recent call last):
  File "main.py", line 5, in <module>
    ray.get(ref)
ray.exceptions.RayTaskError(OutOfMemoryError): ray::W.step() (pid=1, ip=1.2.3.4)
  File "w.py", line 7, in step
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."""
    tbs = group(text)
    assert len(tbs) == 1 and tbs[0].exc_type == "torch.OutOfMemoryError" and tbs[0].frame == "w.py:7 in step"


def test_cxx_terminate_block() -> None:
    text = """terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG 0 Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access
Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):
frame #0: c10::Error::Error() + 0x96"""
    tbs = group(text)
    # the watchdog's message names the real error: the record is keyed like the watchdog's own log line
    assert len(tbs) == 1 and tbs[0].exc_type == "ProcessGroupNCCL watchdog"
    assert tbs[0].message == "CUDA error: an illegal memory access"


def test_multi_line_message_is_kept_and_next_log_record_closes() -> None:
    text = """Traceback (most recent call last):
  File "a.py", line 1, in f
RuntimeError: Error(s) in loading state_dict for VocabParallelEmbedding:
\tsize mismatch for weight: copying a param with shape torch.Size([1]) from checkpoint
2025-01-01 10:00:00,000 INFO next record"""
    tbs = group(text)
    assert len(tbs) == 1
    assert any("size mismatch" in x.text for x in tbs[0].lines)
    assert not any("next record" in x.text for x in tbs[0].lines)


def test_exception_ignored_at_exit_is_marked() -> None:
    tbs = group('Exception ignored in: <function Popen.__del__ at 0x7f>\nTraceback (most recent call last):\n'
                '  File "s.py", line 1, in __del__\nAttributeError: x')
    assert tbs[0].ignored


def test_runaway_traceback_is_bounded() -> None:
    frames = "\n".join(f'  File "a.py", line {i}, in f\n    f()' for i in range(2000))
    tbs = group("Traceback (most recent call last):\n" + frames + "\nRecursionError: too deep")
    assert len(tbs[0].lines) <= MAX_TB_LINES and tbs[0].exc_type == "RecursionError"
    assert tbs[0].lines[0].text.startswith("Traceback")


def test_truncated_traceback_still_closes() -> None:
    tbs = group('Traceback (most recent call last):\n  File "a.py", line 1, in f')
    assert len(tbs) == 1 and tbs[0].exc_type == "?"


def test_ray_unhandled_error_block_is_a_traceback() -> None:
    text = """2024-05-01 12:00:01,000\tERROR worker.py:406 -- Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::ActorWorker.train_step() (pid=77, ip=10.0.0.8)
  File "/roll/roll/pipeline/base_worker.py", line 120, in train_step
    self.strategy.train_step(batch)
AssertionError"""
    tbs = group(text)
    assert len(tbs) == 1 and tbs[0].exc_type == "AssertionError" and tbs[0].frame.endswith("in train_step")


def test_a_traceback_whose_header_was_cut_off_starts_at_its_first_frame() -> None:
    text = """ERROR 03-27 16:22:01 [core.py:340]   File "/opt/vllm/v1/executor/abstract.py", line 66, in determine_available_memory
ERROR 03-27 16:22:01 [core.py:340]     output = self.collective_rpc("determine_available_memory")
ERROR 03-27 16:22:01 [core.py:340] ValueError: not enough values to unpack (expected 13, got 12)
CRITICAL 03-27 16:22:01 [core_client.py:269] Got fatal signal from worker processes, shutting down."""
    tbs = group(text)
    assert len(tbs) == 1
    assert tbs[0].headless and not tbs[0].ignored
    assert (tbs[0].exc_type, tbs[0].frame) == ("ValueError", "/opt/vllm/v1/executor/abstract.py:66 in determine_available_memory")


def test_frames_without_header_or_exception_are_a_printed_stack_not_a_failure() -> None:
    text = """  File "train.py", line 12, in main
    trainer.fit()
  File "trainer.py", line 40, in fit
    self.step()
step 41 done"""
    tbs = group(text)
    assert len(tbs) == 1 and tbs[0].ignored
    # logging's stack_info: the frames are followed by the next record, which only looks like "Type: message"
    tbs = group('Stack (most recent call last):\n  File "a.py", line 3, in f\n    g()\nEpoch: 3 done')
    assert len(tbs) == 1 and tbs[0].exc_type == "Epoch" and tbs[0].ignored
    # but a real exception counts, whatever its name ends in
    for exc in ("socket.gaierror: [Errno -2] Name or service not known", "AssertionError",
                "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
                "http.client.RemoteDisconnected: Remote end closed connection without response", "KeyError: 'x'"):
        tbs = group(f'  File "a.py", line 3, in f\n    g()\n{exc}')
        assert len(tbs) == 1 and not tbs[0].ignored, exc


def test_an_exception_line_after_a_message_split_from_its_type_is_the_tracebacks() -> None:
    """Ranks writing to one console interleave their tracebacks: the line after the frames is another rank's text or a
    message printed apart from its type, and the exception line proper comes next. That line is the traceback's
    error, not the message of a "?". The last lines of DeepSpeedExamples issue 456's post, as posted."""
    lines = [
        "    self.actor_model.step()",
        "  File \"/data/rooter_use/conda/envs/llama-env39/lib/python3.9/site-packages/deepspeed/runtime/hybrid_engine.py\", line 398, in step",
        "    if(self._inference_containers[0].module.attention.attn_qkvw is not None and \\",
        "    IndexErrorif(self._inference_containers[0].module.attention.attn_qkvw is not None and \\: ",
        "list index out of range",
        "IndexError: list index out of range",
    ]
    tbs = group("\n".join(lines))
    assert len(tbs) == 1 and not tbs[0].ignored
    assert (tbs[0].exc_type, tbs[0].message) == ("IndexError", "list index out of range")
    # ... or another writer's text came between the type and its colon (PyTorch issue 87815, FSDP on several ranks)
    lines = [
        "  File \"/opt/conda/envs/pytorch/lib/python3.9/site-packages/torch/distributed/fsdp/_state_dict_utils.py\", line 85, in _full_post_state_dict_hook",
        "    assert fqn in state_dict, (",
        "AssertionError    : hook_result = hook(self, destination, prefix, local_metadata)FSDP assumes _fsdp_wrapped_module.encoder.block.0.layer.0.SelfAttention.q.weight is in the state_dict but the state_dict only has odict_keys(['_fsdp_wrapped_module._flat_param', '_fsdp_wrapped_module.encoder.block.0._flat_param']). prefix=_fsdp_wrapped_module.encoder.block.0., module_name=layer.0.SelfAttention.q. param_name=weight rank=3.    ",
    ]
    tbs = group("\n".join(lines))
    assert len(tbs) == 1 and not tbs[0].ignored and tbs[0].exc_type == "AssertionError"
    assert group('  File "a.py", line 3, in f\n    g()\nstep 41 done')[0].ignored  # a printed stack stays one
    # an exception line that was one stays: a later line of the same shape is its message going on
    tbs = group('  File "a.py", line 3, in f\n    g()\nRuntimeError: first\nValueError: second')
    assert (tbs[0].exc_type, tbs[0].message) == ("RuntimeError", "first")


def test_faulthandler_stack_dumps_do_not_start_a_traceback() -> None:
    text = """Thread 0x00007f3b2c7fe700 (most recent call first):
  File "/usr/lib/python3.10/threading.py", line 320 in wait
  File "/usr/lib/python3.10/threading.py", line 600 in wait"""
    assert group(text) == []


def test_the_watchdog_line_and_its_rethrow_are_one_error() -> None:
    text = """[rank1]:[E410 01:50:33.889423318 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure
[rank1]:CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
[rank1]:[E410 01:50:34.000000000 ProcessGroupNCCL.cpp:1900] exiting
[rank1]:terminate called after throwing an instance of 'c10::DistBackendError'
[rank1]:  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure"""
    tbs = group(text)
    assert [(t.exc_type, t.message) for t in tbs] == [("ProcessGroupNCCL watchdog", "CUDA error: unspecified launch failure")] * 2


def test_a_header_after_a_loggers_own_words_starts_a_traceback() -> None:
    text = """ERROR 03-14 00:01:05 [core.py:337] EngineCore hit an exception: Traceback (most recent call last):
ERROR 03-14 00:01:05 [core.py:337]   File "/usr/lib/ray/dag/compiled_dag_node.py", line 2344, in _execute_until
ERROR 03-14 00:01:05 [core.py:337]     result = self._dag_output_fetcher.read(timeout)
ERROR 03-14 00:01:05 [core.py:337] ray.exceptions.RayChannelTimeoutError: System error: Timed out waiting for object available to read.
INFO 03-14 00:01:06 [loggers.py:80] Avg prompt throughput: 0.0 tokens/s"""
    tbs = group(text)
    assert len(tbs) == 1 and not tbs[0].headless
    assert tbs[0].exc_type == "ray.exceptions.RayChannelTimeoutError"
    assert group("INFO: see the docs section 'Traceback (most recent call last): what it means'") == []


def test_ray_task_error_headline_opens_a_traceback_cut_in_its_frames() -> None:
    # Ray prints the RayTaskError headline, then the remote frames; a paste that stops in the frames still names it
    text = """ray.exceptions.RayTaskError(RuntimeError): ray::WorkerDict.actor_rollout_update_actor() (pid=289274, ip=10.0.0.1)
  File "/opt/verl/verl/single_controller/ray/base.py", line 419, in func
    return getattr(self.worker_dict[key], name)(*args, **kwargs)
  File "/opt/verl/verl/workers/megatron_workers.py", line 361, in update_actor"""
    tbs = group(text)
    assert len(tbs) == 1 and tbs[0].exc_type == "ray.exceptions.RayTaskError(RuntimeError)"
    assert tbs[0].message.startswith("ray::WorkerDict.actor_rollout_update_actor()") and not tbs[0].cut
    assert tbs[0].frame.endswith("in update_actor")


def test_ray_cxx_terminate_handler_names_type_and_message() -> None:
    # src/ray/util/logging.cc TerminateHandler: type (mangled) and what() on one line, a stack trace after it
    text = ("[2023-08-25 00:42:40,265 E 5623 7733] logging.cc:97: Unhandled exception: "
            "N5boost10wrapexceptINS_6system12system_errorEEE. what(): thread: Resource temporarily unavailable "
            "[system:11]\n[2023-08-25 00:42:40,287 E 5623 7733] logging.cc:104: Stack trace:")
    tbs = group(text)
    assert tbs[0].kind == "cxx"
    assert tbs[0].exc_type == "boost::wrapexcept<boost::system::system_error>"
    assert tbs[0].message == "thread: Resource temporarily unavailable [system:11]"


def test_demangle_keeps_what_it_cannot_read() -> None:
    from diagnoser.read.cxx import demangle

    assert demangle("St13runtime_error") == "std::runtime_error"
    assert demangle("N3c105ErrorE") == "c10::Error"
    assert demangle("N3c105Error") == "N3c105Error"  # no closing E: left as printed
    assert demangle("c10::Error") == "c10::Error"


def test_a_cxx_backtrace_alone_is_a_cut_traceback() -> None:
    text = """frame #6: c10d::TCPStore::TCPStore(std::string, c10d::TCPStoreOptions const&) + 0x20c (0x7fcd in /x/libtorch_cpu.so)
frame #7: <unknown function> + 0xe486ef (0x7fcde47336ef in /x/libtorch_python.so)"""
    tbs = group(text)
    assert len(tbs) == 1 and tbs[0].kind == "cxx" and tbs[0].cut and tbs[0].ignored
    assert len(tbs[0].lines) == 2


def test_a_console_stamping_every_line_does_not_cut_the_message() -> None:
    # verl#5567 as posted: a console put a time before every line, the exception's detail lines too
    stamp = "[2026-03-12 11:50:36] (TaskRunner pid=3483799) "
    lines = ["Traceback (most recent call last):", '  File "agent_loop.py", line 115, in generate',
             "    output = await server.generate.remote(",
             "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
             "\tclass_name: SGLangHttpServer", "\tpid: 3491208",
             "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR"]
    tbs = group("\n".join(stamp + x for x in lines))
    assert len(tbs) == 1 and tbs[0].exc_type == "ray.exceptions.ActorDiedError"
    assert tbs[0].lines[-1].text.startswith("The actor is dead")
    # a time where the exception line had none is a new record: it closes the traceback (as before)
    tbs = group("\n".join(lines[:4]) + "\n" + stamp + "The actor is dead")
    assert len(tbs) == 1 and not tbs[0].lines[-1].text.startswith("The actor is dead")


def test_caret_lines_that_lost_their_indent_are_not_the_exception() -> None:
    # OpenRLHF#922 as pasted: Python 3.11's "^^^^" markers under each frame's code, every indent stripped
    text = """Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::LLMRayActor.init_process_group() (pid=700386, ip=0.0.0.0)
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
File "/site-packages/vllm/entrypoints/llm.py", line 495, in collective_rpc
executor = self.llm_engine.model_executor
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
AttributeError: 'LLMEngine' object has no attribute 'model_executor'"""
    tbs = group(text)
    assert [(t.exc_type, t.message) for t in tbs] == [("AttributeError", "'LLMEngine' object has no attribute 'model_executor'")]


def test_a_spawned_childs_quoted_traceback_is_the_errors_own() -> None:
    # torch.multiprocessing's ProcessRaisedException (tools/scenarios/elastic_fn.py, torch 2.13): its message quotes
    # the child's traceback; the child's ValueError is the error, not the wrapper with its empty first line
    text = """Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 211, in join
    raise ProcessRaisedException(msg, error_index, failed_process.pid)
torch.multiprocessing.spawn.ProcessRaisedException:{space}

-- Process 1 terminated with the following error:
Traceback (most recent call last):
  File "/opt/job/elastic_fn.py", line 17, in work
    raise ValueError("bad batch on rank 1")
ValueError: bad batch on rank 1
""".format(space=" ")  # Python prints a space after the colon of an exception with an empty first line
    tbs = group(text)
    assert [(t.exc_type, t.message) for t in tbs] == [("ValueError", "bad batch on rank 1")]


def test_a_source_line_that_lost_its_indent_is_not_the_exception() -> None:
    # verl#5558 as posted: a console's time before every line took the indent of each frame's source line
    stamp = "[2026-03-11 17:47:54] "
    lines = ['  File "/verl/verl/trainer/main_ppo.py", line 317, in run', "    trainer.fit()",
             '  File "/verl/verl/trainer/ppo/ray_trainer.py", line 947, in fit', "    train(args)",
             "NotImplementedError: Reward function is not implemented for data_source='x'"]
    tbs = group("Traceback (most recent call last):\n" + "\n".join(stamp + x for x in lines))
    assert [(t.exc_type, t.message) for t in tbs] == [("NotImplementedError", "Reward function is not implemented for data_source='x'")]


def test_a_console_stamp_ends_a_message_when_it_changes_or_a_new_record_opens() -> None:
    # every line stamped (kubectl logs --timestamps): a later stamp is a later record; a C++ terminate opens its own
    lines = ["2025-06-01T10:00:01.000000001Z Traceback (most recent call last):",
             '2025-06-01T10:00:01.000000001Z   File "/opt/job/train.py", line 33, in main',
             "2025-06-01T10:00:01.000000001Z     batch = load(cfg)",
             "2025-06-01T10:00:01.000000001Z ValueError: data file /data/train.jsonl has 0 rows",
             "2025-06-01T10:00:31.000000001Z terminate called after throwing an instance of 'c10::DistBackendError'"]
    tbs = group("\n".join(lines))
    assert [(t.exc_type, len(t.lines)) for t in tbs] == [("ValueError", 4), ("c10::DistBackendError", 1)]
    same = [x.replace("10:00:31", "10:00:01") for x in lines]
    assert [t.exc_type for t in group("\n".join(same))] == ["ValueError", "c10::DistBackendError"]


def test_a_bare_raise_that_lost_its_indent_is_the_source_line() -> None:
    stamp = "[2026-03-11 17:47:54] "
    lines = ["Traceback (most recent call last):", '  File "/verl/verl/workers/reward.py", line 90, in compute',
             "    raise", "NotImplementedError: Reward function is not implemented"]
    assert [t.exc_type for t in group("\n".join(stamp + x for x in lines))] == ["NotImplementedError"]


# Python 3.11.7's own output for an asyncio.TaskGroup whose one task raised (a reward server's call, say)
TASKGROUP = """step 3 done
  + Exception Group Traceback (most recent call last):
  |   File "/tmp/eg.py", line 8, in <module>
  |     asyncio.run(main())
  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/runners.py", line 190, in run
  |     return runner.run(main)
  |            ^^^^^^^^^^^^^^^^
  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/runners.py", line 118, in run
  |     return self._loop.run_until_complete(task)
  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/base_events.py", line 653, in run_until_complete
  |     return future.result()
  |            ^^^^^^^^^^^^^^^
  |   File "/tmp/eg.py", line 5, in main
  |     async with asyncio.TaskGroup() as tg:
  |   File "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/taskgroups.py", line 145, in __aexit__
  |     raise me from None
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/tmp/eg.py", line 3, in bad
    |     raise ValueError("reward server returned 502")
    | ValueError: reward server returned 502
    +------------------------------------"""


def test_an_exception_groups_sub_exception_is_its_error() -> None:
    tbs = group(TASKGROUP)
    assert [(t.exc_type, t.message) for t in tbs] == [("ValueError", "reward server returned 502")]
    assert any(line.text.startswith("ExceptionGroup: unhandled errors") for line in tbs[0].lines)
