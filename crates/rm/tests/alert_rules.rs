//! The Prometheus rules shipped in `docker/prometheus/weft-rules.yml`,
//! checked against the service that feeds them: every `weft_*` series a
//! rule reads, with every label value it selects on, is in a real scrape of
//! a running RM that has a node and an application, so renaming a metric or
//! a label value fails here rather than silencing an alert. Every alert has
//! a severity and its two annotations, and the rules' unit tests
//! (`weft-rules.test.yml`) have a case where each alert fires and one where
//! it stays quiet, and a test of each recording rule. With `promtool` on
//! PATH, `promtool check rules` and `promtool test rules` pass too.
//!
//! The files are read as text, since the workspace has no YAML parser and
//! both files keep to a plain layout: one rule per `- alert:` or `- record:`
//! item, `expr:` inline or as a `|` block. Time is tokio's paused clock.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use weft_rm::client::RmClient;
use weft_rm::{Clock, RmConfig, Service};

const ALLOC: &str = r#"<allocations>
  <queue name="a"><weight>3</weight></queue>
  <queue name="b"><weight>1</weight></queue>
</allocations>"#;

fn rules_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docker/prometheus")
}

fn read(name: &str) -> String {
    let path = rules_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One item of a rule group: `- alert: NAME` or `- record: NAME` and the
/// lines under it.
struct Rule {
    alert: bool,
    name: String,
    body: String,
}

fn rules(text: &str) -> Vec<Rule> {
    let mut res: Vec<Rule> = Vec::new();
    for line in text.lines() {
        let item = line.trim_start().strip_prefix("- ");
        let head = item.and_then(|i| {
            i.strip_prefix("alert:")
                .map(|n| (true, n))
                .or_else(|| i.strip_prefix("record:").map(|n| (false, n)))
        });
        match (head, res.last_mut()) {
            (Some((alert, name)), _) => res.push(Rule {
                alert,
                name: name.trim().to_owned(),
                body: String::new(),
            }),
            // A new group ends the last rule.
            (None, Some(_)) if line.trim_start().starts_with("- name:") => {}
            (None, Some(rule)) => {
                rule.body.push_str(line);
                rule.body.push('\n');
            }
            (None, None) => {}
        }
    }
    res
}

/// A rule's `expr:`, inline or a `|` block (the lines indented past the key).
fn expr(body: &str) -> Option<String> {
    let mut lines = body.lines();
    let key_line = lines.find(|l| l.trim_start().starts_with("expr:"))?;
    let indent = key_line.len() - key_line.trim_start().len();
    let value = key_line.trim_start()["expr:".len()..].trim();
    if !value.starts_with('|') && !value.starts_with('>') {
        return Some(value.to_owned());
    }
    let block: Vec<&str> = lines
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
        .collect();
    Some(block.join("\n"))
}

/// A vector selector of a `weft_*` series: its name and its `label="value"`
/// matchers (regex and negative matchers select nothing by name, so they
/// are not checked).
#[derive(Debug)]
struct Selector {
    name: String,
    equal: Vec<(String, String)>,
}

/// Every `weft_*` selector in a PromQL expression. Strings, comments and
/// numbers (durations included) are skipped; recorded series
/// (`level:weft_...:op`) start with their level and are not `weft_` names.
fn selectors(expr: &str) -> Vec<Selector> {
    let chars: Vec<char> = expr.chars().collect();
    let mut res = Vec::new();
    let mut i = 0;
    let is_ident_start = |c: char| c.is_ascii_alphabetic() || c == '_' || c == ':';
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let skip_string = |i: &mut usize| {
        let quote = chars[*i];
        *i += 1;
        let mut s = String::new();
        while *i < chars.len() && chars[*i] != quote {
            if chars[*i] == '\\' && quote != '`' {
                *i += 1;
            }
            s.push(chars[*i]);
            *i += 1;
        }
        *i += 1;
        s
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            skip_string(&mut i);
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() || c == '.' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if is_ident_start(c) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            if !name.starts_with("weft_") {
                continue;
            }
            let mut equal = Vec::new();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if j < chars.len() && chars[j] == '{' {
                j += 1;
                loop {
                    while j < chars.len() && (chars[j].is_whitespace() || chars[j] == ',') {
                        j += 1;
                    }
                    assert!(j < chars.len(), "unclosed selector in {expr}");
                    if chars[j] == '}' {
                        j += 1;
                        break;
                    }
                    let l = j;
                    while j < chars.len() && is_ident(chars[j]) {
                        j += 1;
                    }
                    let label: String = chars[l..j].iter().collect();
                    while j < chars.len() && chars[j].is_whitespace() {
                        j += 1;
                    }
                    let o = j;
                    while j < chars.len() && "=!~".contains(chars[j]) {
                        j += 1;
                    }
                    let op: String = chars[o..j].iter().collect();
                    while j < chars.len() && chars[j].is_whitespace() {
                        j += 1;
                    }
                    assert!(
                        j < chars.len() && "\"'`".contains(chars[j]) && !label.is_empty(),
                        "unreadable matcher after {name} in {expr}"
                    );
                    let value = skip_string(&mut j);
                    if op == "=" {
                        equal.push((label, value));
                    }
                }
                i = j;
            }
            res.push(Selector { name, equal });
        } else {
            i += 1;
        }
    }
    res
}

