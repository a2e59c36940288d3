"""DuckDB schema of the results store. One run = one model evaluated on one benchmark.

runs           provenance of each run (package version, git revision, model fingerprint,
               benchmark checksum, seed, tie policy, time); ``batch_id`` groups the runs of
               one command invocation; ``config_hash`` hashes the settings that change the
               numbers (seed, n_boot, ci method, tie policy) so sweeps can find a finished run;
               ``eval_stats`` holds the engine's counters (inputs encoded, cache hits, seconds).
item_results   one row per (run, item), ``item_index`` keeping benchmark order: the raw
               scores, flattened (pair: [s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)];
               choice/image_choice: positive first), and the item row
               (payload + metadata) as JSON so reports rebuild without the benchmark.
item_outcomes  one row per (run, item, metric): outcome in [0, 1] (1 = correct under strict >;
               API models average two order-swapped asks, so 0.5 occurs), tie, chance.
metrics        aggregated metrics: overall (group_by = '') and per metadata column value;
               ``unit`` (schema 3) is each row's unit of n (``instance``, ``per_tier``,
               ``pooled`` on tiered pair benchmarks, ``items`` elsewhere:
               :mod:`foilbench.stats.units`). Rows written before schema 3 have none: read
               them as ``pooled`` on tiered pair benchmarks, ``items`` elsewhere
               (:func:`foilbench.report.units_view.unit_of`).
compass_tables (schema 2) the COMPASS integration-gap and skill-load tables of a run on a
               COMPASS-style benchmark, as JSON, written in the run's transaction.
blind_reference (schema 2) the blind text-only audit of a benchmark (cheap cross-fitted
               scorers, overall and per edit type) and the reference row ``run`` prints,
               computed once per (benchmark checksum, audit key) and reused; ``audit_key``
               hashes the audit settings and its exact inputs, so a partial run of the same
               benchmark gets its own row. ``audit`` is null and ``note`` says why when the
               benchmark is too small to cross-fit.
sweep_cells    the cells of each ``foilbench sweep`` (see :mod:`foilbench.store.sweeps`).

``runs.environment`` (schema 4) is what the run ran with, as JSON: python, platform, the
versions of torch, open_clip, transformers, numpy, duckdb and Pillow, the device and the GPU's
name (:mod:`foilbench.versions`); rows written before schema 4 have none.

A store written by schema 1 or 2 opens unchanged: the schema-2 tables and the schema-3 column
are added when it is next opened for writing, and readers treat a missing table as empty and a
missing ``unit`` as unknown.
"""

SCHEMA_VERSION = 4

DDL = [
    """CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id VARCHAR PRIMARY KEY,
        batch_id VARCHAR,
        created TIMESTAMP,
        package_version VARCHAR,
        git_revision VARCHAR,
        model_spec VARCHAR,
        model_fingerprint VARCHAR,
        model_family VARCHAR,
        score_kind VARCHAR,
        benchmark_name VARCHAR,
        benchmark_version VARCHAR,
        benchmark_kind VARCHAR,
        benchmark_checksum VARCHAR,
        benchmark_root VARCHAR,
        partial BOOLEAN,
        n_items INTEGER,
        seed INTEGER,
        n_boot INTEGER,
        tie_policy VARCHAR,
        ci_method VARCHAR,
        config JSON,
        config_hash VARCHAR,
        eval_stats JSON,
        environment JSON
    )""",
    """CREATE TABLE IF NOT EXISTS item_results (
        run_id VARCHAR,
        item_index INTEGER,
        item_id VARCHAR,
        scores DOUBLE[],
        item JSON
    )""",
    """CREATE TABLE IF NOT EXISTS item_outcomes (
        run_id VARCHAR,
        item_id VARCHAR,
        metric VARCHAR,
        outcome DOUBLE,
        tie BOOLEAN,
        chance DOUBLE
    )""",
    """CREATE TABLE IF NOT EXISTS metrics (
        run_id VARCHAR,
        metric VARCHAR,
        group_by VARCHAR,
        group_value VARCHAR,
        value DOUBLE,
        k DOUBLE,
        n INTEGER,
        ci_low DOUBLE,
        ci_high DOUBLE,
        ci_method VARCHAR,
        chance DOUBLE,
        ties INTEGER,
        unit VARCHAR
    )""",
    """CREATE TABLE IF NOT EXISTS compass_tables (
        run_id VARCHAR PRIMARY KEY,
        tables JSON
    )""",
    """CREATE TABLE IF NOT EXISTS blind_reference (
        benchmark_checksum VARCHAR,
        audit_key VARCHAR,
        created TIMESTAMP,
        package_version VARCHAR,
        benchmark_name VARCHAR,
        n_items INTEGER,
        reference JSON,
        audit JSON,
        note VARCHAR,
        PRIMARY KEY (benchmark_checksum, audit_key)
    )""",
]
