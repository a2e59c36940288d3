"""Loaders for published benchmarks: one module per release, each exposing ``load``.

Every loader reads the release *as published* (its own file names and fields) and returns a
foilbench :class:`~foilbench.data.format.Benchmark`; the registry in
:mod:`foilbench.data.registry` maps ``LOADER:PATH`` specs to them. Shared plumbing (spec
options, schema checks, expected-count warnings) lives in :mod:`foilbench.data.loaders.common`.
"""
