"""HTML report and figures, built from stored results only (no model is needed)."""


def write_report(db_path, run_ids, out_path, held=None):
    """Write one self-contained HTML report of ``run_ids``; returns the path. ``held``: the
    per-item tables of runs the caller just wrote, by run id, used instead of reading them
    back (:func:`foilbench.report.build.load_runs`)."""
    from foilbench.report.build import write_report as _write

    return _write(db_path, run_ids, out_path, held)
