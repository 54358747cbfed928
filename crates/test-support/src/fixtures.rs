//! Small fixtures the tests of several crates share: Hadoop-style site
//! files built from properties, and finding `promtool` for the metrics and
//! configuration lints. What the properties mean is the crates' own business.

use std::path::PathBuf;

/// A Hadoop-style `<configuration>` file with one property per line, in
/// order, from line 2: a property's `<value>` element starts at column
/// `24 + name.len()`, which tests of error positions rely on.
pub fn site_xml(props: &[(&str, &str)]) -> String {
    let mut text = String::from("<configuration>\n");
    for (name, value) in props {
        text.push_str(&format!(
            "<property><name>{name}</name><value>{value}</value></property>\n"
        ));
    }
    text.push_str("</configuration>\n");
    text
}

/// Where `promtool` is on `PATH`, if it is. The README's test command must
/// pass on a machine with only the Rust toolchain, so without it the lint is
/// skipped (with a note on stderr) and the callers' other checks still run;
/// `.ci/run` installs it (Debian's `prometheus` package) and sets
/// `WEFT_REQUIRE_PROMTOOL`, under which a missing one fails the test as a
/// broken setup rather than letting the lint pass unrun.
pub fn promtool() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|d| d.join("promtool"))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("WEFT_REQUIRE_PROMTOOL").is_none(),
            "promtool is not on PATH and WEFT_REQUIRE_PROMTOOL is set; install it (Debian: apt-get install -y prometheus)"
        );
        #[expect(
            clippy::print_stderr,
            reason = "a skipped lint must be visible to whoever runs the tests with --nocapture"
        )]
        {
            eprintln!(
                "promtool is not on PATH: its lint is skipped (install it with Debian's prometheus package to run it)"
            );
        }
    }
    found
}

/// Lints a Prometheus text exposition with `promtool check metrics`,
/// failing the calling test with promtool's report and the text if it finds
/// anything; skipped as [`promtool`] says when promtool is not installed.
pub fn assert_promtool_accepts_metrics(text: &str) {
    let Some(promtool) = promtool() else {
        return;
    };
    let mut child = std::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool starts");
    std::io::Write::write_all(
        &mut child.stdin.take().expect("promtool's stdin is piped"),
        text.as_bytes(),
    )
    .expect("promtool reads the metrics");
    let out = child.wait_with_output().expect("promtool ends");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && report.trim().is_empty(),
        "promtool: {report}\n{text}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_property_per_line_from_line_two() {
        let text = site_xml(&[("a.b", "1"), ("c", "x y")]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "<configuration>");
        assert_eq!(
            lines[2],
            "<property><name>c</name><value>x y</value></property>"
        );
        // The documented column of the first `<value>`: 24 + len("a.b").
        assert_eq!(lines[1].find("<value>").map(|i| i + 1), Some(24 + 3));
        assert_eq!(lines[3], "</configuration>");
    }
}
