"""Construction validators: checks a pipeline runs on generated images before human QC."""