/// The family a series name belongs to in the exposition: itself, or the
/// histogram its `_bucket`, `_sum` or `_count` series come from.
fn family<'a>(scrape: &str, name: &'a str) -> Option<&'a str> {
    if scrape.contains(&format!("# TYPE {name} ")) {
        return Some(name);
    }
    let base = ["_bucket", "_sum", "_count"]
        .iter()
        .find_map(|s| name.strip_suffix(s))?;
    scrape
        .contains(&format!("# TYPE {base} histogram\n"))
        .then_some(base)
}

#[test]
fn the_rule_reader_finds_selectors_and_skips_strings_numbers_and_recorded_names() {
    let found = selectors(
        r#"queue:weft_queue_x:memory / (weft_a{queue="root", le=~"0.5|1"} > 0)
        and ignoring (queue) rate(weft_b_bucket[5m]) # weft_in_a_comment
        > 0.5 * weft_c{state = 'lost'} or up{job="weft_not_a_series"}"#,
    );
    let got: Vec<String> = found
        .iter()
        .map(|s| format!("{} {:?}", s.name, s.equal))
        .collect();
    assert_eq!(
        got,
        [
            r#"weft_a [("queue", "root")]"#,
            "weft_b_bucket []",
            r#"weft_c [("state", "lost")]"#,
        ]
    );
    let text = "  - name: g\n    rules:\n      - record: r\n        expr: |\n          a\n            + b\n        labels:\n          x: y\n      - alert: A\n        expr: c > 1\n";
    let parsed = rules(text);
    assert_eq!(parsed.len(), 2);
    assert_eq!(
        expr(&parsed[0].body).as_deref(),
        Some("          a\n            + b")
    );
    assert_eq!(expr(&parsed[1].body).as_deref(), Some("c > 1"));
    assert!(parsed[1].alert && !parsed[0].alert);
}

#[test]
fn every_alert_has_a_severity_annotations_and_a_firing_and_a_quiet_test() {
    let text = read("weft-rules.yml");
    let rules = rules(&text);
    let alerts: Vec<&Rule> = rules.iter().filter(|r| r.alert).collect();
    assert!(alerts.len() >= 12, "{} alerts", alerts.len());
    for a in &alerts {
        let severity = a
            .body
            .lines()
            .find_map(|l| l.trim().strip_prefix("severity:"))
            .map(str::trim);
        assert!(
            matches!(severity, Some("page" | "ticket")),
            "{}: severity {severity:?}",
            a.name
        );
        for key in ["summary:", "description:"] {
            assert!(a.body.contains(key), "{} has no {key}", a.name);
        }
    }

    // In the unit tests, each `alertname:` is followed by its `exp_alerts:`,
    // `[]` when the alert must be quiet.
    let tests = read("weft-rules.test.yml");
    let mut cases: Vec<(String, bool)> = Vec::new();
    let mut lines = tests.lines();
    while let Some(l) = lines.next() {
        let Some(name) = l.trim().strip_prefix("alertname:") else {
            continue;
        };
        let exp = lines
            .find_map(|l| l.trim().strip_prefix("exp_alerts:"))
            .unwrap_or_else(|| panic!("alertname {name} without exp_alerts"));
        cases.push((name.trim().to_owned(), exp.trim() != "[]"));
    }
    for a in &alerts {
        for firing in [true, false] {
            assert!(
                cases.contains(&(a.name.clone(), firing)),
                "weft-rules.test.yml has no case where {} {}",
                a.name,
                if firing { "fires" } else { "stays quiet" }
            );
        }
    }
    for (name, _) in &cases {
        assert!(
            alerts.iter().any(|a| &a.name == name),
            "weft-rules.test.yml tests {name}, which weft-rules.yml does not define"
        );
    }
    for r in rules.iter().filter(|r| !r.alert) {
        assert!(
            tests.contains(&format!("- expr: {}\n", r.name)),
            "weft-rules.test.yml has no expression test of {}",
            r.name
        );
    }
}

