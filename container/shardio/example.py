"""tf.train.Example decoding without a protobuf runtime (the training image need not have one).

Example{features=1: Features{feature=1: map<string, Feature>}}, Feature is one of
bytes_list=1 (repeated bytes), float_list=2 (packed float), int64_list=3 (packed varint int64);
unpacked repeated scalars are accepted too, as protobuf parsers must.
"""
from __future__ import annotations

import struct
from typing import Dict, List, Tuple, Union

from .errors import FormatError

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
