"""torch.distributed's elastic_launch with a function entrypoint (start_method spawn): the agent logs
"failed (exitcode: 1) local_rank: 1 (pid: N) of fn: work (start_method: spawn)" with torch.multiprocessing's
ProcessRaisedException, whose message quotes the child's traceback ("-- Process 1 terminated with the following
error:"), then raises ChildFailedError. Local rank 1 raises a ValueError.

    cd /opt/job && /opt/venv/bin/python elastic_fn.py > elastic-fn.log 2>&1
"""

import os

from torch.distributed.launcher.api import LaunchConfig, elastic_launch


def work() -> None:
    if os.environ["RANK"] == "1":
        raise ValueError("bad batch on rank 1")


if __name__ == "__main__":
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=2, run_id="elastic-fn", rdzv_backend="c10d",
                          rdzv_endpoint="localhost:0", max_restarts=0, start_method="spawn")
    elastic_launch(config, work)()
