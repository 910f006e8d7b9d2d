//! Parsing and validating KV operations (§6.2, §6.4): everything is checked before anything
//! is written, and every refusal carries its `reason` code.

use super::reply::Reply;
use crate::broker::store::kv::{Expiry, KvOp};
use serde_json::{Map, Value};
use std::collections::HashSet;

pub const MAX_VALUE: usize = 65_536;
pub const MAX_KEY: usize = 512;

/// A refused call: status, code, reason, detail.
#[derive(Debug)]
pub struct KvError {
    pub status: u16,
    pub code: &'static str,
    pub reason: &'static str,
    pub detail: String,
}

impl KvError {
    fn bad(reason: &'static str, detail: String) -> KvError {
        KvError {
            status: 400,
            code: "kv_bad_request",
            reason,
            detail,
        }
    }
    fn big(reason: &'static str, detail: String) -> KvError {
        KvError {
            status: 413,
            code: "payload_too_large",
            reason,
            detail,
        }
    }
    pub fn reply(&self) -> Reply {
        Reply::coded(self.status, self.code, self.reason, self.detail.clone())
    }
}

fn valid_ns(ns: &str) -> bool {
    let b = ns.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
        })
}

struct OpReader<'a> {
    i: usize,
    o: &'a Map<String, Value>,
}

impl OpReader<'_> {
    fn at(&self, msg: &str) -> String {
        format!("op at index {}: {msg}", self.i)
    }
    fn ns(&self) -> Result<String, KvError> {
        match self.o.get("ns").or_else(|| self.o.get("namespace")) {
            Some(Value::String(s)) if valid_ns(s) => Ok(s.clone()),
            _ => Err(KvError::bad(
                "kv_bad_namespace",
                self.at("ns must match ^[a-z0-9][a-z0-9._-]{0,63}$"),
            )),
        }
    }
    fn key_of(&self, v: Option<&Value>) -> Result<String, KvError> {
        match v {
            Some(Value::String(s)) if !s.is_empty() => {
                if s.len() > MAX_KEY {
                    Err(KvError::big(
                        "kv_key_too_large",
                        self.at("key is longer than 512 bytes"),
                    ))
                } else {
                    Ok(s.clone())
                }
            }
            _ => Err(KvError::bad(
                "kv_bad_key",
                self.at("key must be a non-empty string"),
            )),
        }
    }
    fn key(&self) -> Result<String, KvError> {
        self.key_of(self.o.get("key"))
    }
    fn required(&self) -> Result<bool, KvError> {
        match self.o.get("required") {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(KvError::bad(
                "kv_bad_request",
                self.at("required must be a boolean"),
            )),
        }
    }
    fn expect(&self) -> Result<Option<i64>, KvError> {
        match self.o.get("expect") {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_i64().is_some_and(|x| x >= 0) => Ok(n.as_i64()),
            Some(_) => Err(KvError::bad(
                "kv_bad_expect",
                self.at("expect must be a non-negative integer"),
            )),
        }
    }
    fn expiry(&self) -> Result<Expiry, KvError> {
        let ttl = match self.o.get("ttlSeconds") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_i64().is_some_and(|x| x > 0) => n.as_i64(),
            Some(_) => {
                return Err(KvError::bad(
                    "kv_bad_ttl",
                    self.at("ttlSeconds must be an integer greater than zero"),
                ))
            }
        };
        let forever = match self.o.get("forever") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => {
                return Err(KvError::bad(
                    "kv_bad_request",
                    self.at("forever must be a boolean"),
                ))
            }
        };
        match (ttl, forever) {
            (Some(t), false) => Ok(Expiry::Ttl(t)),
            (None, true) => Ok(Expiry::Forever),
            _ => Err(KvError::bad(
                "kv_expiry_not_specified",
                self.at("exactly one of ttlSeconds or forever:true is required"),
            )),
        }
    }
    fn num(&self, k: &str) -> Result<Option<f64>, KvError> {
        match self.o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(_) => Err(KvError::bad(
                "kv_bad_request",
                self.at(&format!("{k} must be a number")),
            )),
        }
    }
}

