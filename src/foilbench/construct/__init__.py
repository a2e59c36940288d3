"""Building benchmarks: negatives (Auto-Comp, COMPASS), scene-graph captions, builders.

Nothing is imported here; import the module you need (``foilbench.construct.compass``, ...).
"""
