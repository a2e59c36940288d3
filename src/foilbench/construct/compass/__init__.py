"""COMPASS (§3): scene-graph captions at structural levels, composed and decomposed negatives.

``scene_graph`` (VG-format graphs), ``vg`` (the VG release files), ``world_graph`` (graphs of
world scenes), ``sampling`` (caption specs), ``negatives`` (K = 4 per skill), ``realise``
(wording), ``captions`` (rows), ``build`` (the offline benchmark); generative: ``pipeline``,
``checks``, ``template`` rules and ``prompts/``.
"""