/// Parses and validates a batch. `wire` is the transaction rider: getPrefix refused, 64 ops, 256 keys.
pub fn parse_ops(ops: &[Value], wire: bool) -> Result<Vec<KvOp>, KvError> {
    let (max_ops, max_keys) = if wire { (64, 256) } else { (256, 1024) };
    if ops.len() > max_ops {
        return Err(KvError::bad(
            "kv_too_many_ops",
            format!("at most {max_ops} operations per call"),
        ));
    }
    let mut out = Vec::with_capacity(ops.len());
    let mut keys_total: i64 = 0;
    let mut written: HashSet<(String, String)> = HashSet::new();
    for (i, v) in ops.iter().enumerate() {
        let Some(o) = v.as_object() else {
            return Err(KvError::bad(
                "kv_bad_request",
                format!("op at index {i}: must be an object"),
            ));
        };
        let r = OpReader { i, o };
        if ["tenant", "tenantId", "_tenant"]
            .iter()
            .any(|k| o.contains_key(*k))
        {
            return Err(KvError::bad(
                "kv_tenant_not_an_input",
                r.at("the tenant is not an input"),
            ));
        }
        let name = o.get("op").and_then(Value::as_str).unwrap_or("");
        let op = match name {
            "get" => KvOp::Get {
                ns: r.ns()?,
                key: r.key()?,
            },
            "getMany" => {
                let ns = r.ns()?;
                let Some(list) = o.get("keys").and_then(Value::as_array) else {
                    return Err(KvError::bad(
                        "kv_bad_key",
                        r.at("keys must be an array of strings"),
                    ));
                };
                let keys = list
                    .iter()
                    .map(|k| r.key_of(Some(k)))
                    .collect::<Result<Vec<_>, _>>()?;
                keys_total += keys.len() as i64 - 1;
                KvOp::GetMany { ns, keys }
            }
            "getPrefix" => {
                if wire {
                    return Err(KvError::bad(
                        "kv_get_prefix_not_allowed_in_transaction",
                        r.at("getPrefix is not allowed inside a transaction"),
                    ));
                }
                let ns = r.ns()?;
                let prefix = match o.get("prefix") {
                    Some(Value::String(s)) if !s.is_empty() => s.clone(),
                    _ => {
                        return Err(KvError::bad(
                            "kv_prefix_required",
                            r.at("prefix must be a non-empty string"),
                        ))
                    }
                };
                let limit = match o.get("limit") {
                    None | Some(Value::Null) => 100,
                    Some(Value::Number(n)) => {
                        n.as_f64().map(|f| f as i64).unwrap_or(100).clamp(1, 1000)
                    }
                    Some(_) => {
                        return Err(KvError::bad(
                            "kv_bad_request",
                            r.at("limit must be a number"),
                        ))
                    }
                };
                let after = match o.get("after") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) if s.is_empty() => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => {
                        return Err(KvError::bad(
                            "kv_bad_request",
                            r.at("after must be a string"),
                        ))
                    }
                };
                let keys_only = matches!(o.get("keysOnly"), Some(Value::Bool(true)));
                keys_total += limit - 1;
                KvOp::GetPrefix {
                    ns,
                    prefix,
                    after,
                    limit,
                    keys_only,
                }
            }
            "put" | "putIfAbsent" => {
                let (ns, key) = (r.ns()?, r.key()?);
                let Some(value) = o.get("value") else {
                    return Err(KvError::bad(
                        "kv_bad_request",
                        r.at("value is required (null is a value)"),
                    ));
                };
                let text = value.to_string();
                if text.len() > MAX_VALUE {
                    return Err(KvError::big(
                        "kv_value_too_large",
                        r.at("value is larger than 65536 bytes"),
                    ));
                }
                let expiry = r.expiry()?;
                let mut expect = r.expect()?;
                if name == "putIfAbsent" {
                    if expect.is_some_and(|e| e != 0) {
                        return Err(KvError::bad(
                            "kv_bad_expect",
                            r.at("putIfAbsent takes no expect other than 0"),
                        ));
                    }
                    expect = Some(0);
                }
                KvOp::Put {
                    ns,
                    key,
                    value: text,
                    expiry,
                    expect,
                    required: r.required()?,
                    name: name.to_string(),
                }
            }
            "delete" => KvOp::Delete {
                ns: r.ns()?,
                key: r.key()?,
                expect: r.expect()?,
                required: r.required()?,
            },
            "incr" => {
                let (ns, key) = (r.ns()?, r.key()?);
                if o.contains_key("expect") {
                    return Err(KvError::bad("kv_bad_expect", r.at("incr takes no expect")));
                }
                let delta = match o.get("delta") {
                    None | Some(Value::Null) => serde_json::Number::from(1),
                    Some(Value::Number(n)) => n.clone(),
                    Some(_) => {
                        return Err(KvError::bad(
                            "kv_bad_request",
                            r.at("delta must be a number"),
                        ))
                    }
                };
                KvOp::Incr {
                    ns,
                    key,
                    delta,
                    min: r.num("min")?,
                    max: r.num("max")?,
                    expiry: r.expiry()?,
                    required: r.required()?,
                }
            }
            "check" => {
                let (ns, key) = (r.ns()?, r.key()?);
                let Some(expect) = r.expect()? else {
                    return Err(KvError::bad("kv_bad_expect", r.at("check needs expect")));
                };
                KvOp::Check {
                    ns,
                    key,
                    expect,
                    required: r.required()?,
                }
            }
            _ => {
                return Err(KvError::bad(
                    "kv_unknown_op",
                    r.at(&format!("unknown op {name:?}")),
                ))
            }
        };
        if let KvOp::Put { ns, key, .. }
        | KvOp::Delete { ns, key, .. }
        | KvOp::Incr { ns, key, .. } = &op
        {
            if !written.insert((ns.clone(), key.clone())) {
                return Err(KvError::bad(
                    "kv_duplicate_key_in_call",
                    r.at("a key may be written once per call"),
                ));
            }
        }
        keys_total += 1;
        out.push(op);
    }
    if keys_total > max_keys {
        return Err(KvError::bad(
            "kv_too_many_keys",
            format!("at most {max_keys} keys per call"),
        ));
    }
    Ok(out)
}
