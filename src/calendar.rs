//! The proleptic Gregorian calendar in integer arithmetic (Howard Hinnant's day-count
//! algorithms): SigV4 dates, broker timestamps and notification timestamps all go
//! through here, so the core needs no date crate.

/// Days since 1970-01-01 of a date, and the date of a day count.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `2024-05-01T12:34:56.789Z`.
pub fn iso8601_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Milliseconds since the epoch of an RFC 3339 UTC timestamp (`2026-11-30T10:00:00.123456Z`,
/// or with a `+00:00` offset); fractional digits beyond milliseconds are truncated.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, rest) = s.split_once(['T', ' '])?;
    let mut d = date.splitn(3, '-');
    let (y, mo, da): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    let (clock, offset_s) =
        if let Some(c) = rest.strip_suffix('Z').or_else(|| rest.strip_suffix('z')) {
            (c, 0)
        } else if let Some(i) = rest.rfind(['+', '-']) {
            let (c, off) = rest.split_at(i);
            let sign = if off.starts_with('-') { -1 } else { 1 };
            let (h, m) = off[1..].split_once(':').unwrap_or((&off[1..], "0"));
            (
                c,
                sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60),
            )
        } else {
            (rest, 0)
        };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let mut t = hms.splitn(3, ':');
    let (h, mi, se): (i64, i64, i64) = (
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
    );
    if !frac.bytes().all(|b| b.is_ascii_digit())
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&da)
    {
        return None;
    }
    let ms: i64 = format!("{:0<3}", &frac[..frac.len().min(3)]).parse().ok()?;
    let days = days_from_civil(y, mo, da);
    Some(((days * 86_400 + h * 3600 + mi * 60 + se) - offset_s) * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip_over_four_centuries() {
        let mut ms: i64 = -2_208_988_800_000; // 1900-01-01
        while ms < 10_000_000_000_000 {
            assert_eq!(
                parse_iso_ms(&iso8601_ms(ms)),
                Some(ms),
                "{}",
                iso8601_ms(ms)
            );
            ms += 86_400_000 * 37 + 3_600_123;
        }
    }

    #[test]
    fn iso_timestamps() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_iso_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            parse_iso_ms("2026-11-30T10:00:00.123456Z"),
            Some(1_796_032_800_123)
        );
        assert_eq!(
            parse_iso_ms("2026-11-30T11:00:00.123+01:00"),
            Some(1_796_032_800_123)
        );
        assert_eq!(parse_iso_ms("2000-02-29T00:00:00Z"), Some(951_782_400_000));
        assert_eq!(parse_iso_ms("nonsense"), None);
        assert_eq!(parse_iso_ms("2020-13-01T00:00:00Z"), None);
    }
}
