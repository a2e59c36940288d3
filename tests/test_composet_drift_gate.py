"""The CompoSET construction's pixel-drift gate: one threshold (MAX_DRIFT, foilbench's 0.01:
CompoSET App. C gives none) used by the config and the CLI, strict > on planted drifts, and a
docstring that quotes App. C and says why we chose ours."""

from __future__ import annotations

import numpy as np

from foilbench.construct.composet.spec import MAX_DRIFT, ComposetConfig
from foilbench.construct.composet.verify import drifted
from foilbench.construct.validators.image_checks import pixel_drift


def _planted(n_outside: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """100 x 100 images; the edit region is the left half (5,000 pixels outside it); the edit
    changes the left half and ``n_outside`` pixels on the right edge change by 0.5."""
    base = np.zeros((100, 100, 3))
    foil = base.copy()
    foil[:, :50] = 1.0  # the edit itself
    cols, rest = divmod(n_outside, 100)
    if cols:
        foil[:, 100 - cols:] = 0.5
    foil[:rest, 99 - cols] = 0.5
    mask = np.zeros((100, 100), bool)
    mask[:, :50] = True
    return base, foil, mask


def test_gate_threshold_is_the_documented_constant():
    import inspect

    from foilbench.cli.construct_cmd import composet
    from foilbench.construct.composet import spec, verify

    assert MAX_DRIFT == 0.01 and ComposetConfig().max_drift == MAX_DRIFT
    cli_default = next(p.default for p in composet.params if p.name == "max_drift")
    assert cli_default == MAX_DRIFT
    source = inspect.getsource(spec)
    assert "Only 2/300 instances retained genuine" in source and "gives no pixel threshold" in source
    assert "max_drift=1.0" in source  # the paper's setting: no automatic pixel gate
    assert "MAX_DRIFT" in verify.__doc__


def test_gate_on_planted_drift_strict_greater():
    # sigma 0 (no blur, the mask is not grown): 5,000 pixels outside; 50 changed = 0.01
    # exactly (passes: strict >), 51 = 0.0102 (dropped), 10 = 0.002
    at = pixel_drift(*_planted(50), sigma=0)
    over = pixel_drift(*_planted(51), sigma=0)
    under = pixel_drift(*_planted(10), sigma=0)
    assert at == 50 / 5000 == MAX_DRIFT and over == 51 / 5000 and under == 10 / 5000
    assert not drifted(at) and drifted(over) and not drifted(under)
    assert not drifted(over, max_drift=1.0)  # the paper's setting: the audit decides
