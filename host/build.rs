//! Builds the queen-sqs component for `wasm32-wasip2` and hands its path to the host,
//! so a user never builds the component by hand. The nested cargo uses a target
//! directory of its own: sharing the outer one (same dir, same profile) deadlocks.
//!
//! `rust-toolchain.toml` names the target, but rustup adds it only when it installs the
//! toolchain: a toolchain that was already installed without it (and `RUSTUP_AUTO_INSTALL=0`)
//! would fail deep in the nested build with "can't find crate for `core`". So the target is
//! checked first and, when missing, added with rustup for the toolchain in use (said with a
//! `cargo:warning`); when that cannot be done the build stops with one line saying what to run.
//! `host/tests/edge_build.rs` includes this file to test that logic.

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

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let toolchain = std::env::var("RUSTUP_TOOLCHAIN").ok();
    match ensure_wasm_target(&rustc, "rustup", toolchain.as_deref()) {
        Ok(None) => {}
        Ok(Some(notice)) => println!("cargo:warning={notice}"),
        Err(line) => {
            // `cargo::error` shows the line as the build's error, without a panic's backtrace.
            println!("cargo::error={line}");
            eprintln!("error: {line}");
            std::process::exit(1);
        }
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

/// The component's target.
pub const WASM_TARGET: &str = "wasm32-wasip2";

/// Makes sure `rustc` can build for [`WASM_TARGET`]. `Ok(None)`: it already could;
/// `Ok(Some(notice))`: the target was missing and `rustup` added it (the notice says so);
/// `Err(line)`: it is missing and could not be added (one line: what to do instead).
/// `toolchain` is the rustup toolchain in use (`RUSTUP_TOOLCHAIN`, set by rustup's proxies);
/// without it the toolchain is named after rustc's sysroot directory.
pub fn ensure_wasm_target(
    rustc: &str,
    rustup: &str,
    toolchain: Option<&str>,
) -> Result<Option<String>, String> {
    let libdir = target_libdir(rustc)?;
    if target_installed(&libdir) {
        return Ok(None);
    }
    let toolchain = match toolchain.filter(|t| !t.trim().is_empty()) {
        Some(t) => t.to_string(),
        None => sysroot_toolchain(rustc)?,
    };
    let manual = format!("rustup target add {WASM_TARGET} --toolchain {toolchain}");
    let out = Command::new(rustup)
        .args(["target", "add", WASM_TARGET, "--toolchain", &toolchain])
        .env_remove("RUSTUP_TOOLCHAIN")
        .output();
    let failed = |why: String| {
        Err(format!(
            "the Rust toolchain {toolchain} lacks the {WASM_TARGET} target and adding it failed ({why}); run `{manual}` (or set QUEEN_SQS_COMPONENT to a prebuilt component)"
        ))
    };
    match out {
        Err(e) => return failed(format!("cannot run {rustup}: {e}")),
        Ok(o) if !o.status.success() => {
            let stderr = String::from_utf8_lossy(&o.stderr);
            // rustup's own `error:` line; its backtrace (RUST_BACKTRACE) and causes are noise here.
            let said = stderr
                .lines()
                .map(str::trim)
                .find_map(|l| l.strip_prefix("error:"))
                .or_else(|| stderr.lines().map(str::trim).find(|l| !l.is_empty()))
                .unwrap_or("no output")
                .trim()
                .to_string();
            return failed(format!("{rustup} said: {said}"));
        }
        Ok(_) => {}
    }
    if !target_installed(&target_libdir(rustc)?) {
        return failed(format!(
            "{rustup} succeeded but the target's library is still missing"
        ));
    }
    Ok(Some(format!(
        "the Rust toolchain {toolchain} lacked the {WASM_TARGET} target the component is built for; added it (`{manual}`)"
    )))
}

/// Where `rustc` looks for the target's standard library.
fn target_libdir(rustc: &str) -> Result<PathBuf, String> {
    let out = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", WASM_TARGET])
        .output()
        .map_err(|e| format!("cannot run {rustc}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{rustc} does not know the {WASM_TARGET} target (Rust 1.82 or later is needed): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// True when `libdir` holds the target's `core` (what "can't find crate for `core`" misses).
pub fn target_installed(libdir: &Path) -> bool {
    std::fs::read_dir(libdir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libcore-") && name.ends_with(".rlib")
        })
    })
}

/// The rustup toolchain a sysroot belongs to: `<rustup home>/toolchains/<name>`.
fn sysroot_toolchain(rustc: &str) -> Result<String, String> {
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run {rustc}: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    toolchain_of_sysroot(&sysroot).ok_or_else(|| {
        format!(
            "the Rust toolchain at {} lacks the {WASM_TARGET} target and is not managed by rustup; install the target's standard library (or set QUEEN_SQS_COMPONENT to a prebuilt component)",
            sysroot.display()
        )
    })
}

/// `<…>/toolchains/<name>` → `name`; None for a sysroot rustup does not manage.
pub fn toolchain_of_sysroot(sysroot: &Path) -> Option<String> {
    let parent = sysroot.parent()?;
    if parent.file_name()? != "toolchains" {
        return None;
    }
    Some(sysroot.file_name()?.to_string_lossy().into_owned())
}
