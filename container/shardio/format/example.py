"""tf.train.Example decoding without a protobuf runtime (the training image need not have one).

Example{features=1: Features{feature=1: map<string, Feature>}}, Feature is one of
bytes_list=1 (repeated bytes), float_list=2 (packed float), int64_list=3 (packed varint int64);
unpacked repeated scalars are accepted too, as protobuf parsers must.

`image_features` reads the three features an image record needs in one direct scan (a loader
worker's per-record cost: the general parser took ~60 us of a ~150 us record, issue #37); anything
it does not expect is left to `parse_example`, whose errors are the ones a reader raises.
"""
from __future__ import annotations

import struct
from typing import Dict, FrozenSet, List, Optional, Tuple, Union

from ..errors import FormatError

FeatureValues = Union[List[bytes], List[float], List[int]]

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_FLOAT = struct.Struct("<f")


def parse_example(payload: bytes, where: str) -> Dict[str, FeatureValues]:
    """Feature name → values. `where` names the record in errors."""
    view = memoryview(payload)
    features: Dict[str, FeatureValues] = {}
    for field, wire, value in _fields(view, where):
        if field == 1 and wire == _LENGTH:
            for entry_field, entry_wire, entry in _fields(value, where):
                if entry_field == 1 and entry_wire == _LENGTH:
                    key, feature = _map_entry(entry, where)
                    features[key] = feature
    return features


def _map_entry(entry: memoryview, where: str) -> Tuple[str, FeatureValues]:
    key = ""
    values: FeatureValues = []
    for field, wire, value in _fields(entry, where):
        if field == 1 and wire == _LENGTH:
            try:
                key = bytes(value).decode("utf-8")
            except UnicodeDecodeError as error:
                raise FormatError(f"{where}: feature name is not UTF-8: {error}") from None
        elif field == 2 and wire == _LENGTH:
            values = _feature(value, where)
    return key, values


def _feature(feature: memoryview, where: str) -> FeatureValues:
    values: FeatureValues = []
    for kind, wire, value in _fields(feature, where):
        if wire != _LENGTH:
            continue
        if kind == 1:
            values = [bytes(v) for f, w, v in _fields(value, where) if f == 1 and w == _LENGTH]
        elif kind == 2:
            values = _floats(value, where)
        elif kind == 3:
            values = _int64s(value, where)
    return values


def _floats(float_list: memoryview, where: str) -> List[float]:
    values: List[float] = []
    for field, wire, value in _fields(float_list, where):
        if field != 1:
            continue
        if wire == _LENGTH:
            if len(value) % 4:
                raise FormatError(f"{where}: packed float list of {len(value)} bytes")
            values.extend(v for (v,) in _FLOAT.iter_unpack(value))
        elif wire == _FIXED32:
            values.append(_FLOAT.unpack(value)[0])
    return values


def _int64s(int64_list: memoryview, where: str) -> List[int]:
    values: List[int] = []
    for field, wire, value in _fields(int64_list, where):
        if field != 1:
            continue
        if wire == _LENGTH:
            position = 0
            while position < len(value):
                number, position = _varint(value, position, where)
                values.append(_signed64(number))
        elif wire == _VARINT:
            values.append(_signed64(value))
    return values


def _signed64(number: int) -> int:
    # int64 is a plain two's-complement varint (not zigzag): negatives take 10 bytes.
    return number - (1 << 64) if number >= 1 << 63 else number


def _fields(message: memoryview, where: str):
    """(field number, wire type, value) per field: an int for varints, a memoryview otherwise."""
    position = 0
    end = len(message)
    while position < end:
        tag, position = _varint(message, position, where)
        field, wire = tag >> 3, tag & 7
        if wire == _VARINT:
            value, position = _varint(message, position, where)
            yield field, wire, value
            continue
        if wire == _LENGTH:
            length, position = _varint(message, position, where)
        elif wire == _FIXED64:
            length = 8
        elif wire == _FIXED32:
            length = 4
        else:
            raise FormatError(f"{where}: unsupported protobuf wire type {wire} (field {field})")
        if position + length > end:
            raise FormatError(f"{where}: protobuf field {field} of {length} bytes runs past its message")
        yield field, wire, message[position:position + length]
        position += length


def _varint(data: memoryview, position: int, where: str) -> Tuple[int, int]:
    result = 0
    shift = 0
    while position < len(data):
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift >= 70:
            break
    raise FormatError(f"{where}: malformed protobuf varint")


