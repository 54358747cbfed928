//! Architecture fences, checked mechanically: the pure crates' dependency
//! closure, forbidden APIs in their sources, and a `//!` opening on every
//! module of the workspace. See ARCHITECTURE.md, "Architecture invariants".

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates that must stay free of I/O, clocks, threads and locks.
const PURE_CRATES: &[&str] = &[
    "weft-model",
    "weft-queue-tree",
    "weft-preemption",
    "weft-core",
];

/// Crates that must never be in a pure crate's normal (non-dev) dependency closure.
const FORBIDDEN_DEPENDENCIES: &[&str] = &[
    "tokio",
    "axum",
    "hyper",
    "tower",
    "reqwest",
    "metrics",
    "metrics-exporter-prometheus",
    "tracing-subscriber",
    "anyhow",
    "serde_json",
    "dashmap",
];

/// Text that must not appear in a pure crate's sources (outside comments).
const FORBIDDEN_APIS: &[(&str, &str)] = &[
    ("Instant::now", "time is an argument"),
    ("SystemTime", "time is an argument"),
    ("thread::sleep", "the core never waits"),
    ("thread::spawn", "the core spawns nothing"),
    ("std::fs", "the core does no I/O"),
    ("std::net", "the core does no I/O"),
    ("std::process", "the core does no I/O"),
    ("std::env", "configuration arrives as values"),
    ("async fn", "the core is synchronous"),
    ("Mutex", "the core holds no locks"),
    ("RwLock", "the core holds no locks"),
    (
        "thread_rng",
        "randomness comes from a seeded generator passed in",
    ),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .to_path_buf()
}

fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

#[test]
fn pure_crates_have_no_service_dependencies() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let name_of: BTreeMap<&str, &str> = packages
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes = meta["resolve"]["nodes"].as_array().expect("resolve graph");
    // Normal dependency edges only: dev- and build-dependencies do not ship.
    let mut edges: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for node in nodes {
        let id = node["id"].as_str().unwrap();
        let deps = node["deps"].as_array().unwrap();
        let normal = deps
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null())
            })
            .map(|d| d["pkg"].as_str().unwrap());
        edges.entry(id).or_default().extend(normal);
    }
    let mut problems = Vec::new();
    let mut checked = 0;
    for (id, name) in &name_of {
        if !PURE_CRATES.contains(name) {
            continue;
        }
        checked += 1;
        let mut seen = BTreeSet::new();
        let mut stack = vec![*id];
        while let Some(cur) = stack.pop() {
            if !seen.insert(cur) {
                continue;
            }
            stack.extend(edges.get(cur).into_iter().flatten().copied());
        }
        for dep in &seen {
            let dep_name = name_of[dep];
            if FORBIDDEN_DEPENDENCIES.contains(&dep_name) {
                problems.push(format!("{name} depends (transitively) on {dep_name}"));
            }
        }
        if *name == "weft-queue-tree" && seen.iter().any(|d| name_of[d] == "weft-preemption") {
            problems.push(
                "weft-queue-tree depends on weft-preemption (the edge runs the other way)"
                    .to_owned(),
            );
        }
    }
    assert!(
        checked >= 2,
        "expected to find the pure crates in cargo metadata"
    );
    assert!(
        problems.is_empty(),
        "dependency fence broken:\n{}",
        problems.join("\n")
    );
}

fn rust_files(dir: &Path, acc: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, acc);
        } else if path.extension().is_some_and(|e| e == "rs") {
            acc.push(path);
        }
    }
}

fn crate_dirs() -> Vec<(String, PathBuf)> {
    let root = workspace_root();
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").exists())
        .map(|p| {
            let manifest = std::fs::read_to_string(p.join("Cargo.toml")).unwrap();
            let name = manifest
                .lines()
                .find_map(|l| {
                    l.trim()
                        .strip_prefix("name = \"")
                        .and_then(|r| r.strip_suffix('"'))
                })
                .unwrap()
                .to_owned();
            (name, p)
        })
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn pure_crates_use_no_clock_io_threads_or_locks() {
    let mut problems = Vec::new();
    for (name, dir) in crate_dirs() {
        if !PURE_CRATES.contains(&name.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (line_no, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for (api, why) in FORBIDDEN_APIS {
                    if code.contains(api) {
                        problems.push(format!(
                            "{}:{}: uses {api} ({why})",
                            file.display(),
                            line_no + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "forbidden APIs in pure crates:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_module_opens_with_a_doc_comment() {
    let root = workspace_root();
    let mut files = Vec::new();
    for (_, dir) in crate_dirs() {
        rust_files(&dir, &mut files);
    }
    rust_files(&root.join("tests"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` opening line:\n{}",
        missing.join("\n")
    );
}
