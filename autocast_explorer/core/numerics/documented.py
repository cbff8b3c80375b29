"""What PyTorch documents about each op under CPU autocast, to set beside what was measured.

Two publications, read differently:

- the AMP docs' CPU lists (docs/source/amp.md, "CPU Op-Specific Behavior"), copied below
  with the commit they were taken from: they change only when a person edits the docs;
- torch's own test expectations, `AutocastCPUTestLists` in
  torch/testing/_internal/autocast_test_lists.py, read from the INSTALLED wheel at run time
  (parsed as text with `ast`: importing it needs `expecttest`), so they follow the torch in use.

An op on neither list is documented too: the docs say unlisted ops "run in the type defined by
their inputs" (our `follows` or `promote`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import Field

from autocast_explorer.core.documents.field_types import NullableText, Text, Texts
from autocast_explorer.core.documents.model import Part

#: Where the docs' lists below were copied from, stated once wherever they are shown.
DOCS_ORIGIN = (
    "PyTorch AMP docs, docs/source/amp.md 'CPU Op-Specific Behavior' (pytorch/pytorch main at "
    "commit 57ba4129, read for torch 2.13; identical to the AutocastCPU registrations in "
    "aten/src/ATen/autocast_mode.cpp)"
)
DOCS_LOWER_LIST = "CPU Ops that can autocast to bfloat16"
DOCS_FP32_LIST = "CPU Ops that can autocast to float32"
DOCS_PROMOTE_LIST = "CPU Ops that promote to the widest input type"

#: "CPU Ops that can autocast to `bfloat16`" (float16 shares the lists).
DOCS_LOWER: tuple[str, ...] = (
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm",
    "linear", "matmul", "_convolution", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention",
)  # fmt: skip
#: "CPU Ops that can autocast to `float32`" (the docs list `inverse` twice; kept once).
DOCS_FP32: tuple[str, ...] = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "grid_sampler_2d",
    "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
    "poisson_nll_loss", "cross_entropy_loss", "l1_loss", "huber_loss", "margin_ranking_loss",
    "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft",
    "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2",
    "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond",
    "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product",
    "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf",
    "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_lstsq", "linalg_inv_ex",
)  # fmt: skip
#: "CPU Ops that promote to the widest input type".
DOCS_PROMOTE: tuple[str, ...] = ("cat", "stack", "index_copy")
#: Ops on the docs' lists whose result (or whole purpose) is complex: excluded from the
#: "real-valued" coverage the probe is held to, though the probe runs them too.
COMPLEX_VALUED: frozenset[str] = frozenset(
    {
        "polar", "stft", "view_as_complex", "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2",
        "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2",
        "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_eigvals", "linalg_eig",
    }
)  # fmt: skip

#: torch's CPU test lists and the policy each one expects, in the file's order.
TEST_LIST_POLICIES: dict[str, str] = {
    "torch_16": "lower",
    "nn_16": "lower",
    "torch_fp32": "fp32",
    "nn_fp32": "fp32",
    "torch_expect_builtin_promote": "promote",
    "torch_need_autocast_promote": "promote",
}
TEST_LISTS_CLASS = "AutocastCPUTestLists"
TEST_LISTS_FILE = ("testing", "_internal", "autocast_test_lists.py")
#: The unlisted case, as the docs put it.
UNLISTED = "unlisted"
UNLISTED_MEANING = "is on no CPU list, so it runs in the type defined by its inputs"
#: Measured policies that agree with each documented one.
AGREEING: dict[str, frozenset[str]] = {
    "lower": frozenset({"lower"}),
    "fp32": frozenset({"fp32"}),
    "promote": frozenset({"promote"}),
    UNLISTED: frozenset({"follows", "promote"}),
}


@dataclass(frozen=True)
class TestLists:
    """torch's `AutocastCPUTestLists` as read from the installed wheel."""

    path: str
    torch_version: str
    lists: dict[str, tuple[str, ...]] = field(default_factory=dict)
    problem: str = ""

    def ops(self) -> dict[str, str]:
        """op → expected policy, over the lists in TEST_LIST_POLICIES."""
        expected: dict[str, str] = {}
        for name, policy in TEST_LIST_POLICIES.items():
            for op in self.lists.get(name, ()):
                expected.setdefault(op, policy)
        return expected

    def membership(self, op: str) -> tuple[str, ...]:
        return tuple(name for name in TEST_LIST_POLICIES if op in self.lists.get(name, ()))


