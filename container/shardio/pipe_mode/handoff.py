"""Items handed from a thread of their own to a consumer through a bounded queue (pipe_ahead.py, prefetch.py)."""
from __future__ import annotations

import queue
import threading
from typing import Any


def put_unless_stopped(ready: queue.Queue, item: Any, stop: threading.Event, poll: float) -> bool:
    """Puts `item`, looking every `poll` seconds whether the consumer has stopped; False then."""
    while not stop.is_set():
        try:
            ready.put(item, timeout=poll)
            return True
        except queue.Full:
            continue
    return False
