//! Data-driven scenario tests: every `tests/scenarios/*.txt` file is a list
//! of commands with the output the core must produce. Run with
//! `UPDATE_EXPECT=1` to rewrite the expectations after a deliberate change,
//! then review the diff.

use std::path::Path;

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
