"""One way to run the model that the search may try: route, dtype, threads and the layers kept
in float32, in words and as the document's part."""

from __future__ import annotations

from dataclasses import dataclass, replace

from autocast_explorer.core.planning.document import (
    PlanCandidate,
    PlanChoice,
    PlanFlips,
    SpeedupInterval,
)

FLOAT32 = "float32"


@dataclass(frozen=True)
class Choice:
    """`dtype` float32: no lower precision; on the implicit route the tensors stay float32 and
    `dtype` names the maths oneDNN may use (bfloat16). `keep` holds layer rows (module paths)."""

    route: str
    dtype: str
    threads: int
    keep: tuple[str, ...] = ()

    @property
    def lowered(self) -> bool:
        return self.dtype != FLOAT32

    def with_threads(self, threads: int) -> Choice:
        return replace(self, threads=threads)

    def with_keep(self, keep: tuple[str, ...]) -> Choice:
        return replace(self, keep=keep)

    def label(self) -> str:
        """'compiled bfloat16, 2 threads, 1 layer kept in float32'."""
        what = "float32 with bf16 maths" if self.route == "implicit" else self.dtype
        words = f"{self.route} {what}, {self.threads} thread{'s' if self.threads != 1 else ''}"
        if self.keep:
            count = len(self.keep)
            words += f", {count} layer{'s' if count != 1 else ''} kept in float32"
        return words

    def part(
        self,
        interval: SpeedupInterval | None = None,
        value: float | None = None,
        flipped: PlanFlips | None = None,
        identical: bool = False,
        memory_mb: float | None = None,
    ) -> PlanChoice:
        """The document's part; `identical`: the answers were float32's bit for bit. What
        does not apply (flips off real data, `identical` false) is left out of the file."""
        counted = {"flipped": flipped} if flipped is not None else {}
        return PlanChoice(
            route=self.route,
            dtype=self.dtype,
            threads=self.threads,
            keep_float32=self.keep,
            speedup_interval=interval,
            criterion_value=value,
            identical_to_float32=True if identical and self.lowered else None,
            memory_mb=memory_mb,
            **counted,
        )

    def candidate(self, part: PlanChoice, met: bool, why_not: str) -> PlanCandidate:
        """`part` (this choice's) as a candidate tried: whether it met the criterion, why not."""
        return PlanCandidate(**part.model_dump(exclude_unset=True), met=met, why_not=why_not)

    @classmethod
    def of(cls, part: PlanChoice) -> Choice:
        return cls(part.route, part.dtype, part.threads, tuple(part.keep_float32))