def _torch_dir() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def parse_test_lists(source: str) -> dict[str, tuple[str, ...]]:
    """`self.<list> = [("op", …), …]` assignments of AutocastCPUTestLists.__init__, by list."""
    tree = ast.parse(source)
    found: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == TEST_LISTS_CLASS):
            continue
        for stmt in ast.walk(node):
            if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List)):
                continue
            for target in stmt.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    found[target.attr] = tuple(
                        elt.elts[0].value
                        for elt in stmt.value.elts
                        if isinstance(elt, ast.Tuple)
                        and elt.elts
                        and isinstance(elt.elts[0], ast.Constant)
                        and isinstance(elt.elts[0].value, str)
                    )
    return found


@functools.cache
def installed_test_lists() -> TestLists:
    """The installed torch's CPU autocast test lists (empty, with `problem` set, if absent)."""
    import torch

    root = _torch_dir()
    path = root.joinpath(*TEST_LISTS_FILE) if root else None
    if path is None or not path.is_file():
        return TestLists(str(path or ""), torch.__version__, {}, "not shipped in this torch wheel")
    try:
        lists = parse_test_lists(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        return TestLists(str(path), torch.__version__, {}, f"unreadable ({exc})")
    if not lists:
        return TestLists(str(path), torch.__version__, {}, f"no {TEST_LISTS_CLASS} lists found")
    return TestLists(str(path), torch.__version__, lists)


def docs_ops() -> dict[str, str]:
    """op → documented policy, over the docs' three CPU lists."""
    expected = dict.fromkeys(DOCS_LOWER, "lower")
    expected.update(dict.fromkeys(DOCS_FP32, "fp32"))
    expected.update(dict.fromkeys(DOCS_PROMOTE, "promote"))
    return expected


def docs_real_valued() -> tuple[str, ...]:
    """The real-valued ops of the docs' two autocast lists (bfloat16 and float32)."""
    return tuple(op for op in (*DOCS_LOWER, *DOCS_FP32) if op not in COMPLEX_VALUED)


class Documented(Part):
    """what PyTorch documents for the op (null or absent in files written before it was kept)"""

    # What PyTorch publishes about one op: the policy and the lists that say so. `policy` is
    # `lower`, `fp32`, `promote`, or `unlisted` (on no list: the docs say it runs in its
    # inputs' type). `docs`/`tests` are the docs' policy and torch's test lists' policy (None:
    # not on any of that source's lists); `lists` names every list that holds the op.
    name: Annotated[Text, Field(alias="as", description="the aten name PyTorch's lists use")] = ""
    policy: Text
    docs: Annotated[NullableText, Field(description="the AMP docs' CPU lists")] = None
    tests: Annotated[NullableText, Field(description="AutocastCPUTestLists")] = None
    lists: Annotated[Texts, Field(description="every list that holds the op")] = ()

    def agrees_with(self, measured: str) -> bool:
        return measured in AGREEING.get(self.policy, frozenset())

    def sources_disagree(self) -> bool:
        return self.docs is not None and self.tests is not None and self.docs != self.tests


def documented(name: str, tests: TestLists | None = None) -> Documented:
    """What the docs and torch's test lists say about aten op `name`."""
    tests = tests if tests is not None else installed_test_lists()
    docs_policy = docs_ops().get(name)
    test_policy = tests.ops().get(name)
    lists: list[str] = []
    for title, ops in (
        (DOCS_LOWER_LIST, DOCS_LOWER),
        (DOCS_FP32_LIST, DOCS_FP32),
        (DOCS_PROMOTE_LIST, DOCS_PROMOTE),
    ):
        if name in ops:
            lists.append(f"docs: {title}")
    lists += [f"tests: {TEST_LISTS_CLASS}.{list_name}" for list_name in tests.membership(name)]
    # torch's tests run against the installed torch: where the two differ they are the newer word.
    policy = test_policy or docs_policy or UNLISTED
    return Documented(
        name=name, policy=policy, docs=docs_policy, tests=test_policy, lists=tuple(lists)
    )
