//! Which characters an SQS message body (and a String attribute value) may hold.

/// True when every character is one SQS accepts in a message body:
/// `#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF`.
pub fn valid_sqs_body(s: &str) -> bool {
    s.chars().all(allowed_char)
}

/// AWS's tag character rule, `^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`, for keys and values alike.
pub fn valid_tag_text(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_alphanumeric()
            || (c.is_whitespace() && !c.is_control())
            || matches!(c, '_' | '.' | ':' | '/' | '=' | '+' | '-' | '@')
    })
}

pub(crate) fn allowed_char(c: char) -> bool {
    // A Rust `char` is never a surrogate, so #xD800-#xDFFF cannot occur here.
    matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_text_is_awss_character_set() {
        assert!(valid_tag_text("team: ops/eu-1 =+@_.é 数"));
        assert!(valid_tag_text(""));
        for bad in [
            "a\u{0}b",
            "tab\there",
            "new\nline",
            "semi;colon",
            "<x>",
            "\u{FFFE}",
        ] {
            assert!(!valid_tag_text(bad), "{bad:?}");
        }
    }

    #[test]
    fn accepts_the_allowed_ranges() {
        for s in [
            "",
            "plain",
            "tab\tlf\ncr\r",
            "caf\u{e9}",
            "\u{D7FF}\u{E000}\u{FFFD}",
            "\u{10000}\u{10FFFF}",
            "🚀",
        ] {
            assert!(valid_sqs_body(s), "{s:?}");
        }
    }

    #[test]
    fn rejects_control_characters_and_nonchars() {
        for s in [
            "\u{0}",
            "a\u{1}b",
            "\u{8}",
            "\u{B}",
            "\u{C}",
            "\u{1F}",
            "x\u{FFFE}",
            "\u{FFFF}",
        ] {
            assert!(!valid_sqs_body(s), "{s:?}");
        }
    }
}
