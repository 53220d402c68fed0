use std::cell::Cell;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Wake;
use std::time::Duration;

use super::*;
use crate::driver::direct_wait;
use crate::driver::transport::Transport;
use crate::engine::client_set::{ClientFuture, ClientSet};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Sends back each message of `size` bytes it reads, until EOF.
fn echo(mut stream: UnixStream, size: usize) {
    let mut message = vec![0u8; size];
    while stream.read_exact(&mut message).is_ok() {
        if stream.write_all(&message).is_err() {
            return;
        }
    }
}

fn transport(ours: UnixStream) -> Transport {
    ours.set_nonblocking(true).unwrap();
    Transport::unix(tokio::net::UnixStream::from_std(ours).unwrap()).unwrap()
}

const ROUND_TRIPS: u32 = 200;

/// Runs `count` echo clients of ROUND_TRIPS checked round trips each in one client set;
/// returns how many batches went through the thread's ring.
fn batches_of(count: usize) -> u64 {
    runtime().block_on(async {
        direct_wait::set_enabled(true).unwrap();
        assert!(
            has_ring(),
            "no io_uring on this machine: the batch is never used"
        );
        let mut servers = Vec::new();
        let mut clients: Vec<ClientFuture> = Vec::new();
        for id in 0..count {
            let (ours, theirs) = UnixStream::pair().unwrap();
            servers.push(std::thread::spawn(move || echo(theirs, 64)));
            let mut transport = transport(ours);
            clients.push(Box::pin(async move {
                for round in 0..ROUND_TRIPS {
                    let mut request = [id as u8; 64];
                    request[..4].copy_from_slice(&round.to_be_bytes());
                    transport.write_all(&request).await.unwrap();
                    let mut answer = [0u8; 64];
                    let mut got = 0;
                    while got < answer.len() {
                        got += transport.read(&mut answer[got..]).await.unwrap();
                    }
                    assert_eq!(answer, request, "client {id}, round {round}");
                }
            }));
        }
        let before = BATCHES.with(Cell::get);
        tokio::time::timeout(Duration::from_secs(30), ClientSet::new(clients))
            .await
            .expect("a client never finished: a batched send was lost");
        direct_wait::set_enabled(false).unwrap();
        for server in servers {
            server.join().unwrap();
        }
        BATCHES.with(Cell::get) - before
    })
}

#[test]
fn a_client_sets_requests_leave_in_batches_whole_and_in_order() {
    const CLIENTS: usize = 4;
    let batches = batches_of(CLIENTS);
    let sends = (CLIENTS as u64) * u64::from(ROUND_TRIPS);
    assert!(batches > 0, "no send went through the ring");
    assert!(
        batches < sends,
        "{batches} batches for {sends} sends: nothing was batched"
    );
}

#[test]
fn a_sole_clients_requests_go_out_at_once() {
    assert_eq!(batches_of(1), 0, "a sole client waited for a batch of one");
}

#[test]
fn a_request_larger_than_the_socket_buffer_finishes_the_ordinary_way() {
    const SIZE: usize = 4 << 20;
    runtime().block_on(async {
        direct_wait::set_enabled(true).unwrap();
        let (big_ours, mut big_theirs) = UnixStream::pair().unwrap();
        let (small_ours, small_theirs) = UnixStream::pair().unwrap();
        // The big request's reader starts late: the batched send fills the socket's buffer
        // and the rest has to wait for room.
        let reader = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let mut all = vec![0u8; SIZE];
            big_theirs.read_exact(&mut all).unwrap();
            all
        });
        let small_server = std::thread::spawn(move || echo(small_theirs, 8));
        let mut big = transport(big_ours);
        let mut small = transport(small_ours);
        let request: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
        let expected = request.clone();
        let clients: Vec<ClientFuture> = vec![
            Box::pin(async move { big.write_all(&request).await.unwrap() }),
            Box::pin(async move {
                for _ in 0..20 {
                    small.write_all(b"12345678").await.unwrap();
                    let mut answer = [0u8; 8];
                    let mut got = 0;
                    while got < 8 {
                        got += small.read(&mut answer[got..]).await.unwrap();
                    }
                    assert_eq!(&answer, b"12345678");
                }
            }),
        ];
        tokio::time::timeout(Duration::from_secs(30), ClientSet::new(clients))
            .await
            .expect("the big request never finished");
        direct_wait::set_enabled(false).unwrap();
        assert!(
            reader.join().unwrap() == expected,
            "the bytes arrived altered"
        );
        small_server.join().unwrap();
    });
}

struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_send_dropped_before_its_batch_leaves_sends_nothing() {
    set_enabled(true);
    set_collecting(true);
    let (ours, mut theirs) = UnixStream::pair().unwrap();
    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = std::task::Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);

    let mut dropped = Box::pin(BatchedSend::new(ours.as_raw_fd(), b"never"));
    assert!(dropped.as_mut().poll(&mut cx).is_pending(), "not queued");
    drop(dropped);
    let mut sent = Box::pin(BatchedSend::new(ours.as_raw_fd(), b"sent"));
    assert!(sent.as_mut().poll(&mut cx).is_pending(), "not queued");
    assert_eq!(flush(), 1, "the dropped send was still in the batch");
    assert_eq!(counter.0.load(Ordering::SeqCst), 1);
    assert!(matches!(
        sent.as_mut().poll(&mut cx),
        Poll::Ready(Some(Ok(4)))
    ));
    assert_eq!(flush(), 0);

    // Outside a client set's turn nothing is batched.
    set_collecting(false);
    let mut outside = Box::pin(BatchedSend::new(ours.as_raw_fd(), b"x"));
    assert!(matches!(outside.as_mut().poll(&mut cx), Poll::Ready(None)));
    set_enabled(false);
    drop(ours);
    let mut received = Vec::new();
    theirs.read_to_end(&mut received).unwrap();
    assert_eq!(received, b"sent");
}
