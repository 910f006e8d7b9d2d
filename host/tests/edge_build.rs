//! The build script's wasm-target check (issue 10, finding 9): `cargo run -p queen-sqs-host`
//! on a toolchain installed without `wasm32-wasip2` adds the target (and says so) instead of
//! failing deep in the nested build with "can't find crate for `core`"; when it cannot, the
//! build stops with one line naming the command to run. Exercised with a fake `rustc` and a
//! fake `rustup` so no real toolchain is changed.

#[allow(dead_code)]
#[path = "../build.rs"]
mod build_script;

use build_script::{ensure_wasm_target, target_installed, toolchain_of_sysroot, WASM_TARGET};
use std::path::{Path, PathBuf};

/// One test at a time where scripts are written or processes started. A script written
/// while another test thread forks is inherited open for writing by that child until it
/// execs, and running the script then fails with "Text file busy" (ETXTBSY; seen once in
/// CI on `a_missing_target_is_added_for_the_toolchain_in_use_and_announced`).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn scratch(tag: &str) -> PathBuf {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).unwrap();
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("queen-sqs-edge-build-{tag}-{hex}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A toolchain laid out as rustup lays it out, whose rustc answers `--print`.
struct Fake {
    dir: PathBuf,
    libdir: PathBuf,
    rustc: PathBuf,
    log: PathBuf,
}

fn fake_toolchain(tag: &str) -> Fake {
    let dir = scratch(tag);
    let sysroot = dir.join("toolchains").join("9.99.0-fake");
    let libdir = sysroot.join("lib/rustlib").join(WASM_TARGET).join("lib");
    let rustc = dir.join("rustc");
    script(
        &rustc,
        &format!(
            "case \"$*\" in *target-libdir*) echo '{}';; *sysroot*) echo '{}';; *) exit 1;; esac",
            libdir.display(),
            sysroot.display()
        ),
    );
    let log = dir.join("rustup.log");
    Fake {
        dir,
        libdir,
        rustc,
        log,
    }
}

/// A fake rustup that logs its arguments and installs `core` where the fake rustc looks.
fn working_rustup(f: &Fake) -> PathBuf {
    let p = f.dir.join("rustup");
    script(
        &p,
        &format!(
            "echo \"$*\" >> '{}'\nmkdir -p '{}' && touch '{}/libcore-0123abcd.rlib'",
            f.log.display(),
            f.libdir.display(),
            f.libdir.display()
        ),
    );
    p
}

#[test]
fn the_detection_looks_for_the_targets_core() {
    let d = scratch("detect");
    assert!(!target_installed(&d.join("absent")), "no directory");
    assert!(!target_installed(&d), "an empty directory");
    std::fs::write(d.join("libstd-1.rlib"), "").unwrap();
    assert!(!target_installed(&d), "std without core");
    std::fs::write(d.join("libcore-1a2b.rlib"), "").unwrap();
    assert!(target_installed(&d));
}

#[test]
fn the_toolchain_is_named_after_its_rustup_sysroot() {
    assert_eq!(
        toolchain_of_sysroot(Path::new(
            "/root/.rustup/toolchains/1.95.0-x86_64-unknown-linux-gnu"
        ))
        .as_deref(),
        Some("1.95.0-x86_64-unknown-linux-gnu")
    );
    assert_eq!(toolchain_of_sysroot(Path::new("/usr")), None);
    assert_eq!(toolchain_of_sysroot(Path::new("/usr/lib/rust-1.95")), None);
}

#[test]
fn the_toolchain_building_this_test_has_the_target() {
    let _one_at_a_time = serial();
    // What the real build script sees: nothing to add, nothing run.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let never = scratch("never").join("rustup-must-not-run");
    assert_eq!(
        ensure_wasm_target(&rustc, never.to_str().unwrap(), None),
        Ok(None)
    );
}

#[test]
fn a_missing_target_is_added_for_the_toolchain_in_use_and_announced() {
    let _one_at_a_time = serial();
    let f = fake_toolchain("add");
    let rustup = working_rustup(&f);
    let notice = ensure_wasm_target(
        f.rustc.to_str().unwrap(),
        rustup.to_str().unwrap(),
        Some("1.95.0-x86_64-unknown-linux-gnu"),
    )
    .expect("added")
    .expect("a notice");
    let log = std::fs::read_to_string(&f.log).unwrap();
    assert_eq!(
        log.trim(),
        "target add wasm32-wasip2 --toolchain 1.95.0-x86_64-unknown-linux-gnu"
    );
    assert!(
        notice.contains("added") && notice.contains(WASM_TARGET),
        "{notice}"
    );
    assert!(!notice.contains('\n'));
    // Once present, nothing more is run.
    assert_eq!(
        ensure_wasm_target(f.rustc.to_str().unwrap(), rustup.to_str().unwrap(), None),
        Ok(None)
    );
    assert_eq!(std::fs::read_to_string(&f.log).unwrap().lines().count(), 1);
}

#[test]
fn without_rustup_toolchain_the_sysroot_names_the_toolchain() {
    let _one_at_a_time = serial();
    let f = fake_toolchain("sysroot");
    let rustup = working_rustup(&f);
    ensure_wasm_target(f.rustc.to_str().unwrap(), rustup.to_str().unwrap(), None).expect("added");
    let log = std::fs::read_to_string(&f.log).unwrap();
    assert_eq!(
        log.trim(),
        "target add wasm32-wasip2 --toolchain 9.99.0-fake"
    );
}

#[test]
fn a_failed_add_is_one_line_naming_the_command_to_run() {
    let _one_at_a_time = serial();
    let f = fake_toolchain("fail");
    let offline = f.dir.join("rustup");
    script(
        &offline,
        "echo 'info: downloading component' >&2\necho 'error: could not download file: network unreachable' >&2\necho 'Stack backtrace:' >&2\necho '  12: <unknown>' >&2\nexit 1",
    );
    let line = ensure_wasm_target(
        f.rustc.to_str().unwrap(),
        offline.to_str().unwrap(),
        Some("1.95.0-x86_64-unknown-linux-gnu"),
    )
    .expect_err("refused");
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.contains(
            "rustup target add wasm32-wasip2 --toolchain 1.95.0-x86_64-unknown-linux-gnu"
        ),
        "{line}"
    );
    assert!(line.contains("network unreachable"), "{line}");

    // No rustup at all (a distro toolchain): still one line.
    let line = ensure_wasm_target(
        f.rustc.to_str().unwrap(),
        f.dir.join("no-such-rustup").to_str().unwrap(),
        Some("system"),
    )
    .expect_err("refused");
    assert!(
        !line.contains('\n') && line.contains("rustup target add"),
        "{line}"
    );

    // A rustup that claims success but installs nothing is not believed.
    let liar = f.dir.join("liar");
    script(&liar, "exit 0");
    let line = ensure_wasm_target(f.rustc.to_str().unwrap(), liar.to_str().unwrap(), Some("x"))
        .expect_err("refused");
    assert!(line.contains("still missing"), "{line}");
}
