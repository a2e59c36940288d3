"""CompoSET (App. B): same-scene single-edit pairs.

Offline: ``pairs`` + ``pair_plan`` (the procedural world's single-edit pairs). Generative:
``pipeline`` (scene spec -> base image -> foils -> edits -> captions -> verification), its
stages ``foils`` and ``verify``, the edit ``taxonomy``, ``template`` rules and ``prompts/``.
"""
