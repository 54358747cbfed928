//! Data-driven scenario tests: every `tests/scenarios/*.txt` file is a list
//! of commands with the output the core must produce, from core time zero
//! and from a start far above it (the same text either way). Run with
//! `UPDATE_EXPECT=1` to rewrite the expectations after a deliberate change,
//! then review the diff.

use std::path::Path;

use weft_model::Time;

/// A start far from zero: the core time of an RM whose time origin is the
/// Unix epoch itself, today.
const LATE_START: Time = Time::from_millis(1_700_000_000_000);

#[test]
fn scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "txt"));
    files.sort();
    assert!(!files.is_empty(), "no scenario files in {}", dir.display());
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failed = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let actual = weft_test_support::scenario::run_file(&text);
        if actual != text {
            if update {
                std::fs::write(&file, &actual).unwrap();
            } else {
                failed.push(format!("{}:\n{}", file.display(), diff(&text, &actual)));
            }
        }
        // Same input, same output: run it again and compare byte for byte.
        assert_eq!(
            actual,
            weft_test_support::scenario::run_file(&text),
            "{} is not deterministic",
            file.display()
        );
        // The core's clock need not start at zero: a service whose time
        // origin lies before its start (the state store's finished apps)
        // starts it high. Every deadline, tick, expiry and update interval
        // must then fall as it does from zero.
        let late = weft_test_support::scenario::run_file_from(&text, LATE_START);
        if late != actual {
            failed.push(format!(
                "{} from core time {LATE_START}:\n{}",
                file.display(),
                diff(&actual, &late)
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "scenario output differs (UPDATE_EXPECT=1 to accept):\n{}",
        failed.join("\n")
    );
}

/// The first differing lines, enough to see what changed.
fn diff(expected: &str, actual: &str) -> String {
    let mut out = String::new();
    for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            out.push_str(&format!(
                "  line {}:\n    expected: {e}\n    actual:   {a}\n",
                i + 1
            ));
            if out.len() > 2000 {
                break;
            }
        }
    }
    if expected.lines().count() != actual.lines().count() {
        out.push_str(&format!(
            "  {} lines expected, {} actual\n",
            expected.lines().count(),
            actual.lines().count()
        ));
    }
    out
}
