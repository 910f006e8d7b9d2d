//! Reading an SNS action's input (the JSON protocol's shape) with SNS's errors.

use super::errors::{invalid, invalid_because};
use crate::wire::ApiError;
use serde_json::{Map, Value};

pub struct Params<'a>(pub &'a Value);

impl<'a> Params<'a> {
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    /// A required string parameter.
    pub fn str(&self, name: &str) -> Result<&'a str, ApiError> {
        match self.get(name) {
            Some(Value::String(s)) => Ok(s),
            None => Err(invalid_because(name, "no value for required parameter")),
            _ => Err(invalid(name)),
        }
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<&'a str>, ApiError> {
        match self.get(name) {
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(name)),
            None => Ok(None),
        }
    }

    pub fn opt_object(&self, name: &str) -> Result<Option<&'a Map<String, Value>>, ApiError> {
        match self.get(name) {
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(invalid(name)),
            None => Ok(None),
        }
    }

    /// A map of string to string (attributes); absent = empty.
    pub fn str_map(&self, name: &str) -> Result<Vec<(&'a str, &'a str)>, ApiError> {
        match self.opt_object(name)? {
            None => Ok(Vec::new()),
            Some(m) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.as_str(), s.as_str())),
                    _ => Err(invalid(name)),
                })
                .collect(),
        }
    }

    /// A list of strings; absent = empty.
    pub fn str_list(&self, name: &str) -> Result<Vec<&'a str>, ApiError> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().ok_or_else(|| invalid(name)))
                .collect(),
            Some(_) => Err(invalid(name)),
        }
    }

    /// SNS's tag list, `[{Key, Value}]`; absent = empty.
    pub fn tags(&self, name: &str) -> Result<Vec<(&'a str, &'a str)>, ApiError> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|t| {
                    let key = t.get("Key").and_then(Value::as_str);
                    let value = t.get("Value").and_then(Value::as_str).unwrap_or("");
                    key.map(|k| (k, value)).ok_or_else(|| invalid(name))
                })
                .collect(),
            Some(_) => Err(invalid(name)),
        }
    }
}
