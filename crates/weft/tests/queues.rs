//! `weft queues` as a user meets it: the built binary run on files, one
//! invocation per mode, checking what it prints, on which stream, and its
//! exit status. What each mode says in detail is tested beside the code
//! (`src/queues.rs`).

use std::path::{Path, PathBuf};

use weft_test_support::ScratchDir;

mod common;

use common::{stderr, stdout, weft};

fn conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conf")
}

/// A file of a test's own, removed (with its directory) at the end.
struct TempFile {
    _dir: ScratchDir,
    path: String,
}

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let dir = ScratchDir::new("queues-e2e");
        let path = dir.write(name, text).display().to_string();
        TempFile { _dir: dir, path }
    }

    fn arg(&self) -> &str {
        &self.path
    }
}

#[test]
fn check_exits_0_for_the_shipped_file_1_for_a_broken_one_and_2_for_a_missing_one() {
    let file = conf().join("fair-scheduler.xml");
    let dir = conf();
    let o = weft(&[
        "queues",
        "check",
        file.to_str().unwrap(),
        "--conf",
        dir.to_str().unwrap(),
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .ends_with("valid: 8 queues (4 parents, 4 leaves), 2 placement rules, 0 warnings\n"),
        "{}",
        stdout(&o)
    );
    assert_eq!(stderr(&o), "");

    let broken = TempFile::new(
        "broken.xml",
        "<allocations>\n  <queue name=\"a\">\n    <weight>x</weight>\n  </queue>\n</allocations>\n",
    );
    let o = weft(&["queues", "check", broken.arg()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "error: {}:3:5: allocations/queue[@name=\"a\"]/weight: \"x\" is not a non-negative decimal number",
            broken.arg()
        )),
        "{err}"
    );
    assert!(
        err.ends_with("is invalid: 1 problem, 0 warnings\n"),
        "{err}"
    );

    let o = weft(&["queues", "check", "/nonexistent/fair-scheduler.xml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "weft queues: cannot read the allocation file /nonexistent/fair-scheduler.xml: No such file or directory (os error 2)\n"
    );
}

#[test]
fn show_prints_steady_fair_shares_for_a_cluster_as_json() {
    let file = TempFile::new(
        "shares.xml",
        r#"<allocations>
  <queue name="default"><weight>0</weight></queue>
  <queue name="a"><weight>1</weight></queue>
  <queue name="b"><weight>3</weight></queue>
</allocations>"#,
    );
    let o = weft(&[
        "queues",
        "show",
        file.arg(),
        "--cluster",
        "40960mb,40vcores",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let shares: Vec<(String, u64)> = v["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["path"].as_str().unwrap().to_owned(),
                q["steady_fair_share"]["memory_mb"].as_u64().unwrap(),
            )
        })
        .collect();
    // `fair` (the default) splits memory only: 1:3 of 40960 mb.
    assert_eq!(
        shares,
        [
            ("root".to_owned(), 40960),
            ("root.a".to_owned(), 10240),
            ("root.b".to_owned(), 30720),
            ("root.default".to_owned(), 0),
        ]
    );
}

#[test]
fn place_answers_with_the_queue_and_rule_or_fails_with_the_reason() {
    let file = conf().join("fair-scheduler.xml");
    let dir = conf();
    let o = weft(&[
        "queues",
        "place",
        file.to_str().unwrap(),
        "--conf",
        dir.to_str().unwrap(),
        "--user",
        "alice",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("placed:   root.dev.users.alice, by rule 2 (nestedUserQueue)\n"),
        "{out}"
    );
    assert!(
        out.contains("verdict:  accepted into root.dev.users.alice\n"),
        "{out}"
    );

    // The shipped prod queue takes etl-bot and the prod group only.
    let o = weft(&[
        "queues",
        "place",
        file.to_str().unwrap(),
        "--conf",
        dir.to_str().unwrap(),
        "--user",
        "mallory",
        "--groups",
        "dev",
        "--queue",
        "prod.etl",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("verdict:  rejected: user mallory may not submit to queue root.prod.etl"),
        "{out}"
    );
}
