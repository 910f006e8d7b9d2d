//! `{"numeric": ["=", 5]}`, `[">", 0]`, `[">=", 0, "<", 10]` and so on: matches number values.

use super::json::Json;

/// AWS accepts numeric match values within ±10^9 with five digits after the decimal point.
const LIMIT: f64 = 1_000_000_000.0;
const MAX_DECIMALS: i64 = 5;

#[derive(Debug, Clone, PartialEq)]
pub struct NumericRange {
    /// (bound, inclusive)
    lower: Option<(f64, bool)>,
    upper: Option<(f64, bool)>,
}

impl NumericRange {
    pub fn matches(&self, value: f64) -> bool {
        let above = match self.lower {
            Some((bound, true)) => value >= bound,
            Some((bound, false)) => value > bound,
            None => true,
        };
        let below = match self.upper {
            Some((bound, true)) => value <= bound,
            Some((bound, false)) => value < bound,
            None => true,
        };
        above && below
    }

    /// Compiles the array after `"numeric"`; the error is the sentence without the AWS prefix.
    pub fn compile(terms: &[Json]) -> Result<NumericRange, String> {
        let Some(first) = terms.first() else {
            return Err("Invalid member in numeric match: ]".to_string());
        };
        let op = match first {
            Json::Str(op) => op.as_str(),
            other => {
                return Err(format!(
                    "Invalid member in numeric match: {}",
                    render(other)
                ))
            }
        };
        if !matches!(op, "<" | "<=" | "=" | ">" | ">=") {
            return Err(format!("Unrecognized numeric range operator: {op}"));
        }
        let value = operand(op, terms.get(1))?;
        let mut range = NumericRange {
            lower: None,
            upper: None,
        };
        match op {
            "=" => {
                range.lower = Some((value, true));
                range.upper = Some((value, true));
            }
            "<" | "<=" => range.upper = Some((value, op == "<=")),
            _ => range.lower = Some((value, op == ">=")),
        }
        if terms.len() <= 2 {
            return Ok(range);
        }
        if !matches!(op, ">" | ">=") {
            return Err("Too many elements in numeric expression".to_string());
        }
        let second = match &terms[2] {
            Json::Str(op) => op.as_str(),
            other => return Err(format!("Bad value in numeric range: {}", render(other))),
        };
        if !matches!(second, "<" | "<=") {
            return Err(format!("Bad numeric range operator: {second}"));
        }
        let top = operand(second, terms.get(3))?;
        if terms.len() > 4 {
            return Err("Too many terms in numeric range expression".to_string());
        }
        if value >= top {
            return Err("Bottom must be less than top".to_string());
        }
        range.upper = Some((top, second == "<="));
        Ok(range)
    }
}

fn operand(op: &str, term: Option<&Json>) -> Result<f64, String> {
    let name = if op == "=" { "equals" } else { op };
    let Some(Json::Num(value, text)) = term else {
        return Err(format!("Value of {name} must be numeric"));
    };
    if value.abs() > LIMIT || decimals(text) > MAX_DECIMALS {
        return Err(format!(
            "Numeric value {text} is out of range: values must be between -1000000000 and \
             1000000000 with at most 5 decimal places"
        ));
    }
    Ok(*value)
}

/// Digits after the decimal point that `text` (a JSON number) needs, exponent included:
/// `1.50` needs 1, `15e-7` needs 7, `1.5e3` needs 0.
fn decimals(text: &str) -> i64 {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        // An exponent past i64 is as far as it goes: a negative one needs every decimal.
        Some(at) => {
            let e = &text[at + 1..];
            let beyond = if e.starts_with('-') {
                i64::MIN
            } else {
                i64::MAX
            };
            (&text[..at], e.parse::<i64>().unwrap_or(beyond))
        }
        None => (text, 0),
    };
    let fraction = match mantissa.find('.') {
        Some(at) => mantissa[at + 1..].trim_end_matches('0'),
        None => "",
    };
    // Saturating: an exponent near i64::MIN (`1e-9223372036854775808`) overflowed here.
    let mut scale = (fraction.len() as i64).saturating_sub(exponent);
    if fraction.is_empty() {
        // Trailing zeros of the integer part cancel a negative exponent: 1500e-3 needs 1.
        let integer = mantissa.trim_start_matches('-');
        let zeros = (integer.len() - integer.trim_end_matches('0').len()) as i64;
        if integer.trim_end_matches('0').is_empty() {
            return 0; // zero itself
        }
        scale = scale.saturating_sub(zeros);
    }
    scale.max(0)
}

/// A policy value as AWS echoes it in a numeric-match error.
fn render(value: &Json) -> String {
    match value {
        Json::Null => "null".to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Num(_, text) => text.clone(),
        Json::Str(s) => s.clone(),
        Json::Arr(_) => "[".to_string(),
        Json::Obj(_) => "{".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::decimals;

    #[test]
    fn decimals_count_what_the_text_needs() {
        for (text, want) in [
            ("5", 0),
            ("1.50", 1),
            ("0.00001", 5),
            ("0.000001", 6),
            ("15e-7", 7),
            ("1e-5", 5),
            ("1.5e3", 0),
            ("1500e-3", 1),
            ("1000e-3", 0),
            ("1.23456e-1", 6),
            ("0", 0),
            ("-2.125", 3),
        ] {
            assert_eq!(decimals(text), want, "{text}");
        }
    }

    /// Found by reading for the fuzz target: these panicked (overflow) or were accepted.
    #[test]
    fn extreme_exponents_need_every_decimal_and_never_panic() {
        for text in [
            "1e-9223372036854775808",
            "0.5e-9223372036854775807",
            "1e-99999999999999999999999",
        ] {
            assert!(decimals(text) > 5, "{text}");
        }
        assert_eq!(decimals("1e9223372036854775807"), 0);
        assert_eq!(decimals("1e99999999999999999999999"), 0);
    }
}
