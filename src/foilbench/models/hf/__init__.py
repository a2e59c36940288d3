"""Hugging Face transformers adapters (docs/architecture.md).

Modules: adapter (the ``hf`` dual encoders), vlm (``hf-vlm``: log-likelihood and VQAScore),
loading (local folders, hub revisions: ``split_revision``), prepare (the per-image processor
split). Nothing is imported here: transformers loads only when a module is used.
"""
