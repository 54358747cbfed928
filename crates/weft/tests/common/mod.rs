//! What the `weft` binary's end-to-end tests share: running the built
//! binary and reading what it printed. What each test checks is its own.

use std::process::{Command, Output, Stdio};

/// `weft <args>`, nothing on its standard input, run to its end.
pub(crate) fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What it printed on standard output.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What it printed on standard error.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
