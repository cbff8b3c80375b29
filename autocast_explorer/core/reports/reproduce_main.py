"""The hand-written part of reproduce.py: its head, how it builds and trains, and its main.

Everything else in the script is the explorer's own code, pasted by core/reports/reproduce.py.
These texts may use only torch, the standard library and the names that code defines; the
tests run every family's script and `ruff check` it (tests/core/test_reproduce.py).
"""

from __future__ import annotations

#: The script's docstring and imports; `__VERSION__`, `__CONFIG_JSON__`, `__ORIGINAL_JSON__` and
#: `__MODEL_LINE__` are filled in (each a literal written with repr()).
HEAD = '''\
#!/usr/bin/env python3
"""Reproduce one Autocast Explorer measurement with nothing but torch installed.

Written by autocast-explorer __VERSION__. Rebuilds the same model and input (same seed, same
construction order), runs one forward in float32 and one under torch.autocast("cpu"), and
prints the dtypes, the prediction agreement and this machine's own timings, beside the figures
the explorer measured. Run: python reproduce.py [--min-time SECONDS] [--json]

The model, its input, the layer recording, the layers kept in float32, the task and the loss
are the explorer's own code, pasted from the modules named above each section; only the part
after them is this script's.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import difflib
import fnmatch
import itertools
import json
import math
import statistics
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch.utils import _pytree as pytree

CONFIG = json.loads(__CONFIG_JSON__)  # noqa: E501
ORIGINAL = json.loads(__ORIGINAL_JSON__)  # noqa: E501
MODEL = CONFIG.get("model", "mlp")
MODEL_LINE = __MODEL_LINE__
#: The layers the explorer kept in float32 (module path globs or class names; [] for none).
KEEP = CONFIG.get("keep_float32", [])
'''

#: build(), make_task() and guarded() for a built-in family: the pasted construction and task
#: code, and a main run as it is.
FAMILY_BUILD = '''\
def build():
    """The family's model (seeded, built in order, in the mode it was measured in), then its
    input, drawn from the same RNG stream."""
    model = FAMILY_MODELS[MODEL](CONFIG)
    return model, FAMILY_INPUTS[MODEL](CONFIG)


def make_task():
    """The explorer's synthetic task from its own stream (class centres plus the input noise):
    the training batches, the held-out batches and the loss kind."""
    torch.manual_seed(CONFIG["seed"] + TASK_SEED_OFFSET)
    batches, held_out = class_task(lambda: FAMILY_INPUTS[MODEL](CONFIG), __CLASSES__)
    return list(batches), list(held_out), CROSS_ENTROPY


def guarded(run):
    """Run the script: a built-in family runs none of your code, so nothing is guarded."""
    run()
'''

#: build(), make_task() and guarded() for the user's own model (a spec such as hf:bert or
#: my_model.py:build): the explorer's own loader, task and guard, so that script needs
#: autocast-explorer installed (and the model's file where the spec says).
USER_BUILD = '''\
def build():
    """Your own model: built from the same spec by the explorer's own loader (so this script
    needs autocast-explorer installed, and the model's file where the spec says)."""
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.model import build as build_config

    return build_config(ExperimentConfig.from_dict(CONFIG))


def make_task():
    """Your own model: the explorer's own task and loss kind (classifier logits: cross-entropy
    against seeded labels; any other output: MSE to one fixed seeded target of its shape)."""
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.train_task import make_task as explorer_task

    task = explorer_task(ExperimentConfig.from_dict(CONFIG))
    return list(task.batches), list(task.held_out), task.loss_kind


def guarded(run):
    """Run the script under the explorer's own guard: your model's code failing anywhere is
    one line on stderr naming the spec, the phase and your file's frame, and exit code 2."""
    import sys

    from autocast_explorer.core.experiment.families.user.guard import UserCode
    from autocast_explorer.core.runtime.errors import ConfigError

    try:
        with UserCode(MODEL, "reproduce.py"):
            run()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
'''

