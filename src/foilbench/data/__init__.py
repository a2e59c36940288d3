"""The benchmark format: items, metadata, images; loaders for published benchmarks."""

from foilbench.data.format import (
    KINDS,
    METADATA_COLUMNS,
    Benchmark,
    Manifest,
    load_benchmark,
    write_benchmark,
)

__all__ = ["KINDS", "METADATA_COLUMNS", "Benchmark", "Manifest", "load_benchmark", "write_benchmark"]
