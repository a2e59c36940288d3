"""Building benchmarks, one package per paper's method, on a shared construction engine.

``composet`` (CompoSET), ``sugarcrepe`` (SugarCrepe), ``autocomp`` (Auto-Comp) and ``compass``
(COMPASS) each hold everything of their method: the offline builders, the generative
pipeline's stages and checks, its template rules and its prompts. ``engine`` holds what every
pipeline uses and none owns; ``backends`` the models a pipeline calls by role; ``validators``
the image checks; ``suite`` composes the embedded suite from the methods' offline builders.

Nothing is imported here; import the module you need (``foilbench.construct.compass.captions``).
"""

#: the methods, each a subpackage with ``pipeline``, ``template`` and ``prompts/``
METHODS = ("composet", "sugarcrepe", "autocomp", "compass")
