"""The ops the op-policy probe calls, each with inputs built for it, grouped by category.

Every op PyTorch lists for CPU autocast (the AMP docs' CPU lists and torch's own
`AutocastCPUTestLists`) is here, plus common unlisted ops for contrast. Inputs are small and
valid for the op: class targets for losses, 5-D tensors for 3-D pools, well-conditioned or
symmetric positive-definite matrices for linalg, a sequence and state for the LSTM. Only the
floating tensors an `inputs` function returns change dtype from case to case; integer targets,
indices and shapes stay fixed, so the measured dtype is the op's, not the test harness's.

`documented_as` names the aten op the published lists use when the probe reaches it through a
public call (F.cross_entropy reaches `cross_entropy_loss`, an LSTM `mkldnn_rnn_layer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from autocast_explorer.core.numerics.opcategories import CATEGORIES, category_slug

__all__ = ["CATEGORIES", "PROBED_OPS", "OpSpec", "category_slug", "randn_inputs"]


@dataclass(frozen=True)
class OpSpec:
    """How to call one op: its inputs from a generator, the call, its category.

    Non-floating arguments (class targets, dims, pivots) are either fixed inside `call` or
    returned by `inputs` as integer tensors, which keep their dtype in every case.
    """

    name: str
    inputs: Callable[[torch.Generator], list[torch.Tensor]]
    call: Callable[..., object]
    category: str = "pointwise"
    documented_as: str = ""

    @property
    def listed_name(self) -> str:
        """The name PyTorch's lists use for this op."""
        return self.documented_as or self.name


def randn_inputs(
    shapes: Sequence[tuple[int, ...]],
) -> Callable[[torch.Generator], list[torch.Tensor]]:
    """Standard-normal float32 tensors of `shapes`."""
    return lambda g: [torch.randn(*s, generator=g) for s in shapes]


def _spec(
    name: str,
    category: str,
    shapes: Sequence[tuple[int, ...]],
    call: Callable[..., object],
    documented_as: str = "",
) -> OpSpec:
    return OpSpec(name, randn_inputs(shapes), call, category, documented_as)


def _built(
    name: str,
    category: str,
    inputs: Callable[[torch.Generator], list[torch.Tensor]],
    call: Callable[..., object],
    documented_as: str = "",
) -> OpSpec:
    return OpSpec(name, inputs, call, category, documented_as)


_N = 4
_TARGET = torch.tensor([1, 0, 3, 2])


def _spd(g: torch.Generator, n: int = _N) -> torch.Tensor:
    """A symmetric positive-definite matrix with eigenvalues ≥ n (condition number small)."""
    a = torch.randn(n, n, generator=g)
    return a @ a.T + n * torch.eye(n)


def _well_conditioned(g: torch.Generator, n: int = _N) -> torch.Tensor:
    """A general square matrix dominated by its diagonal: invertible, condition number small."""
    return torch.randn(n, n, generator=g) + 2 * n * torch.eye(n)


def _signs(g: torch.Generator, *shape: int) -> torch.Tensor:
    """±1 targets as float32 (ranking and embedding losses take them as floating tensors)."""
    return torch.randint(0, 2, shape, generator=g).float() * 2 - 1


def _batch_norm_inputs(g: torch.Generator) -> list[torch.Tensor]:
    x, mean, w, b = (torch.randn(*s, generator=g) for s in ((4, 8), (8,), (8,), (8,)))
    var = torch.rand(8, generator=g) + 0.5
    return [x, mean, var, w, b]


def _lstm_inputs(g: torch.Generator) -> list[torch.Tensor]:
    """A 5-step sequence of batch 2, features 8, hidden 6, with LSTM weights and state."""
    hidden, features = 6, 8
    shapes = [
        (5, 2, features),
        (1, 2, hidden),
        (1, 2, hidden),
        (4 * hidden, features),
        (4 * hidden, hidden),
        (4 * hidden,),
        (4 * hidden,),
    ]
    return [torch.randn(*s, generator=g) * 0.5 for s in shapes]


