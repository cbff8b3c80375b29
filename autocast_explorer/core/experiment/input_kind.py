"""What a model's input holds, named without pydantic or torch: the families say it before
the window's first paint, the result's `input` record (input_record.py) writes it."""

from __future__ import annotations

from typing import Literal

#: Plain floats, token ids, image pixels, raw audio samples, or audio features (a spectrogram).
InputKind = Literal["float", "tokens", "pixels", "audio", "features"]
