"""The open_clip adapter and its parts (docs/architecture.md).

Modules: adapter (the ``openclip`` model kind), spec (what a spec names, QuickGELU rules),
importer (open_clip without transformers when unneeded), fast (exact length-trimmed text),
pooled (the last image layer at the class token only), tokens (one tokenizer and encode memo
per BPE). Nothing is imported here: open_clip and torch load only when a module is used.
"""
