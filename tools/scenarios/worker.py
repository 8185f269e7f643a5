"""A tiny "training loop" for the forensics scenarios: gloo on CPU, one all_reduce per step.

Launched by torchrun (reads RANK/LOCAL_RANK/WORLD_SIZE/GROUP_RANK from the environment). The fault
is chosen with environment variables so the same file serves every scenario:

  FAULT        none | raise | stuck | sigkill | hang | segv (a native crash: faulthandler on, then a read at address 0)
  CULPRIT      global rank that misbehaves (default 2)
  FAULT_STEP   step at which it misbehaves (default 3)
  PG_TIMEOUT_S process-group timeout in seconds (default 5)
  STEPS        number of steps (default 6)
  RECORD       1: wrap main in torch.distributed.elastic's @record (writes error.json)
  FR_DUMP_AFTER_S  >0: a daemon thread writes this rank's flight-recorder pickle/json after N s
  SUCCESS      megatron: rank 0 ends with Megatron-LM's own success line ("[after training is done] datetime: ...",
               megatron/training/training.py pretrain -> print_datetime), as a Megatron job's log does

Under srun (no torchrun), RANK / WORLD_SIZE come from SLURM_PROCID / SLURM_NTASKS; MASTER_ADDR / MASTER_PORT
must be set by the batch script.
"""
import datetime
import os
import signal
import socket
import threading
import time

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

FAULT = os.environ.get("FAULT", "none")
CULPRIT = int(os.environ.get("CULPRIT", "2"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
PG_TIMEOUT_S = float(os.environ.get("PG_TIMEOUT_S", "5"))
STEPS = int(os.environ.get("STEPS", "6"))
FR_DUMP_AFTER_S = float(os.environ.get("FR_DUMP_AFTER_S", "0"))
SUCCESS = os.environ.get("SUCCESS", "")
if "RANK" not in os.environ and "SLURM_PROCID" in os.environ:  # started by srun, one task per rank
    os.environ["RANK"] = os.environ["SLURM_PROCID"]
    os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
    os.environ.setdefault("LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0"))


def log(msg):
    ts = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    print(f"[{ts}] {msg}", flush=True)


def fr_dump_later(rank):
    """Write this rank's flight-recorder buffer (pickle and JSON) the way the watchdog would."""
    time.sleep(FR_DUMP_AFTER_S)
    from torch._C._distributed_c10d import _dump_fr_trace, _dump_fr_trace_json

    prefix = os.environ.get("TORCH_FR_DUMP_TEMP_FILE", "/tmp/nccl_trace_rank_")
    with open(f"{prefix}{rank}", "wb") as f:
        f.write(_dump_fr_trace())
    json_prefix = os.environ.get("FR_JSON_PREFIX", prefix + "json_")
    with open(f"{json_prefix}{rank}.json", "wb") as f:
        f.write(_dump_fr_trace_json())
    log(f"rank {rank}: wrote flight recorder dump {prefix}{rank}")


def main():
    env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK", "LOCAL_WORLD_SIZE")}
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=PG_TIMEOUT_S))
    rank, world = dist.get_rank(), dist.get_world_size()
    log(f"rank {rank}/{world} host={socket.gethostname()} pid={os.getpid()} env={env}")
    # a second group over all ranks, used by the hang scenario (rank CULPRIT waits in PG 1)
    side = dist.new_group(list(range(world)))
    if FR_DUMP_AFTER_S > 0:
        threading.Thread(target=fr_dump_later, args=(rank,), daemon=True).start()

    x = torch.ones(1024)
    for step in range(1, STEPS + 1):
        if step == FAULT_STEP:
            if FAULT == "raise" and rank == CULPRIT:
                raise RuntimeError(f"injected failure on rank {rank} at step {step}")
            if FAULT == "stuck" and rank == CULPRIT:
                log(f"rank {rank}: step {step} stuck in compute (sleeping)")
                time.sleep(3600)
            if FAULT == "sigkill" and rank == CULPRIT:
                log(f"rank {rank}: step {step} sending SIGKILL to self")
                os.kill(os.getpid(), signal.SIGKILL)
            if FAULT == "segv" and rank == CULPRIT:
                import ctypes
                import faulthandler

                log(f"rank {rank}: step {step} reading address 0 from C (segmentation fault)")
                faulthandler.enable()
                ctypes.string_at(0)
            if FAULT == "hang" and rank == CULPRIT:
                # waits in a collective of another process group that nobody else enters
                log(f"rank {rank}: step {step} entering all_reduce on the side group")
                dist.all_reduce(x, group=side)
        dist.all_reduce(x)
        x.div_(world)
        log(f"rank {rank}: step {step}/{STEPS} loss={float(x[0]):.4f}")
        time.sleep(0.3)
    dist.barrier()
    log(f"rank {rank}: training finished")
    if SUCCESS == "megatron" and rank == 0:
        print(f"[after training is done] datetime: {datetime.datetime.now():%Y-%m-%d %H:%M:%S} ", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    if os.environ.get("RECORD", "1") == "1":
        record(main)()
    else:
        main()
