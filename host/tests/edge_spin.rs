//! What can be checked of the Spin deployment without Spin (which the registries here do
//! not serve): `spin.toml` names the component its own build command produces, outbound
//! HTTP is limited to the configured broker, and the component imports and exports only
//! WASI 0.2 interfaces at versions Spin ≥ 3.1 accepts (3.1 takes any `wasi:http` 0.2.x
//! export; 3.0 took only 0.2.0 and 0.2.1).

use queen_sqs_host::serve::COMPONENT;
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

fn manifest() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../spin.toml")).unwrap()
}

/// The value of `key = "..."` (or a one-line array) in `section` of a small TOML file.
fn value(toml: &str, section: &str, key: &str) -> Option<String> {
    let mut inside = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
            continue;
        }
        if inside {
            if let Some(rest) = line.strip_prefix(key) {
                if let Some(v) = rest.trim_start().strip_prefix('=') {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

#[test]
fn the_manifest_names_what_its_build_command_produces() {
    let m = manifest();
    let source = value(&m, "component.queen-sqs", "source").expect("source");
    let command = value(&m, "component.queen-sqs.build", "command").expect("build command");
    assert_eq!(
        command,
        "\"cargo build --release --target wasm32-wasip2 -p queen-sqs\""
    );
    // cargo puts a release build of package queen-sqs (library queen_sqs, a cdylib) for
    // that target at target/wasm32-wasip2/release/queen_sqs.wasm.
    assert_eq!(source, "\"target/wasm32-wasip2/release/queen_sqs.wasm\"");
    let cargo =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml")).unwrap();
    assert_eq!(
        value(&cargo, "package", "name").as_deref(),
        Some("\"queen-sqs\"")
    );
    let crate_type = value(&cargo, "lib", "crate-type").expect("[lib] crate-type");
    assert!(crate_type.contains("cdylib"), "{crate_type}");
}

#[test]
fn outbound_http_is_limited_to_the_configured_broker() {
    let m = manifest();
    let hosts = value(&m, "component.queen-sqs", "allowed_outbound_hosts").expect("hosts");
    assert_eq!(hosts, "[\"{{ queen_url }}\"]");
    let var = value(&m, "variables", "queen_url").expect("the queen_url variable");
    assert!(var.contains("required = true"), "{var}");
    assert!(
        !m.contains("*://*") && !m.contains("http://*"),
        "no wildcard host"
    );
    assert!(m.contains("Spin 3.1"), "the minimum Spin version is stated");
}

#[test]
fn the_component_speaks_only_wasi_0_2_interfaces() {
    let engine = Engine::new(&Config::new()).unwrap();
    let component = Component::new(&engine, COMPONENT).unwrap();
    let ty = component.component_type();
    let exports: Vec<String> = ty.exports(&engine).map(|(n, _)| n.to_string()).collect();
    assert_eq!(exports.len(), 1, "{exports:?}");
    let (name, version) = exports[0].split_once('@').expect("a versioned export");
    assert_eq!(name, "wasi:http/incoming-handler");
    assert!(version.starts_with("0.2."), "{version}");
    let imports: Vec<String> = ty.imports(&engine).map(|(n, _)| n.to_string()).collect();
    assert!(!imports.is_empty());
    for import in &imports {
        let (name, version) = import.split_once('@').expect("a versioned import");
        assert!(name.starts_with("wasi:"), "{import}");
        assert!(version.starts_with("0.2."), "{import}");
        let package = name.split('/').next().unwrap();
        assert!(
            [
                "wasi:http",
                "wasi:io",
                "wasi:clocks",
                "wasi:random",
                "wasi:cli",
                "wasi:filesystem",
                "wasi:sockets"
            ]
            .contains(&package),
            "{import}: not a package Spin provides"
        );
    }
    println!("exports {exports:?}\nimports {imports:?}");
}
