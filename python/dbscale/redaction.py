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


# A password in any text: `scheme://user:password@` and `password=value` (quoted or not).
_USERINFO_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\"']*):[^\s@/\"']*@")
# (An unquoted value stops at a backslash: inside a JSON string that is an escape to keep.)
_PASSWORD_OPTION = re.compile(r"(?i)\b((?:ssl)?password)\s*=\s*('(?:[^'\\]|\\.)*'|[^&\s\"',\\]*)")


def scrub_text(text: str) -> str:
    """Any text (a JSON document, a message) without the passwords URLs in it would carry:
    the guard every results file passes through when written, behind the per-field redaction
    (`redact_url`), so a URL some new field forgot to redact still reaches no file."""
    text = _USERINFO_PASSWORD.sub(r"\1@", text)
    return _PASSWORD_OPTION.sub(lambda m: f"{m.group(1)}=***" if m.group(2) else m.group(0), text)


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
