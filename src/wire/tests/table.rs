//! The closed action table against botocore's published operation sets.

use std::collections::BTreeSet;

use serde_json::json;

use super::oracle;
use crate::wire::{Action, Service};

/// SNS operations the contract excludes ("What SNS publishes and this does not").
const SNS_EXCLUDED: [&str; 23] = [
    "CreatePlatformApplication",
    "CreatePlatformEndpoint",
    "DeleteEndpoint",
    "DeletePlatformApplication",
    "GetEndpointAttributes",
    "GetPlatformApplicationAttributes",
    "ListEndpointsByPlatformApplication",
    "ListPlatformApplications",
    "SetEndpointAttributes",
    "SetPlatformApplicationAttributes",
    "CheckIfPhoneNumberIsOptedOut",
    "CreateSMSSandboxPhoneNumber",
    "DeleteSMSSandboxPhoneNumber",
    "GetSMSAttributes",
    "GetSMSSandboxAccountStatus",
    "ListOriginationNumbers",
    "ListPhoneNumbersOptedOut",
    "ListSMSSandboxPhoneNumbers",
    "OptInPhoneNumber",
    "SetSMSAttributes",
    "VerifySMSSandboxPhoneNumber",
    "GetDataProtectionPolicy",
    "PutDataProtectionPolicy",
];

fn names(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_array()
        .expect("list of names")
        .iter()
        .map(|n| n.as_str().expect("name").to_string())
        .collect()
}

fn ours(service: Service) -> BTreeSet<String> {
    Action::ALL
        .iter()
        .filter(|a| a.is_published_by(service))
        .map(|a| a.name().to_string())
        .collect()
}

#[test]
fn oracle_sqs_half_is_exactly_sqs_published_operations() {
    let models = oracle::ask(&json!({"cmd": "models"}));
    let published = names(&models["sqs_ops"]);
    let ours = ours(Service::Sqs);
    assert_eq!(
        ours.difference(&published).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "answered but not SQS's"
    );
    assert_eq!(
        published.difference(&ours).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "SQS's but not answered"
    );
    assert_eq!(ours.len(), 23);
}

#[test]
fn oracle_sns_half_plus_exclusions_cover_sns_exactly() {
    let models = oracle::ask(&json!({"cmd": "models"}));
    let published = names(&models["sns_ops"]);
    let ours = ours(Service::Sns);
    assert!(
        ours.is_subset(&published),
        "answered but not SNS's: {:?}",
        ours.difference(&published)
    );
    let excluded: BTreeSet<String> = SNS_EXCLUDED.iter().map(|s| s.to_string()).collect();
    assert!(ours.is_disjoint(&excluded));
    let covered: BTreeSet<String> = ours.union(&excluded).cloned().collect();
    assert_eq!(covered, published);
    // 17 of SNS's own plus the two permission actions it shares with SQS.
    assert_eq!(ours.len(), 19);
}

#[test]
fn table_has_forty_distinct_names_split_23_17() {
    let all: BTreeSet<&str> = Action::ALL.iter().map(|a| a.name()).collect();
    assert_eq!(all.len(), 40);
    let sqs = Action::ALL
        .iter()
        .filter(|a| a.service() == Service::Sqs)
        .count();
    let sns = Action::ALL
        .iter()
        .filter(|a| a.service() == Service::Sns)
        .count();
    assert_eq!((sqs, sns), (23, 17));
}

#[test]
fn from_name_is_closed_and_case_sensitive() {
    for a in Action::ALL {
        assert_eq!(Action::from_name(a.service(), a.name()), Some(a));
    }
    assert_eq!(
        Action::from_name(Service::Sns, "AddPermission"),
        Some(Action::AddPermission)
    );
    assert_eq!(
        Action::from_name(Service::Sns, "RemovePermission"),
        Some(Action::RemovePermission)
    );
    assert_eq!(Action::AddPermission.service(), Service::Sqs);
    assert_eq!(Action::from_name(Service::Sqs, "sendmessage"), None);
    assert_eq!(Action::from_name(Service::Sqs, "SENDMESSAGE"), None);
    assert_eq!(Action::from_name(Service::Sqs, "Publish"), None);
    assert_eq!(Action::from_name(Service::Sns, "SendMessage"), None);
    assert_eq!(
        Action::from_name(Service::Sns, "CreatePlatformEndpoint"),
        None
    );
    assert_eq!(Action::from_name(Service::Sqs, ""), None);
}
