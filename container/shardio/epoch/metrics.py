"""What train.py reports per interval, in the one line format TrainingJob's metric definitions
capture (TrainingCode.reference() in lib/training/training-code.ts; a jest test checks that its
regular expressions match `interval_line`)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Interval:
    samples: int
    seconds: float
    data_wait_seconds: float

    @property
    def samples_per_second(self) -> float:
        return self.samples / self.seconds if self.seconds > 0 else 0.0

    @property
    def data_wait_fraction(self) -> float:
        """The share of the interval the training loop spent blocked on the loader for its next batch."""
        return min(1.0, self.data_wait_seconds / self.seconds) if self.seconds > 0 else 0.0


class ThroughputMeter:
    """Samples and time waited for data since the last `take()`."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._start = clock()
        self._samples = 0
        self._waited = 0.0

    def add(self, samples: int, waited_seconds: float) -> None:
        self._samples += samples
        self._waited += waited_seconds

    def take(self) -> Interval:
        now = self._clock()
        interval = Interval(self._samples, now - self._start, self._waited)
        self._start, self._samples, self._waited = now, 0, 0.0
        return interval


def interval_line(epoch: int, step: int, samples_per_second: float, data_wait_fraction: float, loss: float) -> str:
    """`epoch=0 step=100 samples/s=1234.5 data_wait=0.123 loss=2.3456`."""
    return (f"epoch={epoch} step={step} samples/s={samples_per_second:.1f} "
            f"data_wait={data_wait_fraction:.3f} loss={loss:.4f}")


def validation_line(epoch: int, step: int, loss: float, accuracy: float) -> str:
    """`epoch=0 step=500 val_loss=2.3456 val_accuracy=0.4567`, once per epoch."""
    return f"epoch={epoch} step={step} val_loss={loss:.4f} val_accuracy={accuracy:.4f}"
