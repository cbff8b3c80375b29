"""What the time guard times: one op of a forward at a small shape, in the dtype it computes in.

A forward is forecast op by op (guards.estimate_modes): each op's FLOPs (or, for an op that
only moves memory, its bytes) ÷ the rate its kind reaches at a small shape of the same
structure (a convolution keeps its channels, kernel and stride; a matrix product its inner
sizes), timed on this CPU with random tensors. The shapes are capped near 2²⁴ FLOPs so a call
stays in the milliseconds even on a reference kernel (bfloat16 on an AVX2 CPU), and every op
also pays the cost of one dispatched call. A shape keeps what decides the kernel torch runs
and its rate: a convolution its whole image (CONV_FLOP_CAP), a recurrent layer its batch and
widths. An op that raises in a dtype here (oneDNN has no bfloat16 LSTM on AVX2) raises in the
run too: its calibration says so instead of a rate (guards.CANNOT_RUN). `op_works` turns one
traced aten call into that work; `ATEN_CALIBRATIONS` are the kinds it names (the guards add
the nn.Linear one).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from autocast_explorer.core.runtime.dtypes import dtype_name

#: A calibration times calls for this long (at least this many) and keeps the fastest. With
#: several threads it runs twice, once on one thread (calibrated_rate): 2 × 2.5 ms, as 5 ms was.
CALIBRATION_CALLS = 3
CALIBRATION_SECONDS = 0.0025
#: A call slower than this is not repeated past the calls the minimum asks for.
_SLOW_CALL_S = 0.05
#: The FLOPs a calibrated shape is shrunk to (its structure kept): milliseconds per call at
#: 1–10 GFLOP/s, the rates of bfloat16 reference kernels; far above per-call overhead at 100.
FLOP_CAP = 1 << 24
#: Bytes of each tensor a memory-bound calibration adds: 32 MiB, so that the three of them
#: overflow a large L3 cache and the rate is memory's, as for the big tensors that matter.
_BYTES_PER_TENSOR = 1 << 25
#: Elements of each layer output a comparison calibration compares.
_COMPARED_ELEMENTS = 1 << 18
#: A convolution is timed on its whole image at as many images (up to its batch) as fit this
#: many FLOPs; only an image over it alone is halved. Its rate follows the image's size:
#: under the AVX2 switches a bfloat16 convolution runs ATen's slow path (_slow_conv2d_forward:
#: im2col and a reference GEMM, image by image), where 32→64 channels 3×3 reached 3.3 GFLOP/s
#: at 16×16 and 0.91 at 32×32 (1 thread; 64→64: 0.68 at 64×64, 0.37 at 128×128), 0.90–0.92
#: at 32×32 for every batch from 1 to 64; halved to 2²⁴ FLOPs (16×16), the CNN's bfloat16
#: forward was forecast 2.5× too fast (as the family's GEMMs, at nn.Linear's rate: 11×).
#: Natively (oneDNN), images past the caches slow it: 3→32 channels at 64×64 reached 58
#: GFLOP/s on 1 image, 12–13 on 4 to 16, 10 on 64. 2²⁷ FLOPs: ≈ 0.15 s a call on the slow
#: path, 1–13 ms natively.
CONV_FLOP_CAP = 1 << 27
#: A recurrent layer is timed over at most this many steps (fewer while over RNN_FLOP_CAP):
#: each call of oneDNN's LSTM also builds its primitive, which long sequences spread out
#: (hidden 512, batch 64, 512 inputs, float32: 35 GFLOP/s over 1 step, 68–78 over 2 to 8,
#: 98–102 over 16 to 256; bfloat16 142, 167–194, 201–205). 2³²: ≈ 45 ms a call at 100.
_RNN_STEPS = 16
RNN_FLOP_CAP = 1 << 32


@dataclass(frozen=True)
class OpWork:
    """One op of a forward, as the time estimate sees it.

    `kind` picks the calibration (CALIBRATIONS), `shape` is what that calibration understands
    (linear: batch, in, out), `flops` its work in the calibration's unit (FLOPs; bytes moved for
    "bytes"; calls for "call"), and `dtype` the dtype it computes in ("": the mode's own).
    """

    kind: str
    flops: int
    shape: tuple[int, ...]
    dtype: str = ""


@dataclass(frozen=True)
class OpCalibration:
    """How to time one op kind at a representative size: the estimate's plug-in point.

    `size_class` maps a real shape to the (smaller, rounded) shape that is timed, so configs
    share calibrations and calibrating stays cheap; `time_call(shape, dtype)` returns seconds
    per call, with `dtype` None meaning float32 outside autocast; `label` names the op.
    """

    label: str
    size_class: Callable[[tuple[int, ...]], tuple[int, ...]]
    flops: Callable[[tuple[int, ...]], int]
    time_call: Callable[[tuple[int, ...], torch.dtype | None], float]


#: The seconds after which the calibrations in a `calls_given_up_after` block stop calling.
_GIVE_UP = threading.local()


@contextlib.contextmanager
def calls_given_up_after(seconds: float) -> Iterator[None]:
    """Inside, a calibration stops calling (and keeps its fastest call so far) once it has
    spent `seconds`: a timing whose answer cannot matter is cut short (calibrated_rate's
    multi-thread timing on a busy machine, where every call waits for a core)."""
    previous = getattr(_GIVE_UP, "seconds", math.inf)
    _GIVE_UP.seconds = seconds
    try:
        yield
    finally:
        _GIVE_UP.seconds = previous


def fastest_call(call: Callable[[], object]) -> float:
    """Seconds of the fastest of `call`'s timed calls, after a cold one (kernel selection,
    allocation): at least CALIBRATION_CALLS, until CALIBRATION_SECONDS are spent. The fastest,
    not the median: another program stalling a few calls must not leave a 10–100× too slow
    rate in the cache for the rest of the session (and refuse good configs)."""

    def timed() -> float:
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    give_up = getattr(_GIVE_UP, "seconds", math.inf)
    cold = timed()
    if cold > give_up:
        return cold
    times = [timed()]
    spent = cold + times[0]
    while spent < give_up and (
        (len(times) < CALIBRATION_CALLS and cold < _SLOW_CALL_S)
        or (spent - cold < CALIBRATION_SECONDS and len(times) < 200)
    ):
        times.append(timed())
        spent += times[-1]
    return max(min(times), 1e-9)


def power_of_two(value: int, low: int, high: int) -> int:
    """The power of two nearest `value` (geometrically), clamped to [low, high]."""
    if value <= low:
        return low
    return max(low, min(high, int(2 ** round(math.log2(value)))))


def _random(shape: Sequence[int], dtype: torch.dtype | None) -> torch.Tensor:
    with torch.random.fork_rng(devices=[]):
        return torch.randn(*shape, dtype=dtype or torch.float32)


def _timed_no_grad(call: Callable[[], object]) -> float:
    with torch.no_grad():
        return fastest_call(call)


# ---- matrix products ----------------------------------------------------------------------
def _mm_class(shape: tuple[int, ...]) -> tuple[int, ...]:
    m, k, n = shape
    return power_of_two(m, 1, 256), power_of_two(k, 16, 512), power_of_two(n, 16, 512)


def _time_mm(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    """torch.mm with a row-major right operand (F.linear's transposed one is 'linear')."""
    m, k, n = shape
    a, b = _random((m, k), dtype), _random((k, n), dtype)
    return _timed_no_grad(lambda: torch.mm(a, b))


def _bmm_class(shape: tuple[int, ...]) -> tuple[int, ...]:
    _b, m, k, n = shape
    m, k, n = power_of_two(m, 1, 256), power_of_two(k, 16, 512), power_of_two(n, 16, 512)
    return max(1, min(64, FLOP_CAP // (2 * m * k * n))), m, k, n


def _time_bmm(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    b, m, k, n = shape
    x, y = _random((b, m, k), dtype), _random((b, k, n), dtype)
    return _timed_no_grad(lambda: torch.bmm(x, y))


# ---- convolutions -------------------------------------------------------------------------
@dataclass(frozen=True)
class ConvShape:
    """A convolution's arguments as one tuple of ints (OpWork.shape) and back."""

    batch: int
    channels: int
    out_channels: int
    groups: int
    transposed: int
    spatial: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    output_padding: tuple[int, ...]

    def packed(self) -> tuple[int, ...]:
        head = (self.batch, self.channels, self.out_channels, self.groups, self.transposed)
        lists = (self.spatial, self.kernel, self.stride, self.padding, self.dilation)
        return (len(self.spatial), *head, *sum(lists, ()), *self.output_padding)

    @classmethod
    def unpacked(cls, shape: tuple[int, ...]) -> ConvShape:
        nd = shape[0]
        b, c, o, g, t = shape[1:6]
        rest = shape[6:]
        parts = [tuple(rest[i * nd : (i + 1) * nd]) for i in range(6)]
        return cls(b, c, o, g, t, *parts)

    def out_spatial(self) -> tuple[int, ...]:
        sizes = zip(
            self.spatial, self.kernel, self.stride, self.padding, self.dilation, strict=True
        )
        if self.transposed:
            return tuple(
                (i - 1) * s - 2 * p + d * (k - 1) + op + 1
                for (i, k, s, p, d), op in zip(sizes, self.output_padding, strict=True)
            )
        return tuple((i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, p, d in sizes)

    def weight_shape(self) -> tuple[int, ...]:
        if self.transposed:
            return (self.channels, self.out_channels // self.groups, *self.kernel)
        return (self.out_channels, self.channels // self.groups, *self.kernel)

    def flops(self) -> int:
        """As torch.utils.flop_counter counts a convolution."""
        conv_shape = self.spatial if self.transposed else self.out_spatial()
        return 2 * self.batch * math.prod(self.weight_shape()) * math.prod(conv_shape)


def _conv_class(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The images (a power of two, at most the batch) that fit CONV_FLOP_CAP, or one image
    halved until it fits (never below the kernel's span); channels, kernel, stride and groups
    as they are: they decide the kernel that runs."""
    conv = ConvShape.unpacked(shape)
    spatial = list(conv.spatial)
    spans = zip(conv.kernel, conv.stride, conv.dilation, strict=True)
    smallest = [d * (k - 1) + s for k, s, d in spans]
    sized = dataclasses.replace(conv, batch=1)
    while sized.flops() > CONV_FLOP_CAP:
        shrinkable = [i for i, size in enumerate(spatial) if size // 2 >= smallest[i]]
        if not shrinkable:
            break
        for i in shrinkable:
            spatial[i] = -(-spatial[i] // 2)
        sized = dataclasses.replace(sized, spatial=tuple(spatial))
    images = min(conv.batch, max(1, CONV_FLOP_CAP // max(1, sized.flops())))
    return dataclasses.replace(sized, batch=1 << (images.bit_length() - 1)).packed()


def _time_conv(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    conv = ConvShape.unpacked(shape)
    x = _random((conv.batch, conv.channels, *conv.spatial), dtype)
    w = _random(conv.weight_shape(), dtype)
    args = (conv.stride, conv.padding, conv.dilation, bool(conv.transposed), conv.output_padding)
    return _timed_no_grad(
        lambda: torch.ops.aten.convolution.default(x, w, None, *args, conv.groups)
    )


def _conv_backward_flops(shape: tuple[int, ...]) -> int:
    """Each gradient made (input's, weight's) costs the convolution's FLOPs."""
    return (shape[0] + shape[1]) * ConvShape.unpacked(shape[2:]).flops()


def _time_conv_backward(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    """aten.convolution_backward making the gradients `shape` asks for, in `dtype` (a
    training step's backward runs in the forward's dtypes: its own kernels, e.g. 20× faster
    than the forward's bfloat16 slow path under the AVX2 switches)."""
    mask = [bool(shape[0]), bool(shape[1]), False]
    conv = ConvShape.unpacked(shape[2:])
    x = _random((conv.batch, conv.channels, *conv.spatial), dtype)
    w = _random(conv.weight_shape(), dtype)
    grad = _random((conv.batch, conv.out_channels, *conv.out_spatial()), dtype)
    args = (conv.stride, conv.padding, conv.dilation, bool(conv.transposed), conv.output_padding)
    backward = torch.ops.aten.convolution_backward.default
    return _timed_no_grad(lambda: backward(grad, x, w, None, *args, conv.groups, mask))


# ---- attention ----------------------------------------------------------------------------
def _sdpa_flops(shape: tuple[int, ...]) -> int:
    heads, length, source, e, ev = shape
    return 2 * heads * length * source * (e + ev)


def _sdpa_class(shape: tuple[int, ...]) -> tuple[int, ...]:
    _heads, length, source, e, ev = shape
    length, source = power_of_two(length, 16, 512), power_of_two(source, 16, 512)
    heads = max(1, min(16, FLOP_CAP // _sdpa_flops((1, length, source, e, ev))))
    return heads, length, source, e, ev


def _time_sdpa(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    heads, length, source, e, ev = shape
    q = _random((1, heads, length, e), dtype)
    k, v = _random((1, heads, source, e), dtype), _random((1, heads, source, ev), dtype)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return _timed_no_grad(lambda: sdpa(q, k, v))


# ---- recurrent layers (oneDNN's LSTM) --------------------------------------------------------
def _rnn_flops(shape: tuple[int, ...]) -> int:
    steps, batch, inputs, hidden, gates, _mode = shape
    return 2 * steps * batch * gates * hidden * (inputs + hidden)


def _rnn_class(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Batch and widths rounded (batch ≤ 256, widths ≤ 512), at most _RNN_STEPS steps, fewer
    while over RNN_FLOP_CAP; the gates and the cell (`mode`) as they are."""
    steps, batch, inputs, hidden, gates, mode = shape
    sized = [
        power_of_two(steps, 1, _RNN_STEPS),
        power_of_two(batch, 1, 256),
        power_of_two(inputs, 1, 512),
        power_of_two(hidden, 16, 512),
        gates,
        mode,
    ]
    while sized[0] > 1 and _rnn_flops(tuple(sized)) > RNN_FLOP_CAP:
        sized[0] //= 2
    return tuple(sized)


def _time_rnn(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    """One layer of aten.mkldnn_rnn_layer (what nn.LSTM runs on oneDNN's path), in `dtype`:
    autocast casts its every input, as the run's does."""
    steps, batch, inputs, hidden, gates, mode = shape
    x = _random((steps, batch, inputs), dtype)
    weights = _random((gates * hidden, inputs), dtype), _random((gates * hidden, hidden), dtype)
    biases = _random((gates * hidden,), dtype), _random((gates * hidden,), dtype)
    state = _random((batch, hidden), dtype), _random((batch, hidden), dtype)
    no_batch_sizes: list[int] = []
    # reverse, batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional,
    # batch_first, train
    flags = (False, no_batch_sizes, mode, hidden, 1, True, False, False, False)
    layer = torch.ops.aten.mkldnn_rnn_layer.default
    return _timed_no_grad(lambda: layer(x, *weights, *biases, *state, *flags))


# ---- memory-bound ops and the cost of a call -----------------------------------------------
def _time_add(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    """Seconds of one elementwise add of two _BYTES_PER_TENSOR tensors (shape: item size)."""
    elements = _BYTES_PER_TENSOR // shape[0]
    a = torch.ones(elements, dtype=dtype or torch.float32)  # filled fast; no denormals
    return _timed_no_grad(lambda: torch.add(a, a))


def _time_layer_error(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    """Seconds to compare one layer's float32 output with its `dtype` twin (what the engine's
    recorded forwards do for every layer: numerics.layer_error)."""
    from autocast_explorer.core.numerics.layer_error import layer_error

    reference = _random((_COMPARED_ELEMENTS,), None)
    low = reference.to(dtype or torch.float32)
    return _timed_no_grad(lambda: layer_error(reference, low))


def _time_tiny_call(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    a, b = _random((1,), dtype), _random((1,), dtype)
    return _timed_no_grad(lambda: torch.add(a, b))


#: Kinds of the aten ops a traced forward runs (guards.CALIBRATIONS adds nn.Linear's).
ATEN_CALIBRATIONS: dict[str, OpCalibration] = {
    "aten.mm": OpCalibration("torch.mm", _mm_class, lambda s: 2 * math.prod(s), _time_mm),
    "aten.bmm": OpCalibration("torch.bmm", _bmm_class, lambda s: 2 * math.prod(s), _time_bmm),
    "aten.conv": OpCalibration(
        "convolution", _conv_class, lambda s: ConvShape.unpacked(s).flops(), _time_conv
    ),
    "aten.sdpa": OpCalibration(
        "scaled_dot_product_attention", _sdpa_class, _sdpa_flops, _time_sdpa
    ),
    "aten.conv_backward": OpCalibration(
        "convolution backward",
        lambda s: (s[0], s[1], *_conv_class(s[2:])),
        _conv_backward_flops,
        _time_conv_backward,
    ),
    "aten.rnn": OpCalibration("an LSTM layer (oneDNN)", _rnn_class, _rnn_flops, _time_rnn),
    # Its backward makes two gradients (input's, weights'), each the layer's FLOPs, taken at
    # the layer's own rate: timing it would need the forward's workspace.
    "aten.rnn_backward": OpCalibration(
        "an LSTM layer's backward (at the layer's rate)",
        _rnn_class,
        lambda s: 2 * _rnn_flops(s),
        lambda s, dtype: 2 * _time_rnn(s, dtype),
    ),
    "bytes": OpCalibration(
        "elementwise add (bytes moved)",
        lambda s: s,
        lambda s: 3 * _BYTES_PER_TENSOR,
        _time_add,
    ),
    "call": OpCalibration("one dispatched call", lambda s: (), lambda s: 1, _time_tiny_call),
    "layer_error": OpCalibration(
        "a layer's error (elements compared)",
        lambda s: (),
        lambda s: _COMPARED_ELEMENTS,
        _time_layer_error,
    ),
}


# ---- one traced aten call → its work -------------------------------------------------------
def tensors_in(value: object) -> list[torch.Tensor]:
    """Every tensor in an op's arguments or output (nested lists, tuples, dicts)."""
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def _mm_work(name: str, args: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    a, b = (args[1], args[2]) if name == "addmm" else (args[0], args[1])
    (m, k), n = a.shape, b.shape[1]
    # F.linear multiplies by the weight's transpose: a column-major right operand.
    linear = b.dim() == 2 and b.stride(0) == 1 and b.stride(1) != 1
    return ("linear" if linear else "aten.mm"), (int(m), int(k), int(n))


def _bmm_work(name: str, args: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    a, b = (args[1], args[2]) if name == "baddbmm" else (args[0], args[1])
    bs, m, k = a.shape
    return "aten.bmm", (int(bs), int(m), int(k), int(b.shape[2]))


def _conv_work(name: str, args: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    return "aten.conv", _conv_shape(args[0], args[1], args[3:9]).packed()


def _conv_backward_work(name: str, args: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    """convolution_backward(grad_output, input, weight, bias_sizes, stride, …, groups,
    output_mask): the gradients it makes (input's, weight's) and the convolution."""
    mask = args[10]
    conv = _conv_shape(args[1], args[2], args[4:10])
    return "aten.conv_backward", (int(mask[0]), int(mask[1]), *conv.packed())


def _conv_shape(x: torch.Tensor, w: torch.Tensor, params: Sequence[Any]) -> ConvShape:
    """A convolution's shape from its input, weight and (stride, padding, dilation,
    transposed, output_padding, groups)."""
    stride, padding, dilation, transposed, output_padding, groups = params
    nd = x.dim() - 2
    out = w.shape[1] * groups if transposed else w.shape[0]

    def each(values: Sequence[int]) -> tuple[int, ...]:
        values = tuple(int(v) for v in values)
        return values * nd if len(values) == 1 else values

    return ConvShape(
        batch=int(x.shape[0]),
        channels=int(x.shape[1]),
        out_channels=int(out),
        groups=int(groups),
        transposed=int(bool(transposed)),
        spatial=tuple(int(s) for s in x.shape[2:]),
        kernel=tuple(int(s) for s in w.shape[2:]),
        stride=each(stride),
        padding=each(padding),
        dilation=each(dilation),
        output_padding=each(output_padding),
    )


def _sdpa_work(name: str, args: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    q, k, v = args[0], args[1], args[2]
    heads = math.prod(q.shape[:-2])
    return "aten.sdpa", (int(heads), int(q.shape[-2]), int(k.shape[-2]), q.shape[-1], v.shape[-1])


def _rnn_work(name: str, args: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    """mkldnn_rnn_layer(input (steps, batch, in), w_ih, w_hh, b_ih, b_hh, hx (batch, hidden),
    cx, reverse, batch_sizes, mode, hidden_size, …): one layer, one direction."""
    x, w_ih, hx = args[0], args[1], args[5]
    hidden, mode = int(args[10]), int(args[9])
    batch, inputs = int(hx.shape[-2]), int(x.shape[-1])
    steps = x.numel() // max(1, batch * inputs)
    return "aten.rnn", (steps, batch, inputs, hidden, int(w_ih.shape[0]) // hidden, mode)


def _rnn_backward_work(name: str, args: Sequence[Any]) -> tuple[str, tuple[int, ...]]:
    """mkldnn_rnn_layer_backward(input, w_ih, w_hh, b_ih, b_hh, hx, cx, output, hy, cy,
    grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, …): the layer it differentiates."""
    x, w_ih, hx = args[0], args[1], args[5]
    hidden, mode = int(args[15]), int(args[14])
    batch, inputs = int(hx.shape[-2]), int(x.shape[-1])
    steps = x.numel() // max(1, batch * inputs)
    return "aten.rnn_backward", (steps, batch, inputs, hidden, int(w_ih.shape[0]) // hidden, mode)


#: aten op names (overload packets) with a calibration of their own, and how to read them.
_SHAPED: dict[str, Callable[[str, Sequence[Any]], tuple[str, tuple[int, ...]]]] = {
    "mm": _mm_work,
    "addmm": _mm_work,
    "bmm": _bmm_work,
    "baddbmm": _bmm_work,
    "convolution": _conv_work,
    "_convolution": _conv_work,
    "_scaled_dot_product_flash_attention_for_cpu": _sdpa_work,
    "_scaled_dot_product_attention_math": _sdpa_work,
    "_scaled_dot_product_flash_attention": _sdpa_work,
    "_scaled_dot_product_efficient_attention": _sdpa_work,
    "mkldnn_rnn_layer": _rnn_work,
    "convolution_backward": _conv_backward_work,
    "mkldnn_rnn_layer_backward": _rnn_backward_work,
}


def _float_name(tensors: Sequence[torch.Tensor]) -> str:
    """The dtype an op computes in: its first floating tensor's (float32 for integer ops)."""
    for t in tensors:
        if t.is_floating_point():
            return dtype_name(t.dtype)
    return "float32"


def op_works(
    func: Any, args: Sequence[Any], kwargs: dict[str, Any], out: object
) -> tuple[OpWork, ...]:
    """The work of one aten call seen by a dispatch mode: the bytes it read and wrote (none
    for a view: it moves nothing), and before them, for an op of a calibrated kind, its FLOPs
    at its shape. Both count: a product with a short inner size (attention scores over 8-wide
    heads) is bound by writing its large output, not by its multiplications."""
    name = func.__name__.split(".")[0]
    inputs = tensors_in((args, kwargs))
    outputs = tensors_in(out)
    if getattr(func, "is_view", False):
        return (OpWork("bytes", 0, (4,), "float32"),)
    moved = sum(t.numel() * t.element_size() for t in (*inputs, *outputs))
    dtype = _float_name([*outputs, *inputs])
    size = torch.empty((), dtype=getattr(torch, dtype)).element_size()
    memory = OpWork("bytes", int(moved), (size,), dtype)
    shaped = _SHAPED.get(name)
    if shaped is None or len(inputs) < 2:
        return (memory,)
    try:
        kind, shape = shaped(name, args)
    except (ValueError, TypeError, IndexError, AttributeError):
        return (memory,)  # an unusual call of a known op: counted by its bytes alone
    calibration = ATEN_CALIBRATIONS.get(kind)
    flops = calibration.flops(shape) if calibration is not None else 2 * math.prod(shape)
    return OpWork(kind, flops, shape, _float_name(inputs)), memory
