//! `dbscale micro net`: the network between two machines, as the Cloud Report measures it with
//! netperf, in dbscale itself. A server (`serve`) answers two kinds of connection, told apart by
//! their first byte: `R`, request/response (each byte sent back at once), and `S`, a stream it
//! reads and discards. The client measures one-byte ping-pong on one connection
//! (`request_response`: transactions/s and latency percentiles from an HDR histogram in
//! nanoseconds) and the aggregate throughput of N parallel streams (`streams`: per half second),
//! and finds the stream count the report would use (`pick_stream_count`).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::Serialize;

use crate::driver::{ConnectFailure, DbError};
use crate::Error;

const REQUEST_RESPONSE: u8 = b'R';
const STREAM: u8 = b'S';
const CHUNK: usize = 128 * 1024;
/// Throughput is sampled every half second, as the report's netperf runs (`-D 0.5`).
pub const SAMPLE_S: f64 = 0.5;

fn io_error(what: &str, e: std::io::Error) -> Error {
    Error::Config(format!("micro net: {what}: {e}"))
}

/// A running server; stops when dropped or `stop`ped.
pub struct NetServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl NetServer {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for NetServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Listens on `bind:port` (port 0: any free one) and answers clients on threads of their own.
pub fn serve(bind: &str, port: u16) -> Result<NetServer, Error> {
    let listener =
        TcpListener::bind((bind, port)).map_err(|e| io_error(&format!("bind {bind}:{port}"), e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| io_error("local address", e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| io_error("listener", e))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let accept = std::thread::Builder::new()
        .name("dbscale-net-serve".into())
        .spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let stop = flag.clone();
                        let _ = std::thread::Builder::new()
                            .name("dbscale-net-conn".into())
                            .spawn(move || answer(stream, &stop));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        })
        .map_err(|e| io_error("server thread", e))?;
    Ok(NetServer {
        addr,
        stop,
        accept: Some(accept),
    })
}

/// One client's connection: echo for `R`, discard for `S`, until it closes or the server stops.
fn answer(mut stream: TcpStream, stop: &AtomicBool) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut kind = [0u8; 1];
    if stream.read_exact(&mut kind).is_err() {
        return;
    }
    let mut buffer = vec![0u8; if kind[0] == STREAM { CHUNK } else { 1 }];
    while !stop.load(Ordering::SeqCst) {
        match stream.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) if kind[0] == REQUEST_RESPONSE => {
                if stream.write_all(&buffer[..n]).is_err() {
                    return;
                }
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

/// The longest any wait on the network may take: a connect, a response, a write the server
/// does not take. A server that accepts and then says nothing is an error, not a hang.
const IO_DEADLINE: Duration = Duration::from_secs(10);

/// A read or write that failed, in words: past its deadline, the server went quiet.
fn wait_error(addr: &str, what: &str, e: std::io::Error, deadline: Duration) -> Error {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => Error::Connect {
            target: addr.to_string(),
            source: DbError::connect(
                ConnectFailure::Unreachable,
                format!(
                    "no {what} from {addr} in {} s: is `dbscale micro net --serve` running \
                     there, and nothing else on that port?",
                    deadline.as_secs_f64()
                ),
            ),
        },
        _ => io_error(what, e),
    }
}

fn connect(addr: &str, kind: u8, deadline: Duration) -> Result<TcpStream, Error> {
    let target = addr
        .to_socket_addrs()
        .map_err(|e| io_error(&format!("address {addr}"), e))?
        .next()
        .ok_or_else(|| Error::Config(format!("micro net: no address for {addr}")))?;
    let mut stream = TcpStream::connect_timeout(&target, deadline).map_err(|e| Error::Connect {
        target: addr.to_string(),
        source: DbError::connect(
            ConnectFailure::Unreachable,
            format!("no `dbscale micro net --serve` answered at {addr}: {e}"),
        ),
    })?;
    stream
        .set_nodelay(true)
        .map_err(|e| io_error("nodelay", e))?;
    stream
        .set_read_timeout(Some(deadline))
        .and_then(|()| stream.set_write_timeout(Some(deadline)))
        .map_err(|e| io_error("socket timeouts", e))?;
    stream
        .write_all(&[kind])
        .map_err(|e| wait_error(addr, "handshake", e, deadline))?;
    Ok(stream)
}

/// Request/response figures; latencies in microseconds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RequestResponse {
    pub seconds: f64,
    pub transactions: u64,
    pub transactions_per_s: f64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub stddev_us: f64,
}

