//! Query in: a flat parameter map decoded, by the action's input shape, into exactly the
//! value the AWS JSON 1.0 protocol would have carried.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

use super::errors::{ApiError, ErrorCode};
use super::shape::{Model, Shape};
use super::Service;

/// No shape we answer nests deeper than 8 segments
/// (`SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringListValue.StringListValue.1`);
/// longer names are ignored so a hostile key cannot build an arbitrarily deep tree.
const MAX_SEGMENTS: usize = 12;

/// The parameters, split on `.` into a tree.
#[derive(Default)]
struct Node<'a> {
    value: Option<&'a str>,
    children: BTreeMap<&'a str, Node<'a>>,
}

impl<'a> Node<'a> {
    fn build(params: &'a BTreeMap<String, String>) -> Node<'a> {
        let mut root = Node::default();
        for (name, value) in params {
            if name.split('.').count() > MAX_SEGMENTS {
                continue;
            }
            let mut node = &mut root;
            for seg in name.split('.') {
                node = node.children.entry(seg).or_default();
            }
            node.value = Some(value);
        }
        root
    }

    /// Children named by a positive integer, in numeric order.
    fn indexed(&self) -> Vec<(u64, &Node<'a>)> {
        let mut items: Vec<(u64, &Node<'a>)> = self
            .children
            .iter()
            .filter_map(|(k, n)| k.parse::<u64>().ok().filter(|i| *i > 0).map(|i| (i, n)))
            .collect();
        items.sort_by_key(|(i, _)| *i);
        items
    }
}

pub struct Decoder {
    model: Model,
    service: Service,
}

impl Decoder {
    pub fn new(service: Service) -> Decoder {
        Decoder {
            model: Model::of(service),
            service,
        }
    }

    /// Decodes the parameters against the structure `input` (an index into the model).
    pub fn decode(&self, input: u16, params: &BTreeMap<String, String>) -> Result<Value, ApiError> {
        let root = Node::build(params);
        Ok(self
            .value(input, &root, "")?
            .unwrap_or_else(|| Value::Object(Map::new())))
    }

    fn value(&self, id: u16, node: &Node, path: &str) -> Result<Option<Value>, ApiError> {
        match self.model.shape(id) {
            Shape::Structure(members) => {
                let mut obj = Map::new();
                for m in members.iter() {
                    if let Some(child) = node.children.get(m.wire) {
                        let p = join(path, m.wire);
                        if let Some(v) = self.member(m.shape, child, &p)? {
                            obj.insert(m.name.to_string(), v);
                        }
                    }
                }
                Ok(Some(Value::Object(obj)))
            }
            Shape::String | Shape::Blob | Shape::Timestamp => {
                Ok(node.value.map(|v| Value::String(v.to_string())))
            }
            Shape::Integer | Shape::Long => match node.value {
                None => Ok(None),
                Some(v) => match v.parse::<i64>() {
                    Ok(n) => Ok(Some(Value::Number(n.into()))),
                    Err(_) => Err(self.invalid(path, "must be an integer")),
                },
            },
            Shape::Double => match node.value {
                None => Ok(None),
                Some(v) => match v.parse::<f64>().ok().and_then(Number::from_f64) {
                    Some(n) => Ok(Some(Value::Number(n))),
                    None => Err(self.invalid(path, "must be a number")),
                },
            },
            Shape::Boolean => match node.value {
                None => Ok(None),
                Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(Value::Bool(true))),
                Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(Value::Bool(false))),
                Some(_) => Err(self.invalid(path, "must be a boolean")),
            },
            // Lists and maps are reached through `member`, which knows their layout.
            Shape::List { .. } | Shape::Map { .. } => self.member(id, node, path),
        }
    }

    /// A member's value, where `node` is the node named by the member's wire name.
    fn member(&self, id: u16, node: &Node, path: &str) -> Result<Option<Value>, ApiError> {
        match self.model.shape(id) {
            Shape::List {
                member,
                member_name,
                flattened,
            } => {
                let (entries, p) = if *flattened {
                    (Some(node), path.to_string())
                } else {
                    (node.children.get(member_name), join(path, member_name))
                };
                let mut items = Vec::new();
                for (i, child) in entries.map(Node::indexed).unwrap_or_default() {
                    if let Some(v) = self.value(*member, child, &join(&p, &i.to_string()))? {
                        items.push(v);
                    }
                }
                // A list with no entries is sent as `Name=` (botocore) and means `[]`;
                // a name with no entries and no value carried nothing.
                if items.is_empty() && node.value.is_none() {
                    return Ok(None);
                }
                Ok(Some(Value::Array(items)))
            }
            Shape::Map {
                key,
                value,
                key_name,
                value_name,
                flattened,
            } => {
                let (entries, p) = if *flattened {
                    (Some(node), path.to_string())
                } else {
                    (node.children.get("entry"), join(path, "entry"))
                };
                let mut obj = Map::new();
                for (i, entry) in entries.map(Node::indexed).unwrap_or_default() {
                    let ep = join(&p, &i.to_string());
                    let k = entry
                        .children
                        .get(key_name)
                        .map(|n| self.value(*key, n, &join(&ep, key_name)))
                        .transpose()?
                        .flatten();
                    let v = entry
                        .children
                        .get(value_name)
                        .map(|n| self.value(*value, n, &join(&ep, value_name)))
                        .transpose()?
                        .flatten();
                    // An entry without a name or without a value carries nothing to decode.
                    if let (Some(Value::String(k)), Some(v)) = (k, v) {
                        obj.insert(k, v);
                    }
                }
                if obj.is_empty() && node.value.is_none() {
                    return Ok(None);
                }
                Ok(Some(Value::Object(obj)))
            }
            _ => self.value(id, node, path),
        }
    }

    fn invalid(&self, path: &str, reason: &str) -> ApiError {
        match self.service {
            Service::Sqs => ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!("Value for parameter {path} is invalid. Reason: {reason}."),
            ),
            Service::Sns => ApiError::new(
                ErrorCode::InvalidParameter,
                format!("Invalid parameter: {path} Reason: {reason}"),
            ),
        }
    }
}

fn join(path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}.{seg}")
    }
}
