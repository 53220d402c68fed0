//! Batched sends: the requests an engine thread's clients make in one turn leave together, in
//! one `io_uring_enter`, instead of in one `send` each.
//!
//! Why: on loopback a send runs the server's receive and wakes its backend, which then often
//! preempts the client on its way back from the syscall, once per request. Profiles of a
//! select-only run (`perf record`, docs/performance.md) put about a third of the client's CPU
//! in those context switches. Submitted together, the requests wake their backends inside one
//! syscall, and the client is switched out at most once for the lot; each statement is still
//! one request and one answer on its own connection.
//!
//! How: while the thread's client set polls its clients ([`set_collecting`]), a plain socket's
//! send queues its request here and waits ([`BatchedSend`]). After each round of polls, the set
//! calls [`flush`]: every queued request becomes an `IORING_OP_SEND` with `MSG_DONTWAIT` (which
//! completes during the submission itself: no poll is armed, and an EAGAIN comes back as one),
//! and `flush` returns only when all of them have completed, so the kernel never holds a
//! request's buffer past it. A request that was not sent whole (a full send buffer) or a
//! thread without io_uring (old kernel, a sandbox's seccomp) sends the ordinary way.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use io_uring::{opcode, types, IoUring};

/// Requests one batch holds at most (the ring's size); further ones go out on their own.
const RING_ENTRIES: u32 = 256;

/// One queued request, until its batch has gone out.
struct Request {
    fd: RawFd,
    buf: *const u8,
    len: u32,
    waker: Waker,
    /// The send's result (bytes or a negative errno) once the batch went out; `None` before.
    sent: Option<i32>,
}

#[derive(Default)]
struct Batch {
    ring: Option<IoUring>,
    /// True while the thread's client set polls its clients: only their sends are batched.
    collecting: bool,
    /// Requests by slot; a slot is freed when its send resolves or is dropped.
    slots: Vec<Option<Request>>,
    free: Vec<usize>,
    /// The slots queued for the next batch, in the order their clients asked.
    queued: Vec<usize>,
}

thread_local! {
    static BATCH: RefCell<Batch> = RefCell::new(Batch::default());
    /// Whether sends may join the batch now (collecting, with a ring): checked on every send
    /// before anything else, so a sole client's sends pay one flag's read.
    static OPEN: Cell<bool> = const { Cell::new(false) };
}

