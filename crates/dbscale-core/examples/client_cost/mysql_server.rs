//! A scripted MySQL/MariaDB server: protocol 4.1 with CLIENT_DEPRECATE_EOF, any password taken
//! (`mysql_native_password` named, its response not checked), COM_QUERY with text result sets,
//! COM_STMT_PREPARE and COM_STMT_EXECUTE with binary rows, and the answers of `answers.rs`.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};

use crate::answers::{answer, Answer};

const CAPABILITIES: u32 = 0x1
    | 0x4
    | 0x8
    | 0x200
    | 0x2000
    | 0x8000
    | 0x1_0000
    | 0x2_0000
    | 0x4_0000
    | 0x8_0000
    | 0x20_0000
    | 0x100_0000;
const MYSQL_TYPE_VAR_STRING: u8 = 0xFD;

/// Serves every connection of `listener` in a thread of its own, for the life of the process.
pub fn serve(listener: TcpListener) {
    for (id, stream) in listener.incoming().flatten().enumerate() {
        std::thread::spawn(move || {
            let _ = Session::new(stream, id as u32 + 1).and_then(|mut s| s.run());
        });
    }
}

struct Session {
    input: BufReader<TcpStream>,
    output: BufWriter<TcpStream>,
    id: u32,
    statements: HashMap<u32, String>,
    seq: u8,
}

type Io<T> = std::io::Result<T>;

impl Session {
    fn new(stream: TcpStream, id: u32) -> Io<Self> {
        stream.set_nodelay(true)?;
        Ok(Self {
            input: BufReader::new(stream.try_clone()?),
            output: BufWriter::new(stream),
            id,
            statements: HashMap::new(),
            seq: 0,
        })
    }

    fn run(&mut self) -> Io<()> {
        self.greet()?;
        let _response = self.read_packet()?;
        self.ok(0)?;
        self.output.flush()?;
        loop {
            self.seq = 0;
            let Ok(packet) = self.read_packet() else {
                return Ok(());
            };
            let Some((&command, body)) = packet.split_first() else {
                return Ok(());
            };
            match command {
                0x01 => return Ok(()), // COM_QUIT
                0x03 => {
                    let sql = String::from_utf8_lossy(body).into_owned();
                    self.result(&sql, false)?;
                }
                0x16 => {
                    let sql = String::from_utf8_lossy(body).into_owned();
                    let statement = self.statements.len() as u32 + 1;
                    let params = sql.matches('?').count() as u16;
                    let columns = match answer(&sql) {
                        Answer::Rows { columns, .. } => columns.len() as u16,
                        Answer::Done(_) => 0,
                    };
                    let mut ok = vec![0u8];
                    ok.extend_from_slice(&statement.to_le_bytes());
                    ok.extend_from_slice(&columns.to_le_bytes());
                    ok.extend_from_slice(&params.to_le_bytes());
                    ok.extend_from_slice(&[0, 0, 0]);
                    self.packet(&ok)?;
                    for _ in 0..params {
                        self.column("?")?;
                    }
                    if let Answer::Rows { columns, .. } = answer(&sql) {
                        for name in columns {
                            self.column(name)?;
                        }
                    }
                    self.statements.insert(statement, sql);
                }
                0x17 => {
                    let id = u32::from_le_bytes([body[0], body[1], body[2], body[3]]);
                    let sql = self.statements.get(&id).cloned().unwrap_or_default();
                    self.result(&sql, true)?;
                }
                0x19 => continue, // COM_STMT_CLOSE: no answer
                _ => self.ok(0)?,
            }
            self.output.flush()?;
        }
    }

    fn greet(&mut self) -> Io<()> {
        let mut g = vec![10u8];
        g.extend_from_slice(b"10.11.0-MariaDB-scripted\0");
        g.extend_from_slice(&self.id.to_le_bytes());
        g.extend_from_slice(b"abcdefgh\0");
        g.extend_from_slice(&(CAPABILITIES as u16).to_le_bytes());
        g.push(45); // utf8mb4
        g.extend_from_slice(&2u16.to_le_bytes()); // autocommit
        g.extend_from_slice(&((CAPABILITIES >> 16) as u16).to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(b"ijklmnopqrst\0");
        g.extend_from_slice(b"mysql_native_password\0");
        self.packet(&g)?;
        self.output.flush()
    }

    fn result(&mut self, sql: &str, binary: bool) -> Io<()> {
        match answer(sql) {
            Answer::Done(tag) => {
                let affected = u64::from(tag.starts_with("UPDATE") || tag.starts_with("INSERT"));
                self.ok(affected)
            }
            Answer::Rows { columns, rows } => {
                self.packet(&[columns.len() as u8])?;
                for name in columns {
                    self.column(name)?;
                }
                for row in &rows {
                    let mut data = Vec::new();
                    if binary {
                        data.push(0);
                        data.extend(std::iter::repeat_n(0u8, (row.len() + 9) / 8));
                    }
                    for value in row {
                        data.push(value.len() as u8);
                        data.extend_from_slice(value.as_bytes());
                    }
                    self.packet(&data)?;
                }
                let mut end = vec![0xFE, 0, 0];
                end.extend_from_slice(&2u16.to_le_bytes());
                end.extend_from_slice(&0u16.to_le_bytes());
                self.packet(&end)
            }
        }
    }

    fn column(&mut self, name: &str) -> Io<()> {
        let mut c = Vec::new();
        for part in ["def", "sbtest", "t", "t", name, name] {
            c.push(part.len() as u8);
            c.extend_from_slice(part.as_bytes());
        }
        c.push(0x0C);
        c.extend_from_slice(&45u16.to_le_bytes());
        c.extend_from_slice(&480u32.to_le_bytes());
        c.push(MYSQL_TYPE_VAR_STRING);
        c.extend_from_slice(&0u16.to_le_bytes());
        c.extend_from_slice(&[0, 0, 0]);
        self.packet(&c)
    }

    fn ok(&mut self, affected: u64) -> Io<()> {
        let mut ok = vec![0u8, affected as u8, 0];
        ok.extend_from_slice(&2u16.to_le_bytes());
        ok.extend_from_slice(&0u16.to_le_bytes());
        self.packet(&ok)
    }

    fn packet(&mut self, payload: &[u8]) -> Io<()> {
        let length = payload.len() as u32;
        self.output.write_all(&length.to_le_bytes()[..3])?;
        self.output.write_all(&[self.seq])?;
        self.seq = self.seq.wrapping_add(1);
        self.output.write_all(payload)
    }

    fn read_packet(&mut self) -> Io<Vec<u8>> {
        let mut header = [0u8; 4];
        self.input.read_exact(&mut header)?;
        let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        self.seq = header[3].wrapping_add(1);
        let mut payload = vec![0u8; length];
        self.input.read_exact(&mut payload)?;
        Ok(payload)
    }
}
