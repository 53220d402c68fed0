"""Target URLs, and everything a URL says: its dialect, its hosts and ports (URL or libpq
key=value form), whether it is on this machine, its Unix-socket twin, and how PGPASSWORD (MYSQL_PWD
for mysql:// URLs) joins it. Every other module asks here; redaction is `dbscale.redaction`'s.
The core parses the same URLs for connecting (driver/mod.rs `Endpoint`); this side reads what
the planning, observing and reporting need without connecting.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from dbscale.errors import InvalidTargetError
from dbscale.modes import Dialect
from dbscale.redaction import KEYVALUE as _KEYVALUE
from dbscale.redaction import redact_url

EMBEDDED = "embedded"
LOCAL = "local"  # a private server dbscale starts in the target's shape
LOCAL_CLUSTER = "local-cluster"  # private nodes dbscale starts as one cluster
MYSQL_SCHEMES = ("mysql", "mariadb")
URL_SCHEMES = ("postgresql", "postgres", *MYSQL_SCHEMES)
DEFAULT_PORTS = {Dialect.POSTGRESQL: 5432, Dialect.MYSQL: 3306}
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})
URL_FORMS = (
    "use postgresql://user[:password]@host[:port]/dbname, mysql://user[:password]@host[:port]/"
    "dbname (MariaDB too), or libpq key=value form"
)


def is_private_url(url: str) -> bool:
    """`local`, `local-cluster` and `embedded` name servers dbscale starts itself."""
    return url.strip().lower() in (LOCAL, LOCAL_CLUSTER, EMBEDDED)


def dialect_of(url: str) -> Dialect:
    """MySQL for mysql:// and mariadb:// URLs; PostgreSQL for everything else (postgresql://,
    libpq key=value, and the private servers, which are PostgreSQL unless a local engine says
    otherwise)."""
    scheme = url.strip().split("://", 1)[0].lower() if "://" in url else ""
    return Dialect.MYSQL if scheme in MYSQL_SCHEMES else Dialect.POSTGRESQL


@dataclass(frozen=True)
class Endpoint:
    """Where a URL's (first) host listens, as far as can be told without connecting."""

    dialect: Dialect
    host: str  # "" for the default Unix socket, a directory or socket path, or a host name
    port: int

    @property
    def unix_socket(self) -> str | None:
        """The socket file's path, when the host is a directory (PostgreSQL) or a socket."""
        if not self.host.startswith("/"):
            return None
        if self.dialect is Dialect.POSTGRESQL:
            return f"{self.host.rstrip('/')}/.s.PGSQL.{self.port}"
        return self.host

    @property
    def loopback(self) -> bool:
        """On this machine by name: a loopback name, a socket, or the default socket."""
        return self.host == "" or self.host.startswith("/") or self.host in LOOPBACK_NAMES


def keyvalue_pairs(text: str) -> dict[str, str]:
    """A libpq key=value string's options, keys in lower case, quotes and escapes removed."""
    pairs: dict[str, str] = {}
    for found in _KEYVALUE.finditer(text):
        value = found.group(2)
        if value.startswith("'") and value.endswith("'") and len(value) >= 2:
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        pairs[found.group(1).lower()] = value
    return pairs


def endpoint_of(url: str) -> Endpoint:
    """Host and port of a URL's first host (`?host=/dir`, `?socket=` and `?port=` too) or of a
    libpq key=value string; the dialect's default port when none is given. A malformed URL
    gives the default host and port, never an error (it is refused where it is resolved)."""
    dialect = dialect_of(url)
    host, port = "", None
    text = node_urls(url)[0]
    if "://" in text:
        try:
            parts = urlsplit(text)
            query = dict(parse_qsl(parts.query))
            netloc_host = parts.netloc.rpartition("@")[2].split(",")[0]
            named = urlsplit(f"//{netloc_host}")
            host = unquote(named.hostname or "") or query.get("host", "") or query.get("socket", "")
            port = named.port
        except ValueError:
            query = {}
        if port is None and query.get("port", "").split(",")[0].isdigit():
            port = int(query["port"].split(",")[0])
    else:
        pairs = keyvalue_pairs(text)
        host = pairs.get("host", pairs.get("hostaddr", "")).split(",")[0]
        port_text = pairs.get("port", "").split(",")[0]
        port = int(port_text) if port_text.isdigit() else None
    return Endpoint(dialect, host, port or DEFAULT_PORTS[dialect])


def is_local_host(host: str) -> bool:
    """Loopback, a socket path, or an address of this machine (one we can bind to)."""
    if host == "" or host.startswith("/") or host.lower() in LOOPBACK_NAMES:
        return True
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    for family, _, _, _, address in infos:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.bind((address[0], 0))
            return True
        except OSError:
            continue
    return False


def on_this_machine(url: str) -> bool:
    """Whether a target's (first) host is this machine: loopback, a socket, or our address."""
    return is_local_host(endpoint_of(url).host)


def loopback_postgres(url: str) -> tuple[str, int] | None:
    """(host, port) of a `postgresql://` URL to a loopback host, else None: a server whose
    Unix socket this machine can be asked for."""
    if "://" not in url or dialect_of(url) is not Dialect.POSTGRESQL:
        return None
    endpoint = endpoint_of(url)
    if endpoint.host.startswith("/") or not endpoint.loopback or endpoint.host == "":
        return None
    return endpoint.host, endpoint.port


def short_address(url: str) -> str:
    """`host:port/db?options` of a URL, without scheme, user or password (a key=value string
    as it is, redacted): the name a target without one goes by."""
    text = redact_url(url)
    if "://" not in text:
        return text
    rest = text.split("://", 1)[1]
    return rest.split("@", 1)[1] if "@" in rest else rest


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