#[test]
fn the_rules_pass_promtool_check_and_their_unit_tests() {
    let Some(promtool) = weft_test_support::promtool() else {
        return;
    };
    for (args, file) in [
        (["check", "rules"], "weft-rules.yml"),
        (["test", "rules"], "weft-rules.test.yml"),
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .arg(rules_dir().join(file))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {} {file}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

async fn post(c: &mut RmClient, path: &str, body: Value) -> Value {
    c.call(Method::POST, path, Some(&body)).await.unwrap()
}

async fn heartbeat(nm: &mut RmClient, node: &str, response_id: &mut u64) -> Value {
    let v = post(
        nm,
        "/ws/v1/nm/heartbeat",
        json!({"nodeId": node, "responseId": *response_id}),
    )
    .await;
    *response_id = v["responseId"].as_u64().unwrap();
    v
}

/// A running RM on an ephemeral port with one node and one application
/// holding containers and asking for more, scraped once.
async fn scrape_a_busy_rm() -> String {
    let site = weft_test_support::site_xml(&[
        ("yarn.scheduler.minimum-allocation-mb", "1024"),
        ("weft.rm.view-refresh-ms", "0"),
    ]);
    let config = RmConfig::from_texts(&site, ALLOC).unwrap();
    let service = Service::start(config, Clock::with_epoch_origin(1_700_000_000_000)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(service.serve(listener, async move {
        let _ = stopped.await;
    }));
    let mut nm = RmClient::new(&url, Some("yarn".to_owned())).unwrap();
    let mut alice = RmClient::new(&url, Some("alice".to_owned())).unwrap();
    let node = "n1:8041";
    post(
        &mut nm,
        "/ws/v1/nm/register",
        json!({"nodeId": node, "rack": "/r1", "capability": {"memory": 4096, "vCores": 4}}),
    )
    .await;
    let app = alice.new_application().await.unwrap().application_id;
    let submission =
        json!({"application-id": app, "queue": "a", "resource": {"memory": 1024, "vCores": 1}});
    alice.submit_application(&submission).await.unwrap();
    let mut response_id = 0;
    let hb = heartbeat(&mut nm, node, &mut response_id).await;
    // The AM's token, as the node hands it to the AM container it launches.
    let token = hb["allocatedContainers"][0]["amRMToken"]
        .as_str()
        .expect("the AM container comes with its attempt's token");
    let mut am = RmClient::new(&url, Some("yarn".to_owned()))
        .unwrap()
        .with_bearer(token);
    let _: Value = am
        .call(
            Method::POST,
            &format!("/ws/v1/am/{app}/register"),
            None::<&()>,
        )
        .await
        .unwrap();
    // More than the node holds, so the queue keeps pending asks.
    post(
        &mut am,
        &format!("/ws/v1/am/{app}/allocate"),
        json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 1024, "vCores": 1}, "numContainers": 8}]}),
    )
    .await;
    heartbeat(&mut nm, node, &mut response_id).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let answer = alice.request(Method::GET, "/metrics", None).await.unwrap();
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    String::from_utf8(answer.body.to_vec()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn every_series_the_rules_read_is_in_a_scrape_of_a_running_rm() {
    let text = read("weft-rules.yml");
    let rules = rules(&text);
    let mut found = Vec::new();
    for r in &rules {
        let e = expr(&r.body).unwrap_or_else(|| panic!("{} has no expr", r.name));
        found.extend(selectors(&e).into_iter().map(|s| (r.name.clone(), s)));
    }
    // The reader found the rules' series at all (a layout change in the
    // file would otherwise pass this test vacuously).
    for name in [
        "weft_scheduler_snapshot_age_seconds",
        "weft_scheduler_node_heartbeat_duration_seconds_bucket",
        "weft_cluster_nodes",
        "weft_queue_pending_memory_bytes",
    ] {
        assert!(found.iter().any(|(_, s)| s.name == name), "{name}");
    }

    let scrape = scrape_a_busy_rm().await;
    let mut missing = Vec::new();
    for (rule, s) in &found {
        let Some(family) = family(&scrape, &s.name) else {
            missing.push(format!("{rule}: no metric {}", s.name));
            continue;
        };
        // Some sample of the series carries every label value selected.
        let selected = scrape
            .lines()
            .filter(|l| {
                l.starts_with(&format!("{}{{", s.name)) || l.starts_with(&format!("{} ", s.name))
            })
            .any(|l| {
                s.equal
                    .iter()
                    .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
            });
        if !selected {
            missing.push(format!(
                "{rule}: no series of {} (family {family}) with {:?}",
                s.name, s.equal
            ));
        }
    }
    assert!(missing.is_empty(), "{}\n\n{scrape}", missing.join("\n"));
}
