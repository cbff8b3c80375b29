"""A config's run traced on fake tensors: its memory and its ops, at full size, in milliseconds.

Under torch's FakeTensorMode every op computes only its output's shape and dtype, so the model
runs at the config's real batch without computing or allocating anything; a TensorTrace
(tensor_trace.py) counts the bytes alive at once and lists each op's work. What is traced is
what the engine then does: for inference one recorded forward per mode (capture.record_forward,
every layer's output kept); for training one step (forward, loss, backward) per mode. Each
mode's forward also lists its ops, in the dtype each computed in, for the time guard. A model
that fake tensors cannot run (an op without a fake kernel, a branch on a tensor's value) is
traced for real at batch 1 instead and scaled by the batch: memory, FLOPs and bytes grow with
it, the calls do not. One that fails then too (its code fails when traced, or in training mode)
is not traced: the family's counts stand in, and the run meets the failure in its own phase.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from autocast_explorer.core.experiment.capture import first_tensor, record_forward
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_parts import DEFAULT_ROUTES
from autocast_explorer.core.experiment.dynamo_start import dynamo_refusal
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.op_rates import OpWork
from autocast_explorer.core.experiment.tensor_trace import TensorTrace
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES, autocast_context

#: A model and its input, built for one trace.
Built = tuple[torch.nn.Module, torch.Tensor]


@dataclass(frozen=True)
class ShadowRun:
    """What tracing a config's run found (bytes; work per mode, named 'float32' or its dtype)."""

    parameter_bytes: int  # parameters and buffers
    input_bytes: int
    #: Each mode's peak of its own tensors: of one forward (inference) or one training step
    #: (its saved activations, then the gradients).
    forward_peak: dict[str, int]
    #: Each mode's layer outputs the engine keeps (inference; 0 in training).
    kept: dict[str, int]
    work: dict[str, tuple[OpWork, ...]]
    leaf_modules: int  # what a compiled graph grows with
    #: How it was found: FAKE (traced at full size on fake tensors), AT_BATCH_1 (traced for
    #: real at batch 1, then scaled) or COUNTED (not traced: the family's counts).
    how: str
    #: Training: each mode's whole step (forward, loss, backward), op by op; else empty.
    step_work: dict[str, tuple[OpWork, ...]] = dataclasses.field(default_factory=dict)

    @property
    def peak_bytes(self) -> int:
        """Both modes' peaks and kept outputs, added: the allocator keeps what one mode freed
        (tensors under 32 MiB come from its heap, which it seldom gives back) while the other
        mode runs, in another dtype and other sizes, so their peaks add up in the process."""
        return sum(self.forward_peak.values()) + sum(self.kept.values())

    @property
    def basis(self) -> str:
        return _BASES[self.how]


FAKE, AT_BATCH_1, COUNTED = "fake", "batch 1", "counted"
_BASES = {
    FAKE: "traced at full size on fake tensors",
    AT_BATCH_1: "traced at batch 1 and scaled by the batch (fake tensors could not run it)",
    COUNTED: "not traced (the model's code failed when traced): its FLOPs, at nn.Linear's rate",
}


def leaf_modules(model: torch.nn.Module) -> int:
    """Modules without children: what a compiled graph grows with (at least 1)."""
    return max(1, sum(1 for m in model.modules() if not any(True for _ in m.children())))


