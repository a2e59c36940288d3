"""``python tests/_ray_driver.py ADDRESS ARGS...``: ``foilbench ARGS...`` as a driver of the
Ray cluster at ADDRESS, in a process of its own (so Ray reads this process's token
authentication settings at start), with ``faulty-tiny`` registered here and, through the
``worker_process_setup_hook``, in every worker (:mod:`_ray_hook`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    sys.path.insert(0, str(HERE))
    import ray

    from _ray_hook import register
    from foilbench.cli.main import main as cli_main

    register()
    env = {k: os.environ[k] for k in ("FOILBENCH_HOME", "FOILBENCH_TEST_FAULT_DIR",
                                       "PYTHONPATH") if k in os.environ}
    ray.init(address=sys.argv[1], log_to_driver=False,
             runtime_env={"env_vars": env, "worker_process_setup_hook": "_ray_hook.register"})
    sys.argv = ["foilbench", *sys.argv[2:]]
    try:
        cli_main()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
