//! Every request botocore signed in tools/sigv4_vectors.py, and the verdict it must get.

use serde_json::Value;

use super::*;
use crate::config::Credential;
use crate::http::Request;

fn load() -> Value {
    serde_json::from_str(include_str!("../../tests/data/sigv4/vectors.json"))
        .expect("vectors.json parses")
}

fn creds(v: &Value) -> Vec<Credential> {
    v["credentials"]
        .as_array()
        .expect("credentials")
        .iter()
        .map(|c| Credential {
            access_key_id: c["access_key_id"].as_str().expect("akid").into(),
            secret_access_key: c["secret_access_key"].as_str().expect("secret").into(),
            queen_token: "tok".into(),
        })
        .collect()
}

fn request(v: &Value) -> Request {
    Request {
        method: v["method"].as_str().expect("method").into(),
        path_and_query: v["path_and_query"].as_str().expect("path").into(),
        headers: v["headers"]
            .as_array()
            .expect("headers")
            .iter()
            .map(|h| {
                (
                    h[0].as_str().expect("name").into(),
                    h[1].as_str().expect("value").into(),
                )
            })
            .collect(),
        body: v["body"].as_str().expect("body").as_bytes().to_vec(),
        scheme: "http".into(),
    }
}

#[test]
fn every_botocore_vector_gets_its_verdict() {
    let all = load();
    let creds = creds(&all);
    let vectors = all["vectors"].as_array().expect("vectors");
    assert!(vectors.len() >= 30, "{}", vectors.len());
    let (mut oks, mut errs) = (0, 0);
    for v in vectors {
        let name = v["name"].as_str().expect("name");
        let req = request(v);
        let now = v["now"].as_i64().expect("now");
        let expect = &v["expect"];
        let got = verify(&req, &creds, now);
        if expect["ok"].as_bool() == Some(true) {
            let ok = got
                .unwrap_or_else(|e| panic!("{name}: expected success, got {e:?}: {}", e.message()));
            let service = match ok.service {
                Service::Sqs => "sqs",
                Service::Sns => "sns",
            };
            assert_eq!(Some(service), expect["service"].as_str(), "{name}");
            assert_eq!(
                Some(ok.region.as_str()),
                expect["region"].as_str(),
                "{name}"
            );
            assert_eq!(
                ok.credential.access_key_id, creds[0].access_key_id,
                "{name}"
            );
            assert_eq!(peek_scope_service(&req), Some(ok.service), "{name}");
            oks += 1;
        } else {
            let e = match got {
                Ok(_) => panic!("{name}: expected {}, but it verified", expect["code"]),
                Err(e) => e,
            };
            assert_eq!(
                Some(e.code_name()),
                expect["code"].as_str(),
                "{name}: {e:?}"
            );
            assert_eq!(
                Some(u64::from(e.status())),
                expect["status"].as_u64(),
                "{name}"
            );
            if let Some(part) = expect["message_contains"].as_str() {
                assert!(
                    e.message().contains(part),
                    "{name}: {:?} lacks {part:?}",
                    e.message()
                );
            }
            errs += 1;
        }
    }
    assert!(oks >= 10 && errs >= 10, "{oks} valid, {errs} refused");
}

#[test]
fn a_valid_vector_fails_one_second_past_each_window_edge() {
    let all = load();
    let creds = creds(&all);
    let find = |n: &str| {
        all["vectors"]
            .as_array()
            .expect("vectors")
            .iter()
            .find(|v| v["name"] == n)
            .unwrap_or_else(|| panic!("vector {n}"))
            .clone()
    };
    let header = find("header_sqs_json");
    let req = request(&header);
    let signed_at = header["now"].as_i64().expect("now");
    assert!(verify(&req, &creds, signed_at + MAX_SKEW_SECS).is_ok());
    assert!(verify(&req, &creds, signed_at - MAX_SKEW_SECS).is_ok());
    let late = verify(&req, &creds, signed_at + MAX_SKEW_SECS + 1).unwrap_err();
    assert!(
        matches!(late, AuthError::SignatureExpired { .. }),
        "{late:?}"
    );
    assert_eq!(
        late.message(),
        "Signature expired: 20261130T120000Z is now earlier than 20261130T120001Z (20261130T121501Z - 15 min.)"
    );
    let early = verify(&req, &creds, signed_at - MAX_SKEW_SECS - 1).unwrap_err();
    assert!(
        matches!(early, AuthError::SignatureNotYetCurrent { .. }),
        "{early:?}"
    );

    let presigned = find("presigned_get");
    let req = request(&presigned);
    assert!(verify(&req, &creds, signed_at + 300).is_ok());
    assert!(matches!(
        verify(&req, &creds, signed_at + 301),
        Err(AuthError::PresignedUrlExpired { .. })
    ));
    assert!(matches!(
        verify(&req, &creds, signed_at - MAX_SKEW_SECS - 1),
        Err(AuthError::SignatureNotYetCurrent { .. })
    ));
}

#[test]
fn both_mechanisms_at_once_are_refused() {
    let all = load();
    let creds = creds(&all);
    let v = all["vectors"]
        .as_array()
        .expect("vectors")
        .iter()
        .find(|v| v["name"] == "presigned_get")
        .expect("presigned")
        .clone();
    let mut req = request(&v);
    req.headers.push((
        "authorization".into(),
        "AWS4-HMAC-SHA256 Credential=x".into(),
    ));
    let e = verify(&req, &creds, v["now"].as_i64().expect("now")).unwrap_err();
    assert_eq!(e.code_name(), "IncompleteSignature");
}

#[test]
fn no_credentials_means_unknown_key() {
    let all = load();
    let v = &all["vectors"][2];
    let e = verify(&request(v), &[], v["now"].as_i64().expect("now")).unwrap_err();
    assert_eq!(e, AuthError::InvalidClientTokenId);
}
