//! The byte stream under a connection: a plain TCP or Unix socket driven directly through
//! tokio's `AsyncFd`, or a rustls stream.
//!
//! The plain path exists for syscall economy on the hot loop: a request is one `send` (tried at
//! once, no readiness check), or, in a client set's turn, one entry of the thread's batch of
//! sends (driver/send_batch.rs). On an engine thread with direct waits on (driver/direct_wait.rs),
//! the first read of the answer waits in the thread's own epoll, which reports it at once if it
//! is already there, and the read that follows finds it: one `recvfrom` per answer. When the
//! thread runs a single client (sysbench's shape: one connection per thread), the read itself
//! sleeps in a blocking `recvfrom`, bounded by a receive timeout: one syscall per answer, as
//! the least a client can do (bench/round_trip_floor.rs). Elsewhere (admin sessions, loaders,
//! threads waiting on tokio for something else) a read is tried at once and only an EAGAIN goes
//! to tokio's epoll, as libpq reads until EAGAIN. Sends and those reads pass MSG_DONTWAIT, so
//! they never block whichever mode the socket is in.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::client::TlsStream;

use super::{direct_wait, send_batch};

/// A connected socket: non-blocking, or blocking with a receive timeout once a sole client's
/// reads use it.
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

/// A `recv`/`send` result: the bytes moved, or the errno as an error.
fn byte_count(n: isize) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

impl PlainSocket {
    /// A read that never blocks, whatever the socket's own mode.
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv(buf, libc::MSG_DONTWAIT)
    }

    /// A read that blocks when the socket is in blocking mode (up to its receive timeout).
    fn recv(&self, buf: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
        // SAFETY: the descriptor is open; buf is valid for len bytes.
        byte_count(unsafe {
            libc::recv(self.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), flags)
        })
    }

    /// A write that never blocks, whatever the socket's own mode.
    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
        // SAFETY: the descriptor is open; buf is valid for len bytes.
        byte_count(unsafe { libc::send(self.as_raw_fd(), buf.as_ptr().cast(), buf.len(), flags) })
    }

    /// Blocking mode, with a receive timeout of a direct wait's limit (`into_tcp` undoes it).
    fn block_with_timeout(&self) -> io::Result<()> {
        let timeout = Some(direct_wait::WAIT_LIMIT);
        match self {
            PlainSocket::Tcp(s) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(timeout)
            }
            PlainSocket::Unix(s) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(timeout)
            }
        }
    }
}

