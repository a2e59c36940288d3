"""Auto-Comp (§3, §4, App. A): concept-driven Swap / Confusion benchmarks.

Offline: ``negatives`` (Swap, Confusion), ``truth`` (negatives true by meaning), ``captions``
(Minimal suffix, Contextual frames), ``bench`` (the world-rendered benchmark), ``n1`` (Table 14
baselines). Generative: ``pipeline`` with its ``stages`` and ``checks``, ``template`` rules and
``prompts/``.
"""
