//! Direct waits: reads that wait for their socket in the engine thread's own epoll instead of
//! through tokio's reactor.
//!
//! A read that finds nothing (EAGAIN) normally parks its task in tokio: epoll reports the socket,
//! the reactor marks it ready and wakes the task through the event loop's queue, and the time
//! driver is consulted on every park. On a load generator that is work done once per statement.
//! When an engine thread turns direct waits on, such a read instead registers here and returns
//! Pending; once every client of the thread is waiting, the thread's client set
//! (`engine::client_set`) calls [`wait`], which blocks in one `epoll_wait` on the thread's own
//! level-triggered epoll and wakes exactly the readers whose sockets have data. A thread that
//! has anything else to wait for (a timer, a connect, a TLS session) hands its waiting reads back
//! to tokio with [`release_all`] first. Each socket joins the thread's epoll once, on its first
//! direct wait, and leaves it when it is closed. A thread's only client needs no epoll at all:
//! its read sleeps in `recv` itself (see [`sole_client`] and driver/transport.rs).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// How a registered read's wait ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
enum Outcome {
    #[default]
    Waiting,
    /// The socket is readable (or has an error or EOF to report, which the next read returns).
    Readable,
    /// Handed back: wait through tokio this time.
    Released,
}

/// The latest wait on one descriptor.
#[derive(Default)]
struct Slot {
    /// Tells this wait from earlier ones on the same descriptor.
    generation: u64,
    outcome: Outcome,
    /// Present while the read waits.
    waker: Option<Waker>,
}

/// The waiting reads of one thread, indexed by descriptor.
#[derive(Default)]
struct WaitSet {
    by_fd: Vec<Slot>,
    count: usize,
    events: Vec<libc::epoll_event>,
}

impl WaitSet {
    fn finish(&mut self, fd: usize, outcome: Outcome) -> bool {
        let Some(slot) = self.by_fd.get_mut(fd) else {
            return false;
        };
        let Some(waker) = slot.waker.take() else {
            return false;
        };
        slot.outcome = outcome;
        self.count -= 1;
        // Wakers only queue their task, so waking under the thread-local borrow is safe.
        waker.wake();
        true
    }
}

#[cfg(test)]
thread_local! {
    /// How many times this thread waited in its own epoll (tests check the path is taken).
    pub(crate) static WAITS: Cell<u64> = const { Cell::new(0) };
}

thread_local! {
    /// The thread's epoll descriptor while direct waits are on, else -1.
    static EPOLL: Cell<RawFd> = const { Cell::new(-1) };
    static WAITING: RefCell<WaitSet> = RefCell::new(WaitSet::default());
}

/// The longest a thread blocks in a direct wait before handing it to tokio, so timers,
/// progress ticks and a hard stop still run while statements take long.
pub(crate) const WAIT_LIMIT: Duration = Duration::from_millis(20);

thread_local! {
    /// True while the thread's client set runs its only remaining client.
    static SOLE_CLIENT: Cell<bool> = const { Cell::new(false) };
}

/// Marks whether the client being run is the thread's only one. A sole client's reads may block
/// in `recv` itself (bounded like a direct wait): nobody else on the thread could run meanwhile.
pub(crate) fn set_sole_client(sole: bool) {
    SOLE_CLIENT.with(|s| s.set(sole));
}

/// Whether direct waits are on and the client being run is the thread's only one.
pub(crate) fn sole_client() -> bool {
    SOLE_CLIENT.with(Cell::get) && EPOLL.with(Cell::get) >= 0
}

/// Turns direct waits on (a new epoll for this thread, and a ring for its batched sends) or off
/// (waiting reads go back to tokio).
pub(crate) fn set_enabled(enabled: bool) -> io::Result<()> {
    super::send_batch::set_enabled(enabled);
    let old = EPOLL.with(|e| e.replace(-1));
    if old >= 0 {
        release_all();
        // SAFETY: the descriptor was created below and is closed once.
        unsafe { libc::close(old) };
    }
    if enabled {
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        EPOLL.with(|e| e.set(fd));
    }
    Ok(())
}

/// The thread's epoll when direct waits are on.
pub(crate) fn epoll() -> Option<RawFd> {
    let fd = EPOLL.with(Cell::get);
    (fd >= 0).then_some(fd)
}

/// Adds a socket to the thread's epoll (level-triggered, readable). Once per socket and epoll:
/// closing the socket removes it.
pub(crate) fn add(epoll: RawFd, fd: RawFd) -> io::Result<()> {
    let mut event = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: fd as u64,
    };
    // SAFETY: both descriptors are open; the event is a valid struct.
    if unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, fd, &mut event) } < 0 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EEXIST) {
            return Err(error);
        }
    }
    Ok(())
}

/// Takes a socket out of the thread's epoll (it goes on under another reader).
pub(crate) fn remove(epoll: RawFd, fd: RawFd) {
    // SAFETY: plain syscall; a descriptor not in the set just fails.
    unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
}

/// How many reads on this thread are registered and still waiting.
pub(crate) fn waiting() -> usize {
    WAITING.with(|w| w.borrow().count)
}

