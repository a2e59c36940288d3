"""Results database (DuckDB) and the persistent embedding cache."""
