//! The node secret: an optional secret shared by the RM and its node
//! agents, read from a file (`weft.nm.secret.file`), which every call of
//! the node protocol must show when the RM has one (docs/api.md, "Node
//! secret"; docs/operations.md, "Authenticating nodes").
//!
//! This module owns reading and checking the file (the RM at start, a node
//! agent from its `--site` file) and the constant-time comparison.
//! Refusing a call without it is the node protocol's handlers'; sending it,
//! the node agent's and the load generator's, through `RmClient`.
//!
//! Why not Hadoop's `hadoop.http.authentication.signature.secret.file`:
//! that secret signs the cookies of Hadoop's HTTP authentication for
//! people's browsers; sharing it with every node would let anyone holding a
//! node's copy forge those cookies, and rolling one would roll the other.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::token::constant_time_eq;

/// The property naming the file, read by the RM from its site files and by
/// a node agent from its `--site` file.
pub const PROPERTY: &str = "weft.nm.secret.file";

/// Fewer characters than this is too easy to guess (`openssl rand -hex 32`
/// gives 64).
pub const MIN_CHARS: usize = 16;

/// The largest file read: far beyond any secret, small enough that a path
/// mistyped onto a large file does not fill memory.
const MAX_BYTES: u64 = 4096;

/// What to do about a file other users may read or change.
const EXPOSED_ADVICE: &str =
    "run chmod o-rwx on it, as only the resource manager and its node agents may know the secret";

/// The secret. `Debug` does not show it, so it cannot reach a log line by
/// accident.
#[derive(Clone, PartialEq, Eq)]
pub struct NodeSecret(String);

/// Why the secret file cannot be used; each says which file and why.
#[derive(Debug, thiserror::Error)]
pub enum NodeSecretError {
    /// The file could not be read.
    #[error("node secret file {} ({PROPERTY}): {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is not a regular file, is too large, or holds something
    /// other than a usable secret.
    #[error("node secret file {} ({PROPERTY}): {why}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong (never the secret itself).
        why: String,
    },
    /// Other users than the file's owner and group may read or change it.
    #[error(
        "node secret file {} ({PROPERTY}): other users may read or change it (mode {mode:03o}); {EXPOSED_ADVICE}",
        path.display()
    )]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

impl NodeSecretError {
    /// Why the file cannot be used, without its path, for a message that
    /// names the file already.
    pub fn reason(&self) -> String {
        match self {
            NodeSecretError::Read { source, .. } => source.to_string(),
            NodeSecretError::Invalid { why, .. } => why.clone(),
            NodeSecretError::Exposed { mode, .. } => {
                format!("other users may read or change it (mode {mode:03o}); {EXPOSED_ADVICE}")
            }
        }
    }
}

