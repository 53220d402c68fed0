"""`--metrics-addr`: where the metrics endpoint listens. `PORT` or `:PORT` is loopback; any other
host must be written out (`0.0.0.0:9464`, an address of this machine), which is the explicit ask
for serving beyond this machine. The address is bound before anything runs, so a port in use or an
address this machine does not have is one error before the study starts."""

from __future__ import annotations

import errno
import ipaddress
import socket
from dataclasses import dataclass

from dbscale.errors import ConfigError

LOOPBACK = "127.0.0.1"
HINT = "give HOST:PORT (127.0.0.1:9464), :PORT or PORT for this machine only"


@dataclass(frozen=True)
class ListenAddress:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def parse_address(text: str, what: str = "--metrics-addr") -> ListenAddress:
    """HOST:PORT, [V6]:PORT, :PORT or PORT; ConfigError naming `what` otherwise."""
    raw = text.strip()
    host, sep, port_text = raw.rpartition(":")
    if not sep:
        host, port_text = "", raw
    host = host.strip("[]") if host.startswith("[") else host
    if ":" in host and not raw.startswith("["):
        raise ConfigError(f"{what} {text!r}: an IPv6 address needs brackets", HINT)
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(f"{what} {text!r}: {port_text!r} is not a port number", HINT) from None
    if not 0 < port < 65536:
        raise ConfigError(f"{what} {text!r}: port {port} is outside 1-65535", HINT)
    return ListenAddress(host or LOOPBACK, port)


def bind(address: ListenAddress, what: str = "--metrics-addr") -> socket.socket:
    """A listening socket on `address`; ConfigError when it cannot be had."""
    try:
        infos = socket.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigError(f"{what} {address.host}: not an address of this machine ({exc})",
                          HINT) from None  # fmt: skip
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(sockaddr)
        sock.listen(16)
    except OSError as exc:
        sock.close()
        taken = exc.errno == errno.EADDRINUSE
        raise ConfigError(
            f"{what} {address.host}:{address.port}: "
            + ("the port is in use" if taken else f"cannot listen there ({exc.strerror})"),
            "choose another port" if taken else HINT,
        ) from None
    return sock
