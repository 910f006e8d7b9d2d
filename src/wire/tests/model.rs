//! The generated shape tables: they match botocore's models and cover every action.

use std::process::Command;

use super::oracle::repo_root;
use crate::wire::shape::Model;
use crate::wire::{Action, Service};

#[test]
fn oracle_generated_tables_match_a_fresh_generation() {
    let dir = std::env::temp_dir().join(format!("queen-sqs-wire-gen-{}", std::process::id()));
    let status = Command::new("python3")
        .arg(repo_root().join("tools/gen_wire_model.py"))
        .arg("--out")
        .arg(&dir)
        .status()
        .expect("python3 is required to check the generated model");
    assert!(
        status.success(),
        "gen_wire_model.py failed (is botocore installed?)"
    );
    for file in ["model_sqs.rs", "model_sns.rs"] {
        let fresh = std::fs::read_to_string(dir.join(file)).expect("generated file");
        let committed = std::fs::read_to_string(repo_root().join("src/wire").join(file))
            .expect("committed file");
        assert!(
            fresh == committed,
            "src/wire/{file} is stale: run python3 tools/gen_wire_model.py"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_recognisable_pair_has_an_operation_with_an_input() {
    for service in [Service::Sqs, Service::Sns] {
        let model = Model::of(service);
        for a in Action::ALL.iter().filter(|a| a.is_published_by(service)) {
            let op = model
                .op(*a)
                .unwrap_or_else(|| panic!("{service:?} {} has no op", a.name()));
            assert!(op.input.is_some(), "{} has no input shape", a.name());
            assert_eq!(op.output.is_some(), !op.result_wrapper.is_empty());
        }
    }
}

#[test]
fn shape_indices_are_in_range() {
    use crate::wire::shape::Shape;
    for service in [Service::Sqs, Service::Sns] {
        let model = Model::of(service);
        let n = model.shapes.len() as u16;
        for s in model.shapes {
            match s {
                Shape::Structure(ms) => assert!(ms.iter().all(|m| m.shape < n)),
                Shape::List { member, .. } => assert!(*member < n),
                Shape::Map { key, value, .. } => assert!(*key < n && *value < n),
                _ => {}
            }
        }
    }
}
