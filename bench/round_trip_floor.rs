//! The least client CPU a sysbench point select can cost: one thread per connection, blocking
//! sockets, every request packet built once, replies only framed (packet lengths read, nothing
//! decoded). Each event is `SELECT c FROM sbtest<t> WHERE id=?` on a random table and id, as
//! sysbench's oltp_point_select sends it, server-side prepared, over MySQL's or PostgreSQL's
//! protocol. Whatever a real client adds (a driver, a scheduler, statistics) comes on top; what
//! this one spends is the kernel's part of a round trip, the floor for any client that sends one
//! statement per round trip. Trust/empty-password logins only (the bench's private servers).
//!
//! Built and run by bench/vs_sysbench.py --floor (std only: `rustc -O round_trip_floor.rs`):
//!   round_trip_floor mysql|pg HOST PORT USER DB TABLES TABLE_SIZE CLIENTS SECONDS
//! prints `events N seconds S`; the caller measures its CPU.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reply bytes buffered per connection: far more than a point select's answer.
const BUFFER: usize = 256 * 1024;

struct Args {
    protocol: String,
    addr: String,
    user: String,
    db: String,
    tables: u32,
    table_size: u32,
    clients: u32,
    seconds: f64,
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 9 {
        eprintln!(
            "usage: round_trip_floor mysql|pg HOST PORT USER DB TABLES TABLE_SIZE CLIENTS SECONDS"
        );
        std::process::exit(2);
    }
    let number = |i: usize| a[i].parse::<u32>().expect("a number");
    let args = Arc::new(Args {
        protocol: a[0].clone(),
        addr: format!("{}:{}", a[1], a[2]),
        user: a[3].clone(),
        db: a[4].clone(),
        tables: number(5),
        table_size: number(6),
        clients: number(7),
        seconds: a[8].parse().expect("seconds"),
    });
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.seconds);
    let threads: Vec<_> = (0..args.clients)
        .map(|i| {
            let args = Arc::clone(&args);
            std::thread::spawn(move || {
                client(&args, deadline, 0x9E37_79B9_7F4A_7C15 ^ u64::from(i + 1))
            })
        })
        .collect();
    let mut events = 0;
    for thread in threads {
        match thread.join().expect("a client thread panicked") {
            Ok(n) => events += n,
            Err(e) => {
                eprintln!("error: a client failed: {e}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "events {events} seconds {:.3}",
        started.elapsed().as_secs_f64()
    );
}

fn client(args: &Args, deadline: Instant, seed: u64) -> io::Result<u64> {
    let stream = TcpStream::connect(&args.addr)?;
    stream.set_nodelay(true)?;
    let mut conn = Conn {
        stream,
        buf: vec![0; BUFFER],
        start: 0,
        end: 0,
    };
    let mut rng = seed;
    let mut events = 0u64;
    let mysql = args.protocol == "mysql";
    let statements = if mysql {
        conn.mysql_setup(args)?
    } else {
        conn.pg_setup(args)?
    };
    let names: Vec<String> = (0..args.tables).map(|t| format!("s{t}\0")).collect();
    let mut request = Vec::with_capacity(128);
    while !events.is_multiple_of(16) || Instant::now() < deadline {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let table = (rng % u64::from(args.tables)) as usize;
        let id = ((rng >> 32) % u64::from(args.table_size)) as u32 + 1;
        request.clear();
        if mysql {
            // COM_STMT_EXECUTE: id, no cursor, 1 iteration, null bitmap, types bound, LONG.
            let body_len = 1 + 4 + 1 + 4 + 1 + 1 + 2 + 4;
            request.extend_from_slice(&(body_len as u32).to_le_bytes()[..3]);
            request.push(0);
            request.push(0x17);
            request.extend_from_slice(&statements[table].to_le_bytes());
            request.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 3, 0]);
            request.extend_from_slice(&id.to_le_bytes());
            conn.stream.write_all(&request)?;
            conn.mysql_skip_result()?;
        } else {
            // Bind (binary int4 parameter, text results), Execute, Sync.
            let name = &names[table];
            let bind_len = 4 + 1 + name.len() + 2 + 2 + 2 + 4 + 4 + 2;
            request.push(b'B');
            request.extend_from_slice(&(bind_len as u32).to_be_bytes());
            request.push(0);
            request.extend_from_slice(name.as_bytes());
            request.extend_from_slice(&[0, 1, 0, 1, 0, 1, 0, 0, 0, 4]);
            request.extend_from_slice(&id.to_be_bytes());
            request.extend_from_slice(&[0, 0]);
            request.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, b'S', 0, 0, 0, 4]);
            conn.stream.write_all(&request)?;
            conn.pg_until_ready()?;
        }
        events += 1;
    }
    Ok(events)
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Conn {
    /// Makes sure `n` bytes are buffered from `start`, reading as needed; returns them.
    fn need(&mut self, n: usize) -> io::Result<&[u8]> {
        assert!(n <= BUFFER, "a message larger than the buffer");
        while self.end - self.start < n {
            if self.start + n > BUFFER {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let got = self.stream.read(&mut self.buf[self.end..])?;
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "server closed",
                ));
            }
            self.end += got;
        }
        Ok(&self.buf[self.start..self.start + n])
    }

    /// One MySQL packet's payload (consumed).
    fn mysql_packet(&mut self) -> io::Result<Vec<u8>> {
        let head = self.need(4)?;
        let len = usize::from(head[0]) | usize::from(head[1]) << 8 | usize::from(head[2]) << 16;
        let payload = self.need(4 + len)?[4..].to_vec();
        self.start += 4 + len;
        Ok(payload)
    }

    /// Skips one MySQL packet; returns its first byte and length without copying.
    fn mysql_skip(&mut self) -> io::Result<(u8, usize)> {
        let head = self.need(5)?;
        let len = usize::from(head[0]) | usize::from(head[1]) << 8 | usize::from(head[2]) << 16;
        let first = head[4];
        self.need(4 + len)?;
        self.start += 4 + len;
        Ok((first, len))
    }

    fn mysql_setup(&mut self, args: &Args) -> io::Result<Vec<u32>> {
        self.mysql_packet()?; // the server's greeting
                              // HandshakeResponse41: LONG_PASSWORD, CONNECT_WITH_DB, PROTOCOL_41, TRANSACTIONS,
                              // SECURE_CONNECTION, PLUGIN_AUTH; utf8mb4 like sysbench; empty password.
        let caps: u32 = 0x1 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x80000;
        let mut body = Vec::new();
        body.extend_from_slice(&caps.to_le_bytes());
        body.extend_from_slice(&(16u32 << 20).to_le_bytes());
        body.push(45);
        body.extend_from_slice(&[0; 23]);
        body.extend_from_slice(args.user.as_bytes());
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(args.db.as_bytes());
        body.push(0);
        body.extend_from_slice(b"mysql_native_password\0");
        self.mysql_send(1, &body)?;
        self.mysql_ok("login refused")?;
        let mut ids = Vec::new();
        for t in 1..=args.tables {
            let mut body = vec![0x16];
            body.extend_from_slice(format!("SELECT c FROM sbtest{t} WHERE id=?").as_bytes());
            self.mysql_send(0, &body)?;
            let ok = self.mysql_ok("prepare failed")?;
            ids.push(u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]));
            let columns = usize::from(u16::from_le_bytes([ok[5], ok[6]]));
            let params = usize::from(u16::from_le_bytes([ok[7], ok[8]]));
            for _ in 0..params + usize::from(params > 0) + columns + usize::from(columns > 0) {
                self.mysql_skip()?;
            }
        }
        Ok(ids)
    }

    /// The next packet, which must be an OK (first byte 0); else an error saying `failed`.
    fn mysql_ok(&mut self, failed: &str) -> io::Result<Vec<u8>> {
        let reply = self.mysql_packet()?;
        if reply.first() != Some(&0) {
            // An ERR packet: 0xff, a 2-byte code, '#', a 5-byte SQLSTATE, then the message.
            let text = String::from_utf8_lossy(reply.get(9..).unwrap_or_default());
            return Err(io::Error::other(format!("{failed}: {text}")));
        }
        Ok(reply)
    }

    fn mysql_send(&mut self, seq: u8, body: &[u8]) -> io::Result<()> {
        let mut packet = (body.len() as u32).to_le_bytes();
        packet[3] = seq;
        self.stream.write_all(&[&packet[..], body].concat())
    }

    /// A binary result set: column count, definitions, EOF, rows, EOF (or one OK / error).
    fn mysql_skip_result(&mut self) -> io::Result<()> {
        let (first, _) = self.mysql_skip()?;
        if first == 0xff {
            return Err(io::Error::other("statement failed"));
        }
        if first == 0 {
            return Ok(());
        }
        let mut eofs = 0;
        while eofs < 2 {
            let (first, len) = self.mysql_skip()?;
            if first == 0xfe && len < 9 {
                eofs += 1;
            } else if first == 0xff {
                return Err(io::Error::other("statement failed"));
            }
        }
        Ok(())
    }

    fn pg_setup(&mut self, args: &Args) -> io::Result<Vec<u32>> {
        let mut body = 196_608u32.to_be_bytes().to_vec();
        for (key, value) in [("user", &args.user), ("database", &args.db)] {
            body.extend_from_slice(format!("{key}\0{value}\0").as_bytes());
        }
        body.push(0);
        let mut startup = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        startup.extend_from_slice(&body);
        self.stream.write_all(&startup)?;
        self.pg_until_ready()?;
        let mut parse = Vec::new();
        for t in 1..=args.tables {
            let body = format!("s{}\0SELECT c FROM sbtest{t} WHERE id=$1\0", t - 1);
            parse.push(b'P');
            parse.extend_from_slice(&((4 + body.len() + 2 + 4) as u32).to_be_bytes());
            parse.extend_from_slice(body.as_bytes());
            parse.extend_from_slice(&[0, 1, 0, 0, 0, 23]);
        }
        parse.extend_from_slice(&[b'S', 0, 0, 0, 4]);
        self.stream.write_all(&parse)?;
        self.pg_until_ready()?;
        Ok(Vec::new())
    }

    /// Skips messages up to ReadyForQuery; an ErrorResponse fails.
    fn pg_until_ready(&mut self) -> io::Result<()> {
        let mut failed = false;
        loop {
            let head = self.need(5)?;
            let tag = head[0];
            let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
            let message = self.need(1 + len)?;
            let asks_password = tag == b'R' && message[5..9] != [0, 0, 0, 0];
            self.start += 1 + len;
            match tag {
                b'E' => failed = true,
                _ if asks_password => return Err(io::Error::other("the server wants a password")),
                b'Z' if failed => return Err(io::Error::other("statement failed")),
                b'Z' => return Ok(()),
                _ => {}
            }
        }
    }
}
