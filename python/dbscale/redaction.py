"""How every URL is redacted before it is shown or stored: a password never reaches logs, results
or reports. A base module: the core's configuration, the results and the targets all use it.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Query or key=value options whose values are secrets.
SECRET_KEYS = frozenset({"password", "sslpassword"})
# One libpq key=value option.
KEYVALUE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)")


def redact_url(url: str) -> str:
    """The URL without any password: dropped from user info, query string or key=value options.
    Never raises; an unparsable string is returned with anything password-like removed."""
    text = url.strip()
    if "://" in text:
        return _redact_url_form(text)
    if "=" in text:
        return _redact_keyvalue_form(text)
    return text


def _redact_url_form(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"//[^@/]*@", "//***@", url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}@{hostport}" if user else hostport
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, v) for k, v in pairs if k.lower() not in SECRET_KEYS], safe="/")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _redact_keyvalue_form(text: str) -> str:
    kept: list[str] = []
    for match in KEYVALUE.finditer(text):
        key, value = match.group(1), match.group(2)
        if key.lower() not in SECRET_KEYS:
            kept.append(f"{key}={value}")
    if not kept:
        # Not key=value after all; keep nothing that might be a secret.
        return re.sub(r"(?i)(ssl)?password\s*=\s*\S*", "", text).strip()
    return " ".join(kept)
