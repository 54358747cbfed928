//! The machinery the state store's files share: an append-only file of
//! JSON lines, folded at open into what is still live, its unusable lines
//! kept aside in `<file>.skipped`, then rewritten with the live records
//! only; afterwards one `write` per record, no `fsync`, and a failed write
//! reported once. What a record means, and which are live, is each file's
//! own business (`Fold`).

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::StateStoreError;

/// What one file's records fold into.
pub(super) trait Fold {
    /// One line of the file.
    type Record: Serialize + DeserializeOwned;

    /// Takes one record in, or says why it cannot be (the line is then
    /// skipped like one that does not parse).
    fn apply(&mut self, record: Self::Record) -> Result<(), String>;

    /// The records that say all that is live, in the order to write them.
    fn compacted(&self) -> Vec<Self::Record>;
}

/// One open file of records.
#[derive(Debug)]
pub(super) struct JsonLines {
    path: PathBuf,
    file: File,
    /// What is lost when writes fail, for the one error logged.
    loss: &'static str,
    /// Set after the first write error, so a full disk is reported once.
    broken: bool,
}

impl JsonLines {
    /// Opens (creating if needed) `dir/name`: what its lines fold into
    /// (starting from `empty`), warnings about the lines skipped (appended
    /// to `dir/name.skipped`), and the file, now holding only the live
    /// records. `loss` finishes the error logged if a write fails ("...
    /// will not survive a restart").
    pub(super) fn open<F: Fold>(
        dir: &Path,
        name: &str,
        loss: &'static str,
        empty: F,
    ) -> Result<(JsonLines, F, Vec<String>), StateStoreError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join(name);
        // Bytes, not text: a write torn inside a character is one bad line,
        // not an unreadable file.
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(&path)(e)),
        };
        let (folded, skipped) = fold(empty, &bytes, &path);
        let mut warnings = Vec::with_capacity(skipped.len());
        if !skipped.is_empty() {
            // Kept before compacting, which would delete them for good.
            let kept = dir.join(format!("{name}.skipped"));
            let mut text = Vec::new();
            for s in &skipped {
                text.extend_from_slice(s.line);
                text.push(b'\n');
                warnings.push(format!("{}; kept in {}", s.warning, kept.display()));
            }
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&kept)
                .and_then(|mut f| f.write_all(&text))
                .map_err(io(&kept))?;
        }
        // Compact: the live records only, written aside and renamed over.
        let tmp = dir.join(format!("{name}.tmp"));
        let mut out = Vec::new();
        for record in folded.compacted() {
            serde_json::to_writer(&mut out, &record).expect("records serialize");
            out.push(b'\n');
        }
        let mut file = File::create(&tmp).map_err(io(&tmp))?;
        file.write_all(&out).map_err(io(&tmp))?;
        file.sync_all().map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        let lines = JsonLines {
            path,
            file,
            loss,
            broken: false,
        };
        Ok((lines, folded, warnings))
    }

    /// The file written.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record; after a failed write, nothing more is written.
    pub(super) fn append(&mut self, record: &impl Serialize) {
        if self.broken {
            return;
        }
        let mut line = serde_json::to_vec(record).expect("records serialize");
        line.push(b'\n');
        // One write on an O_APPEND file: a line is never interleaved.
        if let Err(e) = self.file.write_all(&line) {
            self.broken = true;
            tracing::error!(path = %self.path.display(), error = %e, "cannot write the state store; {}", self.loss);
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StateStoreError {
    let path = path.to_owned();
    move |source| StateStoreError::Io { path, source }
}

/// A line of the file that was not applied.
struct Skipped<'a> {
    /// The line as read.
    line: &'a [u8],
    /// `path:line: skipped: why`.
    warning: String,
}

/// Folds the file's lines into `folded`, in order, and returns the lines
/// skipped, each with its warning.
fn fold<'a, F: Fold>(mut folded: F, bytes: &'a [u8], path: &Path) -> (F, Vec<Skipped<'a>>) {
    let mut skipped = Vec::new();
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.trim_ascii().is_empty() {
            continue;
        }
        let skip = |why: String| Skipped {
            line,
            warning: format!("{}:{}: skipped: {why}", path.display(), i + 1),
        };
        // Invalid UTF-8 is one of serde_json's errors here.
        let record: F::Record = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => {
                skipped.push(skip(format!("not a state record ({e})")));
                continue;
            }
        };
        if let Err(why) = folded.apply(record) {
            skipped.push(skip(why));
        }
    }
    (folded, skipped)
}
