"""An epoch's records: the canonical order, the rank/worker split, the resumable position, the
bad-record policy and the metric lines."""
