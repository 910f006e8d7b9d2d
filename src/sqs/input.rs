//! Reading an action's input (the JSON protocol's shape) with AWS-style errors.

use crate::wire::{ApiError, ErrorCode};
use serde_json::{Map, Value};

/// The input object of an action; accessors answer `MissingParameter` / `InvalidParameterValue`.
pub struct Input<'a>(pub &'a Value);

impl<'a> Input<'a> {
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    pub fn str(&self, name: &str) -> Result<&'a str, ApiError> {
        match self.get(name) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(invalid(name)),
            None => Err(missing(name)),
        }
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<&'a str>, ApiError> {
        match self.get(name) {
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(name)),
            None => Ok(None),
        }
    }

    /// An integer parameter; JSON numbers, and numeric strings some clients send.
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| invalid(name)),
            Some(Value::String(s)) => s.trim().parse::<i64>().map(Some).map_err(|_| invalid(name)),
            Some(_) => Err(invalid(name)),
        }
    }

    pub fn opt_object(&self, name: &str) -> Result<Option<&'a Map<String, Value>>, ApiError> {
        match self.get(name) {
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(invalid(name)),
            None => Ok(None),
        }
    }

    pub fn opt_array(&self, name: &str) -> Result<Option<&'a Vec<Value>>, ApiError> {
        match self.get(name) {
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(invalid(name)),
            None => Ok(None),
        }
    }

    /// A list of strings (attribute names, tag keys); absent = empty.
    pub fn str_list(&self, name: &str) -> Result<Vec<&'a str>, ApiError> {
        match self.opt_array(name)? {
            None => Ok(Vec::new()),
            Some(items) => items
                .iter()
                .map(|v| v.as_str().ok_or_else(|| invalid(name)))
                .collect(),
        }
    }

    /// A map of string to string (queue attributes, tags); absent = empty.
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
}

pub fn missing(name: &str) -> ApiError {
    ApiError::new(
        ErrorCode::MissingParameter,
        format!("The request must contain the parameter {name}."),
    )
}

pub fn invalid(name: &str) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidParameterValue,
        format!("Value for parameter {name} is invalid."),
    )
}
