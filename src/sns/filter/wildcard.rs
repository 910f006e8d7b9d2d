//! `{"wildcard": "a*b*c"}`: `*` stands for any run of characters, `\*` for a literal star
//! and `\\` for a literal backslash.

#[derive(Debug, Clone, PartialEq)]
pub struct Wildcard {
    /// The literal pieces between stars; one more piece than there are stars.
    pieces: Vec<String>,
}

impl Wildcard {
    /// Compiles a pattern; the error is the sentence without the AWS prefix.
    pub fn compile(pattern: &str) -> Result<Wildcard, String> {
        let mut pieces = vec![String::new()];
        let mut chars = pattern.char_indices().peekable();
        let mut previous_was_star = false;
        while let Some((at, c)) = chars.next() {
            match c {
                '*' => {
                    if previous_was_star {
                        return Err(format!("Consecutive wildcard characters at pos {at}"));
                    }
                    pieces.push(String::new());
                    previous_was_star = true;
                    continue;
                }
                '\\' => match chars.next() {
                    Some((_, escaped @ ('*' | '\\'))) => push(&mut pieces, escaped),
                    _ => return Err(format!("Invalid escape character at pos {at}")),
                },
                other => push(&mut pieces, other),
            }
            previous_was_star = false;
        }
        Ok(Wildcard { pieces })
    }

    pub fn matches(&self, value: &str) -> bool {
        let (first, rest) = match self.pieces.split_first() {
            Some(split) => split,
            None => return false,
        };
        let Some((last, middle)) = rest.split_last() else {
            return value == first;
        };
        if value.len() < first.len() + last.len()
            || !value.starts_with(first.as_str())
            || !value.ends_with(last.as_str())
        {
            return false;
        }
        // Between the fixed ends, taking each middle piece at its leftmost place is enough:
        // a later place never leaves more room for the pieces after it.
        let mut window = &value[first.len()..value.len() - last.len()];
        for piece in middle {
            match window.find(piece.as_str()) {
                Some(at) => window = &window[at + piece.len()..],
                None => return false,
            }
        }
        true
    }
}

fn push(pieces: &mut [String], c: char) {
    if let Some(piece) = pieces.last_mut() {
        piece.push(c);
    }
}