#: Recording, timing, training and the two mains.
MAIN = '''\
def forward(model, x, low):
    """One forward (autocast when `low` is a dtype) recording every module's in/out dtype, in
    call order, through the explorer's wrapped_forwards (its fused kernels refuse hooks).
    Returns (output or None, layers, error text or "")."""
    seen = []
    calls = itertools.count()

    def around(name, module, run, args, kwargs):
        order = next(calls)
        output = run()
        x_in = first_tensor(args) if args else first_tensor(tuple(kwargs.values()))
        y = first_tensor(output)
        if y is not None:
            fed = dtype_name(x_in.dtype) if x_in is not None else "none"
            layer = {"name": name, "in": fed, "out": dtype_name(y.dtype)}
            seen.append((order, layer))
        return output

    out, error = None, ""
    try:
        with torch.no_grad(), wrapped_forwards(model, around), autocast_context(low):
            out = model(x)
    except Exception as exc:
        if low is None:
            raise  # float32 failing is no finding: there is nothing to compare with
        error = error_text(exc)
    return out, [layer for _, layer in sorted(seen, key=lambda item: item[0])], error


def pair(plain_layers, auto_layers):
    """Join the modes layer by layer, by name and call order (None: autocast never got there)."""
    by_key = dict(zip(call_keys([a["name"] for a in auto_layers]), auto_layers, strict=True))
    out = []
    for key, p in zip(call_keys([p["name"] for p in plain_layers]), plain_layers, strict=True):
        a = by_key.get(key)
        autocast = {"in": a["in"], "out": a["out"]} if a else None
        out.append({"name": p["name"], "plain": {"in": p["in"], "out": p["out"]},
                    "autocast": autocast})
    return out


def timings(model, x, low, min_time):
    """Median ms per forward of each mode, timed in alternating blocks (A B A B): the
    explorer's protocol and constants without its stall checks and speedup interval."""

    def timed(dtype):
        def call():
            with torch.no_grad(), autocast_context(dtype):
                model(x)

        return call

    modes = [timed(None), timed(low)] if low is not None else [timed(None)]
    target = max(min_time / TARGET_BLOCKS, MIN_BLOCK_SECONDS)
    sizes = []
    for call in modes:
        for _ in range(WARMUP_CALLS):
            start = time.perf_counter()
            call()
            once = time.perf_counter() - start
        sizes.append(max(1, math.ceil(target / max(once, 1e-7))))
    samples = [[] for _ in modes]
    spent = [0.0 for _ in modes]
    while min(spent) < min_time or min(len(s) for s in samples) < MIN_BLOCKS:
        for i, call in enumerate(modes):
            start = time.perf_counter()
            for _ in range(sizes[i]):
                call()
            elapsed = time.perf_counter() - start
            spent[i] += elapsed
            samples[i].append(elapsed * 1e3 / sizes[i])
    return tuple(statistics.median(s) for s in samples)


def probe_step(initial, batch, low, loss_fn, kept):
    """One training step's loss dtype, saved-tensor bytes and (under autocast) gradient dtypes."""
    found = {"loss_dtype": {}, "grad_dtypes": {}, "saved_bytes": {}}
    x0, y0 = batch
    for mode, dtype in (("plain", None), ("autocast", low)):
        model = kept_copy(initial, kept).train()
        saved = [0]

        def pack(t, saved=saved):
            saved[0] += t.numel() * t.element_size()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast_context(dtype):
            loss = loss_fn(model(x0), y0)
        loss.backward()
        found["loss_dtype"][mode] = dtype_name(loss.dtype)
        found["saved_bytes"][mode] = saved[0]
        if dtype is not None:
            found["grad_dtypes"] = {  # a parameter the loss does not reach has no gradient
                n: dtype_name(p.grad.dtype)
                for n, p in model.named_parameters()
                if p.grad is not None
            }
    return found


def train(min_time):
    """Train a float32 and an autocast copy side by side, as the explorer did."""
    low = TORCH_DTYPES[CONFIG["dtype"]]
    initial, _ = build()
    kept = kept_layers(initial, KEEP)  # both copies keep them in float32, as the explorer's
    batches, held_out, kind = make_task()
    loss_fn = loss_function(CONFIG["head"], kind)
    found = {"loss_kind": kind, **probe_step(initial, batches[0], low, loss_fn, kept)}
    dtypes = {"plain": None, "autocast": low}
    models, optimizers, scalers = {}, {}, {}
    for mode in ("plain", "autocast"):
        models[mode] = kept_copy(initial, kept).train()
        optimizers[mode] = make_optimizer(CONFIG["optimizer"], CONFIG["lr"], models[mode])
        use = mode == "autocast" and CONFIG["dtype"] == "float16" and CONFIG["scaler"]
        scalers[mode] = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE) if use else None

    def step(mode, index):
        model, opt, scaler = models[mode], optimizers[mode], scalers[mode]
        x, y = batches[index % len(batches)]
        opt.zero_grad(set_to_none=True)
        with autocast_context(dtypes[mode]):
            loss = loss_fn(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return float(loss.detach())

    losses = {"plain": [], "autocast": []}
    for index in range(CONFIG["steps"]):
        for mode in ("plain", "autocast"):
            losses[mode].append(step(mode, index))
    accuracy, held_out_loss = {}, {}
    targets = torch.cat([y for _, y in held_out])
    for mode in ("plain", "autocast"):
        model = models[mode].eval()
        with torch.no_grad(), autocast_context(dtypes[mode]):
            outputs = torch.cat([model(x).float() for x, _ in held_out])
        with torch.no_grad():
            held_out_loss[mode] = float(loss_fn(outputs, targets))
        if kind == CROSS_ENTROPY:  # an MSE task has no classes to be right about
            right = int((outputs.argmax(1) == targets).sum())
            accuracy[mode] = right / int(targets.shape[0])
        model.train()
    step_ms = {"plain": [], "autocast": []}
    index = CONFIG["steps"]
    while min(sum(v) for v in step_ms.values()) < min_time * 1e3 or min(
        len(v) for v in step_ms.values()
    ) < MIN_BLOCKS:
        for mode in ("plain", "autocast"):
            start = time.perf_counter()
            step(mode, index)
            step_ms[mode].append((time.perf_counter() - start) * 1e3)
        index += 1
    found["loss"] = losses
    found["accuracy"] = accuracy
    found["held_out_loss"] = held_out_loss
    found["median_ms"] = {m: statistics.median(v) for m, v in step_ms.items()}
    return found


def main_train(args):
    found = train(args.min_time)
    original = ORIGINAL["train"]
    same = {
        key: found[key] == original[key]
        for key in ("loss_kind", "loss_dtype", "grad_dtypes", "saved_bytes")
    }
    same["first loss"] = all(
        abs(found["loss"][m][0] - original["loss"][m][0]) <= 1e-4 * abs(original["loss"][m][0])
        for m in ("plain", "autocast")
    )
    if args.json:
        print(json.dumps({"config": CONFIG, "found": found, "original": ORIGINAL,
                          "same": same}, indent=2))
        return
    kind = found["loss_kind"]
    loss_name = {MSE: "MSE"}.get(kind, "cross-entropy")
    print(f"Training: {MODEL_LINE}, batch {CONFIG['batch']}, {CONFIG['steps']} steps, "
          f"{CONFIG['optimizer']} lr {CONFIG['lr']:g}, {loss_name} loss; "
          f"autocast dtype {CONFIG['dtype']}{kept_words()}")
    for mode in ("plain", "autocast"):
        loss = found["loss"][mode]
        if kind == CROSS_ENTROPY:
            score = f"accuracy {100 * found['accuracy'][mode]:.1f}%"
        else:
            score = f"held-out MSE {found['held_out_loss'][mode]:.4g}"
        print(f"  {mode:<9} loss {loss[0]:.4f} -> {loss[-1]:.4f}  {score}  "
              f"loss dtype {found['loss_dtype'][mode]}  saved {found['saved_bytes'][mode]} bytes")
    if kind == MSE:
        print("no accuracy: the output is not batch x classes logits, so both copies trained "
              "with MSE to one fixed random target")
    grads = ", ".join(sorted(set(found["grad_dtypes"].values())))
    print(f"gradient dtypes under autocast: {grads}")
    ms, theirs = found["median_ms"], ORIGINAL["median_ms"]
    print(f"median per training step: plain {ms['plain']:.4f} ms, "
          f"autocast {ms['autocast']:.4f} ms")
    print(f"explorer measured on {ORIGINAL['machine']}: plain {theirs['plain']:.4f} ms, "
          f"autocast {theirs['autocast']:.4f} ms")
    print_same(same)


def print_same(same):
    for key, ok in same.items():
        print(f"same {key.replace('_', ' ')} as the explorer's run: {'yes' if ok else 'NO'}")


def agreement(plain, auto):
    """The explorer's agreement figures: argmax matches (batch x classes logits only),
    allclose at the config's tolerances, the largest difference."""
    reference, lowered = plain.float(), auto.float()
    logits = reference.dim() == 2 and reference.shape[1] >= 2  # batch x classes
    rows = reference.shape[0] if logits else 0  # no argmax without logits
    agree = int((reference.argmax(dim=1) == lowered.argmax(dim=1)).sum()) if rows else 0
    allclose = torch.allclose(reference, lowered, atol=CONFIG["atol"], rtol=CONFIG["rtol"])
    return {"agree": agree, "rows": rows, "allclose": bool(allclose),
            "max_abs_diff": float((reference - lowered).abs().max())}


def kept_words():
    """'; kept in float32: fc2' when the explorer kept layers in float32, else ''."""
    return f"; kept in float32: {', '.join(KEEP)}" if KEEP else ""


def measure(args):
    """Both forwards, their layers and agreement, and this machine's timings, with the layers
    the explorer kept in float32 kept here too."""
    model, x = build()
    with keeping(model, KEEP) as kept:
        found = measure_kept(args, model, x)
    if KEEP:
        found["kept_float32"] = list(kept)  # the module paths the patterns named
    return found


def measure_kept(args, model, x):
    low = TORCH_DTYPES[CONFIG["dtype"]]
    plain, plain_layers, _ = forward(model, x, None)
    auto, auto_layers, error = forward(model, x, low)
    found = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "output_dtype": {"plain": dtype_name(plain.dtype),
                         "autocast": dtype_name(auto.dtype) if auto is not None else ""},
        "layers": pair(plain_layers, auto_layers),
        "agreement": None,
        "autocast_error": error,
    }
    if ":" in MODEL:  # your own model: the rows the explorer grouped by module depth
        kept = [layer["name"] for layer in ORIGINAL["layers"]]
        found["layers"] = [layer for layer in found["layers"] if layer["name"] in kept]
    if auto is not None:
        found["agreement"] = agreement(plain, auto)
        plain_ms, auto_ms = timings(model, x, low, args.min_time)
    else:
        plain_ms, auto_ms = timings(model, x, None, args.min_time)[0], None
    found["median_ms"] = {"plain": plain_ms, "autocast": auto_ms}
    return found


def compare(found):
    """Which findings match the explorer's (the timings are this machine's own)."""
    same = {key: found[key] == ORIGINAL[key] for key in ("output_dtype", "layers")}
    if found["agreement"] is None or ORIGINAL["agreement"] is None:
        same["agreement"] = found["agreement"] is None and ORIGINAL["agreement"] is None
    else:
        same["agreement"] = all(found["agreement"][k] == ORIGINAL["agreement"][k]
                                for k in ("agree", "rows", "allclose"))
    if found["autocast_error"] or ORIGINAL.get("autocast_error"):
        same["autocast_error"] = bool(found["autocast_error"]) == bool(
            ORIGINAL.get("autocast_error"))
    return same


def print_found(found, same):
    print(f"Model: {MODEL_LINE}, batch {CONFIG['batch']}, {CONFIG['activation']}, "
          f"head {CONFIG['head']}, seed {CONFIG['seed']}; autocast dtype {CONFIG['dtype']}"
          f"{kept_words()}")
    print(f"torch {found['torch']}, threads: {found['threads']}")
    if found["autocast_error"]:
        print(f"the autocast forward RAISED: {found['autocast_error']}")
    if ORIGINAL.get("autocast_error"):
        print(f"the explorer's autocast forward raised: {ORIGINAL['autocast_error']}")
    if found.get("kept_float32"):
        print(f"layers kept in float32 here: {', '.join(found['kept_float32'])}")
    dtypes = found["output_dtype"]
    print(f"output dtype: plain {dtypes['plain']}, autocast {dtypes['autocast'] or '(raised)'}")
    for layer in found["layers"]:
        a, p = layer["autocast"], layer["plain"]
        auto = f"{a['in']} -> {a['out']}" if a else "did not run"
        print(f"  {layer['name']:<12} plain {p['in']} -> {p['out']}   autocast {auto}")
    a, ms = found["agreement"], found["median_ms"]
    if a is not None:
        if a["rows"]:
            print(f"predictions agree: {a['agree']}/{a['rows']}")
        else:
            print("no argmax: the output is not batch x classes logits")
        print(f"allclose(atol={CONFIG['atol']:g}, rtol={CONFIG['rtol']:g}): {a['allclose']}")
        print(f"max abs diff: {a['max_abs_diff']:.6g}")
        print(f"median per forward: plain {ms['plain']:.4f} ms, autocast {ms['autocast']:.4f} ms, "
              f"speedup {ms['plain'] / ms['autocast']:.3f}x")
    else:
        print(f"median per forward: plain {ms['plain']:.4f} ms (autocast not timed: it raised)")
    theirs = ORIGINAL["median_ms"]
    auto = f"{theirs['autocast']:.4f} ms" if theirs["autocast"] is not None else "(raised)"
    print(f"explorer measured on {ORIGINAL['machine']}: plain {theirs['plain']:.4f} ms, "
          f"autocast {auto}")
    print_same(same)


def main():
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=CONFIG["min_time"],
                        help="seconds of timed forwards per mode")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead")
    args = parser.parse_args()
    if CONFIG["threads"] is not None:
        torch.set_num_threads(CONFIG["threads"])
    if CONFIG.get("mode") == "train":
        main_train(args)
        return
    found = measure(args)
    same = compare(found)
    if args.json:
        print(json.dumps({"config": CONFIG, "found": found, "original": ORIGINAL,
                          "same": same}, indent=2))
    else:
        print_found(found, same)


if __name__ == "__main__":
    guarded(main)
'''
