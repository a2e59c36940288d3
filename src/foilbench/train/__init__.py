"""Training the embedded default models on the procedural world (``foilbench train``).

Modules: ``world_source`` (which world functions feed training, and the benchmark-disjointness
check), ``mentions`` (what a training caption says about which objects), ``hard_negatives``
(swap and confusion re-bindings of a mention), ``dataset`` (scenes, captions, rendered cache),
``loop`` (InfoNCE with optional hard negatives), ``pipeline`` (data -> vocabulary -> plain
pretraining -> one fine-tune per variant -> safetensors + JSON), ``card`` (the model card's
score tables on the embedded suite), ``evaluate`` (an older scorecard with an N = 1 probe),
``standin_world`` (a flat-shapes world for fast tests of the trainer only).

Layer: above ``scoring`` and ``models`` (it trains models and scores them), below ``cli``.
"""
