"""Construction pipelines: the papers' procedures for building benchmarks, stage by stage.

``composet`` (CompoSET App. B), ``sugarcrepe`` (SugarCrepe §4, App. D.2), ``autocomp``
(Auto-Comp §3, App. A) and ``compass`` (COMPASS §3) each chain stages through one engine
(:mod:`.engine`): content-hashed, crash-safe call cache (:mod:`.cache`), bounded concurrency,
retries, a spend estimate and cap (:mod:`.budget`), a construction log that accounts for every
candidate (:mod:`.log`), and a written benchmark with provenance (:mod:`.export`). Run one
with :func:`.runner.run_pipeline` or ``foilbench construct PIPELINE``.
"""