/// Blocks up to `timeout` in one `epoll_wait` on the thread's epoll, then wakes the waiting
/// reads whose sockets are readable. Returns how many it woke (0 on a timeout).
pub(crate) fn wait(timeout: Duration) -> usize {
    let Some(epoll) = epoll() else {
        return 0;
    };
    WAITING.with(|waiting| {
        let mut set = waiting.borrow_mut();
        let capacity = set.count.max(1);
        set.events
            .resize(capacity, libc::epoll_event { events: 0, u64: 0 });
        let timeout_ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: the buffer holds `capacity` events.
        let ready = unsafe {
            libc::epoll_wait(
                epoll,
                set.events.as_mut_ptr(),
                capacity as libc::c_int,
                timeout_ms,
            )
        };
        let mut woken = 0;
        #[cfg(test)]
        WAITS.with(|w| w.set(w.get() + 1));
        for index in 0..usize::try_from(ready).unwrap_or(0) {
            let fd = set.events[index].u64 as usize;
            if set.finish(fd, Outcome::Readable) {
                woken += 1;
            }
        }
        woken
    })
}

/// Hands every waiting read back to tokio: each wakes and waits through the reactor instead.
pub(crate) fn release_all() {
    WAITING.with(|waiting| {
        let mut set = waiting.borrow_mut();
        for fd in 0..set.by_fd.len() {
            if set.count == 0 {
                break;
            }
            set.finish(fd, Outcome::Released);
        }
    });
}

/// Resolves to true when `fd` is readable, or to false when the wait was handed back to tokio.
/// The socket must be in the thread's epoll ([`add`]).
pub(crate) struct Readable {
    fd: RawFd,
    generation: Option<u64>,
}

impl Readable {
    pub(crate) fn new(fd: RawFd) -> Readable {
        Readable {
            fd,
            generation: None,
        }
    }
}

impl Future for Readable {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let fd = self.fd as usize;
        WAITING.with(|waiting| {
            let mut set = waiting.borrow_mut();
            if let Some(generation) = self.generation {
                let slot = set
                    .by_fd
                    .get(fd)
                    .filter(|slot| slot.generation == generation);
                return match slot.map(|slot| slot.outcome) {
                    Some(Outcome::Waiting) => {
                        // Polled again by another task than the one registered: wake that one.
                        let slot = &mut set.by_fd[fd];
                        if !slot.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                            slot.waker = Some(cx.waker().clone());
                        }
                        Poll::Pending
                    }
                    Some(Outcome::Readable) => Poll::Ready(true),
                    // Released, or not this thread's wait any more: tokio takes over.
                    _ => Poll::Ready(false),
                };
            }
            if set.by_fd.len() <= fd {
                set.by_fd.resize_with(fd + 1, Slot::default);
            }
            let slot = &mut set.by_fd[fd];
            slot.generation += 1;
            slot.outcome = Outcome::Waiting;
            let replaced = slot.waker.replace(cx.waker().clone());
            let generation = slot.generation;
            if replaced.is_none() {
                set.count += 1;
            }
            self.generation = Some(generation);
            Poll::Pending
        })
    }
}

impl Drop for Readable {
    /// A read dropped while it waits (its client stopped) leaves the wait set.
    fn drop(&mut self) {
        let Some(generation) = self.generation else {
            return;
        };
        let fd = self.fd as usize;
        // `try_with`: the thread's locals may already be gone when a thread exits.
        let _ = WAITING.try_with(|waiting| {
            let mut set = waiting.borrow_mut();
            let ours = set
                .by_fd
                .get_mut(fd)
                .filter(|slot| slot.generation == generation);
            if let Some(slot) = ours {
                if slot.waker.take().is_some() {
                    set.count -= 1;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn waits_wake_on_data_hand_back_on_release_and_leave_on_drop() {
        set_enabled(true).unwrap();
        let (reader, mut writer) = UnixStream::pair().unwrap();
        reader.set_nonblocking(true).unwrap();
        add(epoll().unwrap(), reader.as_raw_fd()).unwrap();
        let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);

        let mut wait_for_data = Box::pin(Readable::new(reader.as_raw_fd()));
        assert!(wait_for_data.as_mut().poll(&mut cx).is_pending());
        assert_eq!(waiting(), 1);
        assert_eq!(wait(Duration::from_millis(5)), 0, "nothing to read yet");
        // Polled again from another task: that task is the one woken.
        let other = Arc::new(CountingWaker(AtomicUsize::new(0)));
        let other_waker = Waker::from(other.clone());
        assert!(wait_for_data
            .as_mut()
            .poll(&mut Context::from_waker(&other_waker))
            .is_pending());
        writer.write_all(b"x").unwrap();
        assert_eq!(wait(Duration::from_secs(5)), 1);
        assert_eq!(other.0.load(Ordering::SeqCst), 1);
        assert_eq!(counter.0.load(Ordering::SeqCst), 0);
        assert_eq!(waiting(), 0);
        assert_eq!(wait_for_data.as_mut().poll(&mut cx), Poll::Ready(true));

        // Level-triggered: the unread byte is reported again; release hands the wait to tokio.
        let mut released = Box::pin(Readable::new(reader.as_raw_fd()));
        assert!(released.as_mut().poll(&mut cx).is_pending());
        release_all();
        assert_eq!(waiting(), 0);
        assert_eq!(released.as_mut().poll(&mut cx), Poll::Ready(false));

        let mut dropped = Box::pin(Readable::new(reader.as_raw_fd()));
        assert!(dropped.as_mut().poll(&mut cx).is_pending());
        assert_eq!(waiting(), 1);
        drop(dropped);
        assert_eq!(waiting(), 0);
        assert_eq!(
            wait(Duration::from_millis(1)),
            0,
            "a dropped wait wakes nobody"
        );
        set_enabled(false).unwrap();
        assert!(epoll().is_none());
    }
}
