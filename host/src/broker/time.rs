//! Clock, ISO-8601 timestamps with microseconds, and UUID minting (v7 for ids the broker
//! orders by time, v4 for row identities). Written here to keep the broker's dependencies small.

use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch, UTC.
pub fn now_us() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(_) => 0,
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds → microseconds, saturating (option values are client-controlled).
pub fn secs_us(s: i64) -> i64 {
    s.saturating_mul(1_000_000)
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn iso_us(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000);
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    )
}

/// `YYYY-MM-DDTHH:MM:SS.fffZ` (the queue list's precision).
pub fn iso_ms(us: i64) -> String {
    let s = iso_us(us);
    // "....SS.ffffffZ" → keep three fraction digits.
    format!("{}Z", &s[..s.len() - 4])
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (also a space for `T`) to microseconds.
pub fn parse_iso(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = std::str::from_utf8(b.get(r)?).ok()?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    if b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_us = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = &b[start..i];
        if digits.is_empty() {
            return None;
        }
        for k in 0..6 {
            frac_us = frac_us * 10 + digits.get(k).map(|c| (c - b'0') as i64).unwrap_or(0);
        }
    }
    let offset_s = match &b[i..] {
        [] | [b'Z'] | [b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let t = std::str::from_utf8(rest).ok()?.replace(':', "");
            if t.len() != 4 || !t.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let hh: i64 = t[..2].parse().ok()?;
            let mm: i64 = t[2..].parse().ok()?;
            let v = hh * 3600 + mm * 60;
            if *sign == b'+' {
                v
            } else {
                -v
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86_400 + h * 3600 + mi * 60 + se - offset_s;
    Some(secs * 1_000_000 + frac_us)
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if getrandom::fill(&mut b).is_err() {
        // The OS source failing is not something a request can cause; fall back to the
        // clock mixed through a simple generator so ids stay unique enough to continue.
        let mut x = now_us() as u64 ^ 0x9E37_79B9_7F4A_7C15;
        for byte in b.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *byte = x as u8;
        }
    }
    b
}

fn hyphenate(b: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{byte:02x}"));
    }
    s
}

/// UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, a 12-bit counter within the
/// millisecond (as the released engine mints them), random rest. Ids minted later are
/// larger, which the facade's FIFO sequence numbers rely on.
pub fn uuid_v7() -> String {
    let (ms, counter) = next_v7_stamp((now_us() / 1000) as u64);
    let mut b: [u8; 16] = random_bytes();
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    b[6] = 0x70 | ((counter >> 8) & 0x0F) as u8;
    b[7] = counter as u8;
    b[8] = (b[8] & 0x3F) | 0x80;
    hyphenate(&b)
}

/// The (millisecond, counter) of the next id: strictly after the previous one, borrowing
/// the next millisecond when 4,096 ids were minted in one (or the clock stepped back).
fn next_v7_stamp(now_ms: u64) -> (u64, u16) {
    static LAST: std::sync::Mutex<(u64, u16)> = std::sync::Mutex::new((0, 0));
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    let next = if now_ms > last.0 {
        (now_ms, 0)
    } else if last.1 < 0x0FFF {
        (last.0, last.1 + 1)
    } else {
        (last.0 + 1, 0)
    };
    *last = next;
    next
}

/// UUIDv4: random row identities (queue and partition ids).
pub fn uuid_v4() -> String {
    let mut b: [u8; 16] = random_bytes();
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    hyphenate(&b)
}

/// True for a hyphenated UUID of any version.
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        let us = 1_764_496_800_123_456; // 2025-11-30T10:00:00.123456Z
        assert_eq!(iso_us(us), "2025-11-30T10:00:00.123456Z");
        assert_eq!(iso_ms(us), "2025-11-30T10:00:00.123Z");
        assert_eq!(parse_iso("2025-11-30T10:00:00.123456Z"), Some(us));
        assert_eq!(parse_iso("2025-11-30T12:00:00.123456+02:00"), Some(us));
        assert_eq!(parse_iso("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(iso_us(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            parse_iso("2024-02-29T00:00:00.5Z"),
            Some(1_709_164_800_500_000)
        );
        assert_eq!(parse_iso("nope"), None);
    }

    #[test]
    fn uuids_have_versions() {
        let a = uuid_v7();
        assert!(is_uuid(&a));
        assert_eq!(&a[14..15], "7");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
        let b = uuid_v4();
        assert_eq!(&b[14..15], "4");
        assert_ne!(uuid_v4(), b);
    }

    #[test]
    fn v7_ids_minted_later_are_larger() {
        let ids: Vec<String> = (0..5000).map(|_| uuid_v7()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
}
