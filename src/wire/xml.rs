//! Query out: an action's output value (in the JSON protocol's shape) written as AWS's XML,
//! with the query-era element names the model tables carry.

use serde_json::Value;

use super::shape::{Model, Shape};

pub const SQS_NS: &str = "http://queue.amazonaws.com/doc/2012-11-05/";
pub const SNS_NS: &str = "http://sns.amazonaws.com/doc/2010-03-31/";

/// Appends `text` escaped for element content and attribute values. `\r` is written as a
/// character reference because an XML parser normalises a literal one away.
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {
                out.push_str(&format!("&#x{:X};", c as u32))
            }
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
