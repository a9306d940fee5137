//! The shape limits a run's JSON is held to wherever it comes from: an
//! export being imported (the [`Guard`] lexer under serde, which the
//! import reads through) and a stored column or result read back
//! ([`check_stored`]), so that a reader never builds what an import would
//! refuse. Each limit passed is one line naming the byte where it was.

use std::cell::Cell;
use std::fmt;
use std::io::{self, Read};
use std::rc::Rc;

/// The longest string (a label, a line of output) an export may hold.
pub const STRING_CAP: u64 = 16 << 20;
/// The deepest nesting of arrays and objects (numaprobe writes about 8).
pub const MAX_DEPTH: u32 = 64;
/// The most bytes one run may take in an export (a default run takes a
/// few hundred KiB): bounds the memory of one run.
pub const RUN_CAP: u64 = 128 << 20;
/// The most items of one array or object inside a run (the export's own
/// list of runs is not bounded): a machine of 16,384 CPUs has fewer
/// CPUs, caches or per-CPU figures than this.
pub const ITEM_CAP: u32 = 1 << 16;
/// The depth of a run's own object: the document, its `runs`, a run.
const RUN_DEPTH: u32 = 3;

/// A limit of this module passed, carried through serde_json as an I/O
/// error (the import finds it there and reports it as a corrupt export).
#[derive(Debug)]
pub(crate) struct LimitPassed(String);

impl fmt::Display for LimitPassed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LimitPassed {}

/// Reads JSON bytes through a small lexer (inside a string or not, the
/// nesting depth) that enforces [`STRING_CAP`], [`MAX_DEPTH`] and
/// [`RUN_CAP`] (bytes since `run_start`, which the run reader moves).
pub(crate) struct Guard<R> {
    inner: R,
    pos: u64,
    depth: u32,
    in_string: bool,
    escaped: bool,
    string_len: u64,
    /// Items seen so far (commas) in the open array or object of each
    /// depth.
    items: [u32; MAX_DEPTH as usize + 1],
    run_start: Rc<Cell<u64>>,
    pos_out: Rc<Cell<u64>>,
    /// The shallowest depth whose arrays and objects [`ITEM_CAP`] bounds.
    item_depth: u32,
}

impl<R: Read> Guard<R> {
    pub(crate) fn new(inner: R, run_start: Rc<Cell<u64>>, pos_out: Rc<Cell<u64>>) -> Self {
        Guard {
            inner,
            pos: 0,
            depth: 0,
            in_string: false,
            escaped: false,
            string_len: 0,
            items: [0; MAX_DEPTH as usize + 1],
            run_start,
            pos_out,
            item_depth: RUN_DEPTH,
        }
    }

