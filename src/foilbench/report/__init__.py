"""HTML report and figures, built from stored results only (no model is needed)."""


def write_report(db_path, run_ids, out_path):
    """Write one self-contained HTML report of ``run_ids``; returns the path."""
    from foilbench.report.build import write_report as _write

    return _write(db_path, run_ids, out_path)
