//! MySQL client/server packets: a receive buffer that frames packets in place (no copy, no
//! allocation per packet), length-encoded integers and strings, and the OK and ERR bodies.

use std::ops::Range;

use crate::driver::receive_buffer::ReceiveBuffer;
use crate::driver::DbError;

/// A payload of this length continues in the next packet.
pub(super) const MAX_PAYLOAD: usize = 0xFF_FFFF;

pub(super) const OK: u8 = 0x00;
pub(super) const EOF: u8 = 0xFE;
pub(super) const ERR: u8 = 0xFF;
/// SERVER_MORE_RESULTS_EXISTS in an OK or EOF packet's status flags.
pub(super) const MORE_RESULTS: u16 = 0x0008;

/// The receive buffer, framed into packets: a 3-byte length and a sequence number.
pub(super) struct PacketBuffer(ReceiveBuffer);

/// A framed packet: its sequence number and where its payload lies in the buffer.
#[derive(Debug, Clone)]
pub(super) struct Packet {
    pub seq: u8,
    pub payload: Range<usize>,
}

impl PacketBuffer {
    pub(super) fn new() -> PacketBuffer {
        PacketBuffer(ReceiveBuffer::new())
    }

    /// Takes the next complete packet, or `None` when more bytes are needed.
    pub(super) fn next_packet(&mut self) -> Option<Packet> {
        let total = self.pending_len()?;
        if self.0.pending().len() < total {
            return None;
        }
        let seq = self.0.pending()[3];
        let packet = self.0.consume(total);
        Some(Packet {
            seq,
            payload: packet.start + 4..packet.end,
        })
    }

    pub(super) fn payload(&self, packet: &Packet) -> &[u8] {
        self.0.bytes(&packet.payload)
    }

    /// Free space to read into, large enough for the rest of a pending packet.
    pub(super) fn spare(&mut self) -> &mut [u8] {
        let needed = self.pending_len().unwrap_or(4);
        self.0.spare(needed)
    }

    pub(super) fn filled(&mut self, n: usize) {
        self.0.filled(n);
    }

    /// Total length (header included) of the packet at the front, once its header is in.
    fn pending_len(&self) -> Option<usize> {
        let h = self.0.pending().get(..4)?;
        Some(4 + (usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16))
    }
}

/// Starts a packet in `out`: a header to be filled by [`finish_packet`].
pub(super) fn start_packet(out: &mut Vec<u8>, seq: u8) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0, 0, 0, seq]);
    at
}

/// Writes the payload length into the header at `at`.
pub(super) fn finish_packet(out: &mut [u8], at: usize) -> Result<(), DbError> {
    let len = out.len() - at - 4;
    if len >= MAX_PAYLOAD {
        return Err(DbError::mysql(
            1153,
            format!("a request of {len} bytes is over the 16 MiB this client sends in one packet"),
        ));
    }
    out[at..at + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
    Ok(())
}

pub(super) fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

pub(super) fn put_lenenc_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_lenenc_int(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A cursor over a payload; reads past the end yield zeros/empty rather than panicking.
pub(super) struct Reader<'a> {
    pub bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    pub(super) fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.bytes.len());
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        head
    }

    pub(super) fn u8(&mut self) -> u8 {
        self.take(1).first().copied().unwrap_or(0)
    }

    pub(super) fn uint(&mut self, n: usize) -> u64 {
        self.take(n)
            .iter()
            .rev()
            .fold(0, |acc, b| acc << 8 | u64::from(*b))
    }

    /// A length-encoded integer; `None` for the NULL marker 0xFB.
    pub(super) fn lenenc_int(&mut self) -> Option<u64> {
        match self.u8() {
            0xFB => None,
            0xFC => Some(self.uint(2)),
            0xFD => Some(self.uint(3)),
            0xFE => Some(self.uint(8)),
            b => Some(u64::from(b)),
        }
    }

    /// A length-encoded string; `None` for NULL.
    pub(super) fn lenenc_bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.lenenc_int()?;
        Some(self.take(usize::try_from(n).unwrap_or(usize::MAX)))
    }

    pub(super) fn nul_str(&mut self) -> &'a [u8] {
        let n = self
            .bytes
            .iter()
            .position(|b| *b == 0)
            .unwrap_or(self.bytes.len());
        let s = self.take(n);
        self.take(1);
        s
    }
}

/// An OK packet (or an EOF packet; both end a response): affected rows and status flags.
pub(super) fn ok_counts(payload: &[u8]) -> (u64, u16) {
    let mut r = Reader::new(payload);
    if r.u8() == EOF && payload.len() < 9 {
        // An old-style EOF: warnings, then status.
        r.uint(2);
        return (0, r.uint(2) as u16);
    }
    let affected = r.lenenc_int().unwrap_or(0);
    r.lenenc_int();
    (affected, r.uint(2) as u16)
}

/// An ERR packet's error number and message.
pub(super) fn err_packet(payload: &[u8]) -> DbError {
    let (code, message) = err_parts(payload);
    DbError::mysql(code, message)
}

pub(super) fn err_parts(payload: &[u8]) -> (u16, String) {
    let mut r = Reader::new(payload);
    r.u8();
    let code = r.uint(2) as u16;
    if r.bytes.first() == Some(&b'#') {
        r.take(6);
    }
    (code, String::from_utf8_lossy(r.bytes).into_owned())
}

/// Whether a packet ends a result set's rows: EOF (or the OK that replaces it under
/// CLIENT_DEPRECATE_EOF). A text row can start with 0xFE only when it is 16 MiB long.
pub(super) fn is_end_of_rows(payload: &[u8]) -> bool {
    payload.first() == Some(&EOF) && payload.len() < MAX_PAYLOAD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips() {
        for v in [0, 250, 251, 65535, 65536, 0xFF_FFFF, 0x100_0000, u64::MAX] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            assert_eq!(Reader::new(&out).lenenc_int(), Some(v), "{v}");
        }
        assert_eq!(Reader::new(&[0xFB]).lenenc_int(), None);
    }

    #[test]
    fn packets_frame_in_place_across_reads() {
        let mut buf = PacketBuffer::new();
        let wire = [3, 0, 0, 1, b'a', b'b', b'c', 1, 0, 0, 2, 0];
        buf.spare()[..6].copy_from_slice(&wire[..6]);
        buf.filled(6);
        assert!(buf.next_packet().is_none());
        buf.spare()[..6].copy_from_slice(&wire[6..]);
        buf.filled(6);
        let p = buf.next_packet().unwrap();
        assert_eq!((p.seq, buf.payload(&p)), (1, &b"abc"[..]));
        let p = buf.next_packet().unwrap();
        assert_eq!((p.seq, buf.payload(&p)), (2, &[0u8][..]));
        assert!(buf.next_packet().is_none());
    }

    #[test]
    fn ok_and_err_bodies() {
        assert_eq!(ok_counts(&[0, 3, 0, 8, 0, 0, 0]), (3, MORE_RESULTS));
        assert_eq!(ok_counts(&[0xFE, 0, 0, 2, 0]), (0, 2));
        let (code, message) = err_parts(b"\xff\x26\x04#23000Duplicate");
        assert_eq!((code, message.as_str()), (1062, "Duplicate"));
    }
}