    fn limit(&self, what: String) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            LimitPassed(format!("{what} at byte {}", self.pos)),
        )
    }

    /// Lexes `bytes`, jumping from one byte that matters to the next (a
    /// quote or backslash inside a string, a quote or bracket outside), so
    /// the bytes between are not looked at one by one.
    pub(crate) fn scan(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut i = 0;
        let (mut next_open, mut next_close) = (None::<usize>, None::<usize>);
        let mut next_comma = None::<usize>;
        while i < bytes.len() {
            if self.in_string {
                // The bytes up to and including the next one that matters.
                let step = if self.escaped {
                    1
                } else {
                    memchr::memchr2(b'"', b'\\', &bytes[i..]).map_or(bytes.len() - i, |k| k + 1)
                };
                if self.string_len + step as u64 > STRING_CAP {
                    self.pos += STRING_CAP + 1 - self.string_len;
                    return Err(self.limit(format!("a string longer than {STRING_CAP} bytes")));
                }
                self.string_len += step as u64;
                self.pos += step as u64;
                i += step;
                let last = bytes[i - 1];
                if self.escaped {
                    self.escaped = false;
                } else if last == b'\\' {
                    self.escaped = true;
                } else if last == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            // Outside strings only quotes and brackets matter: jump to the
            // next one (each search's answer is kept until it is passed).
            if next_open.is_none_or(|k| k < i) {
                next_open = Some(
                    memchr::memchr3(b'"', b'[', b'{', &bytes[i..]).map_or(bytes.len(), |k| i + k),
                );
            }
            if next_close.is_none_or(|k| k < i) {
                next_close =
                    Some(memchr::memchr2(b']', b'}', &bytes[i..]).map_or(bytes.len(), |k| i + k));
            }
            if next_comma.is_none_or(|k| k < i) {
                next_comma = Some(memchr::memchr(b',', &bytes[i..]).map_or(bytes.len(), |k| i + k));
            }
            let at = next_open.min(next_close).min(next_comma).unwrap_or(bytes.len());
            if at == bytes.len() {
                self.pos += (bytes.len() - i) as u64;
                break;
            }
            self.pos += (at + 1 - i) as u64;
            i = at + 1;
            match bytes[at] {
                b'"' => {
                    self.in_string = true;
                    self.string_len = 0;
                }
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return Err(self.limit(format!("nesting deeper than {MAX_DEPTH} levels")));
                    }
                    self.items[self.depth as usize] = 0;
                }
                b',' => {
                    let n = &mut self.items[self.depth as usize];
                    *n += 1;
                    // n commas: n + 1 items.
                    if self.depth >= self.item_depth && *n >= ITEM_CAP {
                        return Err(self.limit(format!(
                            "an array or object of more than {ITEM_CAP} items in a run"
                        )));
                    }
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        if self.pos - self.run_start.get() > RUN_CAP {
            return Err(self.limit(format!("more than {RUN_CAP} bytes in one run (or one field)")));
        }
        self.pos_out.set(self.pos);
        Ok(())
    }
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.scan(&buf[..n])?;
        Ok(n)
    }
}

/// Checks one stored JSON text (a run's column or result) against the
/// limits an import keeps for a run: no array or object of more than
/// [`ITEM_CAP`] items at any depth, no string over [`STRING_CAP`], no
/// nesting over [`MAX_DEPTH`], at most [`RUN_CAP`] bytes. Lexes the text
/// only: nothing is built. The error says which limit and where.
pub(crate) fn check_stored(text: &str) -> std::result::Result<(), String> {
    let mut g = Guard::new(io::empty(), Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    g.item_depth = 1;
    g.scan(text.as_bytes()).map_err(|e| {
        let detail = e.to_string();
        detail.replace(" in a run at byte", " at byte")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lexer's state after `text` read in pieces of `piece` bytes.
    fn lex(text: &[u8], piece: usize) -> (u64, u32, bool, bool, u64) {
        let mut g = Guard::new(io::empty(), Rc::default(), Rc::default());
        for chunk in text.chunks(piece) {
            g.scan(chunk).unwrap();
        }
        (g.pos, g.depth, g.in_string, g.escaped, g.string_len)
    }

    #[test]
    fn the_lexer_jumps_to_the_same_state_however_the_bytes_come() {
        let text = br#"{"a\\": ["x\"]}", [1, {"b": "\\\""}], "tail\"#;
        // One byte at a time nothing can be jumped over: the reference.
        let whole = lex(text, 1);
        assert_eq!(whole, (text.len() as u64, 2, true, true, 5));
        for piece in 2..=text.len() {
            assert_eq!(lex(text, piece), whole, "pieces of {piece} bytes");
        }
        // A string cut at the cap is reported at the byte that passes it.
        let mut g = Guard::new(io::empty(), Rc::default(), Rc::default());
        g.scan(b"[\"").unwrap();
        let long = vec![b'x'; STRING_CAP as usize + 5];
        let e = g.scan(&long).unwrap_err();
        assert!(e.to_string().ends_with(&format!("at byte {}", STRING_CAP + 3)), "{e}");
    }
}
