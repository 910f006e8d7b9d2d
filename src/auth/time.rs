//! `YYYYMMDDTHHMMSSZ` to and from unix seconds, without a date library.

use crate::calendar::{civil_from_days, days_from_civil};

/// Parses X-Amz-Date's basic ISO-8601 form; None unless it is exactly that and a real time.
pub fn parse_amz_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (y, mo, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (h, mi, se) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59
    {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se)
}

/// Formats unix seconds as `YYYYMMDDTHHMMSSZ` (for messages).
pub fn format_amz_date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(parse_amz_date("19700101T000000Z"), Some(0));
        assert_eq!(parse_amz_date("20261130T120000Z"), Some(1_796_040_000));
        assert_eq!(parse_amz_date("20000229T235959Z"), Some(951_868_799));
        assert_eq!(parse_amz_date("20150830T123600Z"), Some(1_440_938_160));
    }

    #[test]
    fn round_trips_across_a_range() {
        let mut t = -2_000_000_000i64;
        while t < 5_000_000_000 {
            assert_eq!(parse_amz_date(&format_amz_date(t)), Some(t), "{t}");
            t += 86_399 * 37 + 1234;
        }
    }

    #[test]
    fn rejects_anything_else() {
        for s in [
            "",
            "20261130T120000",
            "20261130 120000Z",
            "2026-11-30T12:00:00Z",
            "20261130T120000z",
            "20261330T120000Z",
            "20261100T120000Z",
            "20261131T120000Z",
            "20250229T120000Z",
            "20261130T240000Z",
            "20261130T126000Z",
            "20261130T120060Z",
            "2026113aT120000Z",
            "+0261130T120000Z",
            "20261130T120000Zx",
            "２0261130T120000Z",
        ] {
            assert_eq!(parse_amz_date(s), None, "{s}");
        }
    }
}
