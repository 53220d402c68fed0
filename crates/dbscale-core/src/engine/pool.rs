//! Connections a thread's clients share when a workload decouples clients from connections
//! (TPC-C's workers and `connections`, as the Cloud Report runs it). A client takes a
//! connection for one transaction and gives it back; while none is free it waits, and that wait
//! counts in its transaction's latency. Broken connections are replaced by whoever needs one.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::task::{Poll, Waker};

use crate::driver::Connection;

/// What a client gets from the pool.
pub enum Lease {
    /// An open connection (and its node), the client's until it gives it back.
    Ready(Connection, usize),
    /// A free place: the client opens the connection itself.
    Open,
}

pub struct ConnectionPool {
    idle: RefCell<Vec<(Connection, u32, usize)>>,
    /// Routing slots of places nobody holds a connection for.
    free_slots: RefCell<Vec<u32>>,
    waiters: RefCell<VecDeque<Waker>>,
}

impl ConnectionPool {
    /// A pool whose connections use routing slots `slots` (each gives its home node).
    pub fn new(slots: Vec<u32>) -> Self {
        Self {
            idle: RefCell::new(Vec::new()),
            free_slots: RefCell::new(slots.into_iter().rev().collect()),
            waiters: RefCell::new(VecDeque::new()),
        }
    }

    /// Puts an already opened connection in (before the run starts).
    pub fn add(&self, conn: Connection, slot: u32, node: usize) {
        self.free_slots.borrow_mut().retain(|s| *s != slot);
        self.idle.borrow_mut().push((conn, slot, node));
    }

    /// Waits for an idle connection or a free place to open one.
    pub async fn acquire(&self) -> (Lease, u32) {
        poll_fn(|cx| {
            if let Some((conn, slot, node)) = self.idle.borrow_mut().pop() {
                return Poll::Ready((Lease::Ready(conn, node), slot));
            }
            if let Some(slot) = self.free_slots.borrow_mut().pop() {
                return Poll::Ready((Lease::Open, slot));
            }
            let mut waiters = self.waiters.borrow_mut();
            if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
                waiters.push_back(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    /// Gives a connection back after a transaction.
    pub fn release(&self, conn: Connection, slot: u32, node: usize) {
        self.idle.borrow_mut().push((conn, slot, node));
        self.wake_one();
    }

    /// Gives a place back without a connection (it broke, or could not be opened).
    pub fn discard(&self, slot: u32) {
        self.free_slots.borrow_mut().push(slot);
        self.wake_one();
    }

    fn wake_one(&self) {
        if let Some(waker) = self.waiters.borrow_mut().pop_front() {
            waker.wake();
        }
    }

    /// Closes the idle connections (at the end of the run).
    pub async fn close(&self) {
        let idle: Vec<(Connection, u32, usize)> = self.idle.borrow_mut().drain(..).collect();
        for (conn, _, _) in idle {
            conn.close().await;
        }
    }
}
