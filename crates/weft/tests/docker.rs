//! The Docker files (`docker/`), checked without a Docker engine: the
//! Prometheus configuration (with the rule files it loads) by the real
//! `promtool`; the compose file's bind mounts against the files they name;
//! the compose file and
//! the Dockerfile by reading them as text (the services, the build context,
//! the ports, the image's user) and by handing every `weft` command line
//! they contain to the `weft` binary itself, so a renamed flag breaks this
//! test rather than the containers. When the Docker client has its compose
//! plugin, `docker compose config` checks the file's schema too.
//!
//! Building and running the image needs an engine and the network; neither
//! is available to the test suite.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs `weft` with `args` and `--help` last: clap parses every flag and
/// value before it (an unknown flag or a bad address fails) and then prints
/// the help instead of running.
fn weft_accepts(args: &[String], whence: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{whence}: weft {} is refused: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The JSON-style flow sequence (`["a", "b"]`, possibly over several lines)
/// after each occurrence of `key` in `text`.
fn sequences_after(text: &str, key: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(key) {
        let after = &rest[at + key.len()..];
        let open = after
            .find('[')
            .unwrap_or_else(|| panic!("{key} without a [ list ]"));
        let close = after[open..]
            .find(']')
            .unwrap_or_else(|| panic!("{key} with an unclosed list"))
            + open;
        let list: Vec<String> = serde_json::from_str(&after[open..=close])
            .unwrap_or_else(|e| panic!("{key} {}: {e}", &after[open..=close]));
        found.push(list);
        rest = &after[close..];
    }
    found
}

/// The compose file's top-level service names (two-space indented keys
/// under `services:`).
fn services(compose: &str) -> Vec<String> {
    let body = &compose[compose
        .find("\nservices:\n")
        .expect("compose.yaml has no services")..];
    body.lines()
        .skip(2)
        .take_while(|l| l.is_empty() || l.starts_with(' ') || l.starts_with('#'))
        .filter_map(|l| {
            let name = l.strip_prefix("  ")?.strip_suffix(':')?;
            (!name.starts_with(' ') && !name.starts_with('#')).then(|| name.to_owned())
        })
        .collect()
}

/// One service's lines, up to the next service or top-level key.
fn service<'a>(compose: &'a str, name: &str) -> &'a str {
    let header = format!("\n  {name}:\n");
    let start = compose
        .find(&header)
        .unwrap_or_else(|| panic!("no service {name}"))
        + header.len();
    let body = &compose[start..];
    let mut len = 0;
    for line in body.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if !line.trim().is_empty() && indent <= 2 {
            break;
        }
        len += line.len();
    }
    &body[..len]
}

