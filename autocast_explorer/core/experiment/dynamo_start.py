"""torch._dynamo, imported once per process, its failure remembered.

Two parts of the program need it: the compiled route (torch.compile) and the guards' traces
on fake tensors (FakeTensorMode imports it on first use). Its import makes inductor's cache
folder, which can fail (TORCHINDUCTOR_CACHE_DIR unwritable); a failed import half-registers
torch's compile caches, so importing it again fails with an unrelated AssertionError
("Artifact … already registered"). So whoever imports it first does it here, and every later
asker hears the first failure's own words.
"""

from __future__ import annotations

from autocast_explorer.core.runtime.errors import error_text

#: Why torch._dynamo could not be imported in this process (empty: not tried, or imported).
_refusal: list[str] = []


def dynamo_refusal() -> str:
    """'' once torch._dynamo is imported; else why it cannot be: "torch.compile could not
    start here (OSError: …); inductor's cache folder (TORCHINDUCTOR_CACHE_DIR) must be
    writable", the same words on every call."""
    if not _refusal:
        try:
            import torch._dynamo  # noqa: F401
        except Exception as exc:
            hint = (
                "; inductor's cache folder (TORCHINDUCTOR_CACHE_DIR) must be writable"
                if isinstance(exc, OSError)
                else ""
            )
            _refusal.append(f"torch.compile could not start here ({error_text(exc)}){hint}")
    return _refusal[0] if _refusal else ""
