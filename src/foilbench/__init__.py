"""foilbench: controlled compositionality evaluation for vision-language models.

Nothing is imported eagerly here: `import foilbench` must stay cheap and side-effect free.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