#[test]
fn prometheus_config_passes_promtool_and_scrapes_the_rm() {
    // `check config` also checks every file under `rule_files:`.
    let file = repo().join("docker/prometheus/prometheus.yml");
    if let Some(promtool) = weft_test_support::promtool() {
        let out = Command::new(promtool)
            .args(["check", "config"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool check config {}: {}{}",
            file.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = read("docker/prometheus/prometheus.yml");
    assert!(text.contains("metrics_path: /metrics"), "{text}");
    assert!(text.contains(r#"targets: ["rm:8088"]"#), "{text}");
    // The rules' WeftRMDown selects the scrape job by this name.
    assert!(text.contains("- job_name: weft-rm\n"), "{text}");
    let rules = read("docker/prometheus/weft-rules.yml");
    assert!(rules.contains(r#"up{job="weft-rm"}"#), "{rules}");
}

/// The host side of every bind mount (`- ./host:/container[:ro]`) in a
/// compose file's text, with its container side.
fn bind_mounts(compose: &str) -> Vec<(String, String)> {
    compose
        .lines()
        .filter_map(|l| {
            let spec = l.trim().strip_prefix("- ./")?;
            let spec = spec.strip_suffix(":ro").unwrap_or(spec);
            let (host, container) = spec.split_once(':')?;
            Some((format!("./{host}"), container.to_owned()))
        })
        .collect()
}

/// The entries of a top-level YAML block sequence (`key:` then `  - item`
/// lines), comments and blank lines skipped.
fn block_list(text: &str, key: &str) -> Vec<String> {
    let header = format!("\n{key}:\n");
    let Some(at) = text.find(&header) else {
        return Vec::new();
    };
    text[at + header.len()..]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map_while(|l| l.strip_prefix("- ").map(str::to_owned))
        .collect()
}

#[test]
fn compose_mounts_exist_and_prometheus_loads_the_weft_rules() {
    let compose = read("docker/compose.yaml");
    let docker = repo().join("docker");
    let mounts = bind_mounts(&compose);
    for (host, _) in &mounts {
        assert!(
            docker.join(host).exists(),
            "compose mounts {host}, which docker/ lacks"
        );
    }
    // Prometheus reads its configuration, and through it the rules, from
    // the directory mounted on /etc/prometheus.
    let prometheus = service(&compose, "prometheus");
    assert_eq!(
        bind_mounts(prometheus),
        [("./prometheus".to_owned(), "/etc/prometheus".to_owned())]
    );
    assert!(
        prometheus.contains(r#""--config.file=/etc/prometheus/prometheus.yml""#),
        "{prometheus}"
    );
    let config = read("docker/prometheus/prometheus.yml");
    let rule_files = block_list(&config, "rule_files");
    assert_eq!(rule_files, ["weft-rules.yml"]);
    for f in &rule_files {
        assert!(docker.join("prometheus").join(f).is_file(), "{f}");
    }
}

#[test]
fn compose_runs_an_rm_three_nodes_and_prometheus() {
    let compose = read("docker/compose.yaml");
    assert_eq!(
        services(&compose),
        ["rm", "nm1", "nm2", "nm3", "prometheus"]
    );
    // One image, built from the repository's root with docker/Dockerfile.
    assert!(compose.contains("    context: ..\n    dockerfile: docker/Dockerfile\n"));
    assert!(repo().join("docker/Dockerfile").is_file());
    let rm = service(&compose, "rm");
    assert!(rm.contains("<<: *weft"), "{rm}");
    assert!(rm.contains(r#"- "8088:8088""#), "{rm}");
    assert!(rm.contains("rm-state:/var/lib/weft/state"), "{rm}");
    for (i, port) in [(1, 8042), (2, 8043), (3, 8044)] {
        let name = format!("nm{i}");
        let nm = service(&compose, &name);
        assert!(nm.contains("<<: *node"), "{nm}");
        assert!(nm.contains(&format!("- \"{port}:8042\"")), "{nm}");
        let command = &sequences_after(nm, "command:")[0];
        let flag = |f: &str| {
            let at = command.iter().position(|a| a == f);
            at.map(|i| command[i + 1].as_str())
        };
        assert_eq!(command[0], "nm", "{name}");
        assert_eq!(flag("--rm"), Some("http://rm:8088"), "{name}");
        assert_eq!(
            flag("--http-address"),
            Some(format!("{name}:8042").as_str())
        );
        assert_eq!(flag("--listen"), Some("0.0.0.0:8042"), "{name}");
    }
    assert!(compose.contains("  depends_on:\n    rm:\n      condition: service_healthy\n"));
    let prometheus = service(&compose, "prometheus");
    assert!(
        prometheus.contains("./prometheus:/etc/prometheus:ro"),
        "{prometheus}"
    );
    assert!(prometheus.contains(r#"- "9090:9090""#), "{prometheus}");
    // Every weft command line in the file is one the binary accepts.
    let commands = sequences_after(&compose, "command:");
    assert_eq!(commands.len(), 5);
    for c in commands.iter().filter(|c| c[0] == "rm" || c[0] == "nm") {
        weft_accepts(c, "compose.yaml command");
    }
    let health = &sequences_after(rm, "test:")[0];
    assert_eq!(health[..2], ["CMD", "weft"]);
    weft_accepts(&health[2..], "compose.yaml healthcheck");
}

#[test]
fn the_dockerfile_builds_in_one_stage_and_runs_unprivileged_in_another() {
    let text = read("docker/Dockerfile");
    let froms: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    // The builder's Rust is at least the workspace's rust-version.
    let builder = froms[0]
        .strip_prefix("FROM rust:")
        .and_then(|r| r.split_once('-'))
        .map(|(version, _)| version)
        .unwrap_or_else(|| {
            panic!(
                "the build stage is not an official rust image: {}",
                froms[0]
            )
        });
    let version = |v: &str| -> Vec<u32> { v.split('.').map(|n| n.parse().unwrap()).collect() };
    let manifest = read("Cargo.toml");
    let msrv = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    assert!(
        version(builder)[..2] >= version(msrv)[..2],
        "rust {builder} < {msrv}"
    );
    assert!(froms[0].ends_with(" AS build"), "{}", froms[0]);
    assert!(text.contains("cargo build --release --locked -p weft"));
    assert!(text.contains("COPY --from=build /usr/local/bin/weft /usr/local/bin/weft"));
    // Not root at run time.
    let user = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("the image runs as root");
    assert!(
        !user.starts_with("root") && !user.starts_with('0'),
        "{user}"
    );
    // What it copies from the context exists, and the ignore file keeps it.
    for l in text
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let words: Vec<&str> = l.split_whitespace().collect();
        for src in &words[1..words.len() - 1] {
            assert!(repo().join(src).exists(), "COPY {src}: no such file");
        }
    }
    let ignore = read("docker/Dockerfile.dockerignore");
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "crates",
        "conf",
        "tests",
        "rustfmt.toml",
    ] {
        assert!(
            !ignore
                .lines()
                .any(|l| l.trim() == needed || l.trim() == format!("/{needed}")),
            "the build context ignores {needed}"
        );
    }
    assert!(ignore.lines().any(|l| l.trim() == "**/target"), "{ignore}");
    // The default command is one the binary accepts.
    let entry = &sequences_after(&text, "ENTRYPOINT")[0];
    assert_eq!(entry, &["/usr/local/bin/weft"]);
    let cmd = &sequences_after(&text, "\nCMD")[0];
    weft_accepts(cmd, "Dockerfile CMD");
    assert!(text.contains("EXPOSE 8088 8042"));
}

#[test]
fn compose_config_passes_docker_compose_when_it_is_installed() {
    let has_compose = Command::new("docker")
        .args(["compose", "version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let compose = repo().join("docker/compose.yaml");
    if has_compose {
        let out = Command::new("docker")
            .args(["compose", "-f"])
            .arg(&compose)
            .args(["config", "--quiet"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "docker compose config: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Without the plugin, at least the anchors it relies on are defined
    // before they are used.
    let text = read("docker/compose.yaml");
    for anchor in ["weft", "node"] {
        let defined = text.find(&format!("&{anchor}\n")).expect("anchor defined");
        let used = text.find(&format!("*{anchor}\n")).expect("anchor used");
        assert!(defined < used, "{anchor}");
    }
}
