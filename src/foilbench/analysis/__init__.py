"""Analyses of per-item results: breakdowns, margins, scene- vs edit-hardness, direction
asymmetry, Auto-Comp contrasts. Inputs are plain DataFrames with one row per (model, item)."""
