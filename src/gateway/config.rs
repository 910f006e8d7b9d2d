//! The plugin configuration: a JSON object of the variables the component reads from its
//! environment (`QUEEN_URL`, `QUEEN_SQS_CREDENTIALS`, `QUEEN_SQS_HANDLE_SECRET`, ...; see
//! `crate::config`), plus the one only a gateway needs: the cluster that leads to Queen.
//!
//! ```json
//! {"QUEEN_URL": "http://queen:6632", "QUEEN_SQS_UPSTREAM_CLUSTER": "queen",
//!  "QUEEN_SQS_CREDENTIALS": "AKID:SECRET:broker-token", "QUEEN_SQS_HANDLE_SECRET": "..."}
//! ```

use serde_json::Value;

/// The variable naming the gateway's cluster for broker calls.
pub const CLUSTER_VAR: &str = "QUEEN_SQS_UPSTREAM_CLUSTER";
/// Its default: the cluster name docs/deploy/gateway.md's example uses.
pub const DEFAULT_CLUSTER: &str = "queen";

#[derive(Debug, Default, PartialEq)]
pub struct PluginConfig {
    /// `(name, value)` pairs, as the component gets them from `std::env::vars()`.
    pub vars: Vec<(String, String)>,
    pub cluster: String,
}

impl PluginConfig {
    /// Strings as they are; numbers and booleans as their JSON text (`"QUEEN_SQS_DEFAULT_
    /// PARTITIONS": 16` is accepted); anything else is refused, naming the key.
    pub fn parse(raw: &[u8]) -> Result<PluginConfig, String> {
        let value: Value = if raw.iter().all(u8::is_ascii_whitespace) {
            Value::Object(Default::default())
        } else {
            serde_json::from_slice(raw)
                .map_err(|e| format!("the plugin configuration is not JSON: {e}"))?
        };
        let Value::Object(map) = value else {
            return Err("the plugin configuration must be a JSON object of variables".into());
        };
        let mut vars = Vec::with_capacity(map.len());
        for (key, v) in map {
            let text = match v {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    return Err(format!(
                        "plugin configuration {key:?}: a string, number or boolean is expected"
                    ))
                }
            };
            vars.push((key, text));
        }
        let cluster = vars
            .iter()
            .find(|(k, v)| k == CLUSTER_VAR && !v.trim().is_empty())
            .map_or(DEFAULT_CLUSTER.to_string(), |(_, v)| v.trim().to_string());
        Ok(PluginConfig { vars, cluster })
    }
}
