//! Builds the queen-sqs component for `wasm32-wasip2` and hands its path to the host,
//! so a user never builds the component by hand. The nested cargo uses a target
//! directory of its own: sharing the outer one (same dir, same profile) deadlocks.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=QUEEN_SQS_COMPONENT");
    if std::env::var_os("CARGO_FEATURE_SERVE").is_none() {
        return;
    }
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let dest = out_dir.join("queen_sqs.wasm");

    // A prebuilt component may be supplied instead (packaging, or a broken toolchain).
    if let Some(prebuilt) = std::env::var_os("QUEEN_SQS_COMPONENT") {
        std::fs::copy(&prebuilt, &dest).expect("copy QUEEN_SQS_COMPONENT");
        return;
    }

    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let root = manifest_dir.parent().expect("workspace root").to_path_buf();
    for watched in ["src", "wit", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    // <target>/<profile>/build/<pkg>/out -> <target>; the component builds in <target>/component.
    let target_root = out_dir
        .ancestors()
        .nth(4)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.join("target"));
    // One component target per checkout: several worktrees may share a target directory.
    let checkout_tag = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        root.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let component_target = target_root.join("component").join(checkout_tag);
    let release = std::env::var("PROFILE").as_deref() == Ok("release");

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args([
            "build",
            "--lib",
            "-p",
            "queen-sqs",
            "--target",
            "wasm32-wasip2",
            "--target-dir",
        ])
        .arg(&component_target);
    if release {
        cmd.arg("--release");
    }
    // Flags meant for the host build must not leak into the wasm build.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("run cargo for the component");
    assert!(
        status.success(),
        "building the queen-sqs component for wasm32-wasip2 failed"
    );

    let profile_dir = if release { "release" } else { "debug" };
    let built = component_target
        .join("wasm32-wasip2")
        .join(profile_dir)
        .join("queen_sqs.wasm");
    std::fs::copy(&built, &dest).unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
}
