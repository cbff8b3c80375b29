"""What a sweep varies and over which values; validated before anything is measured.

No torch here (like config.py): the window checks a sweep's values while torch is loading.
A sweep varies the batch size (every model family) or one of the sizes the family registry
lists for the config's family (`Family.sweeps`: the MLP's hidden width, every hidden layer at
once; a CNN's stage channels or image side; a sequence length …); an MLP also sweeps a
batch × width grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import families_sweeping, family, swept_sizes
from autocast_explorer.core.experiment.families.base import SweptSize
from autocast_explorer.core.runtime.errors import ConfigError

#: Every family sweeps the batch.
BATCH = SweptSize("batch", "batch size", (1, 2048, 12))
GRID = "batch,width"
MAX_POINTS = 64
MAX_GRID_POINTS = 256


def sweep_sizes() -> tuple[SweptSize, ...]:
    """The batch, then every size some family sweeps (the registry's, in menu order)."""
    return (BATCH, *swept_sizes())


def sweep_params() -> tuple[str, ...]:
    """'batch', 'width', 'channels' …: what `sweep --param` and a sweep file may name."""
    return tuple(size.name for size in sweep_sizes())


def sweep_params_in_words() -> str:
    """'width (mlp), channels or image (cnn), seq (transformer, rnn) …': which family sweeps
    what (neighbours swept by the same families share their parentheses)."""
    groups: list[tuple[list[str], tuple[str, ...]]] = []
    for size in swept_sizes():
        owners = tuple(fam.name for fam in families_sweeping(size.name))
        if not owners:
            continue  # only the user's own model sweeps it
        if groups and groups[-1][1] == owners:
            groups[-1][0].append(size.name)
        else:
            groups.append(([size.name], owners))
    return ", ".join(f"{' or '.join(names)} ({', '.join(owners)})" for names, owners in groups)


def default_ranges_in_words() -> str:
    """'batch 1:2048:12, width 64:4096:7 …': every param's default values as typed."""
    return ", ".join(f"{size.name} {':'.join(map(str, size.default))}" for size in sweep_sizes())


def _known(param: str) -> SweptSize:
    size = next((s for s in sweep_sizes() if s.name == param), None)
    if size is None:
        raise ConfigError("param", f"must be one of {', '.join(sweep_params())} (got {param!r})")
    return size


def log_spaced(low: int, high: int, count: int) -> tuple[int, ...]:
    """`count` whole numbers from `low` to `high`, evenly spaced in log(x), duplicates dropped.

    log_spaced(1, 2048, 12) gives the powers of two 1 … 2048.
    """
    if not (isinstance(low, int) and isinstance(high, int) and isinstance(count, int)):
        raise ConfigError("values", "range bounds and count must be whole numbers")
    if low < 1 or high < low:
        raise ConfigError("values", f"need 1 ≤ low ≤ high (got {low} … {high})")
    if count < 1:
        raise ConfigError("values", f"need at least 1 point (got {count})")
    if count == 1 or low == high:
        return (low,)
    step = (math.log(high) - math.log(low)) / (count - 1)
    values = [round(math.exp(math.log(low) + i * step)) for i in range(count)]
    values[0], values[-1] = low, high
    return tuple(sorted(set(values)))


def default_range(param: str) -> tuple[int, int, int]:
    """LOW, HIGH, COUNT of `param`'s default values (its SweptSize's)."""
    return _known(param).default


def default_values(param: str) -> tuple[int, ...]:
    """The values a sweep of `param` uses when none are given (log-spaced powers of two)."""
    return log_spaced(*default_range(param))


def parse_values(text: str, field: str = "values") -> tuple[int, ...]:
    """'1,8,64,512' (a list) or '1:2048:12' (12 log-spaced values from 1 to 2048)."""
    text = text.strip()
    if not text:
        raise ConfigError(field, "enter comma-separated values (1,8,64) or a range (1:2048:12)")
    if ":" in text:
        parts = [p.strip() for p in text.split(":")]
        if len(parts) != 3:
            raise ConfigError(field, f"a range is LOW:HIGH:COUNT, e.g. 1:2048:12 (got {text!r})")
        try:
            low, high, count = (int(p) for p in parts)
        except ValueError:
            raise ConfigError(field, f"range {text!r} must hold whole numbers") from None
        try:
            return log_spaced(low, high, count)
        except ConfigError as exc:
            raise ConfigError(field, exc.rule) from None
    values = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            raise ConfigError(field, f"empty entry in {text!r}; use e.g. 1,8,64")
        try:
            values.append(int(part))
        except ValueError:
            raise ConfigError(field, f"{part!r} is not a whole number") from None
    return tuple(values)


def _normalize(values: tuple[int, ...] | list[int], field: str) -> tuple[int, ...]:
    try:
        items = tuple(values)
    except TypeError:
        raise ConfigError(field, "must be a list of whole numbers") from None
    if not items:
        raise ConfigError(field, "needs at least one value")
    for v in items:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(field, f"{v!r} must be a whole number ≥ 1")
    return tuple(sorted(set(items)))


def point_config(config: ExperimentConfig, param: str, value: int) -> ExperimentConfig:
    """`config` with the swept parameter set to `value` (validated; errors name the value)."""
    _known(param)
    fam = family(config)
    if param != "batch" and param not in fam.sweep_params:
        choices = ", ".join(("batch", *fam.sweep_params))
        raise ConfigError(
            "param", f"{param} does not apply to --model {fam.name} (it sweeps {choices})"
        )
    try:
        if param == "batch":
            return config.replace(batch=value)
        return fam.sweep_config(config, param, value)
    except ConfigError as exc:
        raise ConfigError(exc.field, f"{param} {value}: {exc.rule}") from None


@dataclass(frozen=True)
class PlannedPoint:
    """One point to measure: its position, swept value(s) and full config."""

    index: int
    param: str
    value: int
    value2: int | None
    config: ExperimentConfig

    @property
    def name(self) -> str:
        """'batch 64' or 'batch 64 × width 512' for messages."""
        if self.value2 is None:
            return f"{self.param} {self.value}"
        return f"batch {self.value} × width {self.value2}"


@dataclass(frozen=True)
class SweepSpec:
    """A sweep: `param` over `values`, or with `width_values` a batch × width grid.

    Values are sorted and de-duplicated (charts and crossovers read left to right). A grid is
    measured one width at a time, batch values inside, so each row's crossover is known as
    soon as the row is complete.
    """

    param: str
    values: tuple[int, ...]
    width_values: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _known(self.param)
        object.__setattr__(self, "values", _normalize(self.values, "values"))
        if self.width_values:
            if self.param != "batch":
                raise ConfigError("param", "a grid sweeps batch across the rows of widths")
            object.__setattr__(self, "width_values", _normalize(self.width_values, "width_values"))
            if len(self.values) * len(self.width_values) > MAX_GRID_POINTS:
                raise ConfigError(
                    "values",
                    f"a grid of {len(self.values)} × {len(self.width_values)} points is more "
                    f"than {MAX_GRID_POINTS}",
                )
        elif len(self.values) > MAX_POINTS:
            raise ConfigError("values", f"at most {MAX_POINTS} points (got {len(self.values)})")

    @property
    def is_grid(self) -> bool:
        return bool(self.width_values)

    @property
    def label(self) -> str:
        """'batch', 'width' or 'batch,width' (the JSON `param`)."""
        return GRID if self.is_grid else self.param

    def __len__(self) -> int:
        return len(self.values) * max(1, len(self.width_values))

    def to_dict(self) -> dict[str, Any]:
        """{"param", "values"} plus "width_values" for a grid (as presets store a sweep)."""
        data: dict[str, Any] = {"param": self.param, "values": list(self.values)}
        if self.is_grid:
            data["width_values"] = list(self.width_values)
        return data

    def plan(self, config: ExperimentConfig) -> list[PlannedPoint]:
        """Every point's config, in measuring order; raises ConfigError naming a bad value."""
        if self.is_grid and config.model != "mlp":
            raise ConfigError("param", "a batch × width grid is for --model mlp")
        if not self.is_grid:
            return [
                PlannedPoint(i, self.param, v, None, point_config(config, self.param, v))
                for i, v in enumerate(self.values)
            ]
        points = []
        for row, width in enumerate(self.width_values):
            base = point_config(config, "width", width)
            for col, batch in enumerate(self.values):
                cfg = point_config(base, "batch", batch)
                index = row * len(self.values) + col
                points.append(PlannedPoint(index, "batch", batch, width, cfg))
        return points
