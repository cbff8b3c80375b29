"""The categories the op-policy probe groups its ops into (no torch: the window and the CLI's
argument parser read them before torch is loaded)."""

from __future__ import annotations

#: Category slug → the label shown in the window and the CLI (order = display order).
CATEGORIES: dict[str, str] = {
    "matmul-conv": "matmul & conv",
    "attention-rnn": "attention & rnn",
    "activations-norms": "activations & norms",
    "reductions": "reductions",
    "pointwise": "pointwise",
    "losses": "losses",
    "linalg": "linalg",
    "pooling-padding": "pooling & padding",
    "comparisons": "comparisons",
    "fft-complex": "fft & complex",
}


def category_slug(text: str) -> str | None:
    """The slug for a category given as slug or label, any case ('Matmul & Conv' works)."""
    wanted = " ".join(text.strip().lower().split())
    for slug, label in CATEGORIES.items():
        if wanted in (slug, label, slug.replace("-", " ")):
            return slug
    return None
