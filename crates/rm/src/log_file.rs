//! A log file the RM appends to and that follows its path: when log rotation
//! renames the file away (logrotate's default) or someone deletes it, the
//! next write notices that the path names another file, or none, and opens
//! the path afresh, so an RM that runs for months needs neither a restart
//! nor a signal to start a new file. Which lines go in, and when they are
//! written, is the callers' (`audit`, `event_log`).
//!
//! Checking costs one `stat` per write; the callers write at most a few
//! times a second (the decision log in batches) or once per request that
//! changes something (the audit log), so that is noise. A write that fails
//! is reported once, and the file is left alone until rotation gives it a
//! new one, so a full disk does not flood the service's own log.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// An open log file.
#[derive(Debug)]
pub(crate) struct LogFile {
    /// What the file is, for the service's own log ("audit log").
    what: &'static str,
    path: PathBuf,
    file: File,
    /// Device and inode of `file`, to tell whether `path` still names it.
    identity: (u64, u64),
    /// Set after a write fails, until a new file is opened.
    broken: bool,
}

impl LogFile {
    /// Opens `path` for appending, creating it if needed.
    pub(crate) fn open(what: &'static str, path: &Path) -> std::io::Result<LogFile> {
        let (file, identity) = open_append(path)?;
        Ok(LogFile {
            what,
            path: path.to_owned(),
            file,
            identity,
            broken: false,
        })
    }

    /// The path it writes to.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes` in one write, to the file the path names now.
    pub(crate) fn append(&mut self, bytes: &[u8]) {
        self.follow();
        if self.broken {
            return;
        }
        if let Err(e) = self.file.write_all(bytes) {
            self.broken = true;
            tracing::error!(what = self.what, path = %self.path.display(), error = %e,
                "cannot write the {}; nothing more is written to it until the file is rotated", self.what);
        }
    }

    /// Opens the path again if it no longer names the open file.
    fn follow(&mut self) {
        let moved = match std::fs::metadata(&self.path) {
            Ok(m) => (m.dev(), m.ino()) != self.identity,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            // Unreadable for a moment (permissions changing under a
            // rotation): keep writing where we were.
            Err(_) => false,
        };
        if !moved {
            return;
        }
        match open_append(&self.path) {
            Ok((file, identity)) => {
                self.file = file;
                self.identity = identity;
                self.broken = false;
                tracing::info!(what = self.what, path = %self.path.display(), "the {} was rotated; writing to a new file", self.what);
            }
            Err(e) => {
                if !self.broken {
                    self.broken = true;
                    tracing::error!(what = self.what, path = %self.path.display(), error = %e,
                        "the {} was rotated and cannot be opened again; nothing is written to it until it can", self.what);
                }
            }
        }
    }
}

fn open_append(path: &Path) -> std::io::Result<(File, (u64, u64))> {
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let m = file.metadata()?;
    Ok((file, (m.dev(), m.ino())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-log-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_renamed_file_is_followed_by_a_new_one_at_the_path() {
        let dir = temp("rename");
        let path = dir.join("x.log");
        let mut log = LogFile::open("test log", &path).unwrap();
        log.append(b"one\n");
        std::fs::rename(&path, dir.join("x.log.1")).unwrap();
        log.append(b"two\n");
        log.append(b"three\n");
        assert_eq!(
            std::fs::read_to_string(dir.join("x.log.1")).unwrap(),
            "one\n"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\nthree\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_deleted_file_is_created_again_and_a_replaced_one_is_appended_to() {
        let dir = temp("delete");
        let path = dir.join("x.log");
        let mut log = LogFile::open("test log", &path).unwrap();
        log.append(b"one\n");
        std::fs::remove_file(&path).unwrap();
        log.append(b"two\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
        // Another file put in its place (logrotate's `create`) is appended
        // to, not truncated.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "header\n").unwrap();
        log.append(b"three\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "header\nthree\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn copy_and_truncate_rotation_keeps_appending_at_the_end() {
        // logrotate's `copytruncate` keeps the file: appending mode writes
        // at its new end rather than leaving a hole of the old length.
        let dir = temp("truncate");
        let path = dir.join("x.log");
        let mut log = LogFile::open("test log", &path).unwrap();
        log.append(b"one\n");
        std::fs::copy(&path, dir.join("x.log.1")).unwrap();
        OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        log.append(b"two\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
