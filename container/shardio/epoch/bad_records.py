"""What a reader does with a record its transform cannot decode (`--on_bad_record`): fail with an
error that names the record, or skip it, log it and count it, within a budget.

A record is named by its shard's key under the dataset root (in Pipe mode: the FIFO it came
through), its index in that shard (that stream), its input's key (TFRecord: the record's own
`image/filename`; RecordIO: its record id looked up in the shard's member list, where the channel
holds it) and the dataset version. The error is raised in the DataLoader worker; PyTorch re-raises
it in the training process as a BadRecordError whose message holds the worker's traceback text.

The skip budget is per consumer (one DataLoader worker of one rank) and epoch, because workers
are separate processes that share nothing on the data path: a consumer fails once it has skipped
more than `max_bad_ratio` × the records of its part of the epoch (rounded down). The parts add up to
the dataset, so the whole job never skips more than `max_bad_ratio` of an epoch; a cluster of bad
records in one part fails sooner than a global count would. Where a part's size is unknown (Pipe
mode, shards without indexes or manifest) the same ratio is checked against the records read, at
the end of the part.

Skipped records still count in a resumable loader's position (`take_skipped`): a resumed epoch
starts after them, as after the records trained on, so no record is read twice or never.
"""
from __future__ import annotations

import json
import logging
import math
import os
from fractions import Fraction
from typing import Any, Callable, Iterable, Iterator, Optional

from ..errors import FormatError, printable, redact
from ..format.records import ImageRecord

FAIL, SKIP = "fail", "skip"
ON_BAD_RECORD = (FAIL, SKIP)
DEFAULT_MAX_BAD_RATIO = 0.001
"""0.1 %: ImageNet's known odd files (CMYK JPEGs, a PNG named .JPEG) are about 0.002 % and decode;
stray corrupt files stay far below 0.1 %, while a systematic fault (files of another format, cut
uploads, a wrong channel) is far above it and should stop the job rather than train on the rest."""

_REASON_CHARACTERS = 300
LOG = logging.getLogger("shardio.bad_records")  # its name of 0.1.0: logging configurations name it
_skipped_since_batch = [0]


def check_policy(on_bad_record: str, max_bad_ratio: float) -> None:
    """Refuses a policy that is not one, naming the value and what is allowed."""
    if on_bad_record not in ON_BAD_RECORD:
        raise ValueError(f"on_bad_record (--on_bad_record) must be one of {', '.join(ON_BAD_RECORD)}, got {on_bad_record!r}")
    if not 0 <= max_bad_ratio <= 1:
        raise ValueError(f"max_bad_ratio (--max_bad_ratio) must be between 0 and 1 (a fraction of the records read), "
                         f"got {max_bad_ratio!r}")


class BadRecordError(FormatError):
    """A record whose image could not be decoded (or skipped records past the budget): the message
    names the record's shard, index, input key and dataset version. The fields are kept when the
    error is pickled; PyTorch's worker hop keeps the message alone."""

    def __init__(self, message: str, *, shard: Optional[str] = None, position: Optional[int] = None,
                 key: Optional[str] = None, dataset_version: Optional[str] = None) -> None:
        super().__init__(message)
        self.shard, self.position, self.key, self.dataset_version = shard, position, key, dataset_version

    def __reduce__(self) -> Any:
        return _rebuild_error, (str(self), self.shard, self.position, self.key, self.dataset_version)


def _rebuild_error(message: str, shard: Optional[str], position: Optional[int], key: Optional[str],
                   dataset_version: Optional[str]) -> BadRecordError:
    return BadRecordError(message, shard=shard, position=position, key=key, dataset_version=dataset_version)


def members_key_of(members_path: str, record_id: int) -> Optional[str]:
    """The input key of the record with `record_id` in a shard's member list (JSON lines
    `[key, size, label, recordId, modified]`, lambda/packing/members.ts); None when it is not listed."""
    with open(members_path, encoding="utf-8") as handle:
        for line in handle:
            entry = json.loads(line)
            if entry[3] == record_id:
                return entry[0]
    return None


def take_skipped() -> int:
    """The records this process skipped since the last call: the resumable loader counts them into
    the batch being made, so that its position covers them."""
    skipped, _skipped_since_batch[0] = _skipped_since_batch[0], 0
    return skipped


