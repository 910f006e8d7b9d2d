//! Query out: an action's output value (in the JSON protocol's shape) written as AWS's XML,
//! with the query-era element names the model tables carry.

use serde_json::Value;

use super::shape::{Model, Shape};

pub const SQS_NS: &str = "http://queue.amazonaws.com/doc/2012-11-05/";
pub const SNS_NS: &str = "http://sns.amazonaws.com/doc/2010-03-31/";

/// True for the characters XML 1.0 allows in a document (its `Char` production): tab, line
/// feed, carriage return, U+0020–U+D7FF, U+E000–U+FFFD and U+10000 up. (Rust `char`s are
/// never surrogates.) Not even as a character reference may any other appear.
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Appends `text` escaped for element content and attribute values. `\r` is written as a
/// character reference because an XML parser normalises a literal one away. A character
/// XML 1.0 forbids (inputs are validated so none should arrive) is written as U+FFFD, so
/// the answer is always a well-formed document a client can parse.
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            c if !is_xml_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

pub fn element(out: &mut String, name: &str, text: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    escape_into(out, text);
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

pub struct Writer {
    model: Model,
    pub out: String,
}

impl Writer {
    pub fn new(model: Model) -> Writer {
        Writer {
            model,
            out: String::new(),
        }
    }

    pub fn open(&mut self, name: &str) {
        self.out.push('<');
        self.out.push_str(name);
        self.out.push('>');
    }

    pub fn close(&mut self, name: &str) {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
    }

    /// The members of structure `id` (without an enclosing element).
    pub fn members(&mut self, id: u16, value: &Value) {
        let (Shape::Structure(members), Value::Object(obj)) = (self.model.shape(id), value) else {
            return;
        };
        for m in members.iter() {
            match obj.get(m.name) {
                None | Some(Value::Null) => {}
                Some(v) => self.member(m.shape, m.wire, v),
            }
        }
    }

    /// One member named `name`, laid out as its shape says (flattened lists and maps repeat
    /// the member's own element; wrapped ones nest `member`/`entry` inside it).
    fn member(&mut self, id: u16, name: &str, value: &Value) {
        match self.model.shape(id) {
            Shape::List {
                member,
                member_name,
                flattened,
            } => {
                let Value::Array(items) = value else { return };
                if *flattened {
                    for item in items {
                        self.named(*member, name, item);
                    }
                } else {
                    self.open(name);
                    for item in items {
                        self.named(*member, member_name, item);
                    }
                    self.close(name);
                }
            }
            Shape::Map {
                key,
                value: value_shape,
                key_name,
                value_name,
                flattened,
            } => {
                let Value::Object(entries) = value else {
                    return;
                };
                if !*flattened {
                    self.open(name);
                }
                let entry_name = if *flattened { name } else { "entry" };
                for (k, v) in entries {
                    self.open(entry_name);
                    self.named(*key, key_name, &Value::String(k.clone()));
                    self.named(*value_shape, value_name, v);
                    self.close(entry_name);
                }
                if !*flattened {
                    self.close(name);
                }
            }
            _ => self.named(id, name, value),
        }
    }

    /// `<name>value</name>` for a structure or scalar (or a list/map nested directly).
    fn named(&mut self, id: u16, name: &str, value: &Value) {
        match self.model.shape(id) {
            Shape::Structure(_) => {
                self.open(name);
                self.members(id, value);
                self.close(name);
            }
            Shape::List { .. } | Shape::Map { .. } => self.member(id, name, value),
            _ => match value {
                Value::String(s) => element(&mut self.out, name, s),
                Value::Bool(b) => element(&mut self.out, name, if *b { "true" } else { "false" }),
                Value::Number(n) => element(&mut self.out, name, &n.to_string()),
                // An action handing a non-scalar to a scalar member has nothing to say here.
                _ => {}
            },
        }
    }
}

#[cfg(test)]
mod well_formed {
    use super::*;

    /// A small deterministic generator (xorshift64*), so the property runs without a crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// Characters weighted toward the edges: controls, markup, the non-characters
        /// around U+FFFF, the surrogate gap's edges, astral planes.
        fn char(&mut self) -> char {
            let pick = self.next() % 10;
            let cp = match pick {
                0 | 1 => (self.next() % 0x20) as u32,
                2 => *[0x26u32, 0x3C, 0x3E, 0x22, 0x27, 0x5D, 0x7F, 0x85]
                    .get((self.next() % 8) as usize)
                    .unwrap(),
                3 => 0xD7F0 + (self.next() % 0x10) as u32,
                4 => 0xE000 + (self.next() % 0x10) as u32,
                5 => 0xFFF0 + (self.next() % 0x10) as u32,
                6 => 0x10000 + (self.next() % 0x100000) as u32,
                _ => (self.next() % 0x800) as u32,
            };
            char::from_u32(cp).unwrap_or('\u{FFFD}')
        }
    }

    #[test]
    fn escaped_text_is_always_well_formed_and_reads_back() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..20_000 {
            let len = (rng.next() % 40) as usize;
            let text: String = (0..len).map(|_| rng.char()).collect();
            let mut doc = String::from("<?xml version=\"1.0\"?><a>");
            escape_into(&mut doc, &text);
            doc.push_str("</a>");

            // Only XML 1.0 characters, and no character reference but the `\r` one.
            assert!(
                doc.chars().all(is_xml_char),
                "round {round}: {text:?} -> {doc:?}"
            );
            assert_eq!(
                doc.matches("&#").count(),
                doc.matches("&#xD;").count(),
                "round {round}: {doc:?}"
            );

            // A parser reads back the text, forbidden characters as U+FFFD.
            let want: String = text
                .chars()
                .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
                .collect();
            let mut reader = quick_xml::Reader::from_str(&doc);
            let mut got = String::new();
            loop {
                match reader.read_event() {
                    Ok(quick_xml::events::Event::Text(t)) => {
                        got.push_str(&t.decode().expect("text"))
                    }
                    Ok(quick_xml::events::Event::GeneralRef(r)) => {
                        let name = r.decode().expect("ref");
                        let c = match &*name {
                            "amp" => '&',
                            "lt" => '<',
                            "gt" => '>',
                            "quot" => '"',
                            "apos" => '\'',
                            "#xD" => '\r',
                            other => panic!("round {round}: unexpected reference {other}"),
                        };
                        got.push(c);
                    }
                    Ok(quick_xml::events::Event::Eof) => break,
                    Ok(_) => {}
                    Err(e) => panic!("round {round}: {doc:?} does not parse: {e}"),
                }
            }
            assert_eq!(got, want, "round {round}");
        }
    }

    #[test]
    fn forbidden_characters_are_replaced_not_referenced() {
        let mut out = String::new();
        escape_into(&mut out, "a\u{0}b\u{1}c\u{1F}\u{FFFE}\u{FFFF}d\te\nf\rg");
        assert_eq!(
            out,
            "a\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}\u{FFFD}d\te\nf&#xD;g"
        );
    }
}
