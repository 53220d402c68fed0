//! The receive buffer under both lean wire clients: bytes read from the socket and not yet
//! consumed, kept so that messages are framed in place (no copy, no allocation per message).
//! Each protocol reads its own header from [`ReceiveBuffer::pending`] and consumes whole
//! messages; the buffer moves pending bytes to the front, and grows, only when a read needs it.

use std::ops::Range;

/// Buffer size: a whole response of the usual OLTP statement fits in one read (a sysbench
/// range SELECT, 100 rows of 120 characters, is about 13 KiB).
pub(crate) const RECEIVE_BUFFER_BYTES: usize = 64 * 1024;
/// Below this much free tail space, pending bytes move to the front before the next read.
const MIN_READ_BYTES: usize = 8 * 1024;

/// Bytes received and not yet consumed: `buf[start..end]`.
pub(crate) struct ReceiveBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReceiveBuffer {
    pub(crate) fn new() -> ReceiveBuffer {
        ReceiveBuffer {
            buf: vec![0; RECEIVE_BUFFER_BYTES],
            start: 0,
            end: 0,
        }
    }

    /// The bytes received and not yet consumed.
    #[inline]
    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Consumes the first `len` pending bytes and says where they lie, for [`Self::bytes`]
    /// until the next [`Self::spare`].
    #[inline]
    pub(crate) fn consume(&mut self, len: usize) -> Range<usize> {
        debug_assert!(len <= self.end - self.start);
        let range = self.start..self.start + len;
        self.start += len;
        range
    }

    /// Consumed bytes, by the range [`Self::consume`] gave.
    #[inline]
    pub(crate) fn bytes(&self, range: &Range<usize>) -> &[u8] {
        &self.buf[range.clone()]
    }

    /// Free space to read into, such that the pending bytes and the read can reach `needed`
    /// bytes in all (the whole of a message whose header is in).
    pub(crate) fn spare(&mut self, needed: usize) -> &mut [u8] {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.start > 0
            && (self.buf.len() - self.start < needed || self.buf.len() - self.end < MIN_READ_BYTES)
        {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < needed {
            // Only messages bigger than the buffer (huge rows, long COPY lines) grow it.
            self.buf.resize(needed, 0);
        }
        &mut self.buf[self.end..]
    }

    /// Records that `n` bytes were read into [`Self::spare`].
    #[inline]
    pub(crate) fn filled(&mut self, n: usize) {
        self.end += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(buf: &mut ReceiveBuffer, bytes: &[u8], needed: usize) {
        let spare = buf.spare(needed);
        spare[..bytes.len()].copy_from_slice(bytes);
        buf.filled(bytes.len());
    }

    #[test]
    fn pending_bytes_move_to_the_front_when_the_tail_is_short() {
        let mut buf = ReceiveBuffer::new();
        let head = vec![1; RECEIVE_BUFFER_BYTES - 100];
        feed(&mut buf, &head, 0);
        let consumed = buf.consume(RECEIVE_BUFFER_BYTES - 110);
        assert_eq!(buf.bytes(&consumed).len(), RECEIVE_BUFFER_BYTES - 110);
        assert_eq!(buf.pending().len(), 10);
        // 100 bytes of tail are under the minimum read: the 10 pending bytes move to 0.
        let spare = buf.spare(10).len();
        assert_eq!(
            (spare, buf.pending()),
            (RECEIVE_BUFFER_BYTES - 10, &[1; 10][..])
        );
    }

    #[test]
    fn grows_only_for_a_message_bigger_than_the_buffer() {
        let mut buf = ReceiveBuffer::new();
        feed(&mut buf, &[9; 5], 5);
        assert_eq!(buf.spare(1000).len(), RECEIVE_BUFFER_BYTES - 5);
        let needed = 3 * RECEIVE_BUFFER_BYTES;
        assert_eq!(buf.spare(needed).len(), needed - 5);
        assert_eq!(buf.pending(), &[9; 5]);
    }

    #[test]
    fn an_emptied_buffer_reads_from_the_front() {
        let mut buf = ReceiveBuffer::new();
        feed(&mut buf, &[1, 2, 3], 0);
        let all = buf.consume(3);
        assert_eq!(buf.bytes(&all), &[1, 2, 3]);
        assert_eq!(buf.spare(0).len(), RECEIVE_BUFFER_BYTES);
    }
}
