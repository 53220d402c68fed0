"""Target URLs: what `--target` may say, how PGPASSWORD (MYSQL_PWD for mysql:// URLs) joins it,
and how a URL is turned into its Unix-socket twin. Redaction is `dbscale.redaction`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from dbscale.errors import InvalidTargetError
from dbscale.redaction import KEYVALUE as _KEYVALUE
from dbscale.redaction import redact_url

EMBEDDED = "embedded"
MYSQL_SCHEMES = ("mysql", "mariadb")
URL_SCHEMES = ("postgresql", "postgres", *MYSQL_SCHEMES)
URL_FORMS = (
    "use postgresql://user[:password]@host[:port]/dbname, mysql://user[:password]@host[:port]/"
    "dbname (MariaDB too), or libpq key=value form"
)


def node_urls(url: str) -> list[str]:
    """Several full URLs joined by commas are the nodes of one target (a cluster's):
    `postgresql://n1/db,postgresql://n2/db`. libpq's own `host1,host2` form stays one URL."""
    parts = [part.strip() for part in url.split(",")]
    if len(parts) > 1 and all("://" in part for part in parts):
        return parts
    return [url]


@dataclass(frozen=True)
class TargetSpec:
    """What the user asked for: the embedded server, or a URL (password already merged in)."""

    url: str | None

    @property
    def embedded(self) -> bool:
        return self.url is None

    def describe(self) -> str:
        return "embedded PostgreSQL" if self.url is None else redact_url(self.url)


def resolve_target(raw: str | None, env: Mapping[str, str]) -> TargetSpec:
    """`None` or `embedded` mean the embedded server; anything else must be a PostgreSQL or MySQL
    URL or a libpq key=value string. PGPASSWORD (from `env`) fills in a missing password; for
    mysql:// URLs MYSQL_PWD does, else PGPASSWORD."""
    if raw is None or raw.strip().lower() == EMBEDDED:
        return TargetSpec(url=None)
    text = raw.strip()
    nodes = node_urls(text)
    if len(nodes) > 1:  # a cluster's nodes: each as its own URL
        return TargetSpec(url=",".join(str(resolve_target(n, env).url) for n in nodes))
    password = env.get("PGPASSWORD") or None
    if "://" in text:
        if text.lower().startswith(tuple(f"{s}://" for s in MYSQL_SCHEMES)):
            password = env.get("MYSQL_PWD") or password
        return TargetSpec(url=_with_password_url(text, password))
    if _is_keyvalue(text):
        return TargetSpec(url=_with_password_keyvalue(text, password))
    raise InvalidTargetError(f"--target {redact_url(text)!r} is not a database URL", URL_FORMS)


def _with_password_url(url: str, password: str | None) -> str:
    try:
        parts = urlsplit(url)
        _check_ports(parts.netloc.rpartition("@")[2])
    except ValueError as exc:
        raise InvalidTargetError(
            f"--target {redact_url(url)!r} is malformed: {exc}", URL_FORMS
        ) from None
    if parts.scheme.lower() not in URL_SCHEMES:
        raise InvalidTargetError(
            f"--target scheme {parts.scheme!r} is not supported; use postgresql:// or mysql://",
            URL_FORMS,
        )
    query_keys = {k for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if password is None or parts.password is not None or "password" in query_keys:
        return url
    user = parts.username
    if user is None and parts.scheme.lower() in MYSQL_SCHEMES:
        user = "root"  # the MySQL driver's default user, named so the password has a place
    if user is None:
        # libpq takes the password from the query string when no user is named.
        sep = "&" if parts.query else ""
        query = f"{parts.query}{sep}{urlencode({'password': password})}"
        return urlunsplit(parts._replace(query=query))
    netloc = f"{user}:{quote(password, safe='')}@{parts.netloc.rpartition('@')[2]}"
    return urlunsplit(parts._replace(netloc=netloc))


def _check_ports(hosts: str) -> None:
    """Each `host[:port]` of a host (or a libpq host list, `h1:5432,h2:5433`) has a port of
    digits, when it has one; ValueError otherwise."""
    for entry in re.split(r",(?![^\[]*\])", hosts):
        port = entry.rpartition("]")[2] if entry.startswith("[") else entry
        if ":" in port:
            digits = port.rpartition(":")[2]
            if digits and not (digits.isdigit() and int(digits) <= 65535):
                raise ValueError(f"Port could not be cast to integer value as {digits!r}")


def _is_keyvalue(text: str) -> bool:
    return bool(_KEYVALUE.match(text)) and "=" in text


def _with_password_keyvalue(text: str, password: str | None) -> str:
    keys = {m.group(1).lower() for m in _KEYVALUE.finditer(text)}
    if password is None or "password" in keys:
        return text
    return f"{text} password={_quote_keyvalue(password)}"


def _quote_keyvalue(value: str) -> str:
    if value and not re.search(r"[\s'\\]", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def socket_url_for(url: str, socket_dir: str) -> str:
    """The same server, user, database and options over the Unix socket in `socket_dir` (the
    port names the socket file, so it is kept). TLS options are dropped: sockets carry none."""
    text = url.strip()
    if "://" not in text:
        kept = [
            f"{m.group(1)}={m.group(2)}"
            for m in _KEYVALUE.finditer(text)
            if m.group(1).lower() not in ("host", "hostaddr", "sslmode")
        ]
        return " ".join([*kept, f"host={_quote_keyvalue(socket_dir)}"])
    parts = urlsplit(text)
    userinfo = parts.netloc.rpartition("@")[0]
    pairs = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in ("host", "hostaddr", "port", "sslmode")
    ]
    pairs.append(("host", socket_dir))
    if parts.port is not None:
        pairs.append(("port", str(parts.port)))
    netloc = f"{userinfo}@" if userinfo else ""
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(pairs, safe="/")))
