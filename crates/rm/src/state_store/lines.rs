//! The machinery the state store's files share: an append-only file of
//! JSON lines, folded at open into what is still live, its unusable lines
//! kept aside in `<file>.skipped`, then rewritten with the live records
//! only; afterwards one `write` per record, no `fsync`, and a failed write
//! reported once. What a record means, and which are live, is each file's
//! own business (`Fold`).
//!
//! Every record appended is folded in too, so the fold always says what
//! the file says, and once the lines appended since the last compaction
//! outweigh what is live (and at least `COMPACT_FLOOR` bytes), the file is
//! compacted again while the RM runs, as at open. Without that, an RM that
//! runs for months would append every submission and end to a file that
//! only its next start shrinks, and that start would read all of it. The
//! rewrite is proportional to what is live and happens only after at least
//! as much was appended, so it costs O(1) per record over time.

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

/// Bytes appended since the last compaction below which the file is not
/// compacted, however little is live: a rewrite (with its `fsync`) runs on
/// the scheduler's task, so it should be rare.
const COMPACT_FLOOR: u64 = 64 << 20;

/// One open file of records, and what they fold into.
#[derive(Debug)]
pub(super) struct JsonLines<F> {
    path: PathBuf,
    file: File,
    folded: F,
    /// Bytes written by the last compaction, and appended since.
    compacted_len: u64,
    appended: u64,
    /// `COMPACT_FLOOR`, smaller in tests.
    floor: u64,
    /// What is lost when writes fail, for the one error logged.
    loss: &'static str,
    /// Set after the first write error, so a full disk is reported once.
    broken: bool,
}

impl<F: Fold> JsonLines<F> {
    /// Opens (creating if needed) `dir/name`: what its lines fold into
    /// (starting from `empty`), warnings about the lines skipped (appended
    /// to `dir/name.skipped`), and the file, now holding only the live
    /// records. `loss` finishes the error logged if a write fails ("...
    /// will not survive a restart").
    pub(super) fn open(
        dir: &Path,
        name: &str,
        loss: &'static str,
        empty: F,
    ) -> Result<(JsonLines<F>, Vec<String>), StateStoreError> {
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
        let (file, compacted_len) = rewrite(&path, &folded)?;
        let lines = JsonLines {
            path,
            file,
            folded,
            compacted_len,
            appended: 0,
            floor: COMPACT_FLOOR,
            loss,
            broken: false,
        };
        Ok((lines, warnings))
    }

    /// The file written.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// What the file's records fold into now.
    pub(super) fn folded(&self) -> &F {
        &self.folded
    }

    /// Folds one record in and appends it; after a failed write, nothing
    /// more is written, but records are still folded in, so the fold stays
    /// what the store means to hold. Compacts the file when enough was
    /// appended.
    pub(super) fn append(&mut self, record: F::Record) {
        let mut line = serde_json::to_vec(&record).expect("records serialize");
        line.push(b'\n');
        if let Err(why) = self.folded.apply(record) {
            // The next start would skip the line for the same reason.
            tracing::warn!(path = %self.path.display(), "a record just written will be skipped at the next start: {why}");
        }
        if self.broken {
            return;
        }
        // One write on an O_APPEND file: a line is never interleaved.
        if let Err(e) = self.file.write_all(&line) {
            self.broken = true;
            tracing::error!(path = %self.path.display(), error = %e, "cannot write the state store; {}", self.loss);
            return;
        }
        self.appended += line.len() as u64;
        if self.appended > self.floor.max(self.compacted_len) {
            self.compact();
        }
    }

    /// Rewrites the file with the live records only, as at open.
    fn compact(&mut self) {
        match rewrite(&self.path, &self.folded) {
            Ok((file, len)) => {
                tracing::info!(path = %self.path.display(), before = self.compacted_len + self.appended, after = len, "state store compacted");
                self.file = file;
                self.compacted_len = len;
            }
            // The old file is still whole and still appended to; try again
            // once as much more has been appended.
            Err(e) => {
                tracing::error!(path = %self.path.display(), error = %e, "cannot compact the state store; it keeps growing until a compaction succeeds")
            }
        }
        self.appended = 0;
    }

    #[cfg(test)]
    pub(super) fn set_compaction_floor(&mut self, floor: u64) {
        self.floor = floor;
    }
}

/// Writes the live records of `folded` aside, syncs them and renames them
/// over `path` (so a crash leaves the old file or the new, never a part),
/// then opens the new file for appending; with the bytes written.
fn rewrite<F: Fold>(path: &Path, folded: &F) -> Result<(File, u64), StateStoreError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut out = Vec::new();
    for record in folded.compacted() {
        serde_json::to_writer(&mut out, &record).expect("records serialize");
        out.push(b'\n');
    }
    let mut file = File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(&out).map_err(io(&tmp))?;
    file.sync_all().map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))?;
    let file = OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(io(path))?;
    Ok((file, out.len() as u64))
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

/// The reasons in warnings about skipped lines, without the file, line and
/// where the line was kept (for tests of each file's records).
#[cfg(test)]
pub(super) fn skip_reasons(warnings: &[String]) -> Vec<&str> {
    warnings
        .iter()
        .map(|w| {
            let why = w.split_once(": skipped: ").expect("a skipped line").1;
            why.split_once("; kept in ").expect("where it was kept").0
        })
        .collect()
}
