"""How busy the machine was while we measured: other processes' CPU time, and the clock rate.

The evidence behind "too noisy to tell". Linux's /proc/stat counts every core's busy time since
boot; subtracting our own process's CPU time (resource.getrusage) over the same wall time leaves
what other programs used, in cores. The clock rate comes from cpufreq where the kernel exposes
it (/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq), else /proc/cpuinfo's "cpu MHz".
Where neither exists (macOS, Windows, some containers) the fields are None and nothing is
claimed. Readers are injectable so tests need no busy machine.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    NonNegative,
    NonNegatives,
    NullableNumber,
    PositiveWhole,
    refuse,
)
from autocast_explorer.core.documents.model import Part, dump

try:  # resource is Unix-only
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

#: /proc/stat's "cpu" line: user nice system idle iowait irq softirq steal …; busy = all but
#: idle and iowait (guest time is already inside user).
_IDLE_FIELDS = (3, 4)
#: A clock rate that moved by more than this share between the start and the end changed.
FREQ_CHANGE = 0.05


def read_busy_seconds(path: str = "/proc/stat") -> float | None:
    """Seconds of CPU time all cores spent busy since boot (None where /proc/stat is absent)."""
    try:
        with open(path, encoding="ascii") as f:
            first = f.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    try:
        ticks = [int(v) for v in first[1:9]]
    except ValueError:
        return None
    busy = sum(t for k, t in enumerate(ticks) if k not in _IDLE_FIELDS)
    return busy / _ticks_per_second()


def _ticks_per_second() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100.0


def read_own_seconds() -> float | None:
    """This process's CPU time (user + system, all its threads), None where unknown."""
    if resource is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def read_freq_mhz() -> tuple[float, float] | None:
    """(lowest, highest) current clock rate over the cores in MHz; None where unreadable."""
    rates: list[float] = []
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"):
        try:
            with open(path, encoding="ascii") as f:
                rates.append(int(f.read().strip()) / 1000)
        except (OSError, ValueError):
            continue
    if not rates:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                for line in f:
                    if line.startswith("cpu MHz"):
                        rates.append(float(line.split(":", 1)[1]))
        except (OSError, ValueError, IndexError):
            return None
    return (min(rates), max(rates)) if rates else None


class MachineLoad(Part):
    """The machine during timing; null: not readable on this OS."""

    # Over `wall_s` seconds: CPU seconds other processes used (None where /proc/stat or
    # getrusage is missing), the cores, and the (lowest, highest) clock rate seen at the start
    # and at the end (None where unreadable).
    schema_name: ClassVar[str] = "load"

    wall_s: NonNegative
    cores: PositiveWhole
    other_cpu_s: Annotated[
        NullableNumber, Field(description="CPU seconds other processes used")
    ] = None
    freq_start_mhz: (
        Annotated[NonNegatives, Field(description="[lowest, highest] core clock")] | None
    ) = None
    freq_end_mhz: (
        Annotated[NonNegatives, Field(description="[lowest, highest] core clock")] | None
    ) = None

    @model_validator(mode="after")
    def _pairs(self) -> MachineLoad:
        for key in ("freq_start_mhz", "freq_end_mhz"):
            value = getattr(self, key)
            if value is not None and len(value) != 2:
                raise refuse("expected [lowest, highest]", at=key)
        return self

    @property
    def other_cores(self) -> float | None:
        """Cores other processes kept busy on average (1.0: one core fully taken)."""
        if self.other_cpu_s is None or self.wall_s <= 0:
            return None
        return max(self.other_cpu_s, 0.0) / self.wall_s

    @property
    def free_cores(self) -> float | None:
        other = self.other_cores
        return None if other is None else max(self.cores - other, 0.0)

    @property
    def freq_changed(self) -> bool:
        """True when the clock rate moved by more than FREQ_CHANGE between start and end."""
        a, b = self.freq_start_mhz, self.freq_end_mhz
        if a is None or b is None:
            return False
        low, high = min(*a, *b), max(*a, *b)
        return low > 0 and high / low - 1 > FREQ_CHANGE

    def busy_text(self) -> str:
        """'other programs used 1.3 of 2 cores' ('' where unknown)."""
        other = self.other_cores
        if other is None:
            return ""
        return f"other programs used {other:.1f} of {self.cores} cores"

    def freq_text(self) -> str:
        """'the clock moved between 1200 and 3400 MHz' when it changed, else ''."""
        if not self.freq_changed:
            return ""
        assert self.freq_start_mhz is not None and self.freq_end_mhz is not None
        rates = (*self.freq_start_mhz, *self.freq_end_mhz)
        return f"the clock moved between {min(rates):.0f} and {max(rates):.0f} MHz"

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


def observed(load: MachineLoad) -> MachineLoad:
    """What a LoadMeter reports for what it read: the reading itself. Looked up at each stop,
    so a test may swap it for a load of its choosing (the tester's kit: `timing_noise`)."""
    return load


@dataclass
class LoadMeter:
    """Start it before a measurement and `stop()` it after: a MachineLoad for that span."""

    busy: Callable[[], float | None] = read_busy_seconds
    own: Callable[[], float | None] = read_own_seconds
    freq: Callable[[], tuple[float, float] | None] = read_freq_mhz
    wall: Callable[[], float] = time.monotonic
    cores: int = 0

    def __post_init__(self) -> None:
        self.cores = self.cores or os.cpu_count() or 1
        self._start = (self.wall(), self.busy(), self.own(), self.freq())

    def stop(self) -> MachineLoad:
        wall0, busy0, own0, freq0 = self._start
        wall1, busy1, own1 = self.wall(), self.busy(), self.own()
        other = None
        if None not in (busy0, busy1, own0, own1):
            # /proc/stat ticks at 100 Hz: a short span can read slightly below our own time.
            other = (busy1 - busy0) - (own1 - own0)  # type: ignore[operator]
        return observed(
            MachineLoad(
                wall_s=max(wall1 - wall0, 0.0),
                cores=self.cores,
                other_cpu_s=other,
                freq_start_mhz=freq0,
                freq_end_mhz=self.freq(),
            )
        )


def sample_load(seconds: float = 0.2, sleep: Callable[[float], None] = time.sleep) -> MachineLoad:
    """How busy the machine is right now, over `seconds` of our own idleness."""
    meter = LoadMeter()
    sleep(seconds)
    return meter.stop()
