"""The Ray runner: ``run(..., ray=...)`` and ``sweep(..., ray=...)`` compute cells on Ray
workers and the driver stores them (docs/scale-out.md).

Modules: cluster (options, resources per model), runs (the entry points), schedule (worker
slots grouped by model, failures), recover (a lost worker: node gone -> the cell moves,
process died -> retried), plan (queues, shards), worker (the actor), payload (a cell as plain
data), cache (prepared-image sharing), progress. Nothing is imported here, so importing a
submodule never starts or imports Ray.
"""
