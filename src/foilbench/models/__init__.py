"""Model adapters: turn images and texts into scores. See :mod:`foilbench.models.base`."""
