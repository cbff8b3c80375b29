"""The plan as Python a user pastes after building `model` and its input `x`: plain
`torch.autocast`, a `torch.autocast("cpu", enabled=False)` wrapper on each kept layer,
`torch.compile` and `torch.set_num_threads` when the plan says so. It needs nothing but torch.

The kept layer's wrapper is what interventions.keep_float32 does (autocast off inside, floating
inputs made float32 again, so a float32 layer never meets a bfloat16 input); on the implicit
route, where there is no autocast, it is what the run's implicit route does (routes/implicit.py:
oneDNN's fp32_precision "ieee" inside the layer: its GEMMs keep float32 maths).
"""

from __future__ import annotations

import json

from autocast_explorer.core.experiment.routes.implicit import (
    IMPLICIT_BACKENDS,
    IMPLICIT_PRECISION,
    KEPT_PRECISION,
)
from autocast_explorer.core.planning.choice import Choice

KEEP_HELPER = '''

def as_float32(value):
    """Floating tensors (also inside tuples, lists and dicts) as float32."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.float()
    if isinstance(value, list):
        return [as_float32(item) for item in value]
    if isinstance(value, tuple):
        return tuple(as_float32(item) for item in value)
    if isinstance(value, dict):
        return {key: as_float32(item) for key, item in value.items()}
    return value


def keep_float32(module):
    """Run `module` in float32 inside autocast: autocast off, its inputs made float32."""
    forward = module.forward

    def float32_forward(*args, **kwargs):
        with torch.autocast("cpu", enabled=False):
            return forward(*as_float32(args), **as_float32(kwargs))

    module.forward = float32_forward

'''


KEEP_MATHS_HELPER = '''

def keep_float32(module):
    """Run `module`'s GEMMs with float32 maths whatever oneDNN's setting outside it."""
    forward = module.forward

    def float32_forward(*args, **kwargs):
        groups = [{groups}]
        previous = [group.fp32_precision for group in groups]
        for group in groups:
            group.fp32_precision = {kept}
        try:
            return forward(*args, **kwargs)
        finally:
            for group, value in zip(groups, previous):
                group.fp32_precision = value

    module.forward = float32_forward

'''


def _keep_lines(keep: tuple[str, ...], implicit: bool) -> str:
    names = ",\n".join(f"    {json.dumps(name)}" for name in keep)
    loop = "    keep_float32(model.get_submodule(name))\n"
    helper = KEEP_HELPER
    if implicit:
        groups = ", ".join(f"torch.backends.mkldnn.{group}" for group in IMPLICIT_BACKENDS)
        helper = KEEP_MATHS_HELPER.format(groups=groups, kept=json.dumps(KEPT_PRECISION))
    return f"{helper}\nfor name in [\n{names},\n]:\n{loop}"


def _run_lines(choice: Choice) -> str:
    if choice.lowered and choice.route != "implicit":
        body = (
            f'    with torch.autocast("cpu", dtype=torch.{choice.dtype}):\n'
            "        return model(inputs)\n"
        )
    else:
        body = "    return model(inputs)\n"
    text = f"\n\ndef run(inputs):\n{body}\n"
    if choice.route == "compiled":
        text += "\nrun = torch.compile(run)\n"
    return text


def _implicit_lines() -> str:
    groups = ", ".join(f"torch.backends.mkldnn.{group}" for group in IMPLICIT_BACKENDS)
    return (
        "\n# float32 tensors; oneDNN may use bf16 maths in its GEMMs (process-wide)\n"
        f"for group in ({groups}):\n"
        f"    group.fp32_precision = {json.dumps(IMPLICIT_PRECISION)}\n"
    )


def plan_snippet(choice: Choice, header: tuple[str, ...] = ()) -> str:
    """The code for `choice`; `header` lines become its opening comment."""
    lines = [f"# {line}" for line in header]
    lines.append("# Paste after `model` and its input `x` are built; `output` is the answer.")
    text = "import torch\n\n" + "\n".join(lines) + "\n"
    text += f"\ntorch.set_num_threads({choice.threads})\n"
    if choice.keep:
        text += _keep_lines(choice.keep, choice.route == "implicit")
    if choice.route == "implicit":
        text += _implicit_lines()
    text += _run_lines(choice)
    text += "\nwith torch.no_grad():\n    output = run(x)\n"
    return text
