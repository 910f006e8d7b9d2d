//! A small JSON reader for filter policies.
//!
//! serde_json's `Value` keeps only the last of two equal keys and forgets how a number was
//! written; a policy needs both (AWS refuses duplicate keys, and a numeric range value is
//! limited to five decimal places as written). Bodies at publish use serde_json instead.

use std::collections::HashSet;

/// Nesting deeper than this is refused while reading, so a hostile policy cannot exhaust
/// the stack; the complexity limit refuses far shallower policies anyway.
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The value and the text it was written as.
    Num(f64, String),
    Str(String),
    Arr(Vec<Json>),
    /// Keys in the order written; never two equal keys.
    Obj(Vec<(String, Json)>),
}

/// Reads one JSON document. The error is a sentence without the AWS prefix.
pub fn parse(text: &str) -> Result<Json, String> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        pos: 0,
    };
    reader.skip_ws();
    let value = reader.value(0)?;
    reader.skip_ws();
    if reader.pos < reader.bytes.len() {
        return Err(reader.error("Unexpected content after the end of the JSON document"));
    }
    Ok(value)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        let before = &self.bytes[..self.pos.min(self.bytes.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
        format!("failed to parse JSON. {what} at line {line}, column {column}")
    }

    fn unexpected(&self) -> String {
        match self.peek() {
            None => self.error("Unexpected end of input"),
            Some(b) if b.is_ascii_graphic() => {
                self.error(&format!("Unexpected character '{}'", b as char))
            }
            Some(b) => self.error(&format!("Unexpected character (code {b})")),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            _ => Err(self.unexpected()),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("Unrecognized token"))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("Nesting is too deep"));
        }
        self.pos += 1; // '{'
        let mut members: Vec<(String, Json)> = Vec::new();
        // A set rather than a scan, so an object with thousands of keys stays linear.
        let mut seen: HashSet<String> = HashSet::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Obj(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected());
            }
            let key_at = self.pos;
            let key = self.string()?;
            if !seen.insert(key.clone()) {
                self.pos = key_at;
                return Err(format!("Duplicate field '{key}'"));
            }
            self.skip_ws();
            self.expect(b':')?;
            self.skip_ws();
            let value = self.value(depth)?;
            members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Obj(members));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("Nesting is too deep"));
        }
        self.pos += 1; // '['
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Arr(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Arr(items));
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.unexpected()),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.unexpected());
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.unexpected());
            }
            self.digits();
        }
        // The slice is ASCII digits and signs only, so it is valid UTF-8.
        let text = String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned();
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Json::Num(v, text)),
            _ => {
                self.pos = start;
                Err(self.error("Numeric value out of range"))
            }
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // '"'
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("Unexpected end of input in a string"));
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\\' => {
                    self.pos += 1;
                    let escaped = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.pos += 1;
                            self.unicode_escape()?
                        }
                        _ => return Err(self.error("Unrecognized character escape")),
                    };
                    // Every escape leaves `pos` on its last byte.
                    self.pos += 1;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(escaped.encode_utf8(&mut buf).as_bytes());
                }
                0x00..=0x1f => {
                    return Err(self.error("Illegal unquoted control character in a string"))
                }
                _ => {
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
        // Input was a &str and escapes were encoded as UTF-8, so this cannot fail.
        String::from_utf8(out).map_err(|_| self.error("Invalid UTF-8 in a string"))
    }

    /// Reads the four hex digits after `\u` (and a following low surrogate when needed);
    /// leaves `pos` on the last byte read, like the single-letter escapes.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        if (0xD800..0xDC00).contains(&high) {
            if self.bytes.get(self.pos + 1) == Some(&b'\\')
                && self.bytes.get(self.pos + 2) == Some(&b'u')
            {
                self.pos += 3;
                let low = self.hex4()?;
                if (0xDC00..0xE000).contains(&low) {
                    let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    return char::from_u32(code).ok_or_else(|| self.error("Invalid surrogate"));
                }
            }
            return Err(self.error("Unpaired surrogate in a string"));
        }
        char::from_u32(high).ok_or_else(|| self.error("Unpaired surrogate in a string"))
    }

    /// Reads four hex digits starting at `pos`; leaves `pos` on the last one.
    fn hex4(&mut self) -> Result<u32, String> {
        let mut code = 0u32;
        for i in 0..4 {
            let digit = match self.bytes.get(self.pos + i) {
                Some(b) => (*b as char).to_digit(16),
                None => None,
            };
            match digit {
                Some(d) => code = code * 16 + d,
                None => {
                    self.pos += i;
                    return Err(self.error("Invalid hex digit in a unicode escape"));
                }
            }
        }
        self.pos += 3;
        Ok(code)
    }
}
