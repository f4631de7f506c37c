"""The one error type of malformed shard data, so callers can tell bad bytes from I/O failures, and
the one redaction every message of the readers goes through before it is raised or logged."""
from __future__ import annotations

import re


class FormatError(ValueError):
    """Bytes that are not what the format says: the message names the file or stream and the offset."""


_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s\"']*@")
_SIGNED_PARAMETER = re.compile(r"(?P<name>\b(?:X-Amz-(?:Signature|Credential|Security-Token)|Signature|AWSAccessKeyId|"
                               r"x-amz-security-token|sig|token))=[^&#\s\"']*", re.IGNORECASE)
REDACTED = "<redacted>"


def redact(text: str) -> str:
    """`text` without the secrets a URL can carry: an endpoint's `user:password@` and a presigned
    URL's signature, credential and session token (botocore puts the endpoint URL in its connection
    errors; the CLI strips it the same way)."""
    text = _USERINFO.sub(lambda match: f"{match.group('scheme')}{REDACTED}@", text)
    return _SIGNED_PARAMETER.sub(lambda match: f"{match.group('name')}={REDACTED}", text)
