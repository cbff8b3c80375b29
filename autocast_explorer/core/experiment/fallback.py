"""Silent float32: autocast asked for a low dtype, a listed layer returned float32, no error.

PyTorch's CPU autocast lists say which ops run in the low dtype (core/numerics/documented).
When a layer whose op is on that list returns float32 under autocast, nothing raised and
nothing warned: torch took another path (an nn.LSTM runs `mkldnn_rnn_layer`, the listed op,
only when its oneDNN path is on; otherwise torch's own cell, whose output is float32). That is
a finding, not a dtype to read past. The op trace says what ran instead: whether the listed
op was dispatched at all, and in which dtype the forward's matrix products ran.

Not a finding: a layer whose op is on no list (nn.GRU's `gru`) returning float32 — that is
what the lists say unlisted ops do, whatever ran inside (a GRU computes bf16 `addmm`s and
returns float32 on every CPU).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.numerics.compute import PRODUCT_OPS
from autocast_explorer.core.numerics.optrace import OpRecord

FLOAT_DTYPES = frozenset({"float32", "float64", "bfloat16", "float16"})


@dataclass(frozen=True)
class SilentFallback:
    """One layer that returned float32 where the lists put its op in the autocast dtype."""

    layer: str
    kind: str
    op: str  # the name PyTorch's lists use ('mkldnn_rnn_layer' for an LSTM)
    lists: tuple[str, ...]
    dtype: str  # the autocast dtype asked for
    traced: bool  # whether the result has an op trace to say more
    op_calls: dict[str, int]  # listed op's calls in the autocast forward, by compute dtype
    products: dict[str, int]  # every matrix product of the autocast forward, by compute dtype
    onednn_low: bool | None = None  # torch's oneDNN answer for the dtype (None: not asked)

    @property
    def headline(self) -> str:
        # "silently": the run recorded no error (silent_fallbacks is empty when one was raised);
        # warnings are not recorded, so none is claimed.
        return (
            f"{self.dtype} autocast silently kept {self.layer} ({self.kind}) in float32: "
            "no error raised"
        )

    @property
    def meaning(self) -> str:
        """What happened, from the lists and the op trace, and what it means for the user.

        Every clause that names a dtype or a cause is read from this run: the lists from the
        installed torch, the op's calls and the products from the op trace; without a trace the
        cause is left open rather than guessed."""
        text = (
            f"Autocast asked for {self.dtype}, and {self.layer} returned float32 without raising "
            f"an error, although PyTorch's CPU autocast lists its op, {self.op}, among the ops "
            f"that run in {self.dtype}."
        )
        if self.traced:
            text += " " + self._evidence()
        if self.onednn_low is False:
            text += f" torch's oneDNN reports no {self.dtype} support on this CPU."
        return text + " " + self._cause()

    def _cause(self) -> str:
        """Why the table shows float32, as far as this run's op trace tells."""
        if not self.traced:
            return (
                "Which path torch took for this layer, and in which dtype its maths ran, is not "
                "recorded in this result, so it is not known here."
            )
        ran = {dtype: n for dtype, n in self.op_calls.items() if n}
        if not ran:
            return (
                "The float32 in the dtype table is where torch's other path left this layer's "
                f"output, not an op on the float32 list: {self.op}, the op the lists give "
                f"{self.dtype}, did not run here."
            )
        if set(ran) == {self.dtype}:
            return (
                f"{self.op} itself ran in {self.dtype} here, as the lists say; the float32 is "
                "what the layer returned after it."
            )
        return (
            f"{self.op} ran {_counted(ran)} here: on this run the lists' {self.dtype} did not "
            "hold for it."
        )

    def _evidence(self) -> str:
        head = "In the op trace of the autocast forward"
        if sum(self.op_calls.values()) == 0:
            said = f"{head}, {self.op} never ran: torch took another path for this layer"
        else:
            said = f"{head}, {self.op} ran {_counted(self.op_calls)}"
        if not self.products:
            return said + "."
        return (
            f"{said}; the forward's matrix products (every layer's) ran {_counted(self.products)}."
        )


def _counted(by_dtype: dict[str, int]) -> str:
    """'3× in float32, 1× in bfloat16'."""
    return ", ".join(f"{n}× in {dtype}" for dtype, n in by_dtype.items())


def _op_packet(record: OpRecord) -> str:
    """'aten.addmm.default' → 'addmm'."""
    parts = record.op.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _compute_dtype(record: OpRecord) -> str:
    return next((d for d in record.in_dtypes if d in FLOAT_DTYPES), "?")


def listed_op(kind: str) -> tuple[str, str, tuple[str, ...]]:
    """(listed op name, documented policy, lists) for a module kind; ('', '', ()) if unknown.

    A module kind maps to the probe's op of the same name (Linear → linear, LSTM → lstm,
    documented as mkldnn_rnn_layer), so the module and the op probe read the same lists.
    """
    from autocast_explorer.core.numerics.documented import documented
    from autocast_explorer.core.numerics.opcatalog import PROBED_OPS

    name = kind.lower().replace("convtranspose", "conv_transpose")
    spec = next((s for s in PROBED_OPS if s.name == name), None)
    if spec is None:
        return "", "", ()
    doc = documented(spec.listed_name)
    return spec.listed_name, doc.policy, doc.lists


def silent_fallbacks(result: ExperimentResult) -> tuple[SilentFallback, ...]:
    """Every layer that returned float32 under autocast although its op is on the lower list
    (a layer the run kept in float32 was asked to: no finding)."""
    low = result.config.dtype
    if result.autocast_error or low == "float32":
        return ()
    trace = result.op_trace
    records = trace.autocast if trace is not None else ()
    env = result.environment
    onednn = env.torch_bf16_supported if low == "bfloat16" else env.torch_fp16_supported
    products = Counter(_compute_dtype(r) for r in records if _op_packet(r) in PRODUCT_OPS)
    found = []
    for layer in result.layers:
        auto = layer.autocast
        if auto is None or auto.out_dtype != "float32" or auto.in_dtype not in FLOAT_DTYPES:
            continue
        if layer.kept_float32:
            continue
        op, policy, lists = listed_op(layer.kind)
        if policy != "lower":
            continue
        calls = Counter(_compute_dtype(r) for r in records if _op_packet(r) == op)
        found.append(
            SilentFallback(
                layer=layer.name,
                kind=layer.kind,
                op=op,
                lists=lists,
                dtype=low,
                traced=trace is not None,
                op_calls=dict(calls),
                products=dict(products),
                onednn_low=onednn,
            )
        )
    return tuple(found)
