//! FIFO `SequenceNumber`s, read off the message id.
//!
//! Both brokers mint message ids as UUIDv7 whose first 60 bits after the version nibble
//! are the push's Unix milliseconds and a per-millisecond counter: later pushes get
//! larger ids. The number answered is those bits — 48 of time, 12 of counter — as 20
//! decimal digits, zero-padded as AWS's are. It needs nothing the released engine lacks
//! (it answers no offsets), it is the same on `SendMessage`'s answer and on every
//! delivery, and, unlike a per-group offset, it does not repeat across groups.

/// The sequence number of a message id; `None` for an id that is not a UUIDv7.
pub fn from_message_id(id: &str) -> Option<String> {
    let hex: String = id.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    if hex.as_bytes()[12] != b'7' {
        return None;
    }
    let ms = u64::from_str_radix(&hex[..12], 16).ok()?;
    let counter = u64::from_str_radix(&hex[13..16], 16).ok()?;
    Some(format!("{:020}", (ms << 12) | counter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_counter_make_the_number() {
        // ms 0x01a230c17218, counter 0x001.
        let n = from_message_id("01a230c1-7218-7001-b499-4aec204a6ef7").unwrap();
        assert_eq!(n.len(), 20);
        assert_eq!(n, format!("{:020}", (0x01a2_30c1_7218u64 << 12) | 1));
    }

    #[test]
    fn later_ids_number_higher() {
        let ids = [
            "01a230c1-7218-7000-a292-a045465ecd36",
            "01a230c1-7218-7001-b499-4aec204a6ef7",
            "01a230c1-7219-7000-0000-000000000000",
        ];
        let ns: Vec<String> = ids.iter().map(|i| from_message_id(i).unwrap()).collect();
        assert!(ns.windows(2).all(|w| w[0] < w[1]), "{ns:?}");
    }

    #[test]
    fn other_ids_have_none() {
        assert_eq!(
            from_message_id("4f9c8a3e-2b1d-4c5e-9f00-123456789abc"),
            None
        );
        assert_eq!(from_message_id("not-a-uuid"), None);
    }
}
