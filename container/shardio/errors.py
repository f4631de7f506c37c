"""The one error type of malformed shard data, so callers can tell bad bytes from I/O failures."""


class FormatError(ValueError):
    """Bytes that are not what the format says: the message names the file or stream and the offset."""
