//! The host binary: bad configuration is refused at start with one line naming what
//! to set; bad flags are refused with usage.

use std::process::Command;

fn host() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_queen-sqs-host"));
    // A configuration that is complete except for what each case breaks.
    cmd.env_clear()
        .env("QUEEN_URL", "http://127.0.0.1:1")
        .env("QUEEN_SQS_AUTH", "off")
        .env("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef0123");
    cmd
}

#[test]
fn each_bad_variable_is_refused_with_one_line_naming_it() {
    let cases = [
        ("QUEEN_SQS_DEFAULT_PARTITIONS", "0"),
        ("QUEEN_SQS_AUTH", "sometimes"),
        ("QUEEN_SQS_HANDLE_SECRET", "short"),
        ("QUEEN_URL", "ftp://nowhere"),
        ("QUEEN_SQS_ACCOUNT_ID", "abc"),
        ("QUEEN_SQS_BROKER_FLUSH", "sometimes"),
    ];
    for (name, value) in cases {
        let out = host()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env(name, value)
            .output()
            .expect("run host");
        assert!(!out.status.success(), "{name}={value} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{name}: {stderr}");
        assert!(lines[0].contains(name), "{name}: {stderr}");
    }
}

#[test]
fn credentials_are_required_when_sigv4_is_on_and_a_default_is_announced() {
    // With SigV4 on and no credentials the host falls back to the development pair and says so.
    let mut cmd = host();
    cmd.env_remove("QUEEN_SQS_AUTH")
        .env("QUEEN_SQS_CREDENTIALS", "no-secret-here");
    let out = cmd
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .expect("run host");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("QUEEN_SQS_CREDENTIALS"));
}

#[test]
fn bad_flags_are_refused_with_usage() {
    let out = host()
        .args(["serve", "--listen", "not-an-address"])
        .output()
        .expect("run host");
    assert_eq!(out.status.code(), Some(2));
    let out = host().args(["frobnicate"]).output().expect("run host");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
}

#[test]
fn a_shared_broker_needs_a_handle_secret() {
    let out = host()
        .env_remove("QUEEN_SQS_HANDLE_SECRET")
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .expect("run host");
    assert!(
        !out.status.success(),
        "started in front of QUEEN_URL with no secret"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("QUEEN_SQS_HANDLE_SECRET"), "{stderr}");
}

/// The embedded default keeps the secret it generated: a restart leaves handles valid.
#[test]
fn the_embedded_default_keeps_its_generated_secret() {
    let dir = std::env::temp_dir().join(format!("queen-sqs-cli-secret-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = || {
        let mut child = host()
            .env_remove("QUEEN_URL")
            .env_remove("QUEEN_SQS_HANDLE_SECRET")
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&dir)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run host");
        // The secret is kept before the endpoint listens; wait for the file, then stop.
        let path = dir.join("handle-secret");
        for _ in 0..200 {
            if std::fs::read_to_string(&path).map_or(false, |s| s.len() >= 16) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        std::fs::read_to_string(&path).expect("a kept secret")
    };
    let first = run();
    let second = run();
    assert_eq!(first, second, "a restart generated a new secret");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("handle-secret"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o077,
            0,
            "the secret file is readable by others: {mode:o}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 21 item 5: the development key pair is for loopback only. Without
/// `QUEEN_SQS_CREDENTIALS` a host asked to listen on any other address refuses to start
/// (it accepted `test`/`test` from anywhere, with a warning).
#[test]
fn the_development_key_pair_is_refused_beyond_loopback() {
    let mut child = host()
        .env_remove("QUEEN_SQS_AUTH")
        .args(["serve", "--listen", "0.0.0.0:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run host");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr);
    assert!(
        status.is_some_and(|s| !s.success()),
        "it served on 0.0.0.0 with test/test: {stderr}"
    );
    assert!(stderr.contains("QUEEN_SQS_CREDENTIALS"), "{stderr}");
    // With a key pair of its own it starts (killed once it says it listens).
    let mut child = host()
        .env_remove("QUEEN_SQS_AUTH")
        .env(
            "QUEEN_SQS_CREDENTIALS",
            "AKIDEXAMPLE:wJalrXUtnFEMIK7MDENGbPxRfiCY:",
        )
        .args(["serve", "--listen", "0.0.0.0:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run host");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let listening = lines
        .by_ref()
        .take(20)
        .map_while(Result::ok)
        .any(|l| l.contains("SQS/SNS endpoint on"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        listening,
        "with its own key pair the host listens on 0.0.0.0"
    );
}

/// Issue 22: the component runs on 4 GiB memory reservations (no bounds checks in its
/// compiled code). Where a process may not map that much address space the host still
/// serves, on small bounds-checked memories, and says so once.
#[cfg(target_os = "linux")]
#[test]
fn without_room_for_large_reservations_the_host_still_serves() {
    use std::io::{BufRead, BufReader};
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.env_clear()
        .env("QUEEN_URL", "http://127.0.0.1:1")
        .env("QUEEN_SQS_AUTH", "off")
        .env("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef0123")
        // ~3.7 TiB: room for the small memories' pool, not for the large one's ~45 TiB.
        .arg("-c")
        .arg("ulimit -v 4000000000 && exec \"$0\" serve --listen 127.0.0.1:0")
        .arg(env!("CARGO_BIN_EXE_queen-sqs-host"))
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("run host");
    let stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.expect("stderr line");
        let listening = line.contains("SQS/SNS endpoint on http://");
        seen.push(line);
        if listening {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let all = seen.join("\n");
    assert!(
        all.contains("SQS/SNS endpoint on http://"),
        "the host did not serve:\n{all}"
    );
    let notices = seen
        .iter()
        .filter(|l| l.contains("bounds-checked memories"))
        .count();
    assert_eq!(notices, 1, "expected one fallback notice:\n{all}");
}
