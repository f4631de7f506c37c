"""The one error type of malformed shard data, so callers can tell bad bytes from I/O failures, the
one redaction every message of the readers goes through before it is raised or logged, and the one
escaping of names (keys, paths) in a line meant for people (lambda/io/printable.ts on the Node side)."""
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


ECHO_LIMIT = 200
"""Characters of a value from outside shown at most in a message."""

# C0 and C1 controls, DEL, line and paragraph separators, bidi embeddings, overrides and isolates.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` with every unprintable character escaped (`\\n`, `\\r`, `\\x1b`, `\\u{202e}`), as the
    CLI shows it: an `ESC ]0;` in a file name would retitle the terminal, a `\\r` overwrite the line,
    a `\\n` fake a line of its own. A lone surrogate (a name that was not UTF-8) shows as its byte."""
    def escape(match: "re.Match[str]") -> str:
        char = match.group()
        code = ord(char)
        if char in _NAMED:
            return _NAMED[char]
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{{{code:x}}}"
    escaped = _UNPRINTABLE.sub(escape, text)
    return _surrogates_shown(escaped) if any("\ud800" <= char <= "\udfff" for char in escaped) else escaped


def _surrogates_shown(text: str) -> str:
    """A name os.fsdecode made of bytes that are not UTF-8 shows them as `\\xNN`, as the CLI lists them;
    any other lone surrogate as `\\udNNN`."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def quoted(text: str, limit: int = ECHO_LIMIT) -> str:
    """`'text'`, cut to `limit` characters (saying how long it was) and escaped."""
    shown = text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
    return f"'{printable(shown)}'"
