//! The byte stream under a connection: a plain TCP or Unix socket driven directly through
//! tokio's `AsyncFd`, or a rustls stream.
//!
//! The plain path exists for syscall economy on the hot loop: a request is one `write` (tried at
//! once, no readiness check), and a response is read at once after it, going to epoll only when
//! that read finds nothing (EAGAIN). On a busy client the answer has often arrived by the time
//! the task reads, so this trades epoll waits and sleeps for cheap reads: against clearing the
//! readiness after each short read (always waiting in epoll) it measured +6.2% TPC-B TPS
//! [+0.7, +12.0] at -3.4% client CPU per transaction (docs/performance.md).

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::client::TlsStream;

/// A connected, non-blocking socket.
pub(crate) enum PlainSocket {
    Tcp(std::net::TcpStream),
    Unix(UnixStream),
}

impl AsRawFd for PlainSocket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            PlainSocket::Tcp(s) => s.as_raw_fd(),
            PlainSocket::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl PlainSocket {
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            PlainSocket::Tcp(s) => (&*s).read(buf),
            PlainSocket::Unix(s) => (&*s).read(buf),
        }
    }

    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            PlainSocket::Tcp(s) => (&*s).write(buf),
            PlainSocket::Unix(s) => (&*s).write(buf),
        }
    }
}

pub(crate) enum Transport {
    Plain(AsyncFd<PlainSocket>),
    Tls(Box<TlsStream<tokio::net::TcpStream>>),
}

impl Transport {
    /// Takes over a tokio TCP stream (already connected, `TCP_NODELAY` set).
    pub(crate) fn tcp(stream: tokio::net::TcpStream) -> io::Result<Transport> {
        Transport::plain(PlainSocket::Tcp(stream.into_std()?))
    }

    pub(crate) fn unix(stream: tokio::net::UnixStream) -> io::Result<Transport> {
        Transport::plain(PlainSocket::Unix(stream.into_std()?))
    }

    fn plain(socket: PlainSocket) -> io::Result<Transport> {
        // SAFETY: the AsyncFd owns the socket, so its descriptor stays open and the same
        // until the AsyncFd is dropped.
        let fd = unsafe { AsyncFd::register(socket) }.map_err(io::Error::from)?;
        Ok(Transport::Plain(fd))
    }

    pub(crate) fn tls(stream: TlsStream<tokio::net::TcpStream>) -> Transport {
        Transport::Tls(Box::new(stream))
    }

    /// Gives back the TCP stream of a plain TCP transport, for a TLS handshake on it (a
    /// protocol that agrees on TLS after its first messages, as MySQL's does).
    pub(crate) fn into_tcp(self) -> io::Result<tokio::net::TcpStream> {
        match self {
            Transport::Plain(fd) => match fd.into_inner() {
                PlainSocket::Tcp(stream) => tokio::net::TcpStream::from_std(stream),
                PlainSocket::Unix(_) => Err(io::Error::other("TLS needs a TCP connection")),
            },
            Transport::Tls(_) => Err(io::Error::other("the connection is already encrypted")),
        }
    }

    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }

    /// Writes all of `buf`; small requests leave in exactly one `write` syscall.
    pub(crate) async fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        let fd = match self {
            Transport::Plain(fd) => fd,
            Transport::Tls(stream) => {
                stream.write_all(buf).await?;
                return stream.flush().await;
            }
        };
        while !buf.is_empty() {
            let written = match fd.get_ref().write(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => loop {
                    // The send buffer is full: wait for epoll. `try_io` clears the stale
                    // readiness if the write still would block.
                    let mut guard = fd.writable().await?;
                    if let Ok(result) = guard.try_io(|s| s.get_ref().write(buf)) {
                        break result?;
                    }
                },
                Err(e) => return Err(e),
            };
            if written == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            buf = &buf[written..];
        }
        Ok(())
    }

    /// Reads what is available into `dst` (at least one byte unless EOF, then 0).
    pub(crate) async fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let fd = match self {
            Transport::Plain(fd) => fd,
            Transport::Tls(stream) => return stream.read(dst).await,
        };
        loop {
            let mut guard = fd.readable().await?;
            match guard.try_io(|s| s.get_ref().read(dst)) {
                // Readiness stays set after a short read: the next read is tried at once and only
                // an EAGAIN sends the task to epoll (as libpq reads until EAGAIN).
                Ok(Ok(n)) => return Ok(n),
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Err(e),
                // Nothing yet (EAGAIN): `try_io` cleared the readiness; wait in epoll.
                Err(_would_block) => continue,
            }
        }
    }

    /// Ends a TLS session cleanly (close_notify); plain sockets just close on drop.
    pub(crate) async fn shutdown(&mut self) {
        if let Transport::Tls(stream) = self {
            let _ = stream.shutdown().await;
        }
    }
}
