//! Scratch directories for tests that read and write real files: made
//! empty, unique to the test process and the name, removed when dropped.
//! What goes in them is each test's business.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A directory under the system's temporary directory, removed (with all
/// it holds) when dropped, even when the test fails.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

/// Tells apart two directories of one name made by one process, so that
/// tests running in parallel never share one.
static MADE: AtomicU32 = AtomicU32::new(0);

impl ScratchDir {
    /// An empty directory named after `name` (`weft-<name>-<pid>-<n>`).
    ///
    /// # Panics
    ///
    /// When the directory cannot be made: the test cannot run without it.
    pub fn new(name: &str) -> ScratchDir {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("weft-{name}-{}-{n}", std::process::id()));
        // Left over by a killed run of a process that had this pid.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        ScratchDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `contents` to `file` in the directory; returns its path.
    ///
    /// # Panics
    ///
    /// When the file cannot be written.
    pub fn write(&self, file: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(file);
        std::fs::write(&path, contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        path
    }

    /// `text` with this directory's path written `<dir>`, for comparing
    /// messages that name files in it.
    pub fn hide(&self, text: &str) -> String {
        text.replace(&self.0.display().to_string(), "<dir>")
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_dirs_of_one_name_are_apart_and_each_is_removed_when_dropped() {
        let a = ScratchDir::new("scratch-test");
        let b = ScratchDir::new("scratch-test");
        assert_ne!(a.path(), b.path());
        let file = a.write("x.txt", "hello");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello");
        assert_eq!(a.hide(&file.display().to_string()), "<dir>/x.txt");
        let kept = a.path().to_owned();
        drop(a);
        assert!(!kept.exists());
        assert!(b.path().is_dir());
    }
}
