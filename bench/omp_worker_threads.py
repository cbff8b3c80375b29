"""Why the window never runs torch on its main (GUI) thread: libgomp's thread pools.

Every thread that starts an OpenMP parallel region becomes the master of its own pool, and the
pool lives as long as that thread. With more OpenMP threads alive than cores, libgomp stops
spinning while waiting for work and its threads sleep, so each op pays a wake-up. The window
runs every measurement on a worker QThread; if its main thread had ever run a torch parallel
region, every later run on a worker would pay that. This script times one forward of the
tutorial's model at batch 8 (2 threads) from worker threads before the main thread has used
torch's parallel regions, on the main thread, and from worker threads afterwards.

    .venv/bin/python bench/omp_worker_threads.py
"""

from __future__ import annotations

import threading
import time

import torch
from window_common import machine

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.model import build

CALLS = 3000


def per_call_ms(model: torch.nn.Module, x: torch.Tensor) -> float:
    with torch.no_grad():
        for _ in range(200):
            model(x)
        start = time.perf_counter()
        for _ in range(CALLS):
            model(x)
    return (time.perf_counter() - start) / CALLS * 1e3


def on_worker(model: torch.nn.Module, x: torch.Tensor) -> float:
    out: list[float] = []
    thread = threading.Thread(target=lambda: out.append(per_call_ms(model, x)))
    thread.start()
    thread.join()
    return out[0]


def main() -> None:
    print(f"machine: {machine()}; torch {torch.__version__}, {torch.get_num_threads()} threads")
    model, x = build(ExperimentConfig(batch=8))
    before = [on_worker(model, x) for _ in range(3)]
    main_thread = [per_call_ms(model, x) for _ in range(3)]
    after = [on_worker(model, x) for _ in range(3)]
    for label, values in (
        ("worker thread, main thread never used torch", before),
        ("main thread", main_thread),
        ("worker thread, after the main thread used torch", after),
    ):
        print(f"{label:<50} {', '.join(f'{v:.4f}' for v in values)} ms per forward")


if __name__ == "__main__":
    main()
