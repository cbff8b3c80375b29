"""A recurrent classifier: nn.LSTM or nn.GRU over the sequence, last hidden state → Linear.

The recurrent layer is one module (torch runs all its layers and time steps inside), so the
layer table shows it as one row; `last` picks the top layer's final hidden state.
"""

from __future__ import annotations

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.base import (
    SEQUENCE_LENGTH,
    Construction,
    Family,
    FamilyParam,
    Gemm,
    SweptSize,
)

GATES = {"lstm": 4, "gru": 3}


class RnnFamily(Family):
    name = "rnn"
    title = "RNN"
    params = (
        FamilyParam("cell", "recurrent cell: lstm or gru"),
        FamilyParam("features"),
        FamilyParam("hidden"),
        FamilyParam("seq", "time steps per sequence"),
        FamilyParam("depth", "stacked recurrent layers"),
        FamilyParam("classes"),
    )
    uses = frozenset({"head"})
    sweeps = (SEQUENCE_LENGTH, SweptSize("hidden", "hidden width", (16, 1024, 7)))

    def describe(self, config: ExperimentConfig) -> str:
        return (
            f"{config.cell.upper()} {config.features}→{config.hidden} · depth {config.depth} · "
            f"seq {config.seq} · {config.classes} classes"
        )

    def forecast_from_trace(self, config: ExperimentConfig) -> bool:
        """An LSTM runs one oneDNN layer (which raises in bfloat16 on AVX2 CPUs): the trace
        reads it. A GRU runs its steps op by op, small tensors the caches hold, which the
        trace's bytes (timed past the caches) overcount ×7: its products say it better."""
        return config.cell == "lstm"

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        b, s, h = config.batch, config.seq, config.hidden
        gates = GATES.get(config.cell, 4) * h
        out = []
        for layer in range(config.depth):
            fan_in = config.features if layer == 0 else h
            out.append(Gemm("linear", b * s, fan_in, gates))  # input projection, all steps
            out.append(Gemm("linear", b, h, gates, count=s))  # recurrent projection, per step
        out.append(Gemm("linear", b, h, config.classes))
        return tuple(out)

    def parameter_count(self, config: ExperimentConfig) -> int:
        h = config.hidden
        gates = GATES.get(config.cell, 4) * h
        total = 0
        for layer in range(config.depth):
            fan_in = config.features if layer == 0 else h
            total += gates * (fan_in + h) + 2 * gates
        return total + h * config.classes + config.classes

    def activation_elements(self, config: ExperimentConfig) -> int:
        b, s, h = config.batch, config.seq, config.hidden
        per_layer = b * s * h * (GATES.get(config.cell, 4) + 2)
        return self.input_elements(config) + per_layer * config.depth + b * (h + 2 * config.classes)

    def input_elements(self, config: ExperimentConfig) -> int:
        return config.batch * config.seq * config.features

    def construction(self) -> Construction:
        from autocast_explorer.core.experiment.families.construct import rnn

        return Construction(rnn.rnn_model, rnn.rnn_input)
