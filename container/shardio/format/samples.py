"""Multi-part samples (lib/contract/sample-parts.ts): what a multi-part dataset's manifest says of its
samples (`SampleDescription`), and its records read as samples (`Sample`: part name → bytes, with the
sample's key, shard, record and label). Standard library only; decoding the parts (images as
tensors, JSON parsed, text as str) is sample_decode.py's, in the loader workers.

A multi-part record is one tf.train.Example: the image part (the manifest's `imagePart`) in
`image/encoded` (with `image/format` and `image/filename`), the label in `image/class/label`, every
other part as a one-value bytes feature named by the part, the key in SAMPLE_KEY_FEATURE. The
classification readers read such a record as before (its image and label); `read_samples` makes a
source hand out Samples instead, through the same order, split and position (order.py, split.py,
position.py): every sample once an epoch, resumable as the records are.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from ..contract import PART_KINDS, SAMPLE_KEY_FEATURE
from ..errors import FormatError, quoted
from .example import parse_example
from .records import FramedRecord, ShardFormat
from .tfrecord import single_feature

KEY, SHARD, RECORD, LABEL = "__key__", "__shard__", "__record__", "__label__"
"""A Sample's entries that are not parts (WebDataset's `__key__` convention; a part's name has no `__`):
its key (the input's path up to the first dot of its name), the shard it was read from (its key under
the dataset root; in Pipe mode the FIFO's path), its index in that shard, and its class (-1: none)."""
METADATA = (KEY, SHARD, RECORD, LABEL)

_IMAGE, _FORMAT, _FILENAME, _LABEL = "image/encoded", "image/format", "image/filename", "image/class/label"


@dataclass(frozen=True)
class SampleDescription:
    """A multi-part dataset's samples, as its manifest's `sample` field describes them."""

    kinds: Dict[str, str]
    """Every part's kind (contract.py PART_KINDS: image, json, text, bytes), by part name."""
    required: Tuple[str, ...]
    """The parts every sample has; the others may be missing from some."""
    image_part: Optional[str] = None
    """The part held in `image/encoded` (the classification readers' image); None when there is none."""


def parse_sample_description(path: str, value: object) -> Optional[SampleDescription]:
    """The manifest's `sample` field, checked (a FormatError names the manifest at `path` and the field);
    None for a one-part dataset (no field)."""
    if value is None:
        return None
    where = f"dataset manifest {path}: sample"
    if not isinstance(value, dict) or not isinstance(value.get("parts"), list):
        raise FormatError(f"{where} must be an object with a list of parts, got {quoted(repr(value))}")
    kinds: Dict[str, str] = {}
    for position, part in enumerate(value["parts"]):
        name = part.get("name") if isinstance(part, dict) else None
        kind = part.get("kind") if isinstance(part, dict) else None
        if not isinstance(name, str) or not name or "__" in name or name in kinds:
            raise FormatError(f"{where}.parts[{position}].name must be a part name (not empty, no '__', listed once), "
                              f"got {quoted(repr(name))}")
        if kind not in PART_KINDS:
            raise FormatError(f"{where}.parts[{position}].kind must be one of {', '.join(PART_KINDS)}, got {quoted(repr(kind))}")
        kinds[name] = kind
    required = value.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) and name in kinds for name in required):
        raise FormatError(f"{where}.required must list parts of sample.parts ({', '.join(kinds)}), got {quoted(repr(required))}")
    image_part = value.get("imagePart")
    if image_part is not None and kinds.get(image_part) != "image":
        raise FormatError(f"{where}.imagePart must name a part of kind image, got {quoted(repr(image_part))}")
    return SampleDescription(kinds=kinds, required=tuple(required), image_part=image_part)


class Sample(dict):
    """One sample: part name → its bytes, and the entries KEY, SHARD, RECORD and LABEL. A part a sample
    lacks (one not required) is absent. `description` is its dataset's (the decoder reads the parts'
    kinds there); `shard`, `position` and `filename` name it in errors, as an ImageRecord's do (bad_records.py)."""

    def __init__(self, entries: Dict[str, Any], description: SampleDescription) -> None:
        super().__init__(entries)
        self.description = description

    @property
    def parts(self) -> Tuple[str, ...]:
        """The names of the parts it holds, in the description's order."""
        return tuple(name for name in self.description.kinds if name in self)

    @property
    def shard(self) -> Optional[str]:
        return self.get(SHARD)

    @property
    def position(self) -> Optional[int]:
        return self.get(RECORD)

    @property
    def filename(self) -> Optional[str]:
        return self.get(KEY)

    record_id: Optional[int] = None
    """Not stored (TFRecord has no record ids): bad_records.py names a sample by its key."""

    def __reduce__(self) -> Any:
        return Sample, (dict(self), self.description)


class SampleReader:
    """A record → its Sample, for one dataset's description: the `decode_record` of a source in samples mode
    (ShardDirectory's, PipeSource's), called as `to_image` is (formats.py)."""

    def __init__(self, description: SampleDescription) -> None:
        self.description = description
        self._known = frozenset((_IMAGE, _FORMAT, _FILENAME, _LABEL, SAMPLE_KEY_FEATURE, *description.kinds))

    def __call__(self, shard_format: ShardFormat, record: FramedRecord, name: str, *, shard: Optional[str] = None,
                 position: Optional[int] = None) -> Sample:
        where = f"{name}: record {position} at offset {record.offset}"
        if shard_format is not ShardFormat.TFRECORD:
            raise FormatError(f"{where}: multi-part samples are tf.train.Examples (format: tfrecord), not RecordIO records")
        features = parse_example(record.payload, where)
        unknown = sorted(set(features) - self._known)
        if unknown:
            raise FormatError(f"{where}: holds the feature(s) {', '.join(map(repr, unknown))}, which the manifest's "
                              f"sample.parts ({', '.join(self.description.kinds)}) does not list: a manifest of another dataset?")
        key = single_feature(features, SAMPLE_KEY_FEATURE, bytes, where)
        label = features.get(_LABEL)
        entries: Dict[str, Any] = {KEY: _utf8(key, SAMPLE_KEY_FEATURE, where), SHARD: shard, RECORD: position,
                                   LABEL: -1 if label is None else single_feature(features, _LABEL, int, where)}
        for part in self.description.kinds:
            feature = _IMAGE if part == self.description.image_part else part
            if feature in features:
                entries[part] = single_feature(features, feature, bytes, where)
            elif part in self.description.required:
                raise FormatError(f"{where} (sample {quoted(entries[KEY])}): lacks its part {part!r} (feature {feature}), "
                                  "which the manifest's sample.required says every sample has")
        return Sample(entries, self.description)


def _utf8(value: bytes, feature: str, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(f"{where}: the feature {feature} is not UTF-8 ({error})") from None


def read_samples(source: Any) -> Any:
    """`source` (a ShardDirectory, an S3ShardDirectory or a PipeSource) made to hand out Samples rather than
    ImageRecords, read as its manifest's `sample` field describes them; refused, naming the manifest, for a
    dataset without one (its records are (image, label) pairs: read them without samples)."""
    manifest = getattr(source, "manifest", None)
    description = getattr(manifest, "sample", None)
    if description is None:
        where = f"dataset manifest {manifest.path}" if manifest is not None else "a dataset without a manifest"
        raise ValueError(f"samples=True: {where} describes no multi-part samples (no `sample` field: each record is one "
                         "image and its label); read it with samples=False, the (image, label) readers")
    source.decode_record = SampleReader(description)
    return source