pub(crate) enum Transport {
    Plain {
        fd: AsyncFd<PlainSocket>,
        /// The engine thread's direct-wait epoll this socket was added to, or -1.
        direct_epoll: RawFd,
        /// A request went out and nothing of its answer was read yet.
        answer_due: bool,
        /// The socket is in blocking mode, for a sole client's reads (see `read`).
        blocking: bool,
    },
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
        Ok(Transport::Plain {
            fd,
            direct_epoll: -1,
            answer_due: false,
            blocking: false,
        })
    }

    pub(crate) fn tls(stream: TlsStream<tokio::net::TcpStream>) -> Transport {
        Transport::Tls(Box::new(stream))
    }

    /// Gives back the TCP stream of a plain TCP transport, for a TLS handshake on it (a
    /// protocol that agrees on TLS after its first messages, as MySQL's does).
    pub(crate) fn into_tcp(self) -> io::Result<tokio::net::TcpStream> {
        match self {
            Transport::Plain {
                fd,
                direct_epoll,
                blocking,
                ..
            } => match fd.into_inner() {
                PlainSocket::Tcp(stream) => {
                    if blocking {
                        stream.set_nonblocking(true)?;
                    }
                    // The TLS session reads through tokio from here on.
                    if direct_epoll >= 0 {
                        direct_wait::remove(direct_epoll, stream.as_raw_fd());
                    }
                    tokio::net::TcpStream::from_std(stream)
                }
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
            Transport::Plain { fd, answer_due, .. } => {
                *answer_due = true;
                fd
            }
            Transport::Tls(stream) => {
                stream.write_all(buf).await?;
                return stream.flush().await;
            }
        };
        // In a client set's turn the request joins the thread's batch (driver/send_batch.rs).
        if send_batch::open() {
            if let Some(sent) = send_batch::BatchedSend::new(fd.as_raw_fd(), buf).await {
                buf = &buf[sent?..];
            }
        }
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
        let (fd, direct_epoll, answer_due, blocking) = match self {
            Transport::Plain {
                fd,
                direct_epoll,
                answer_due,
                blocking,
            } => (fd, direct_epoll, std::mem::take(answer_due), blocking),
            Transport::Tls(stream) => return stream.read(dst).await,
        };
        if direct_wait::sole_client() {
            // The thread's only client: nothing else could run while it waits, so the read
            // itself sleeps until the answer arrives (one syscall, where a wait in epoll takes
            // two), bounded by the socket's receive timeout like any direct wait.
            if !*blocking {
                fd.get_ref().block_with_timeout()?;
                *blocking = true;
            }
            loop {
                match fd.get_ref().recv(dst, 0) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
        } else if let Some(epoll) = direct_wait::epoll() {
            if *direct_epoll != epoll {
                direct_wait::add(epoll, fd.as_raw_fd())?;
                *direct_epoll = epoll;
            }
            // The first read of an answer waits first: right after the request it would almost
            // always find nothing (EAGAIN), and the thread's epoll (level-triggered) says at once
            // if the answer is already there. Later reads of the same answer are tried at once;
            // on EAGAIN they wait too. A wait handed back to tokio continues below.
            let mut ready = !answer_due || direct_wait::Readable::new(fd.as_raw_fd()).await;
            while ready {
                match fd.get_ref().read(dst) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ready = direct_wait::Readable::new(fd.as_raw_fd()).await;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::direct_wait;
    use crate::engine::client_set::{ClientFuture, ClientSet};
    use std::cell::{Cell, RefCell};
    use std::io::{Read, Write};
    use std::rc::Rc;
    use std::time::Duration;

    /// Echoes each byte back after the delay its value asks for (in milliseconds).
    fn echo_server(mut stream: std::os::unix::net::UnixStream) {
        let mut byte = [0u8; 1];
        while stream.read_exact(&mut byte).is_ok() {
            std::thread::sleep(Duration::from_millis(u64::from(byte[0])));
            if stream.write_all(&byte).is_err() {
                return;
            }
        }
    }

    /// A client that sends `delays` one by one, checks each answer, and notes when it is done.
    async fn client(
        name: &'static str,
        mut transport: Transport,
        delays: Vec<u8>,
        pause: Option<Duration>,
        finished: Rc<RefCell<Vec<&'static str>>>,
    ) {
        for delay in delays {
            transport.write_all(&[delay]).await.unwrap();
            let mut answer = [0u8; 1];
            assert_eq!(transport.read(&mut answer).await.unwrap(), 1);
            assert_eq!(answer[0], delay);
            if let Some(pause) = pause {
                tokio::time::sleep(pause).await;
            }
        }
        finished.borrow_mut().push(name);
    }

    #[test]
    fn client_set_runs_direct_waits_and_falls_back_to_tokio() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let finished = Rc::new(RefCell::new(Vec::new()));
        let waits = runtime.block_on(async {
            direct_wait::set_enabled(true).unwrap();
            let mut clients: Vec<ClientFuture> = Vec::new();
            // Fast answers; one answer slower than the direct wait's limit (tokio takes over);
            // and a client that sleeps on a tokio timer between its requests: while it sleeps,
            // the others must go on through tokio instead of waiting for its timer.
            let scripts = [
                ("fast", vec![0u8; 300], None),
                // 250 ms: well past the direct wait's limit, and far longer than the fast
                // client's round trips take even on a busy 2-core host (60 ms was not).
                ("slow", vec![0, 0, 250, 0, 0], None),
                ("sleeper", vec![0u8; 10], Some(Duration::from_millis(80))),
            ];
            let mut servers = Vec::new();
            for (name, delays, pause) in scripts {
                let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
                servers.push(std::thread::spawn(move || echo_server(theirs)));
                ours.set_nonblocking(true).unwrap();
                let stream = tokio::net::UnixStream::from_std(ours).unwrap();
                let transport = Transport::unix(stream).unwrap();
                clients.push(Box::pin(client(
                    name,
                    transport,
                    delays,
                    pause,
                    finished.clone(),
                )));
            }
            tokio::time::timeout(Duration::from_secs(30), ClientSet::new(clients))
                .await
                .expect("a client never finished: a wait was lost");
            direct_wait::set_enabled(false).unwrap();
            for server in servers {
                server.join().unwrap();
            }
            direct_wait::WAITS.with(Cell::get)
        });
        assert!(waits > 0, "the thread's own epoll was never used");
        // 300 round trips take milliseconds unless they wait for the slow answer or the
        // sleeper's timers (0.8 s in all): the fast client finishes first only if the hand-back to tokio works.
        assert_eq!(finished.borrow().last(), Some(&"sleeper"));
        assert_eq!(finished.borrow().first(), Some(&"fast"));
    }

    fn is_blocking(fd: RawFd) -> bool {
        // SAFETY: plain fcntl on a descriptor the test keeps open.
        unsafe { libc::fcntl(fd, libc::F_GETFL) & libc::O_NONBLOCK == 0 }
    }

    #[test]
    fn a_sole_client_sleeps_in_recv_and_hands_long_waits_to_tokio() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || echo_server(theirs));
        ours.set_nonblocking(true).unwrap();
        let raw = ours.as_raw_fd();
        let done = Rc::new(Cell::new(false));
        let ticks = runtime.block_on(async {
            direct_wait::set_enabled(true).unwrap();
            let transport =
                Transport::unix(tokio::net::UnixStream::from_std(ours).unwrap()).unwrap();
            let client_done = done.clone();
            let set = ClientSet::new(vec![Box::pin(async move {
                let mut transport = transport;
                for delay in [0u8, 0, 120, 0] {
                    transport.write_all(&[delay]).await.unwrap();
                    let mut answer = [0u8; 1];
                    assert_eq!(transport.read(&mut answer).await.unwrap(), 1);
                    assert_eq!(answer[0], delay);
                }
                // The reads switched the socket to blocking mode: the sole client's path.
                assert!(
                    is_blocking(raw),
                    "the sole client's reads did not block in recv"
                );
                client_done.set(true);
            })]);
            // A timer on the same thread: it ticks only while the client's wait is with tokio.
            let ticker = async {
                let mut ticks = 0;
                let mut interval = tokio::time::interval(Duration::from_millis(5));
                while !done.get() {
                    interval.tick().await;
                    ticks += 1;
                }
                ticks
            };
            let (_, ticks) =
                tokio::time::timeout(Duration::from_secs(30), async { tokio::join!(set, ticker) })
                    .await
                    .expect("the client never finished: a wait was lost");
            direct_wait::set_enabled(false).unwrap();
            ticks
        });
        server.join().unwrap();
        // The 120 ms answer: at most 20 ms in recv, the rest with tokio, where the 5 ms timer
        // runs (about 20 ticks). A recv that slept the whole time would leave one or two.
        assert!(
            ticks >= 8,
            "the timer ticked {ticks} times: the wait was not handed back"
        );
    }
}
