//! The host's on/off switches: `QUEEN_SQS_METRICS` (default on) and `QUEEN_SQS_CONSOLE`
//! (default off). Host-only variables; the component ignores them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switches {
    /// `GET /metrics` and the counting behind it.
    pub metrics: bool,
    /// The queue console under `/console/`.
    pub console: bool,
}

impl Default for Switches {
    fn default() -> Switches {
        Switches {
            metrics: true,
            console: false,
        }
    }
}

impl Switches {
    /// Reads the switches; an error names the variable to fix.
    pub fn from_env(env: &[(String, String)]) -> Result<Switches, String> {
        let mut s = Switches::default();
        s.metrics = switch(env, "QUEEN_SQS_METRICS", s.metrics)?;
        s.console = switch(env, "QUEEN_SQS_CONSOLE", s.console)?;
        Ok(s)
    }
}

fn switch(env: &[(String, String)], name: &str, default: bool) -> Result<bool, String> {
    let Some(v) = env
        .iter()
        .rev()
        .find(|(k, v)| k == name && !v.trim().is_empty())
        .map(|(_, v)| v.trim().to_ascii_lowercase())
    else {
        return Ok(default);
    };
    match v.as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(format!("{name} must be on or off, got {v:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_and_values() {
        assert_eq!(Switches::from_env(&[]), Ok(Switches::default()));
        let s = Switches::from_env(&env(&[
            ("QUEEN_SQS_METRICS", "OFF"),
            ("QUEEN_SQS_CONSOLE", "on"),
        ]))
        .unwrap();
        assert!(!s.metrics && s.console);
        let e = Switches::from_env(&env(&[("QUEEN_SQS_CONSOLE", "maybe")])).unwrap_err();
        assert!(e.contains("QUEEN_SQS_CONSOLE"), "{e}");
    }
}
