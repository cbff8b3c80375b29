"""Measure a user model at batch 1 before the full run: what the guards and the input need.

FLOPs from `torch.utils.flop_counter.FlopCounterMode`, parameter bytes, the elements every module
outputs (forward hooks) and the output's shape (a 2-D float output of batch × classes is a
classifier: argmax agreement, cross-entropy training). Nothing here is timed: the time guard
forecasts the forward from its ops (shadow_run.py), without running it at full size.
The forward runs the user's code, so a model that rejects the input fails here, as one line.
Cached per model, arguments, input, seed, dtype and threads: a sweep probes once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from autocast_explorer.core.experiment.capture import first_tensor
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.guard import UserCode
from autocast_explorer.core.experiment.families.user.inputs import InputPlan, feed, input_plan
from autocast_explorer.core.experiment.families.user.loader import Loaded, load, module_class_name
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name


@dataclass(frozen=True)
class ModelProbe:
    """Batch-1 measurements of a user model."""

    class_name: str
    parameters: int
    trainable: int  # the parameters that require a gradient
    parameter_bytes: int
    flops: int  # one forward at batch 1
    activation_elements: int  # every module's output at batch 1, plus the input
    output_shape: tuple[int, ...]  # at batch 1
    output_dtype: str
    plan: InputPlan
    sha256: str | None
    #: Every submodule's dotted name (named_modules, the model itself left out), in order.
    module_names: tuple[str, ...] = ()

    @property
    def classes(self) -> int:
        """The classifier's classes (0: the output is not batch × classes logits)."""
        if len(self.output_shape) == 2 and self.output_shape[1] >= 2:
            return self.output_shape[1] if self.output_dtype.startswith(("float", "bfloat")) else 0
        return 0

    @property
    def no_argmax_reason(self) -> str:
        """Why agreement has no argmax ('' for a classifier)."""
        if self.classes:
            return ""
        shape = "×".join(map(str, ("batch", *self.output_shape[1:])))
        return (
            f"the output is {shape} {self.output_dtype}, not batch × classes logits, so there "
            "is no predicted class: agreement is cosine similarity and the largest difference"
        )


def build(config: ExperimentConfig) -> tuple[torch.nn.Module, Loaded, InputPlan]:
    """Seeded build in eval mode, and the input plan (the engine draws its input after this);
    the module is fed as the plan says."""
    torch.manual_seed(config.seed)
    loaded = load(config.model, config.model_args)
    loaded.module.eval()
    plan = input_plan(config, loaded)
    return feed(loaded.module, plan), loaded, plan


def run_user_forward(
    config: ExperimentConfig, loaded: Loaded, x: torch.Tensor, dtype: torch.dtype | None
) -> torch.Tensor:
    """One forward; the user's error as one line, a non-tensor output refused."""
    what = f"the forward (input {'×'.join(map(str, x.shape))} {dtype_name(x.dtype)})"
    with UserCode(config.model, what, loaded.user_paths), torch.no_grad(), autocast_context(dtype):
        y = loaded.module(x)
    if not isinstance(y, torch.Tensor):
        raise UserModelError(
            config.model, f"the forward returned {type(y).__name__}, which holds no tensor"
        )
    return y


def _numel(output: object) -> int:
    t = first_tensor(output)
    return t.numel() if t is not None else 0


def _key(config: ExperimentConfig) -> ExperimentConfig:
    """The config with what does not change the probe set to one value (a cache key)."""
    return config.replace(batch=1, mode="infer", min_time=0.5, allow_slow=False, steps=50)


#: Probes made, newest last (a file's edit is a new entry): a sweep probes once.
_PROBES: dict[tuple[ExperimentConfig, str], ModelProbe] = {}
_PROBES_KEPT = 8


def probe(config: ExperimentConfig) -> ModelProbe:
    """The batch-1 probe of `config`'s model (cached; a file's edit is a new entry)."""
    key = (_key(config), source_digest(config.model))
    made = _PROBES.pop(key, None) or _probe(*key)
    _PROBES[key] = made
    while len(_PROBES) > _PROBES_KEPT:
        del _PROBES[next(iter(_PROBES))]
    return made


def probed(config: ExperimentConfig) -> ModelProbe | None:
    """The probe if it was made already (None: making it would run the user's model)."""
    return _PROBES.get((_key(config), source_digest(config.model)))


def source_digest(text: str) -> str:
    """A file spec's sha256 ('' for other specs, or a file that is not there yet)."""
    import os

    from autocast_explorer.core.experiment.families.user.loader import file_sha256
    from autocast_explorer.core.experiment.families.user.spec import parse_spec

    spec = parse_spec(text)
    path = os.path.abspath(os.path.expanduser(spec.target))
    return file_sha256(path) if spec.kind == "file" and os.path.isfile(path) else ""


def probe_model(config: ExperimentConfig) -> tuple[torch.nn.Module, Loaded, InputPlan]:
    """The probes' own copy of the model (built once): the guards trace it on fake inputs."""
    return _built(_key(config), source_digest(config.model))


@functools.lru_cache(maxsize=2)
def _built(config: ExperimentConfig, digest: str) -> tuple[torch.nn.Module, Loaded, InputPlan]:
    """The probes' own copy of the model (`digest` only keys the cache)."""
    return build(config)


def _probe(config: ExperimentConfig, digest: str) -> ModelProbe:
    """`digest` only keys the cache (probe's)."""
    from torch.utils.flop_counter import FlopCounterMode

    model, loaded, plan = _built(config, digest)
    x = plan.draw(config, 1)
    elements = [x.numel()]
    handles = [
        m.register_forward_hook(lambda _m, _i, out: elements.append(_numel(out)))
        for m in model.modules()
        if m is not model
    ]
    try:
        counter = FlopCounterMode(display=False)
        with counter:
            y = run_user_forward(config, loaded, x, None)
    finally:
        for h in handles:
            h.remove()
    params = list(model.parameters())
    return ModelProbe(
        class_name=module_class_name(model),
        parameters=sum(p.numel() for p in params),
        trainable=sum(p.numel() for p in params if p.requires_grad),
        parameter_bytes=sum(p.numel() * p.element_size() for p in params),
        flops=int(counter.get_total_flops()),
        activation_elements=sum(elements),
        output_shape=tuple(y.shape),
        output_dtype=dtype_name(y.dtype),
        plan=plan,
        sha256=loaded.sha256,
        module_names=tuple(name for name, _ in model.named_modules() if name),
    )