impl NodeSecret {
    /// Reads the secret in `path`: one line of at least `MIN_CHARS`
    /// printable ASCII characters without spaces (surrounding whitespace,
    /// such as the newline `echo` leaves, is dropped), in a regular file no
    /// other user may read or change (Hadoop asks the same of its
    /// signature secret file, in words; here it is checked).
    pub fn read(path: &Path) -> Result<NodeSecret, NodeSecretError> {
        use std::io::Read as _;
        let invalid = |why: String| NodeSecretError::Invalid {
            path: path.to_owned(),
            why,
        };
        let read_err = |source| NodeSecretError::Read {
            path: path.to_owned(),
            source,
        };
        // Checked by path before opening: opening a FIFO blocks.
        let meta = std::fs::metadata(path).map_err(read_err)?;
        if !meta.is_file() {
            return Err(invalid("not a regular file".to_owned()));
        }
        check_mode(path, &meta)?;
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(read_err)?
            .take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read_err)?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err(invalid(format!(
                "larger than {MAX_BYTES} bytes; it should hold the secret alone"
            )));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| invalid("not text; write the secret as hex".to_owned()))?;
        NodeSecret::from_text(&text).map_err(invalid)
    }

    /// A secret from the text of a file (for tests and in-process
    /// clusters, which have no file); the error says what is wrong with
    /// it without repeating it.
    pub fn from_text(text: &str) -> Result<NodeSecret, String> {
        let secret = text.trim();
        if secret.is_empty() {
            return Err(
                "it is empty; write a secret into it, for example with openssl rand -hex 32"
                    .to_owned(),
            );
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the secret has spaces, line breaks or characters other than printable ASCII inside it; it travels in an HTTP header, so write it as hex (openssl rand -hex 32)".to_owned());
        }
        if secret.len() < MIN_CHARS {
            return Err(format!(
                "the secret has {} characters, fewer than the {MIN_CHARS} needed to be hard to guess (openssl rand -hex 32 makes 64)",
                secret.len()
            ));
        }
        Ok(NodeSecret(secret.to_owned()))
    }

    /// Whether `presented` (as a caller sent it) is the secret, comparing
    /// every byte whatever differs first (only the length shows).
    pub fn matches(&self, presented: &str) -> bool {
        constant_time_eq(self.0.as_bytes(), presented.as_bytes())
    }

    /// The secret itself, for the client that sends it.
    pub fn value(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NodeSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NodeSecret(..)")
    }
}

#[cfg(unix)]
fn check_mode(path: &Path, meta: &std::fs::Metadata) -> Result<(), NodeSecretError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o007 != 0 {
        return Err(NodeSecretError::Exposed {
            path: path.to_owned(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_mode(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), NodeSecretError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    use weft_test_support::ScratchDir;

    fn file(dir: &ScratchDir, name: &str, text: &str, mode: u32) -> PathBuf {
        let path = dir.write(name, text);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_private_file_with_a_long_secret_is_read_and_every_bad_one_says_why() {
        let dir = ScratchDir::new("node-secret");
        let good = file(&dir, "good", "0123456789abcdef0123\n", 0o640);
        let secret = NodeSecret::read(&good).unwrap();
        assert!(secret.matches("0123456789abcdef0123"));
        assert!(!secret.matches("0123456789abcdef012"));
        assert!(!secret.matches("0123456789abcdef0124"));
        assert_eq!(format!("{secret:?}"), "NodeSecret(..)");

        let cases = [
            file(&dir, "world", "0123456789abcdef0123\n", 0o644),
            file(&dir, "empty", " \n", 0o600),
            file(&dir, "short", "abc123\n", 0o600),
            file(&dir, "spaced", "0123456789 abcdef0123\n", 0o600),
            dir.path().join("missing"),
            dir.path().to_owned(),
        ];
        let mut rendered = String::new();
        for path in cases {
            let e = NodeSecret::read(&path).unwrap_err().to_string();
            assert!(!e.contains("abcdef"), "the secret is echoed: {e}");
            rendered.push_str(&dir.hide(&e));
            rendered.push('\n');
        }
        expect_test::expect![[r#"
            node secret file <dir>/world (weft.nm.secret.file): other users may read or change it (mode 644); run chmod o-rwx on it, as only the resource manager and its node agents may know the secret
            node secret file <dir>/empty (weft.nm.secret.file): it is empty; write a secret into it, for example with openssl rand -hex 32
            node secret file <dir>/short (weft.nm.secret.file): the secret has 6 characters, fewer than the 16 needed to be hard to guess (openssl rand -hex 32 makes 64)
            node secret file <dir>/spaced (weft.nm.secret.file): the secret has spaces, line breaks or characters other than printable ASCII inside it; it travels in an HTTP header, so write it as hex (openssl rand -hex 32)
            node secret file <dir>/missing (weft.nm.secret.file): No such file or directory (os error 2)
            node secret file <dir> (weft.nm.secret.file): not a regular file
        "#]]
        .assert_eq(&rendered);
    }
}