class BadRecordGuard:
    """Applies a transform to one consumer's records of one epoch under `--on_bad_record`."""

    def __init__(self, source: Any, *, on_bad_record: str = FAIL, max_bad_ratio: float = DEFAULT_MAX_BAD_RATIO,
                 expected: Optional[int] = None, consumer: str = "this reader") -> None:
        """`source`: the record source (its `dataset_version`, and `member_key` where it has one);
        `expected`: the records this consumer reads, where known; `consumer` names it in messages."""
        check_policy(on_bad_record, max_bad_ratio)
        self.source, self.on_bad_record, self.max_bad_ratio = source, on_bad_record, max_bad_ratio
        self.expected, self.consumer = expected, consumer
        self.budget = None if expected is None else math.floor(Fraction(repr(max_bad_ratio)) * expected)

    def decode(self, records: Iterable[ImageRecord], transform: Callable[[ImageRecord], Any]) -> Iterator[Any]:
        """`transform(record)` of every record; one that raises fails the iteration naming the record,
        or is skipped and logged within the budget."""
        _skipped_since_batch[0] = 0  # what an earlier iteration in this process left uncounted is not this loader's
        seen = skipped = 0
        for record in records:
            seen += 1
            try:
                result = transform(record)
            except Exception as error:  # noqa: BLE001 - whatever the transform raised, the record is named with it
                skipped += 1
                self._bad(record, error, skipped)
                continue
            yield result
        if skipped and self.budget is None and skipped > self.max_bad_ratio * seen:
            raise BadRecordError(f"{self.consumer} skipped {skipped} of the {seen} records it read, more than "
                                 f"--max_bad_ratio {self.max_bad_ratio} allows; {self._reading()}",
                                 dataset_version=self.source.dataset_version)
        if skipped:
            LOG.warning("%s skipped %d bad record(s) of the %d it read (--on_bad_record skip); %s",
                        self.consumer, skipped, seen, self._reading())

    def _bad(self, record: ImageRecord, error: Exception, skipped: int) -> None:
        key = self._key(record)
        version = self.source.dataset_version
        # Escaped: the input's key is any name a source held, and this line ends in a terminal.
        name = printable(f"record {record.position} of {_where(record.shard)} (input {key or 'unknown'}, "
                         f"dataset version {version or 'none (no versioned manifest)'})")
        fields = {"shard": record.shard, "position": record.position, "key": key, "dataset_version": version}
        reason = printable(_reason(error))
        if self.on_bad_record == FAIL:
            raise BadRecordError(f"{name} cannot be decoded: {reason}. Repack the dataset without the file, or let "
                                 "the reader skip such records (--on_bad_record skip, with --max_bad_ratio)",
                                 **fields) from error
        if self.budget is not None and skipped > self.budget:
            raise BadRecordError(f"{self.consumer} skipped {skipped} bad records, the last {name}: {reason}; more than "
                                 f"--max_bad_ratio {self.max_bad_ratio} of its {self.expected} records allows "
                                 f"({self.budget}). {self._reading()}", **fields) from error
        _skipped_since_batch[0] += 1
        LOG.warning("skipped %s: %s (--on_bad_record skip; %s)", name, reason, self._count(skipped))

    def _count(self, skipped: int) -> str:
        if self.budget is None:
            return f"{skipped} skipped by {self.consumer}, at most {self.max_bad_ratio} of the records it reads"
        return f"{skipped} of the {self.budget} that {self.consumer} may skip of its {self.expected} records"

    def _reading(self) -> str:
        return f"dataset version {self.source.dataset_version or 'none (no versioned manifest)'}"

    def _key(self, record: ImageRecord) -> Optional[str]:
        if record.filename is not None:
            return record.filename
        if record.record_id is None:
            return None
        member_key = getattr(self.source, "member_key", None)
        found = member_key(record.shard, record.record_id) if member_key is not None and record.shard else None
        return found or f"record id {record.record_id} (no member list in this channel to name its key)"


def _where(shard: Optional[str]) -> str:
    # Shard keys are relative to the dataset root; a Pipe-mode record names the FIFO, an absolute path.
    if shard is None:
        return "an unnamed shard"
    return f"Pipe-mode stream {shard}" if os.path.isabs(shard) else f"shard {shard}"


def _reason(error: Exception) -> str:
    text = redact(str(error)).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > _REASON_CHARACTERS:
        first = first[:_REASON_CHARACTERS] + "…"
    return f"{type(error).__name__}: {first}" if first else type(error).__name__
