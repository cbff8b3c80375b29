"""A report's reproduce.py: the explorer's own code, pasted, around a small hand-written main.

The script lets someone without the explorer check a finding with nothing but torch. So that
it rebuilds exactly what the explorer measured, its model, input, layer recording, task and
loss are not written twice: they are pasted from the modules the explorer runs (the source of
the functions named in PASTED, and every built-in family's construction module whole, through
its Family.construction), and the constants the main uses are the explorer's values. Only
reproduce_main.py's texts are the script's own. Values from the result enter the script only
as literals written with repr(), so no text in a (possibly foreign) result can become code.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import json
import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from autocast_explorer import __version__
from autocast_explorer.core.experiment import (
    capture,
    interventions,
    layer_patterns,
    timing,
    train_step,
    train_task,
)
from autocast_explorer.core.experiment.capture import LayerDtypes
from autocast_explorer.core.experiment.families import FAMILIES, family
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.reports import reproduce_main
from autocast_explorer.core.runtime import autocast, dtypes, errors, wrapping

#: The explorer's constants the script uses, by the module that defines them. The timing loop
#: is a plain A B A B loop with timing.py's constants: the explorer's paired-block protocol
#: (stall checks, interval, progress) is more than a check of the figures needs.
CONSTANTS: tuple[tuple[ModuleType, tuple[str, ...]], ...] = (
    (
        train_task,
        (
            "CROSS_ENTROPY",
            "MSE",
            "TASK_SEED_OFFSET",
            "TRAIN_POOL_BATCHES",
            "HELD_OUT_BATCHES",
            "CENTROID_NORM",
        ),
    ),
    (train_step, ("INIT_SCALE",)),
    (layer_patterns, ("KEEP_FIELD",)),
    (timing, ("WARMUP_CALLS", "TARGET_BLOCKS", "MIN_BLOCK_SECONDS", "MIN_BLOCKS")),
)

#: The explorer's code the script runs as it is: whole modules (after their imports) and single
#: functions. Each may use only torch, the standard library and what is pasted beside it.
PASTED: tuple[ModuleType | Callable[..., Any], ...] = (
    dtypes.dtype_name,
    autocast,
    wrapping,
    errors,
    capture.first_tensor,
    capture.call_keys,
    layer_patterns.matches,
    interventions,
    train_task.class_task,
    train_task.loss_function,
    train_step.make_optimizer,
)


def reproduce_script(result: ExperimentResult) -> str:
    """The standalone script for `result` (config and original figures as JSON literals)."""
    config = result.config
    user = config.is_user_model
    head = _fill(
        reproduce_main.HEAD,
        {
            "__VERSION__": __version__,
            "__CONFIG_JSON__": repr(json.dumps(config.to_dict(), sort_keys=True)),
            "__ORIGINAL_JSON__": repr(json.dumps(original(result), sort_keys=True)),
            "__MODEL_LINE__": repr(config.model if user else family(config).describe(config)),
        },
    )
    if user:
        build = reproduce_main.USER_BUILD
    else:
        classes = train_task.loss_plan(config).classes
        build = _fill(reproduce_main.FAMILY_BUILD, {"__CLASSES__": repr(classes)})
    sections = [head, *_constants(), *_pasted(PASTED), *family_sections(), build]
    sections.append(reproduce_main.MAIN)
    return "\n\n\n".join(s.strip("\n") for s in sections) + "\n"


def family_sections() -> list[str]:
    """Every built-in family's construction module (with what it imports from the explorer,
    pasted first), then the two tables the script's build() looks a family up in."""
    constructions = {name: fam.construction() for name, fam in FAMILIES.items()}
    modules: list[ModuleType] = []
    for c in constructions.values():
        for module in _with_dependencies(_module_of(c.model)):
            if module not in modules:
                modules.append(module)
    models = "".join(f"    {n!r}: {c.model.__name__},\n" for n, c in constructions.items())
    inputs = "".join(f"    {n!r}: {c.input.__name__},\n" for n, c in constructions.items())
    tables = f"FAMILY_MODELS = {{\n{models}}}\nFAMILY_INPUTS = {{\n{inputs}}}\n"
    return [*_pasted(modules), tables]