# The tags of the canonical layout (field number << 3 | wire type), as TensorFlow and the packer
# (lambda/packing/formats/example.ts) write it: Example.features, Features.feature (a map entry),
# its key and value; Feature.bytes_list and .int64_list, and their one `value` field (packed ints).
_FEATURES_TAG = _ENTRY_TAG = _KEY_TAG = _LIST_VALUE_TAG = _BYTES_LIST_TAG = 0x0A
_VALUE_TAG = 0x12
_INT64_LIST_TAG = 0x1A
ImageFeatures = Tuple[bytes, Optional[int], Optional[bytes]]


def image_features(payload: Union[bytes, memoryview], image: bytes, label: bytes, filename: bytes) -> Optional[ImageFeatures]:
    """(`image`'s one bytes value, `label`'s one int64 or None, `filename`'s one bytes value or None)
    of a serialized Example, the keys given UTF-8 encoded, in one scan of the canonical layout: each
    map entry its key then its value, each wanted feature one list of one value. The other features
    are skipped unread. None wherever the record is anything else (a missing image, a repeated value,
    unpacked ints, unknown fields, a malformed one): `parse_example` decides those, as before."""
    wanted: FrozenSet[bytes] = frozenset((image, label, filename))
    found: Dict[bytes, Tuple[int, int]] = {}
    end = len(payload)
    position = 0
    try:
        while position < end:
            if payload[position] != _FEATURES_TAG:
                return None
            length, position = _length(payload, position + 1)
            stop = position + length
            if stop > end:
                return None
            while position < stop:
                if payload[position] != _ENTRY_TAG:
                    return None
                length, position = _length(payload, position + 1)
                entry_end = position + length
                if entry_end > stop or payload[position] != _KEY_TAG:
                    return None
                length, position = _length(payload, position + 1)
                key = bytes(payload[position:position + length])  # hashable where the payload is a view of its block
                position += length
                if position > entry_end:
                    return None
                if key in wanted:
                    if payload[position] != _VALUE_TAG:
                        return None
                    length, position = _length(payload, position + 1)
                    if position + length != entry_end:
                        return None
                    found[key] = (position, entry_end)  # the last entry of a key counts, as in a map
                position = entry_end
            if position != stop:
                return None
        if image not in found:
            return None
        image_value = _single_bytes(payload, *found[image])
        label_value = _single_int64(payload, *found[label]) if label in found else None
        filename_value = _single_bytes(payload, *found[filename]) if filename in found else None
    except IndexError:  # a length or tag past the end: malformed, parse_example names it
        return None
    if image_value is None or (label in found and label_value is None) or (filename in found and filename_value is None):
        return None
    return image_value, label_value, filename_value


def _single_bytes(payload: bytes, start: int, end: int) -> Optional[bytes]:
    """The one value of a Feature (payload[start:end]) that is a bytes_list of one value, else None."""
    if start == end or payload[start] != _BYTES_LIST_TAG:
        return None
    length, position = _length(payload, start + 1)
    if position + length != end or payload[position] != _LIST_VALUE_TAG:
        return None
    length, position = _length(payload, position + 1)
    # bytes of its own (free where the payload is bytes): a view would point into a block buffer that the next block overwrites
    return bytes(payload[position:position + length]) if position + length == end else None


def _single_int64(payload: bytes, start: int, end: int) -> Optional[int]:
    """The one value of a Feature (payload[start:end]) that is a packed int64_list of one value, else None."""
    if start == end or payload[start] != _INT64_LIST_TAG:
        return None
    length, position = _length(payload, start + 1)
    if position + length != end or payload[position] != _LIST_VALUE_TAG:
        return None
    length, position = _length(payload, position + 1)
    if position + length != end:
        return None
    number, position = _length(payload, position)
    return _signed64(number) if position == end else None


def _length(data: bytes, position: int) -> Tuple[int, int]:
    """A varint at `position` and the position after it; IndexError past the end (or beyond 10 bytes)."""
    byte = data[position]
    if byte < 0x80:  # a length under 128: one byte, most of them
        return byte, position + 1
    result = byte & 0x7F
    shift = 7
    while True:
        position += 1
        byte = data[position]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position + 1
        shift += 7
        if shift >= 70:
            raise IndexError("varint of more than 10 bytes")
