"""`--metrics-addr` as typed: loopback unless a host is written out, each bad form one error."""

from __future__ import annotations

import socket

import pytest

from dbscale.errors import ConfigError
from dbscale.live.address import ListenAddress, bind, parse_address


@pytest.mark.parametrize(("text", "host", "port", "loopback"), [
    ("9464", "127.0.0.1", 9464, True),
    (":9464", "127.0.0.1", 9464, True),
    ("localhost:9000", "localhost", 9000, True),
    ("0.0.0.0:9464", "0.0.0.0", 9464, False),
    ("[::1]:9464", "::1", 9464, True),
])  # fmt: skip
def test_addresses_as_typed(text: str, host: str, port: int, loopback: bool) -> None:
    address = parse_address(text)
    assert (address.host, address.port, address.loopback) == (host, port, loopback)


@pytest.mark.parametrize(("text", "words"), [
    ("", "not a port number"), ("host:", "not a port number"), ("h:70000", "outside 1-65535"),
    ("::1:9464", "needs brackets"), ("h:0", "outside 1-65535"),
])  # fmt: skip
def test_bad_addresses_are_one_error(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_address(text)
    assert words in caught.value.message and caught.value.hint


def test_a_taken_port_is_refused_and_a_free_one_listens() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match="the port is in use"):
            bind(ListenAddress("127.0.0.1", port))
    sock = bind(ListenAddress("127.0.0.1", port))
    try:
        assert sock.getsockname() == ("127.0.0.1", port)
    finally:
        sock.close()
