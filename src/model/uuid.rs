//! Ids in the UUID text form AWS answers with (request ids, subscription ids, move task
//! ids): 16 bytes as `8-4-4-4-12` hex digits.

/// `bytes` as a version-4 UUID: the version and variant bits are set, so the text is a
/// well-formed UUID whatever the bytes were (random, or a digest when the id must be
/// derived from something).
pub fn v4(bytes: [u8; 16]) -> String {
    let mut b = bytes;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    hyphenated(&b)
}

/// The first 16 of `bytes` (zero-padded) as a version-4 UUID.
pub fn v4_from(bytes: &[u8]) -> String {
    let mut b = [0u8; 16];
    for (dst, src) in b.iter_mut().zip(bytes) {
        *dst = *src;
    }
    v4(b)
}

/// 16 bytes in the `8-4-4-4-12` grouping, lower-case, as they are.
pub fn hyphenated(b: &[u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_bytes_make_a_version_4_uuid() {
        for b in [[0u8; 16], [0xff; 16]] {
            let u = v4(b);
            assert_eq!(u.len(), 36);
            let parts: Vec<&str> = u.split('-').collect();
            assert_eq!(
                parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
                [8, 4, 4, 4, 12]
            );
            assert!(parts[2].starts_with('4'), "{u}");
            assert!("89ab".contains(&parts[3][..1]), "{u}");
        }
        assert_eq!(v4_from(&[0xab; 3])[..6], *"ababab");
    }

    #[test]
    fn hyphenated_keeps_the_bytes() {
        let b: [u8; 16] = core::array::from_fn(|i| i as u8);
        assert_eq!(hyphenated(&b), "00010203-0405-0607-0809-0a0b0c0d0e0f");
    }
}
