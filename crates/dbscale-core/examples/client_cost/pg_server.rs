//! A scripted PostgreSQL server: protocol 3 over TCP, trust authentication, the simple and the
//! extended query protocols, and answers that look like pgbench's and sysbench's tables would
//! give (a count of one branch, a balance, a 120-character `c`). No storage, no planning: the
//! client's cost is what it measures.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};

use crate::answers::{answer, Answer};

/// Serves every connection of `listener` in a thread of its own, for the life of the process.
pub fn serve(listener: TcpListener) {
    for stream in listener.incoming().flatten() {
        std::thread::spawn(move || {
            let _ = Session::new(stream).and_then(|mut s| s.run());
        });
    }
}

struct Session {
    input: BufReader<TcpStream>,
    output: BufWriter<TcpStream>,
    statements: HashMap<String, String>,
    portal: Option<String>,
}

type Io<T> = std::io::Result<T>;

impl Session {
    fn new(stream: TcpStream) -> Io<Self> {
        stream.set_nodelay(true)?;
        Ok(Self {
            input: BufReader::new(stream.try_clone()?),
            output: BufWriter::new(stream),
            statements: HashMap::new(),
            portal: None,
        })
    }

    fn run(&mut self) -> Io<()> {
        if !self.startup()? {
            return Ok(());
        }
        loop {
            let mut tag = [0u8; 1];
            if self.input.read_exact(&mut tag).is_err() {
                return Ok(());
            }
            let body = self.body()?;
            match tag[0] {
                b'Q' => {
                    let sql = cstr(&body, 0).0;
                    self.answer(&sql, true)?;
                    self.message(b'Z', b"I")?;
                    self.output.flush()?;
                }
                b'P' => {
                    let (name, at) = cstr(&body, 0);
                    let sql = cstr(&body, at).0;
                    self.statements.insert(name, sql);
                    self.message(b'1', b"")?;
                }
                b'D' => {
                    let (name, _) = cstr(&body, 1);
                    let sql = if body[0] == b'S' {
                        let sql = self.statements.get(&name).cloned().unwrap_or_default();
                        let params = sql.matches('$').count() as u16;
                        let mut description = params.to_be_bytes().to_vec();
                        for _ in 0..params {
                            description.extend_from_slice(&23u32.to_be_bytes());
                        }
                        self.message(b't', &description)?;
                        sql
                    } else {
                        self.portal.clone().unwrap_or_default()
                    };
                    match answer(&sql) {
                        Answer::Rows { columns, .. } => self.row_description(columns)?,
                        Answer::Done(_) => self.message(b'n', b"")?,
                    }
                }
                b'B' => {
                    let (_, at) = cstr(&body, 0);
                    let name = cstr(&body, at).0;
                    self.portal = self.statements.get(&name).cloned();
                    self.message(b'2', b"")?;
                }
                b'E' => {
                    let sql = self.portal.clone().unwrap_or_default();
                    self.answer(&sql, false)?;
                }
                b'C' => self.message(b'3', b"")?,
                b'S' => {
                    self.message(b'Z', b"I")?;
                    self.output.flush()?;
                }
                b'H' => self.output.flush()?,
                b'X' => return Ok(()),
                _ => return Ok(()),
            }
        }
    }

    /// The startup message (an SSL request refused first), trust authentication, the
    /// parameters a client reads, ReadyForQuery. False for a cancel request.
    fn startup(&mut self) -> Io<bool> {
        loop {
            let body = self.body()?;
            let code = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
            match code {
                80_877_103 | 80_877_104 => {
                    self.output.write_all(b"N")?; // no TLS, no GSS
                    self.output.flush()?;
                }
                80_877_102 => return Ok(false), // a cancel request: nothing runs to cancel
                _ => break,
            }
        }
        self.message(b'R', &0u32.to_be_bytes())?;
        for (name, value) in [
            ("server_version", "15.0"),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
        ] {
            let mut pair = name.as_bytes().to_vec();
            pair.push(0);
            pair.extend_from_slice(value.as_bytes());
            pair.push(0);
            self.message(b'S', &pair)?;
        }
        let mut key = 4242u32.to_be_bytes().to_vec();
        key.extend_from_slice(&7u32.to_be_bytes());
        self.message(b'K', &key)?;
        self.message(b'Z', b"I")?;
        self.output.flush()?;
        Ok(true)
    }

    fn answer(&mut self, sql: &str, describe: bool) -> Io<()> {
        match answer(sql) {
            Answer::Rows { columns, rows } => {
                if describe {
                    self.row_description(columns)?;
                }
                for row in &rows {
                    let mut data = (row.len() as u16).to_be_bytes().to_vec();
                    for value in row {
                        data.extend_from_slice(&(value.len() as u32).to_be_bytes());
                        data.extend_from_slice(value.as_bytes());
                    }
                    self.message(b'D', &data)?;
                }
                self.message(b'C', format!("SELECT {}\0", rows.len()).as_bytes())
            }
            Answer::Done(tag) => self.message(b'C', format!("{tag}\0").as_bytes()),
        }
    }

    fn row_description(&mut self, columns: &[&str]) -> Io<()> {
        let mut data = (columns.len() as u16).to_be_bytes().to_vec();
        for name in columns {
            data.extend_from_slice(name.as_bytes());
            data.push(0);
            data.extend_from_slice(&0u32.to_be_bytes()); // table
            data.extend_from_slice(&0u16.to_be_bytes()); // column
            data.extend_from_slice(&25u32.to_be_bytes()); // text
            data.extend_from_slice(&(-1i16).to_be_bytes());
            data.extend_from_slice(&(-1i32).to_be_bytes());
            data.extend_from_slice(&0u16.to_be_bytes()); // text format
        }
        self.message(b'T', &data)
    }

    fn body(&mut self) -> Io<Vec<u8>> {
        let mut length = [0u8; 4];
        self.input.read_exact(&mut length)?;
        let mut body = vec![0u8; (u32::from_be_bytes(length) as usize).saturating_sub(4)];
        self.input.read_exact(&mut body)?;
        Ok(body)
    }

    fn message(&mut self, tag: u8, body: &[u8]) -> Io<()> {
        self.output.write_all(&[tag])?;
        self.output
            .write_all(&((body.len() + 4) as u32).to_be_bytes())?;
        self.output.write_all(body)
    }
}

/// The C string at `at` in `body`, and the index after its NUL.
fn cstr(body: &[u8], at: usize) -> (String, usize) {
    let end = body[at..]
        .iter()
        .position(|&b| b == 0)
        .map_or(body.len(), |i| at + i);
    (
        String::from_utf8_lossy(&body[at..end]).into_owned(),
        end + 1,
    )
}