#[cfg(test)]
thread_local! {
    /// Batches this thread sent through its ring (tests check the path is taken).
    pub(crate) static BATCHES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Creates the thread's ring (or drops it). Without io_uring the thread sends one by one.
pub(crate) fn set_enabled(enabled: bool) {
    BATCH.with(|batch| {
        let mut batch = batch.borrow_mut();
        debug_assert!(
            batch.queued.is_empty(),
            "requests queued while the ring changes"
        );
        batch.ring = if enabled { new_ring() } else { None };
        OPEN.with(|open| open.set(batch.collecting && batch.ring.is_some()));
    });
}

fn new_ring() -> Option<IoUring> {
    // One thread submits, completions need no interrupt, and a failing entry does not stop
    // the rest of its batch; kernels before 6.0 lack the first flag: then a plain ring.
    IoUring::builder()
        .setup_single_issuer()
        .setup_coop_taskrun()
        .setup_submit_all()
        .build(RING_ENTRIES)
        .or_else(|_| IoUring::new(RING_ENTRIES))
        .ok()
}

/// Whether this thread sends through a ring (tests check the path is taken).
#[cfg(test)]
pub(crate) fn has_ring() -> bool {
    BATCH.with(|batch| batch.borrow().ring.is_some())
}

/// Marks whether the thread's client set is polling clients whose sends it will flush.
pub(crate) fn set_collecting(collecting: bool) {
    BATCH.with(|batch| {
        let mut batch = batch.borrow_mut();
        batch.collecting = collecting;
        OPEN.with(|open| open.set(collecting && batch.ring.is_some()));
    });
}

/// Whether a send now may join the thread's batch (else it goes out the ordinary way).
pub(crate) fn open() -> bool {
    OPEN.with(Cell::get)
}

/// Sends every queued request in one submission and wakes their clients; returns how many
/// went out (or were handed back to be sent the ordinary way).
pub(crate) fn flush() -> usize {
    BATCH.with(|batch| batch.borrow_mut().flush())
}

impl Batch {
    /// Whether a send may join the batch now.
    fn usable(&self) -> bool {
        self.collecting && self.ring.is_some() && self.queued.len() < RING_ENTRIES as usize
    }

    fn insert(&mut self, request: Request) -> usize {
        let slot = match self.free.pop() {
            Some(free) => {
                self.slots[free] = Some(request);
                free
            }
            None => {
                self.slots.push(Some(request));
                self.slots.len() - 1
            }
        };
        self.queued.push(slot);
        slot
    }

    fn release(&mut self, slot: usize) -> Option<Request> {
        let request = self.slots[slot].take();
        self.free.push(slot);
        request
    }

    fn flush(&mut self) -> usize {
        let count = self.queued.len();
        if count == 0 {
            return 0;
        }
        let submitted = match self.ring.as_mut() {
            Some(ring) => submit(ring, &mut self.slots, &self.queued),
            None => Err(io::Error::from_raw_os_error(libc::ENOSYS)),
        };
        if submitted.is_err() {
            // The kernel consumed none of them (see `submit`): the ring is given up and every
            // request goes out the ordinary way.
            self.ring = None;
            OPEN.with(|open| open.set(false));
        }
        #[cfg(test)]
        if submitted.is_ok() {
            BATCHES.with(|b| b.set(b.get() + 1));
        }
        for &slot in &self.queued {
            if let Some(request) = self.slots[slot].as_mut() {
                request.sent.get_or_insert(-libc::EAGAIN);
                request.waker.wake_by_ref();
            }
        }
        self.queued.clear();
        count
    }
}

/// Submits the queued requests and waits until each has completed (at once: `MSG_DONTWAIT`).
/// Fails only when the kernel took none of them.
fn submit(ring: &mut IoUring, slots: &mut [Option<Request>], queued: &[usize]) -> io::Result<()> {
    let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
    for &slot in queued {
        let request = slots[slot].as_ref().expect("a queued request");
        let entry = opcode::Send::new(types::Fd(request.fd), request.buf, request.len)
            .flags(flags)
            .build()
            .user_data(slot as u64);
        // SAFETY: the buffer is borrowed by its `BatchedSend`, which cannot be dropped while
        // this thread is inside `flush`, and `flush` returns only after the request completed.
        // The ring holds RING_ENTRIES entries and at most that many are queued.
        unsafe { ring.submission().push(&entry) }.map_err(|_| io::Error::other("ring full"))?;
    }
    let mut completed = 0;
    let mut failures = 0;
    while completed < queued.len() {
        if let Err(e) = ring.submit_and_wait(queued.len() - completed) {
            // io_uring_enter fails only before it consumed anything in that call.
            if completed == 0 && ring.submission().len() == queued.len() {
                return Err(e);
            }
            // Some are in the kernel's hands: they complete; wait for them again.
            failures += 1;
            assert!(
                failures < 1000,
                "io_uring keeps failing with sends in flight: {e}"
            );
        }
        for completion in ring.completion() {
            let slot = completion.user_data() as usize;
            if let Some(request) = slots.get_mut(slot).and_then(Option::as_mut) {
                request.sent = Some(completion.result());
                completed += 1;
            }
        }
    }
    Ok(())
}

/// One request's send through the thread's batch. Resolves to `None` when nothing of it went
/// out (no client set collecting, no ring, a full batch, a full send buffer): the caller sends
/// it the ordinary way. Otherwise to the send's outcome: the bytes sent (all of `buf` but when
/// the socket's buffer filled up; the caller sends the rest), or an error.
pub(crate) struct BatchedSend<'a> {
    fd: RawFd,
    buf: &'a [u8],
    slot: Option<usize>,
}

impl<'a> BatchedSend<'a> {
    pub(crate) fn new(fd: RawFd, buf: &'a [u8]) -> BatchedSend<'a> {
        BatchedSend {
            fd,
            buf,
            slot: None,
        }
    }
}

impl Future for BatchedSend<'_> {
    type Output = Option<io::Result<usize>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        BATCH.with(|batch| {
            let mut batch = batch.borrow_mut();
            let Some(slot) = self.slot else {
                let len = u32::try_from(self.buf.len()).ok();
                let Some(len) = len.filter(|_| batch.usable()) else {
                    return Poll::Ready(None);
                };
                let request = Request {
                    fd: self.fd,
                    buf: self.buf.as_ptr(),
                    len,
                    waker: cx.waker().clone(),
                    sent: None,
                };
                self.slot = Some(batch.insert(request));
                return Poll::Pending;
            };
            let request = batch.slots[slot].as_mut().expect("a queued request");
            let Some(sent) = request.sent else {
                if !request.waker.will_wake(cx.waker()) {
                    request.waker = cx.waker().clone();
                }
                return Poll::Pending;
            };
            batch.release(slot);
            self.slot = None;
            Poll::Ready(match usize::try_from(sent) {
                Ok(n) => Some(Ok(n)),
                Err(_) if sent == -libc::EAGAIN => None,
                Err(_) => Some(Err(io::Error::from_raw_os_error(-sent))),
            })
        })
    }
}

impl Drop for BatchedSend<'_> {
    /// A send dropped before its batch went out (its client stopped) leaves the batch.
    fn drop(&mut self) {
        let Some(slot) = self.slot else { return };
        // `try_with`: the thread's locals may already be gone when a thread exits.
        let _ = BATCH.try_with(|batch| {
            let mut batch = batch.borrow_mut();
            if let Some(request) = batch.release(slot) {
                if request.sent.is_none() {
                    batch.queued.retain(|&queued| queued != slot);
                }
            }
        });
    }
}

#[cfg(test)]
#[path = "send_batch_tests.rs"]
mod tests;
