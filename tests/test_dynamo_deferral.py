"""open_clip imported without torch's compiler (issue 30, fixed costs: torchvision's
``roi_align`` module imports ``torch._dynamo`` for one function, about a second of every run),
and everything that needs the compiler afterwards still gets the real one. Each case runs in a
fresh interpreter: what is imported is the thing under test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _run(code: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_open_clip_imports_without_the_compiler_and_the_compiler_still_works():
    lines = _run(
        "import sys, torch\n"
        "from foilbench.models.openclip.importer import import_open_clip\n"
        "import_open_clip(needs_transformers=False, needs_timm=False)\n"
        "print('torch._dynamo' in sys.modules, 'torch._dynamo.utils' in sys.modules,\n"
        "      'torchvision.ops.roi_align' in sys.modules)\n"
        "deferred = sys.modules['torchvision.ops.roi_align'].is_compile_supported\n"
        "print(deferred('cpu'), type(sys.modules['torch._dynamo']).__name__)\n"
        "import torch._dynamo.utils as real\n"
        "print(deferred('cpu') == real.is_compile_supported('cpu'), deferred('meta') ==\n"
        "      real.is_compile_supported('meta'), torch._dynamo is sys.modules['torch._dynamo'])\n"
        "f = torch.compile(lambda x: x * 2 + 1, backend='eager')\n"
        "print(f(torch.ones(3)).tolist() == [3.0, 3.0, 3.0])\n"
    )
    assert lines[:3] == ["False", "False", "True"]  # torchvision in, the compiler not
    assert lines[3:5] == ["True", "module"]  # the deferred function imported the real one
    assert lines[5:] == ["True", "True", "True", "True"]


def test_roi_align_runs_as_without_the_deferral():
    code = (
        "import sys, torch\n"
        "{setup}\n"
        "from torchvision.ops import roi_align\n"
        "g = torch.Generator().manual_seed(0)\n"
        "x = torch.rand(1, 2, 8, 8, generator=g)\n"
        "boxes = torch.tensor([[0, 0.5, 1.0, 6.0, 7.5]])\n"
        "print(*roi_align(x, boxes, output_size=(2, 2), sampling_ratio=2).flatten().tolist())\n"
    )
    deferred = _run(code.format(setup="from foilbench.models.dynamo_deferral import "
                                      "dynamo_deferred\nwith dynamo_deferred():\n"
                                      "    import torchvision"))
    plain = _run(code.format(setup="import torchvision"))
    assert deferred == plain and len(plain) == 8


@pytest.fixture(scope="module")
def stand_in_then_real() -> list[str]:
    """One fresh interpreter: a stand-in asked for another name (which imports the real
    compiler), then, with the real compiler imported, a second deferral that must defer
    nothing. The second reads only what the first leaves behind (the real module in
    ``sys.modules``, no torchvision), the state its own test needs, so one process start
    answers both."""
    return _run(
        "import sys, torch\n"
        "from foilbench.models.dynamo_deferral import dynamo_deferred\n"
        "with dynamo_deferred():\n"
        "    from torch._dynamo.utils import is_compile_supported\n"
        "    print('torch._dynamo.eval_frame' in sys.modules)\n"
        "    from torch._dynamo.utils import counters\n"  # not deferred: the real module
        "    print('torch._dynamo.eval_frame' in sys.modules)\n"
        "import torch._dynamo.utils as real\n"
        "print(counters is real.counters, type(sys.modules['torch._dynamo']).__name__)\n"
        "assert 'torchvision' not in sys.modules\n"
        "real = sys.modules['torch._dynamo']\n"
        "with dynamo_deferred():\n"
        "    print(sys.modules['torch._dynamo'] is real)\n"
    )


def test_any_other_name_asked_of_a_stand_in_gets_the_real_module(stand_in_then_real):
    assert stand_in_then_real[:4] == ["False", "True", "True", "module"]


def test_nothing_is_deferred_once_the_compiler_is_imported(stand_in_then_real):
    assert stand_in_then_real[4:] == ["True"]
