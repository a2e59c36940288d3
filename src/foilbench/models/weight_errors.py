"""Weight files that cannot be loaded, as messages a user can act on.

Two failures reach users as library tracebacks otherwise:

- a ``.safetensors`` file that is truncated or corrupt (a download cut short): safetensors
  raises its own ``SafetensorError`` about "deserializing header";
- a PyTorch pickle (``.pt``, ``.bin``) holding Python objects besides tensors: foilbench loads
  pickles only with ``weights_only=True`` (a pickle can run code), and torch's refusal then
  advises re-running with ``weights_only=False``. We never do that, so the advice is dropped and
  the message says what to do instead.

:func:`weights_error` turns either (or any other loading failure) into a
:class:`~foilbench.errors.ModelError` naming the file; :func:`load_safetensors` is the checked
reader for our own weight files.
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path
from typing import Any

from foilbench.errors import ModelError

PICKLE_REFUSED = ("holds Python objects besides tensors, and foilbench loads PyTorch pickles "
                  "only with weights_only=True (a pickle can run code); save just the tensors "
                  "(the state_dict) or convert the file to .safetensors")


def safetensors_errors() -> tuple[type[BaseException], ...]:
    """The exception types safetensors raises for a bad file."""
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - older safetensors
        return ()
    return (SafetensorError,)


def is_weights_only_refusal(err: BaseException) -> bool:
    return isinstance(err, pickle.UnpicklingError) or "weights only load failed" in str(
        err).lower()


def weights_error(where: str | Path, err: BaseException, what: str = "weights") -> ModelError:
    """A :class:`ModelError` for ``err`` raised while loading ``what`` from ``where``.

    >>> err = weights_error("w.pt", pickle.UnpicklingError("Weights only load failed. ..."))
    >>> str(err)[:55]
    'w.pt (weights) holds Python objects besides tensors, an'
    >>> "weights_only=False" in str(err)
    False
    """
    if is_weights_only_refusal(err):
        return ModelError(f"{where} ({what}) {PICKLE_REFUSED}")
    if isinstance(err, safetensors_errors()):
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        return ModelError(f"{where}: not a valid safetensors file (truncated or corrupt: "
                          f"{first}); download or build it again")
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return ModelError(f"could not load {what} from {where}: {text}")


_SHAPE = re.compile(r"size mismatch for ([\w.]+): copying a param with shape torch\.Size\("
                    r"\[([\d, ]*)\]\) from checkpoint, the shape in current model is "
                    r"torch\.Size\(\[([\d, ]*)\]\)")
_KEYS = re.compile(r"(Missing|Unexpected) key\(s\) in state_dict: (.*)")


def mismatch_error(weights: str | Path, arch: str, err: BaseException,
                   config: str | Path | None = None) -> ModelError | None:
    """One sentence for weights that do not fit the architecture they were loaded into (torch's
    ``size mismatch`` / ``Missing key(s)`` list, or open_clip's ``assert`` on the text
    position embedding width), naming the file, the architecture (and its config file) and the
    first differing tensor; None for any other failure.

    >>> e = AssertionError("text pos_embed width changed!")
    >>> str(mismatch_error("w.pt", "tiny", e, "tiny.json"))[:62]
    'w.pt does not fit the architecture tiny (from tiny.json): text'
    """
    text = str(err)
    fit = f"{weights} does not fit the architecture {arch}" + \
        (f" (from {config})" if config else "")
    advice = "; give the config (or architecture name) the weights were saved with"
    shapes = _SHAPE.findall(text)
    if shapes:
        name, got, want = shapes[0]
        more = f" and {len(shapes) - 1} more tensor(s)" if len(shapes) > 1 else ""
        return ModelError(f"{fit}: {name} is [{got}] in the file but [{want}] in the model"
                          f"{more}{advice}")
    keys = _KEYS.search(text)
    if keys:
        which = keys.group(2).split(", ")
        kind = "missing from the file" if keys.group(1) == "Missing" else "not in the model"
        return ModelError(f"{fit}: {len(which)} tensor(s) {kind}, e.g. "
                          f"{which[0].strip(chr(34) + chr(39) + '.')}{advice}")
    if isinstance(err, AssertionError) and "pos_embed width" in text:
        return ModelError(f"{fit}: text position embedding width differs ({text}){advice}")
    return None


def load_safetensors(path: str | Path, what: str = "weights") -> dict[str, Any]:
    """``safetensors.torch.load_file(path)``, with a bad file named in a :class:`ModelError`."""
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except FileNotFoundError:
        raise ModelError(f"{what} file {path} is missing") from None
    except (*safetensors_errors(), OSError, ValueError) as e:
        raise weights_error(path, e, what) from None
