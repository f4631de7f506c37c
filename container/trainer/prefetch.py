"""Batch n+1 made ready on the device while the training step works on batch n.

`Prefetcher` pulls the loader's batches on a thread of its own and runs `prepare` on each (the
host-to-device copy, and for the GPU paths decoding and augmentation): on a GPU inside a CUDA
stream of its own, so that those kernels overlap the step's; it hands each ready batch over with
an event recorded on that stream, which the consumer's stream waits on (a GPU-side wait: the
training thread does not block). On the CPU the same code runs without streams or events.

It stands in for the loader in train.py: `set_epoch` passes through, and `state_dict` is the
loader's position as it was when the last batch HANDED OUT was pulled, not the one pulled ahead,
so that a checkpoint resumes at the first batch not trained on.
"""
from __future__ import annotations

import contextlib
import queue
import threading
from typing import Any, Callable, Iterable, Iterator, Optional, Tuple

import torch

from shardio.pipe_mode.handoff import put_unless_stopped

Prepare = Callable[[Any, Any], Tuple[torch.Tensor, torch.Tensor]]
_END = object()


class Prefetcher:
    """Iterates as the loader does, each batch `(images, labels, *rest)` turned into
    `(*prepare(images, labels), *rest)` ahead of time, `depth` batches at most."""

    def __init__(self, loader: Iterable, prepare: Prepare, device: torch.device, depth: int = 2) -> None:
        if depth < 1:
            raise ValueError(f"Prefetcher: depth must be at least 1, got {depth}")
        self.loader, self.prepare, self.device, self.depth = loader, prepare, device, depth
        self.dataset = getattr(loader, "dataset", None)
        self.resumable = hasattr(loader, "state_dict")
        """The loader knows its position in the epoch (not in Pipe mode): train.py checkpoints it."""
        self._ready: Optional[queue.Queue] = None
        self._position: Optional[dict] = None

    def set_epoch(self, epoch: int) -> None:
        (self.loader.set_epoch if hasattr(self.loader, "set_epoch") else self.loader.dataset.set_epoch)(epoch)

    @property
    def ready(self) -> int:
        """Prepared batches waiting for the consumer (tests, logs)."""
        return self._ready.qsize() if self._ready is not None else 0

    def __len__(self) -> int:
        return len(self.loader)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Tuple[Any, ...]]:
        ready: queue.Queue = queue.Queue(maxsize=self.depth)
        stop = threading.Event()
        self._ready = ready
        worker = threading.Thread(target=self._fill, args=(ready, stop), name="shardio-prefetch", daemon=True)
        worker.start()
        consumer_stream = torch.cuda.current_stream(self.device) if self.device.type == "cuda" else None
        try:
            while True:
                item = ready.get()
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                batch, event, position = item
                if consumer_stream is not None:
                    consumer_stream.wait_event(event)
                    for tensor in batch:
                        if isinstance(tensor, torch.Tensor):
                            tensor.record_stream(consumer_stream)  # its memory is the consumer's now
                self._position = position
                yield batch
        finally:
            stop.set()
            _drain(ready)
            worker.join()  # the loader's iterator must be done with before the next epoch starts one
            self._ready = None

    def _fill(self, ready: queue.Queue, stop: threading.Event) -> None:
        stream = torch.cuda.Stream(self.device) if self.device.type == "cuda" else None
        try:
            with _on(stream, self.device):
                for images, labels, *rest in self.loader:
                    position = self.loader.state_dict() if hasattr(self.loader, "state_dict") else None
                    prepared = (*self.prepare(images, labels), *rest)
                    event = None
                    if stream is not None:
                        event = torch.cuda.Event()
                        event.record(stream)
                    if not _put(ready, (prepared, event, position), stop):
                        return
            _put(ready, _END, stop)
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            _put(ready, error, stop)

    def state_dict(self) -> dict:
        """The loader's position after the last batch handed out (see the module's docstring)."""
        if self._position is not None:
            return dict(self._position)
        return self.loader.state_dict()  # type: ignore[attr-defined]

    def load_state_dict(self, state: dict) -> None:
        self.loader.load_state_dict(state)  # type: ignore[attr-defined]


def _on(stream: Optional[Any], device: torch.device) -> contextlib.ExitStack:
    """The prefetching thread's device and stream (nothing on the CPU)."""
    scope = contextlib.ExitStack()
    if stream is not None:
        scope.enter_context(torch.cuda.device(device))
        scope.enter_context(torch.cuda.stream(stream))
    return scope


def _put(ready: queue.Queue, item: Any, stop: threading.Event) -> bool:
    """Puts unless the consumer has stopped; False then."""
    return put_unless_stopped(ready, item, stop, 0.1)


def _drain(ready: queue.Queue) -> None:
    while True:
        try:
            ready.get_nowait()
        except queue.Empty:
            return
