//! An engine thread's clients driven as one future, so that when all of them wait for their
//! servers the thread waits in a single `epoll_wait` on its own epoll (driver/direct_wait.rs)
//! and runs exactly the clients whose answers arrived, in client order, as pgbench's thread
//! loop does with ppoll. Anything else a client waits for (timers, connects, TLS) goes through
//! tokio as before: the set then hands its direct waits back to tokio and returns Pending.
//! The requests its clients make in one round of polls leave together (driver/send_batch.rs),
//! before the next round.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::driver::{direct_wait, send_batch};

/// Client polls per turn before the set yields to the thread's other tasks.
const POLLS_PER_TURN: usize = 4096;

pub(crate) type ClientFuture = Pin<Box<dyn Future<Output = ()>>>;

thread_local! {
    /// True while this thread's client set is polling: wakes then need no wake of the set.
    static POLLING: Cell<bool> = const { Cell::new(false) };
}

/// Which clients were woken (one bit each), and the waker of the task running the set.
struct Woken {
    bits: Vec<AtomicU64>,
    parent: Mutex<Option<Waker>>,
}

struct ClientWaker {
    woken: Arc<Woken>,
    index: usize,
}

impl Wake for ClientWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.bits[self.index / 64].fetch_or(1 << (self.index % 64), Ordering::AcqRel);
        // Woken from outside the set's own loop (a timer, tokio's reactor, another thread):
        // the set has to be polled again to notice.
        if !POLLING.with(Cell::get) {
            if let Some(parent) = self.woken.parent.lock().expect("waker lock").as_ref() {
                parent.wake_by_ref();
            }
        }
    }
}

pub(crate) struct ClientSet {
    clients: Vec<Option<ClientFuture>>,
    wakers: Vec<Waker>,
    woken: Arc<Woken>,
    remaining: usize,
}

impl ClientSet {
    pub(crate) fn new(clients: Vec<ClientFuture>) -> ClientSet {
        let count = clients.len();
        let woken = Arc::new(Woken {
            // Every client starts woken, so the first poll starts them all.
            bits: (0..count.div_ceil(64))
                .map(|word| AtomicU64::new(low_bits(count - word * 64)))
                .collect(),
            parent: Mutex::new(None),
        });
        let wakers = (0..count)
            .map(|index| {
                Waker::from(Arc::new(ClientWaker {
                    woken: woken.clone(),
                    index,
                }))
            })
            .collect();
        ClientSet {
            clients: clients.into_iter().map(Some).collect(),
            wakers,
            woken,
            remaining: count,
        }
    }

    /// Polls every woken client once; returns how many it polled.
    fn poll_woken(&mut self) -> usize {
        let mut polled = 0;
        for word in 0..self.woken.bits.len() {
            let mut bits = self.woken.bits[word].swap(0, Ordering::AcqRel);
            while bits != 0 {
                let index = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let Some(client) = self.clients[index].as_mut() else {
                    continue;
                };
                polled += 1;
                let mut cx = Context::from_waker(&self.wakers[index]);
                if client.as_mut().poll(&mut cx).is_ready() {
                    self.clients[index] = None;
                    self.remaining -= 1;
                }
            }
        }
        polled
    }

    fn run_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut budget = POLLS_PER_TURN;
        let mut released = false;
        loop {
            let polled = self.poll_woken();
            if self.remaining == 0 {
                return Poll::Ready(());
            }
            // The requests this round's clients made leave together; the clients they wake
            // go on (to their reads) in the next round.
            send_batch::flush();
            if polled > 0 {
                budget = budget.saturating_sub(polled);
                if budget == 0 {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                released = false;
                continue;
            }
            let waiting = direct_wait::waiting();
            // Nothing to run and nothing (left) waiting here: tokio wakes the set.
            if waiting == 0 || released {
                return Poll::Pending;
            }
            if waiting == self.remaining && direct_wait::wait(direct_wait::WAIT_LIMIT) > 0 {
                continue;
            }
            // Some client waits on tokio (or the wait took too long): every wait goes there.
            direct_wait::release_all();
            released = true;
        }
    }
}

impl Future for ClientSet {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        {
            let mut parent = self.woken.parent.lock().expect("waker lock");
            if !parent.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *parent = Some(cx.waker().clone());
            }
        }
        POLLING.with(|p| p.set(true));
        direct_wait::set_sole_client(self.remaining == 1);
        send_batch::set_collecting(self.remaining > 1);
        let outcome = self.run_turn(cx);
        send_batch::set_collecting(false);
        direct_wait::set_sole_client(false);
        POLLING.with(|p| p.set(false));
        outcome
    }
}

fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}
