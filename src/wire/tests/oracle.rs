//! Running botocore (tests/compat/wire/oracle.py) from a test.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Sends one request to the oracle and returns its answer. Panics (fails the test) when
/// python3 or botocore is unavailable: these tests must not pass by not running.
pub fn ask(request: &Value) -> Value {
    let script = repo_root().join("tests/compat/wire/oracle.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is required by the wire oracle tests");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request.to_string().as_bytes())
        .expect("write to oracle");
    let out = child.wait_with_output().expect("oracle ran");
    assert!(
        out.status.success(),
        "oracle failed (is botocore installed? pip install botocore): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("oracle answers JSON")
}