def _fill(template: str, values: dict[str, str]) -> str:
    """`template` with each __NAME__ replaced, in one pass (inserted text is never itself
    substituted)."""
    return re.sub(r"__[A-Z_]+__", lambda m: values.get(m.group(0), m.group(0)), template)


def _constants() -> Iterator[str]:
    for module, names in CONSTANTS:
        lines = "".join(f"{name} = {getattr(module, name)!r}\n" for name in names)
        yield f"# ---- constants of {module.__name__} ----\n{lines}"


def _pasted(items: tuple[ModuleType | Callable[..., Any], ...] | list[ModuleType]) -> list[str]:
    """The source of each item, under a comment naming the module it came from (consecutive
    functions of one module share it)."""
    out = []
    for where, group in itertools.groupby(items, key=_module_name):
        body = "\n\n".join(
            _definitions(item) if isinstance(item, ModuleType) else inspect.getsource(item)
            for item in group
        )
        out.append(f"# ---- from {where} ----\n{body}")
    return out


def _module_name(item: ModuleType | Callable[..., Any]) -> str:
    return item.__name__ if isinstance(item, ModuleType) else _module_of(item).__name__


def _module_of(item: Callable[..., Any]) -> ModuleType:
    module = inspect.getmodule(item)
    if module is None:
        raise ValueError(f"{item!r} has no module to paste from")
    return module


def _definitions(module: ModuleType) -> str:
    """A module's source after its docstring and imports (every import must come first)."""
    source = inspect.getsource(module)
    body = ast.parse(source).body
    head = list(itertools.takewhile(_is_preamble, body))
    if any(isinstance(node, ast.Import | ast.ImportFrom) for node in body[len(head) :]):
        raise ValueError(f"{module.__name__}: an import after its first definition")
    start = (head[-1].end_lineno or 0) if head else 0
    return "".join(source.splitlines(keepends=True)[start:]).strip("\n") + "\n"


def _is_preamble(node: ast.stmt) -> bool:
    docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    return docstring or isinstance(node, ast.Import | ast.ImportFrom)


def _with_dependencies(module: ModuleType) -> list[ModuleType]:
    """The explorer's modules `module` imports from (their own first), then `module`."""
    out: list[ModuleType] = []
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autocast_"):
            for dependency in _with_dependencies(importlib.import_module(node.module or "")):
                if dependency not in out:
                    out.append(dependency)
    return [*out, module]


def _hooked_dtypes(dtypes: LayerDtypes | None) -> dict[str, Any] | None:
    """What reproduce.py's recording sees of a layer (its input and output dtypes): the op
    trace's compute dtypes and casts are not rebuilt by the script, so they are not compared."""
    if dtypes is None:
        return None
    return {k: v for k, v in dtypes.to_dict().items() if k not in ("compute_dtypes", "casts")}


def original(result: ExperimentResult) -> dict[str, object]:
    """The explorer's figures the script prints beside its own and compares with."""
    auto = result.autocast
    base = {
        "machine": result.environment.label(),
        "created": result.created,
        "median_ms": {
            "plain": result.plain.median_ms,
            "autocast": auto.median_ms if auto is not None else None,
        },
    }
    train = result.train
    if train is not None:
        return {
            **base,
            "train": {
                "loss_kind": train.loss_kind,
                "loss": {m: list(v) for m, v in train.loss.items()},
                "accuracy": dict(train.accuracy),
                "held_out_loss": dict(train.held_out_loss),
                "loss_dtype": dict(train.loss_dtype),
                "grad_dtypes": dict(train.grad_dtypes),
                "saved_bytes": dict(train.saved_bytes),
            },
        }
    a = result.agreement
    agreement = (
        {"agree": a.agree, "rows": a.rows, "allclose": a.allclose, "max_abs_diff": a.max_abs_diff}
        if a is not None
        else None
    )
    return {
        **base,
        "output_dtype": {
            "plain": result.output_dtype_plain,
            "autocast": result.output_dtype_autocast,
        },
        "layers": [
            {
                "name": layer.name,
                "plain": _hooked_dtypes(layer.plain),
                "autocast": _hooked_dtypes(layer.autocast),
            }
            for layer in result.layers
        ],
        "agreement": agreement,
        "autocast_error": result.autocast_error,
    }