/// One-byte ping-pong on one connection for `seconds`.
pub fn request_response(addr: &str, seconds: f64) -> Result<RequestResponse, Error> {
    request_response_within(addr, seconds, IO_DEADLINE)
}

fn request_response_within(
    addr: &str,
    seconds: f64,
    deadline: Duration,
) -> Result<RequestResponse, Error> {
    let mut stream = connect(addr, REQUEST_RESPONSE, deadline)?;
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut byte = [0u8; 1];
    let mut transactions = 0u64;
    while Instant::now() < end {
        let sent = Instant::now();
        stream
            .write_all(b"x")
            .map_err(|e| wait_error(addr, "request taken", e, deadline))?;
        stream
            .read_exact(&mut byte)
            .map_err(|e| wait_error(addr, "response", e, deadline))?;
        let ns = sent.elapsed().as_nanos() as u64;
        histogram.saturating_record(ns.max(1));
        transactions += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let _ = stream.shutdown(Shutdown::Both);
    let us = |ns: f64| ns / 1000.0;
    Ok(RequestResponse {
        seconds: elapsed,
        transactions,
        transactions_per_s: transactions as f64 / elapsed,
        min_us: us(histogram.min() as f64),
        mean_us: us(histogram.mean()),
        p50_us: us(histogram.value_at_quantile(0.50) as f64),
        p90_us: us(histogram.value_at_quantile(0.90) as f64),
        p99_us: us(histogram.value_at_quantile(0.99) as f64),
        max_us: us(histogram.max() as f64),
        stddev_us: us(histogram.stdev()),
    })
}

/// Aggregate throughput of parallel streams, per half second, in Gbit/s.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Streams {
    pub streams: usize,
    pub seconds: f64,
    pub buffer_bytes: usize,
    pub series_gbps: Vec<f64>,
    pub min_gbps: f64,
    pub mean_gbps: f64,
    pub max_gbps: f64,
}

fn set_send_buffer(stream: &TcpStream, bytes: usize) {
    let size = bytes.min(i32::MAX as usize) as libc::c_int;
    // SAFETY: setsockopt on a valid socket with a pointer to a live c_int of the right size.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// `streams` connections writing as fast as they can for `seconds`.
pub fn streams(
    addr: &str,
    streams: usize,
    seconds: f64,
    buffer_bytes: usize,
) -> Result<Streams, Error> {
    if streams == 0 || streams > 1024 {
        return Err(Error::Config(format!(
            "micro net: streams must be from 1 to 1024, got {streams}"
        )));
    }
    let sent = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let stalled = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for _ in 0..streams {
        let mut stream = connect(addr, STREAM, IO_DEADLINE)?;
        set_send_buffer(&stream, buffer_bytes);
        let (sent, stop, stalled) = (sent.clone(), stop.clone(), stalled.clone());
        writers.push(std::thread::spawn(move || {
            let chunk = vec![0x5Au8; CHUNK];
            while !stop.load(Ordering::Relaxed) {
                match stream.write(&chunk) {
                    Ok(n) => {
                        sent.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) => {
                        // A write past its deadline: the server stopped taking data.
                        let timed_out = matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        );
                        stalled.store(timed_out, Ordering::Relaxed);
                        break;
                    }
                }
            }
            let _ = stream.shutdown(Shutdown::Both);
        }));
    }
    let start = Instant::now();
    let mut series = Vec::new();
    let mut last = 0u64;
    let samples = ((seconds / SAMPLE_S).round() as usize).max(1);
    for i in 1..=samples {
        let at = start + Duration::from_secs_f64(SAMPLE_S * i as f64);
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        let now = sent.load(Ordering::Relaxed);
        series.push((now - last) as f64 * 8.0 / SAMPLE_S / 1e9);
        last = now;
    }
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        let _ = writer.join();
    }
    if stalled.load(Ordering::Relaxed) {
        let quiet = std::io::Error::from(std::io::ErrorKind::TimedOut);
        return Err(wait_error(addr, "data taken", quiet, IO_DEADLINE));
    }
    let mean = series.iter().sum::<f64>() / series.len() as f64;
    Ok(Streams {
        streams,
        seconds: start.elapsed().as_secs_f64(),
        buffer_bytes,
        min_gbps: series.iter().copied().fold(f64::INFINITY, f64::min),
        max_gbps: series.iter().copied().fold(0.0, f64::max),
        mean_gbps: mean,
        series_gbps: series,
    })
}