def _tensor_bytes(tensors: Iterator[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _built_in(config: ExperimentConfig) -> Built:
    fam = family(config)
    return fam.build_model(config), fam.build_input(config)


def _user_model(config: ExperimentConfig) -> Built:
    """The probes' copy of the user's model (its weights real, never changed here) and an
    input drawn at `config`'s batch (fake when drawn under FakeTensorMode)."""
    from autocast_explorer.core.experiment.families.user.probe import probe_model

    model, _loaded, plan = probe_model(config)
    return model, plan.draw(config, config.batch)


@dataclass(frozen=True)
class _Forward:
    """One traced forward: its ops, the peak of its own tensors, the layer outputs' bytes
    (and in training the whole step's ops)."""

    work: tuple[OpWork, ...]
    peak_bytes: int
    kept_bytes: int
    step_work: tuple[OpWork, ...] = ()


def _with_calls(work: list[OpWork], calls: int) -> tuple[OpWork, ...]:
    """The ops' work and the cost of dispatching each of them."""
    return (*work, OpWork("call", calls, (), "float32"))


def _recorded(model: torch.nn.Module, x: torch.Tensor, dtype: torch.dtype | None) -> _Forward:
    """One forward recorded as the engine records it (capture.record_forward), its layer
    outputs' copies counted from their shapes instead of made. A float32 forward that raises
    is raised (the run cannot go on); an autocast one keeps the ops it ran (a finding)."""
    with TensorTrace(autocast=dtype) as trace:
        capture = record_forward(model, x, dtype)
    if capture.raised is not None and (dtype is None or _is_fake(x)):
        raise capture.raised
    kept = sum(
        math.prod(layer.out_shape) * getattr(torch, layer.out_dtype).itemsize
        for layer in capture.layers
    )
    return _Forward(_with_calls(trace.work, trace.calls), trace.peak_bytes, kept)


def _step(model: torch.nn.Module, x: torch.Tensor, dtype: torch.dtype | None) -> _Forward:
    """One training step: the forward's ops, the whole step's (its backward too), and the
    step's peak (the forward's saved tensors, then the gradients). An autocast step that
    raises for real keeps what it traced (the run says why it cannot train: AutocastFailed)."""
    was_training = model.training
    model.train()
    trace = TensorTrace(autocast=dtype)
    forward = [0, 0]  # the forward's ops and calls, once it has returned
    try:
        with trace:
            _traced_step(model, x, dtype, trace, forward)
    except Exception:
        if dtype is None or _is_fake(x):
            raise
    finally:
        model.train(was_training)
    ops, calls = forward if forward[0] else (len(trace.work), trace.calls)
    return _Forward(
        _with_calls(trace.work[:ops], calls),
        trace.peak_bytes,
        0,
        _with_calls(trace.work, trace.calls),
    )


def _traced_step(
    model: torch.nn.Module,
    x: torch.Tensor,
    dtype: torch.dtype | None,
    trace: TensorTrace,
    forward: list[int],
) -> None:
    """The step's forward (its ops and calls counted into `forward`), loss and gradients."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    with autocast_context(dtype):
        output = first_tensor(model(x))
    forward[:] = [len(trace.work), trace.calls]
    if output is not None and output.requires_grad and trainable:
        loss = output.float().square().mean()
        grads = torch.autograd.grad(loss, trainable, allow_unused=True)
        del grads, loss


def _trace(config: ExperimentConfig, build: Callable[[ExperimentConfig], Built]) -> ShadowRun:
    """Build and trace `config`'s run: the engine's recorded forwards (float32's layer outputs
    kept through the autocast one, engine._record_forwards), or a training step per mode."""
    low = TORCH_DTYPES[config.dtype]
    model, x = build(config)
    params = _tensor_bytes(iter([*model.parameters(), *model.buffers()]))
    trace = _step if config.mode == "train" else _recorded
    modes = {"float32": trace(model, x, None), config.dtype: trace(model, x, low)}
    return ShadowRun(
        parameter_bytes=params,
        input_bytes=_tensor_bytes(iter([x])),
        forward_peak={mode: traced.peak_bytes for mode, traced in modes.items()},
        kept={mode: traced.kept_bytes for mode, traced in modes.items()},
        work={mode: traced.work for mode, traced in modes.items()},
        leaf_modules=leaf_modules(model),
        how=FAKE if _is_fake(x) else AT_BATCH_1,
        step_work={mode: traced.step_work for mode, traced in modes.items() if traced.step_work},
    )


def _is_fake(x: torch.Tensor) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(x, FakeTensor)


@contextlib.contextmanager
def _fake_tensors() -> Iterator[None]:
    """Inside, new tensors are fake (real ones, the user's weights, are read as fake); the
    global RNG is left as it was (a built-in model seeds it while it is built)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with torch.random.fork_rng(devices=[]), FakeTensorMode(allow_non_fake_inputs=True):
        yield


def _scaled(run: ShadowRun, batch: int, input_bytes: int) -> ShadowRun:
    """A batch-1 trace at `batch`: bytes and FLOPs × batch; each op's calls once."""

    def scaled(work: dict[str, tuple[OpWork, ...]]) -> dict[str, tuple[OpWork, ...]]:
        return {
            mode: tuple(
                OpWork(w.kind, w.flops * batch, w.shape, w.dtype) if w.kind != "call" else w
                for w in items
            )
            for mode, items in work.items()
        }

    return dataclasses.replace(
        run,
        input_bytes=input_bytes,
        forward_peak={mode: peak * batch for mode, peak in run.forward_peak.items()},
        kept={mode: kept * batch for mode, kept in run.kept.items()},
        work=scaled(run.work),
        step_work=scaled(run.step_work),
    )


def _built_for_real(config: ExperimentConfig) -> bool:
    """Whether the model may be traced on fake tensors: a user's module is imported and its
    factory called for real first (probe_model keeps that copy), since a module-level model
    made under FakeTensorMode would stay fake for the run itself, which imports the module
    once. False when the user's code fails there: the probe below meets it and words it."""
    if not config.is_user_model:
        return True
    try:
        _user_model(config.replace(batch=1))
    except KeyboardInterrupt:
        raise
    except BaseException:
        return False
    return True


@functools.lru_cache(maxsize=16)
def _shadow(config: ExperimentConfig, digest: str) -> ShadowRun:
    """`digest` (a model file's) only keys the cache."""
    build = _user_model if config.is_user_model else _built_in
    if not dynamo_refusal() and _built_for_real(config):
        try:
            with _fake_tensors():
                return _trace(config, build)
        except KeyboardInterrupt:
            raise
        except BaseException:  # an op fake tensors cannot run, a branch on a value, the
            pass  # user's code failing (its own phase of the run will meet it): for real
    if config.is_user_model:
        from autocast_explorer.core.experiment.families.user.probe import probe

        probe(config)  # the user's code failing at batch 1 says so, as the probe words it
    try:
        one = _trace(config.replace(batch=1), build)
    except KeyboardInterrupt:
        raise
    except BaseException:  # whatever failed here, the run meets in its own phase, and says
        return _counted(config)
    return _scaled(one, config.batch, one.input_bytes * config.batch)


def _counted(config: ExperimentConfig) -> ShadowRun:
    """A run that cannot be traced: the family's counts (a user model's from its batch-1
    probe), as the window's quick bound reads them, and its FLOPs at nn.Linear's rate."""
    fam = family(config)
    activations = fam.activation_elements(config)
    items = [OpWork(g.op, g.flops, (g.m, g.k, g.n)) for g in fam.gemms(config)]
    items = items or [OpWork("linear", fam.flops(config), (256, 512, 512))]
    work = (*items, OpWork("call", len(items), (), "float32"))
    low = TORCH_DTYPES[config.dtype].itemsize
    return ShadowRun(
        parameter_bytes=fam.parameter_count(config) * 4,
        input_bytes=fam.input_elements(config) * 4,
        forward_peak={"float32": activations * 4, config.dtype: activations * low},
        kept={"float32": activations * 4, config.dtype: activations * low},
        work={"float32": work, config.dtype: work},
        leaf_modules=len(items),
        how=COUNTED,
    )


def shadow_run(config: ExperimentConfig) -> ShadowRun:
    """The traced run of `config` (cached per config and model file): what the memory guard
    and the forecast of a model without a formula of its own rest on."""
    digest = ""
    if config.is_user_model:
        from autocast_explorer.core.experiment.families.user.probe import source_digest

        digest = source_digest(config.model)
    return _shadow(_key(config), digest)


def _key(config: ExperimentConfig) -> ExperimentConfig:
    """What does not change the trace set to one value (a sweep's points share traces)."""
    return config.replace(
        min_time=0.5,
        max_time=None,
        allow_slow=False,
        memory_budget_mb=None,
        steps=50,
        threads=None,
        routes=DEFAULT_ROUTES,
    )
