"""A model that waits at a gate, and a CLI entry that registers it, for multi-process tests.

``python tests/_gated.py ARGS...`` runs ``foilbench ARGS...`` with one extra model name,
``gated``: a colour dual encoder (``_core_helpers.ColourEncoder``) whose first image batch
writes ``$FOILBENCH_GATE/started-<pid>`` and then waits until ``$FOILBENCH_GATE/open``
exists. A test can so hold a run *inside* its evaluation for as long as it likes, with no
sleeps or timed assertions: it waits for the ``started`` file, does what it must while the run
evaluates, then opens the gate.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GIVE_UP_S = 300  # a forgotten gate ends the subprocess instead of hanging the test run


class GatedEncoder:
    """Wraps a :class:`ColourEncoder`; the first ``embed_images`` call waits at the gate."""

    def __new__(cls):
        from _core_helpers import ColourEncoder

        class _Gated(ColourEncoder):
            def embed_images(self, images):
                gate = Path(os.environ["FOILBENCH_GATE"])
                (gate / f"started-{os.getpid()}").write_text("")
                deadline = time.monotonic() + GIVE_UP_S
                while not (gate / "open").exists():
                    if time.monotonic() > deadline:
                        raise SystemExit("gate never opened")
                    time.sleep(0.05)
                return super().embed_images(images)

        return _Gated(fingerprint="gated-colour-v1")


def build_gated(device: str = "auto", dtype: str = "float32"):
    return GatedEncoder()


def main() -> None:
    sys.path.insert(0, str(HERE))
    from foilbench.cli.main import main as cli_main
    from foilbench.models.registry import model_names

    model_names().register("gated", "_gated:build_gated", "test model waiting at a gate")
    sys.argv = ["foilbench", *sys.argv[1:]]
    cli_main()


if __name__ == "__main__":
    main()