/// The report's stream-count search on `history` (stream count, aggregate Gbit/s), counts
/// 1, 3, 5, ...: stop when the (population) standard deviation of the last three aggregates is
/// under `threshold_gbps`, and take the count from three steps back; None while it should go on
/// (and the cap, 3 x vCPUs, is not reached: then the best of the history).
pub fn pick_stream_count(
    history: &[(usize, f64)],
    threshold_gbps: f64,
    cap: usize,
) -> Option<usize> {
    if history.len() >= 3 {
        let last: Vec<f64> = history[history.len() - 3..].iter().map(|h| h.1).collect();
        let mean = last.iter().sum::<f64>() / 3.0;
        let sd = (last.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
        if sd < threshold_gbps {
            return Some(history[history.len() - 3].0);
        }
    }
    match history.last() {
        Some((count, _)) if count + 2 > cap => history
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|h| h.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_stops_when_the_aggregate_levels_off() {
        let history = [(1, 2.0), (3, 5.0), (5, 7.9), (7, 8.0), (9, 8.1)];
        assert_eq!(pick_stream_count(&history[..3], 0.35, 24), None);
        assert_eq!(pick_stream_count(&history[..4], 0.35, 24), None);
        assert_eq!(pick_stream_count(&history, 0.35, 24), Some(5));
    }

    #[test]
    fn the_search_stops_at_the_cap_with_the_best_count() {
        let rising = [(1, 1.0), (3, 2.0), (5, 3.0)];
        assert_eq!(pick_stream_count(&rising, 0.35, 6), Some(5));
        assert_eq!(pick_stream_count(&rising, 0.35, 60), None);
    }

    #[test]
    fn a_server_that_accepts_and_never_answers_is_an_error_not_a_hang() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let holder = std::thread::spawn(move || {
            let (socket, _) = listener.accept().unwrap();
            std::thread::sleep(Duration::from_secs(2));
            drop(socket);
        });
        let started = Instant::now();
        let err = request_response_within(&addr, 5.0, Duration::from_millis(300)).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(err.to_string().contains("no response from"), "{err}");
        holder.join().unwrap();
    }

    #[test]
    fn loopback_request_response_and_streams() {
        let mut server = serve("127.0.0.1", 0).unwrap();
        let addr = server.addr().to_string();
        let rr = request_response(&addr, 0.3).unwrap();
        assert!(rr.transactions > 100, "{rr:?}");
        assert!(rr.min_us <= rr.p50_us && rr.p50_us <= rr.p99_us && rr.p99_us <= rr.max_us);
        assert!((rr.transactions_per_s * rr.seconds - rr.transactions as f64).abs() < 1.0);
        let streams = streams(&addr, 2, 1.0, 1 << 20).unwrap();
        assert_eq!(streams.series_gbps.len(), 2);
        assert!(streams.mean_gbps > 0.0 && streams.min_gbps <= streams.max_gbps);
        server.stop();
    }
}
