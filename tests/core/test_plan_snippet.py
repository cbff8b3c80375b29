"""The plan's snippet, executed in a fresh Python: the dtypes it gives are the plan's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autocast_explorer.core.planning.choice import Choice
from autocast_explorer.core.planning.snippet import plan_snippet

ROOT = Path(__file__).resolve().parents[2]

#: Builds the planted float16 model, records each layer's output dtype, runs the snippet, prints.
PROLOGUE = """\
import json
import torch
from autocast_explorer.examples.planted_faults import float16_overflow

torch.manual_seed(0)
model, _example = float16_overflow()
model.eval()
x = torch.randn(64, 16)
seen = {}
for name in ("embed", "amplify", "norm", "head"):
    model.get_submodule(name).register_forward_hook(
        lambda module, args, out, name=name: seen.__setitem__(name, str(out.dtype))
    )
"""
EPILOGUE = """
print(json.dumps({
    "layers": seen,
    "output": str(output.dtype),
    "finite": bool(torch.isfinite(output).all()),
    "threads": torch.get_num_threads(),
}))
"""


def _run(snippet: str) -> dict:
    code = PROLOGUE + snippet + EPILOGUE
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.process
def test_the_snippet_keeps_the_planned_layer_in_float32_and_lowers_the_rest() -> None:
    snippet = plan_snippet(Choice("eager", "float16", 1, ("amplify",)), ("a plan",))
    assert snippet.startswith("import torch\n\n# a plan\n")
    found = _run(snippet)
    assert found["layers"] == {
        "embed": "torch.float16",
        "amplify": "torch.float32",
        "norm": "torch.float32",
        "head": "torch.float16",
    }
    assert found["output"] == "torch.float16"
    assert found["finite"] is True
    assert found["threads"] == 1


@pytest.mark.process
def test_without_the_kept_layer_float16_overflows() -> None:
    found = _run(plan_snippet(Choice("eager", "float16", 1)))
    assert found["layers"]["amplify"] == "torch.float16"
    assert found["finite"] is False


@pytest.mark.process
def test_a_float32_plan_runs_float32_on_its_threads() -> None:
    found = _run(plan_snippet(Choice("eager", "float32", 2)))
    assert set(found["layers"].values()) == {"torch.float32"}
    assert found["threads"] == 2


@pytest.mark.process
@pytest.mark.compile
@pytest.mark.slow
def test_a_compiled_plan_compiles_with_the_kept_layer() -> None:
    snippet = plan_snippet(Choice("compiled", "float16", 1, ("amplify",)))
    assert "run = torch.compile(run)" in snippet
    found = _run(snippet)
    assert found["output"] == "torch.float16"
    assert found["finite"] is True


#: Records oneDNN's float32 precision inside embed's and amplify's forwards (set before the
#: snippet wraps them, so its wrapper runs around the recording).
MATHS_PROLOGUE = """
maths = {}
for name in ("embed", "amplify"):
    module = model.get_submodule(name)

    def recording(*args, _forward=module.forward, _name=name, **kwargs):
        maths[_name] = torch.backends.mkldnn.matmul.fp32_precision
        return _forward(*args, **kwargs)

    module.forward = recording
"""


@pytest.mark.process
def test_an_implicit_plan_keeps_float32_maths_inside_the_kept_layer() -> None:
    snippet = plan_snippet(Choice("implicit", "bfloat16", 1, ("amplify",)))
    code = PROLOGUE + MATHS_PROLOGUE + snippet + "\nprint(json.dumps(maths))\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"embed": "bf16", "amplify": "ieee"}
