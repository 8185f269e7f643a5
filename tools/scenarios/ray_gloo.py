"""Ray + torch gloo: 4 actors form a gloo process group; the actor with rank CULPRIT (default 2) gets
stuck in compute at step 3 and the others time out in all_reduce (PG timeout 5 s). Prints real Ray
driver output (with dedup) and leaves a real Ray session folder (/tmp/ray/session_latest/logs).
Run: python ray_gloo.py > driver.log 2>&1"""
import datetime
import os
import socket
import time

import ray

CULPRIT = int(os.environ.get("CULPRIT", "2"))
ray.init(num_cpus=4, include_dashboard=False, _temp_dir=os.environ.get("RAY_TEMP_DIR"))


@ray.remote
class Trainer:
    def __init__(self, rank, world, port):
        self.rank, self.world, self.port = rank, world, port

    def run(self):
        import torch
        import torch.distributed as dist

        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(self.port))
        # a long timeout to rendezvous (a loaded machine is slow to start four workers), a short one to collect
        dist.init_process_group("gloo", rank=self.rank, world_size=self.world,
                                timeout=datetime.timedelta(seconds=300))
        group = dist.new_group(list(range(self.world)), timeout=datetime.timedelta(seconds=5))
        print(f"rank {self.rank}/{self.world} host={socket.gethostname()} pid={os.getpid()}", flush=True)
        x = torch.ones(1024)
        for step in range(1, 7):
            if step == 3 and self.rank == CULPRIT:
                print(f"rank {self.rank}: step {step} stuck in compute (sleeping)", flush=True)
                time.sleep(3600)
            dist.all_reduce(x, group=group)
            print(f"rank {self.rank}: step {step}/6 loss={float(x[0]):.4f}", flush=True)
            time.sleep(0.3)
        return self.rank


with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
actors = [Trainer.remote(r, 4, port) for r in range(4)]
refs = [a.run.remote() for a in actors]
try:
    # like a trainer's driver: wait for the ranks; the first failure raises (uncaught -> traceback)
    ray.get([r for i, r in enumerate(refs) if i != CULPRIT])
finally:
    time.sleep(6)  # let the log monitor flush the dedup window before the driver exits
