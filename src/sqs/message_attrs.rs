//! Which attributes a `ReceiveMessage` answers: `MessageAttributeNames` selects user
//! attributes (`All`, `.*`, `*`, an exact name, or a prefix wildcard `foo.*`), and
//! `AttributeNames` / `MessageSystemAttributeNames` select system attributes (`All`
//! or names). SQS matches attribute names case-sensitively.

use crate::model::Attrs;

/// The user attributes `names` asks for; none when nothing is asked for.
pub fn select_message_attributes(attrs: &Attrs, names: &[&str]) -> Attrs {
    attrs
        .iter()
        .filter(|(name, _)| names.iter().any(|pat| matches(pat, name)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn matches(pattern: &str, name: &str) -> bool {
    if pattern == "All" || pattern == ".*" || pattern == "*" {
        return true;
    }
    match pattern.strip_suffix(".*") {
        // `foo.*` selects every name that begins `foo` (`Hel.*` answers `Hello` and
        // `Help.Me`, as recorded against SQS).
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// The system attribute selection of one receive.
pub struct SystemSelection {
    all: bool,
    names: Vec<String>,
}

impl SystemSelection {
    /// The union of the deprecated `AttributeNames` and `MessageSystemAttributeNames`.
    pub fn new<'a>(lists: impl IntoIterator<Item = &'a str>) -> SystemSelection {
        let names: Vec<String> = lists.into_iter().map(str::to_string).collect();
        SystemSelection {
            all: names.iter().any(|n| n == "All"),
            names,
        }
    }

    /// `All` selects what SQS answers; our `queen.*` extensions (a dead-lettered copy's
    /// first MessageId and source queue) only when named, so a client comparing `All`
    /// with AWS sees nothing AWS would not send.
    pub fn wants(&self, name: &str) -> bool {
        let named = self.names.iter().any(|n| n == name);
        named || (self.all && !name.starts_with("queen."))
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AttrData, AttrValue};

    fn attrs(names: &[&str]) -> Attrs {
        names
            .iter()
            .map(|n| {
                (
                    n.to_string(),
                    AttrValue {
                        data_type: "String".into(),
                        value: AttrData::String("v".into()),
                    },
                )
            })
            .collect()
    }

    fn keys(a: &Attrs) -> Vec<&str> {
        a.keys().map(String::as_str).collect()
    }

    #[test]
    fn message_attribute_selection() {
        let a = attrs(&["foo", "foo.bar", "foo.baz", "foobar", "other"]);
        assert!(select_message_attributes(&a, &[]).is_empty());
        assert_eq!(keys(&select_message_attributes(&a, &["All"])).len(), 5);
        assert_eq!(keys(&select_message_attributes(&a, &[".*"])).len(), 5);
        assert_eq!(keys(&select_message_attributes(&a, &["*"])).len(), 5);
        assert_eq!(
            keys(&select_message_attributes(&a, &["foo.*"])),
            vec!["foo", "foo.bar", "foo.baz", "foobar"]
        );
        assert_eq!(
            keys(&select_message_attributes(&a, &["foo.b.*"])),
            vec!["foo.bar", "foo.baz"]
        );
        assert_eq!(
            keys(&select_message_attributes(&a, &["other", "foo"])),
            vec!["foo", "other"]
        );
        assert!(select_message_attributes(&a, &["Other"]).is_empty());
    }

    #[test]
    fn system_selection() {
        let s = SystemSelection::new(["SentTimestamp"]);
        assert!(s.wants("SentTimestamp") && !s.wants("ApproximateReceiveCount"));
        let all = SystemSelection::new(["SentTimestamp", "All"]);
        assert!(all.wants("ApproximateReceiveCount"));
        assert!(SystemSelection::new([]).is_empty());
        // Our extensions only when named: `All` answers what AWS answers.
        assert!(!all.wants("queen.originalMessageId"));
        let named = SystemSelection::new(["All", "queen.sourceQueue"]);
        assert!(named.wants("queen.sourceQueue") && !named.wants("queen.originalMessageId"));
    }
}