def _lstm(
    x: torch.Tensor,
    h0: torch.Tensor,
    c0: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.lstm(x, (h0, c0), [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0, False, False, False)


def _gru_inputs(g: torch.Generator) -> list[torch.Tensor]:
    hidden, features = 6, 8
    shapes = [(5, 2, features), (1, 2, hidden), (3 * hidden, features), (3 * hidden, hidden)]
    shapes += [(3 * hidden,), (3 * hidden,)]
    return [torch.randn(*s, generator=g) * 0.5 for s in shapes]


def _gru(
    x: torch.Tensor,
    h0: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.gru(x, h0, [w_ih, w_hh, b_ih, b_hh], True, 1, 0.0, False, False, False)


def _mha_inputs(g: torch.Generator) -> list[torch.Tensor]:
    e = 8
    shapes = [(2, 4, e), (2, 4, e), (2, 4, e), (3 * e, e), (3 * e,), (e, e), (e,)]
    return [torch.randn(*s, generator=g) for s in shapes]


def _native_mha(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    qkv_w: torch.Tensor,
    qkv_b: torch.Tensor,
    proj_w: torch.Tensor,
    proj_b: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    return torch._native_multi_head_attention(q, k, v, 8, 2, qkv_w, qkv_b, proj_w, proj_b)


def _convolution_deprecated(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # Autocast registers the overload without `allow_tf32` (`_convolution.deprecated`).
    out: torch.Tensor = torch.ops.aten._convolution.deprecated(
        x, w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, False, False, True
    )
    return out


def _geqrf_inputs(g: torch.Generator) -> list[torch.Tensor]:
    a, tau = torch.geqrf(_well_conditioned(g))
    return [a, tau]


def _ormqr_inputs(g: torch.Generator) -> list[torch.Tensor]:
    return [*_geqrf_inputs(g), torch.randn(_N, 2, generator=g)]


def _lu_solve_inputs(g: torch.Generator) -> list[torch.Tensor]:
    lu, pivots = torch.linalg.lu_factor(_well_conditioned(g))
    return [torch.randn(_N, 2, generator=g), lu, pivots]


def _cholesky_factor_inputs(g: torch.Generator) -> list[torch.Tensor]:
    return [torch.randn(_N, 2, generator=g), torch.linalg.cholesky(_spd(g))]


def _tensorinv_inputs(g: torch.Generator) -> list[torch.Tensor]:
    return [_well_conditioned(g, 8).reshape(8, 2, 4)]


def _tensorsolve_inputs(g: torch.Generator) -> list[torch.Tensor]:
    return [_well_conditioned(g, 6).reshape(2, 3, 2, 3), torch.randn(2, 3, generator=g)]


def _upper(g: torch.Generator) -> torch.Tensor:
    return torch.triu(_well_conditioned(g))


def _unpool_inputs(dims: int) -> Callable[[torch.Generator], list[torch.Tensor]]:
    """Pooled values (floating) and their indices (int64) for max_unpool{2,3}d."""

    def build(g: torch.Generator) -> list[torch.Tensor]:
        x = torch.randn(1, 2, *([4] * dims), generator=g)
        pool = F.max_pool2d if dims == 2 else F.max_pool3d
        values, indices = pool(x, 2, return_indices=True)
        return [values, indices]

    return build


def _fractional_inputs(dims: int) -> Callable[[torch.Generator], list[torch.Tensor]]:
    """Input and fixed random samples (so the op is deterministic) for fractional pooling."""

    def build(g: torch.Generator) -> list[torch.Tensor]:
        return [torch.randn(1, 2, *([8] * dims), generator=g), torch.rand(1, 2, dims, generator=g)]

    return build


def _ctc_inputs(g: torch.Generator) -> list[torch.Tensor]:
    log_probs = torch.randn(6, 2, 5, generator=g).log_softmax(-1)
    targets = torch.randint(1, 5, (2, 3), generator=g)
    return [log_probs, targets]


def _ctc(log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    lengths = torch.tensor([6, 6])
    return F.ctc_loss(log_probs, targets, lengths, torch.tensor([3, 2]))


def _multilabel_target() -> torch.Tensor:
    return torch.tensor([[3, 0, -1, 1], [1, 2, -1, 0], [0, -1, 1, 1], [2, 3, 1, -1]])


def _index_copy_inputs(g: torch.Generator) -> list[torch.Tensor]:
    return [torch.randn(5, 3, generator=g), torch.randn(2, 3, generator=g)]


def _sdpa_inputs(g: torch.Generator) -> list[torch.Tensor]:
    return [torch.randn(1, 2, 4, 8, generator=g) for _ in range(3)]


_REDUCTION_MEAN = 1  # at::Reduction::Mean, for the aten-level loss calls


def _common_ops() -> tuple[OpSpec, ...]:
    mc, ar, an = "matmul-conv", "attention-rnn", "activations-norms"
    return (
        # ---- matmul & conv ------------------------------------------------------------------
        _spec("linear", mc, [(4, 8), (6, 8), (6,)], F.linear),
        _spec("matmul", mc, [(4, 8), (8, 6)], torch.matmul),
        _spec("mm", mc, [(4, 8), (8, 6)], torch.mm),
        _spec("addmm", mc, [(4, 6), (4, 8), (8, 6)], torch.addmm),
        _spec(
            "_addmm_activation",
            mc,
            [(4, 6), (4, 8), (8, 6)],
            lambda a, b, c: torch._addmm_activation(a, b, c, use_gelu=True),
        ),
        _spec("bmm", mc, [(2, 4, 8), (2, 8, 6)], torch.bmm),
        _spec("baddbmm", mc, [(2, 4, 6), (2, 4, 8), (2, 8, 6)], torch.baddbmm),
        _spec("addbmm", mc, [(4, 6), (2, 4, 8), (2, 8, 6)], torch.addbmm),
        _spec("linalg_vecdot", mc, [(4, 8), (4, 8)], torch.linalg.vecdot),
        _spec("einsum", mc, [(4, 8), (8, 6)], lambda a, b: torch.einsum("ij,jk->ik", a, b)),
        _spec("conv1d", mc, [(2, 3, 16), (4, 3, 3), (4,)], F.conv1d),
        _spec("conv2d", mc, [(2, 3, 8, 8), (4, 3, 3, 3), (4,)], F.conv2d),
        _spec("conv3d", mc, [(1, 2, 4, 4, 4), (3, 2, 2, 2, 2), (3,)], F.conv3d),
        _spec("conv_transpose1d", mc, [(2, 3, 8), (3, 4, 3), (4,)], F.conv_transpose1d),
        _spec("conv_transpose2d", mc, [(2, 3, 5, 5), (3, 4, 3, 3), (4,)], F.conv_transpose2d),
        _spec("conv_transpose3d", mc, [(1, 2, 3, 3, 3), (2, 3, 2, 2, 2), (3,)], F.conv_transpose3d),
        _spec(
            "conv_tbc", mc, [(10, 2, 3), (3, 3, 4), (4,)], lambda x, w, b: torch.conv_tbc(x, w, b)
        ),
        _spec("_convolution", mc, [(2, 3, 6, 6), (4, 3, 3, 3), (4,)], _convolution_deprecated),
        _spec("prelu", mc, [(4, 8), (1,)], F.prelu),
        # ---- attention & rnn ----------------------------------------------------------------
        _built("scaled_dot_product_attention", ar, _sdpa_inputs, F.scaled_dot_product_attention),
        _built("_native_multi_head_attention", ar, _mha_inputs, _native_mha),
        _built("lstm", ar, _lstm_inputs, _lstm, documented_as="mkldnn_rnn_layer"),
        _built("gru", ar, _gru_inputs, _gru),
        # ---- activations & norms ------------------------------------------------------------
        _spec("relu", an, [(4, 8)], F.relu),
        _spec("gelu", an, [(4, 8)], F.gelu),
        _spec("silu", an, [(4, 8)], F.silu),
        _spec("sigmoid", an, [(4, 8)], torch.sigmoid),
        _spec("tanh", an, [(4, 8)], torch.tanh),
        _spec("softplus", an, [(4, 8)], F.softplus),
        _spec("softmax", an, [(4, 8)], lambda x: F.softmax(x, dim=-1)),
        _spec("log_softmax", an, [(4, 8)], lambda x: F.log_softmax(x, dim=-1)),
        _spec("layer_norm", an, [(4, 8), (8,), (8,)], lambda x, w, b: F.layer_norm(x, (8,), w, b)),
        _spec("group_norm", an, [(4, 8), (8,), (8,)], lambda x, w, b: F.group_norm(x, 2, w, b)),
        _built(
            "batch_norm",
            an,
            _batch_norm_inputs,
            lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
        ),
        _spec("normalize", an, [(4, 8)], F.normalize),
    )


def _reduction_and_pointwise_ops() -> tuple[OpSpec, ...]:
    rd, pw = "reductions", "pointwise"
    return (
        # ---- reductions ---------------------------------------------------------------------
        _spec("mean", rd, [(4, 8)], torch.mean),
        _spec("sum", rd, [(4, 8)], torch.sum),
        _spec("prod", rd, [(4, 8)], torch.prod),
        _spec("cumsum", rd, [(4, 8)], lambda x: torch.cumsum(x, dim=0)),
        _spec("cumprod", rd, [(4, 8)], lambda x: torch.cumprod(x, dim=0)),
        _spec("logsumexp", rd, [(4, 8)], lambda x: torch.logsumexp(x, dim=-1)),
        _spec("norm", rd, [(4, 8)], torch.norm),
        _spec("var", rd, [(4, 8)], torch.var),
        _spec("trace", rd, [(4, 4)], torch.trace),
        _spec("quantile", rd, [(4, 8)], lambda x: torch.quantile(x, 0.25)),
        _spec("nanquantile", rd, [(4, 8)], lambda x: torch.nanquantile(x, 0.75)),
        # ---- pointwise ----------------------------------------------------------------------
        _spec("exp", pw, [(4, 8)], torch.exp),
        _spec("log", pw, [(4, 8)], lambda x: torch.log(x.abs() + 0.5)),
        _spec("pow", pw, [(4, 8)], lambda x: torch.pow(x, 2)),
        _spec("rsqrt", pw, [(4, 8)], lambda x: torch.rsqrt(x.abs() + 0.5)),
        _spec("add", pw, [(4, 8), (4, 8)], torch.add),
        _spec("mul", pw, [(4, 8), (4, 8)], torch.mul),
        _spec("div", pw, [(4, 8), (4, 8)], torch.div),
        _spec("cat", pw, [(4, 8), (4, 8)], lambda a, b: torch.cat([a, b])),
        _spec("stack", pw, [(4, 8), (4, 8)], lambda a, b: torch.stack([a, b])),
        _built(
            "index_copy",
            pw,
            _index_copy_inputs,
            lambda x, src: torch.index_copy(x, 0, torch.tensor([4, 1]), src),
        ),
        _spec(
            "fake_quantize_per_tensor_affine",
            pw,
            [(4, 8)],
            lambda x: torch.fake_quantize_per_tensor_affine(x, 0.05, 0, -128, 127),
        ),
    )


def _loss_ops() -> tuple[OpSpec, ...]:
    return (*_regression_and_likelihood_losses(), *_margin_and_sequence_losses())


def _regression_and_likelihood_losses() -> tuple[OpSpec, ...]:
    ls = "losses"
    return (
        _spec("mse_loss", ls, [(4, 8), (4, 8)], F.mse_loss),
        _spec("l1_loss", ls, [(4, 8), (4, 8)], F.l1_loss),
        _spec("smooth_l1_loss", ls, [(4, 8), (4, 8)], F.smooth_l1_loss),
        _spec("huber_loss", ls, [(4, 8), (4, 8)], F.huber_loss),
        _spec(
            "cross_entropy",
            ls,
            [(4, 8)],
            lambda x: F.cross_entropy(x, _TARGET),
            documented_as="cross_entropy_loss",
        ),
        _spec("nll_loss", ls, [(4, 8)], lambda x: F.nll_loss(x.log_softmax(-1), _TARGET)),
        _built(
            "nll_loss2d",
            ls,
            lambda g: [torch.randn(2, 4, 3, 3, generator=g).log_softmax(1)],
            lambda x: F.nll_loss(x, torch.tensor([[[0, 1, 2], [3, 0, 1], [2, 2, 3]]] * 2)),
        ),
        _built(
            "binary_cross_entropy",
            ls,
            lambda g: [torch.rand(4, 8, generator=g) * 0.8 + 0.1, torch.rand(4, 8, generator=g)],
            F.binary_cross_entropy,
        ),
        _built(
            "binary_cross_entropy_with_logits",
            ls,
            lambda g: [torch.randn(4, 8, generator=g), torch.rand(4, 8, generator=g)],
            F.binary_cross_entropy_with_logits,
        ),
        _built(
            "kl_div",
            ls,
            lambda g: [
                torch.randn(4, 8, generator=g).log_softmax(-1),
                torch.randn(4, 8, generator=g).softmax(-1),
            ],
            lambda x, t: F.kl_div(x, t, reduction="batchmean"),
        ),
        _built(
            "poisson_nll_loss",
            ls,
            lambda g: [torch.randn(4, 8, generator=g), torch.rand(4, 8, generator=g) * 3],
            F.poisson_nll_loss,
        ),
    )


def _margin_and_sequence_losses() -> tuple[OpSpec, ...]:
    ls = "losses"
    return (
        _built(
            "soft_margin_loss",
            ls,
            lambda g: [torch.randn(4, 8, generator=g), _signs(g, 4, 8)],
            F.soft_margin_loss,
        ),
        _built(
            "margin_ranking_loss",
            ls,
            lambda g: [torch.randn(8, generator=g), torch.randn(8, generator=g), _signs(g, 8)],
            F.margin_ranking_loss,
        ),
        _spec("triplet_margin_loss", ls, [(4, 8), (4, 8), (4, 8)], F.triplet_margin_loss),
        _built(
            "hinge_embedding_loss",
            ls,
            lambda g: [torch.randn(4, 8, generator=g), _signs(g, 4, 8)],
            F.hinge_embedding_loss,
        ),
        _built(
            "cosine_embedding_loss",
            ls,
            lambda g: [
                torch.randn(4, 8, generator=g),
                torch.randn(4, 8, generator=g),
                _signs(g, 4),
            ],
            F.cosine_embedding_loss,
        ),
        _spec("multi_margin_loss", ls, [(4, 8)], lambda x: F.multi_margin_loss(x, _TARGET)),
        _spec(
            "multilabel_margin_loss",
            ls,
            [(4, 4)],
            lambda x: F.multilabel_margin_loss(x, _multilabel_target()),
        ),
        _spec(
            "multilabel_margin_loss_forward",
            ls,
            [(4, 4)],
            lambda x: torch.ops.aten.multilabel_margin_loss_forward(
                x, _multilabel_target(), _REDUCTION_MEAN
            ),
        ),
        _built("ctc_loss", ls, _ctc_inputs, _ctc),
    )


def _linalg_ops() -> tuple[OpSpec, ...]:
    la = "linalg"

    def square(g: torch.Generator) -> list[torch.Tensor]:
        return [_well_conditioned(g)]

    def spd(g: torch.Generator) -> list[torch.Tensor]:
        return [_spd(g)]

    def system(g: torch.Generator) -> list[torch.Tensor]:
        return [_well_conditioned(g), torch.randn(_N, 2, generator=g)]

    return (
        _spec("cdist", la, [(4, 8), (5, 8)], torch.cdist),
        _built("inverse", la, square, torch.inverse),
        _built("pinverse", la, lambda g: [torch.randn(5, 3, generator=g)], torch.pinverse),
        _built("cholesky", la, spd, torch.cholesky),
        _built(
            "cholesky_inverse",
            la,
            lambda g: [torch.linalg.cholesky(_spd(g))],
            torch.cholesky_inverse,
        ),
        _built(
            "cholesky_solve",
            la,
            _cholesky_factor_inputs,
            torch.cholesky_solve,
        ),
        _built("lu_solve", la, _lu_solve_inputs, torch.lu_solve),
        _built("orgqr", la, _geqrf_inputs, torch.orgqr),
        _built("ormqr", la, _ormqr_inputs, torch.ormqr),
        _built("geqrf", la, square, torch.geqrf),
        _built("qr", la, square, torch.qr),
        _built("svd", la, square, torch.svd),
        _built(
            "triangular_solve",
            la,
            lambda g: [torch.randn(_N, 2, generator=g), _upper(g)],
            torch.triangular_solve,
        ),
        _built("_lu_with_info", la, square, torch._lu_with_info),
        _built("linalg_cond", la, square, torch.linalg.cond),
        _built("linalg_matrix_rank", la, square, torch.linalg.matrix_rank),
        _built("linalg_solve", la, system, torch.linalg.solve),
        _built("linalg_cholesky", la, spd, torch.linalg.cholesky),
        _built("linalg_cholesky_ex", la, spd, torch.linalg.cholesky_ex),
        _built("linalg_svdvals", la, square, torch.linalg.svdvals),
        _built("linalg_svd", la, square, torch.linalg.svd),
        _built("linalg_eigvalsh", la, spd, torch.linalg.eigvalsh),
        _built("linalg_eigh", la, spd, torch.linalg.eigh),
        _built("linalg_inv", la, square, torch.linalg.inv),
        _built("linalg_inv_ex", la, square, torch.linalg.inv_ex),
        _built("linalg_qr", la, square, torch.linalg.qr),
        _built("linalg_householder_product", la, _geqrf_inputs, torch.linalg.householder_product),
        _built(
            "linalg_tensorinv", la, _tensorinv_inputs, lambda a: torch.linalg.tensorinv(a, ind=1)
        ),
        _built("linalg_tensorsolve", la, _tensorsolve_inputs, torch.linalg.tensorsolve),
        _built(
            "linalg_lstsq",
            la,
            lambda g: [torch.randn(6, _N, generator=g), torch.randn(6, 2, generator=g)],
            torch.linalg.lstsq,
        ),
    )


def _pooling_ops() -> tuple[OpSpec, ...]:
    pp = "pooling-padding"
    five_d = [(1, 2, 4, 4, 4)]

    def grid_2d(g: torch.Generator) -> list[torch.Tensor]:
        return [torch.randn(1, 2, 4, 4, generator=g), torch.rand(1, 3, 3, 2, generator=g) * 2 - 1]

    def grid_3d(g: torch.Generator) -> list[torch.Tensor]:
        x = torch.randn(1, 2, 4, 4, 4, generator=g)
        return [x, torch.rand(1, 3, 3, 3, 3, generator=g) * 2 - 1]

    return (
        _spec("max_pool2d", pp, [(1, 2, 4, 4)], lambda x: F.max_pool2d(x, 2)),
        _spec("avg_pool2d", pp, [(1, 2, 4, 4)], lambda x: F.avg_pool2d(x, 2)),
        _spec("avg_pool3d", pp, five_d, lambda x: F.avg_pool3d(x, 2)),
        _spec("max_pool3d", pp, five_d, lambda x: F.max_pool3d(x, 2)),
        _spec("adaptive_avg_pool3d", pp, five_d, lambda x: F.adaptive_avg_pool3d(x, 2)),
        _spec("adaptive_max_pool3d", pp, five_d, lambda x: F.adaptive_max_pool3d(x, 2)),
        _built(
            "fractional_max_pool2d",
            pp,
            _fractional_inputs(2),
            lambda x, s: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s),
        ),
        _built(
            "fractional_max_pool3d",
            pp,
            _fractional_inputs(3),
            lambda x, s: F.fractional_max_pool3d(x, 2, output_size=3, _random_samples=s),
        ),
        _built("max_unpool2d", pp, _unpool_inputs(2), lambda v, i: F.max_unpool2d(v, i, (2, 2))),
        _built("max_unpool3d", pp, _unpool_inputs(3), lambda v, i: F.max_unpool3d(v, i, (2, 2, 2))),
        _spec("reflection_pad1d", pp, [(2, 3, 8)], lambda x: F.pad(x, (2, 2), mode="reflect")),
        _spec("reflection_pad2d", pp, [(1, 2, 4, 4)], lambda x: F.pad(x, (1, 1, 1, 1), "reflect")),
        _spec("replication_pad1d", pp, [(2, 3, 8)], lambda x: F.pad(x, (2, 2), mode="replicate")),
        _spec(
            "replication_pad2d",
            pp,
            [(1, 2, 4, 4)],
            lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate"),
        ),
        _spec("replication_pad3d", pp, five_d, lambda x: F.pad(x, (1,) * 6, mode="replicate")),
        _built(
            "grid_sampler",
            pp,
            grid_2d,
            lambda x, grid: F.grid_sample(x, grid, align_corners=False),
        ),
        _built(
            "grid_sampler_2d",
            pp,
            grid_2d,
            lambda x, grid: torch.grid_sampler_2d(x, grid, 0, 0, False),
        ),
        _built(
            "_grid_sampler_2d_cpu_fallback",
            pp,
            grid_2d,
            lambda x, grid: torch._grid_sampler_2d_cpu_fallback(x, grid, 0, 0, False),
        ),
        _built(
            "grid_sampler_3d",
            pp,
            grid_3d,
            lambda x, grid: torch.grid_sampler_3d(x, grid, 0, 0, False),
        ),
    )


def _comparison_ops() -> tuple[OpSpec, ...]:
    two = [(4, 8), (4, 8)]
    return tuple(
        _spec(name, "comparisons", two, getattr(torch, name))
        for name in ("eq", "ne", "lt", "le", "gt", "ge")
    )


def _fft_ops() -> tuple[OpSpec, ...]:
    fc = "fft-complex"
    one_d = [(4, 8)]
    specs = [
        _spec(f"fft_{kind}", fc, one_d, getattr(torch.fft, kind))
        for kind in (
            "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
            "rfftn", "irfftn", "hfft", "ihfft",
        )
    ]  # fmt: skip
    specs += [
        _spec(
            "stft",
            fc,
            [(32,)],
            lambda x: torch.stft(x, 8, window=torch.ones(8), return_complex=True),
        ),
        _built(
            "polar",
            fc,
            lambda g: [torch.rand(4, 8, generator=g) + 0.1, torch.randn(4, 8, generator=g)],
            torch.polar,
        ),
        _spec("view_as_complex", fc, [(4, 8, 2)], torch.view_as_complex),
        _built("linalg_eigvals", fc, lambda g: [_well_conditioned(g)], torch.linalg.eigvals),
        _built("linalg_eig", fc, lambda g: [_well_conditioned(g)], torch.linalg.eig),
    ]
    return tuple(specs)


#: Every probed op, in display order (categories in CATEGORIES order).
PROBED_OPS: tuple[OpSpec, ...] = (
    *_common_ops(),
    *_reduction_and_pointwise_ops(),
    *_loss_ops(),
    *_linalg_ops(),
    *_pooling_ops(),
    *_comparison_ops(),
    *_fft_ops(),
)
