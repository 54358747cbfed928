//! The machinery the state store's files share: an append-only file of
//! JSON lines, folded at open into what is still live, its unusable lines
//! kept aside in `<file>.skipped`, then rewritten with the live records
//! only; afterwards one `write` per record, no `fsync`, and a failed write
//! reported once. What a record means, and which are live, is each file's
//! own business (`Fold`); when the store is polled is its owner's (the
//! actor's).
//!
//! Every record appended is folded in too, so the fold always says what
//! the file says, and once the lines appended since the last compaction
//! outweigh what is live (and at least `COMPACT_FLOOR` bytes), the file is
//! compacted again while the RM runs. Without that, an RM that runs for
//! months would append every submission and end to a file that only its
//! next start shrinks, and that start would read all of it. The rewrite is
//! proportional to what is live and happens only after at least as much
//! was appended, so it costs O(1) per record over time.
//!
//! A compaction while the RM runs keeps the scheduler's task off the disk
//! but for one small write and a rename. The task takes the live records
//! (`Fold::compacted`) and hands them to a thread of the compaction's own,
//! which turns them into JSON, writes them to `<file>.tmp` and syncs it.
//! Meanwhile records are still appended to the old file, and kept in
//! memory too. Once the thread is done, the task (at its next append or
//! `poll`) adds the records kept to the file aside in one write, renames
//! it over the old one, and appends to it from then on. Until the rename
//! the old file holds every record, and from it the new one does, so an
//! RM killed at any moment leaves one whole file and loses nothing; the
//! file aside is renamed only once synced and complete. A compaction that
//! fails leaves the old file as it was, still appended to. The compaction
//! at open takes the same steps on the caller's thread, since nothing is
//! scheduled yet.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::StateStoreError;

/// What one file's records fold into.
pub(super) trait Fold {
    /// One line of the file; sent to the compaction's thread as the
    /// snapshot of what is live.
    type Record: Serialize + DeserializeOwned + Send + 'static;

    /// Takes one record in, or says why it cannot be (the line is then
    /// skipped like one that does not parse).
    fn apply(&mut self, record: Self::Record) -> Result<(), String>;

    /// The records that say all that is live, in the order to write them.
    fn compacted(&self) -> Vec<Self::Record>;
}

/// Bytes appended since the last compaction below which the file is not
/// compacted, however little is live. A compaction no longer holds up the
/// scheduler's task, but it still copies every live record there and
/// writes and syncs them all to disk, so it should be rare.
const COMPACT_FLOOR: u64 = 64 << 20;

/// One open file of records, and what they fold into.
#[derive(Debug)]
pub(super) struct JsonLines<F> {
    path: PathBuf,
    /// The file appended to: the old one until a compaction's rename, the
    /// new one from then on.
    file: File,
    folded: F,
    /// Bytes of the snapshot the last compaction wrote, and appended since
    /// that snapshot was taken.
    compacted_len: u64,
    appended: u64,
    /// `COMPACT_FLOOR`, smaller in tests.
    floor: u64,
    /// What is lost when writes fail, for the one error logged.
    loss: &'static str,
    /// Set after the first write error, so a full disk is reported once.
    broken: bool,
    /// The compaction under way: never more than one.
    compaction: Option<Compaction>,
    /// Run by the compaction's thread once the file aside is written.
    #[cfg(test)]
    seam: Option<Seam>,
}

/// A compaction whose snapshot a thread is writing aside.
#[derive(Debug)]
struct Compaction {
    /// The thread, which gives back the file aside, synced.
    thread: JoinHandle<Result<Aside, StateStoreError>>,
    /// The lines appended since the snapshot was taken, which the file
    /// aside lacks.
    kept: Vec<u8>,
    /// The length of the file when the snapshot was taken, for the log.
    before: u64,
}

/// The snapshot written to `<file>.tmp` and synced, the file still open
/// for appending, and the bytes written.
#[derive(Debug)]
struct Aside {
    file: File,
    len: u64,
}

/// What a test runs in the compaction's thread once the file aside is
/// written and synced: it may hold the thread there, or fail it.
#[cfg(test)]
#[derive(Clone)]
struct Seam(std::sync::Arc<dyn Fn() -> std::io::Result<()> + Send + Sync>);

#[cfg(test)]
impl std::fmt::Debug for Seam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seam")
    }
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
            private(OpenOptions::new().create(true).append(true))
                .open(&kept)
                .and_then(|mut f| f.write_all(&text))
                .map_err(io(&kept))?;
        }
        let aside = write_aside(&aside_path(&path), &folded.compacted())?;
        let compacted_len = aside.len;
        let file = put_in_place(&path, aside, &[])?;
        let lines = JsonLines {
            path,
            file,
            folded,
            compacted_len,
            appended: 0,
            floor: COMPACT_FLOOR,
            loss,
            broken: false,
            compaction: None,
            #[cfg(test)]
            seam: None,
        };
        Ok((lines, warnings))
    }

    /// What the file's records fold into now.
    pub(super) fn folded(&self) -> &F {
        &self.folded
    }

    /// Folds one record in and appends it; after a failed write, nothing
    /// more is written, but records are still folded in, so the fold stays
    /// what the store means to hold. Finishes the compaction under way if
    /// its thread is done, and starts one when enough was appended.
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
        if let Some(compaction) = &mut self.compaction {
            compaction.kept.extend_from_slice(&line);
        }
        self.poll();
        if self.compaction.is_none() && self.appended > self.floor.max(self.compacted_len) {
            self.start_compaction();
        }
    }

    /// Takes the snapshot of what is live and hands it to a thread that
    /// writes it aside. No file is touched here: the snapshot is records,
    /// not yet JSON.
    fn start_compaction(&mut self) {
        let records = self.folded.compacted();
        let tmp = aside_path(&self.path);
        #[cfg(test)]
        let seam = self.seam.clone();
        let spawned = std::thread::Builder::new()
            .name("state-store-compaction".to_owned())
            .spawn(move || {
                let aside = write_aside(&tmp, &records)?;
                #[cfg(test)]
                if let Some(seam) = seam {
                    (seam.0)().map_err(io(&tmp))?;
                }
                Ok(aside)
            });
        let before = self.compacted_len + self.appended;
        // From the snapshot on: a compaction that fails is tried again once
        // as much more has been appended.
        self.appended = 0;
        match spawned {
            Ok(thread) => {
                self.compaction = Some(Compaction {
                    thread,
                    kept: Vec::new(),
                    before,
                });
            }
            Err(e) => {
                tracing::error!(path = %self.path.display(), error = %e, "cannot start a thread to compact the state store; it keeps growing until a compaction succeeds");
            }
        }
    }

    #[cfg(test)]
    pub(super) fn set_compaction_floor(&mut self, floor: u64) {
        self.floor = floor;
    }
}

impl<F> JsonLines<F> {
    /// The file written.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Finishes the compaction under way if its thread is done, without
    /// waiting for it. Appends do this too; the actor calls it on each
    /// wake-up so that a compaction finishes while no record comes.
    pub(super) fn poll(&mut self) {
        if self
            .compaction
            .as_ref()
            .is_some_and(|c| c.thread.is_finished())
        {
            self.finish_compaction();
        }
    }

    /// Waits for the compaction under way, if any, and finishes it: what
    /// dropping the store does, without dropping it.
    #[cfg(test)]
    pub(super) fn wait_for_compaction(&mut self) {
        self.finish_compaction();
    }

    /// The task's part of the end of a compaction: the records kept are
    /// added to the file aside, which is renamed over the file and appended
    /// to from then on. If the thread failed, or this does, the file aside
    /// goes and the old file, whole, is still appended to. Waits for the
    /// thread if it is not done.
    fn finish_compaction(&mut self) {
        let Some(compaction) = self.compaction.take() else {
            return;
        };
        let tmp = aside_path(&self.path);
        let written = match compaction.thread.join() {
            Ok(written) => written,
            Err(_) => {
                tracing::error!(path = %self.path.display(), "the thread compacting the state store panicked; it keeps growing until a compaction succeeds");
                remove_aside(&tmp);
                return;
            }
        };
        if self.broken {
            // Nothing more is written after a failed write: the records
            // since then are in neither file.
            remove_aside(&tmp);
            return;
        }
        let kept = &compaction.kept;
        match written.and_then(|aside| {
            let len = aside.len;
            Ok((put_in_place(&self.path, aside, kept)?, len))
        }) {
            Ok((file, len)) => {
                tracing::info!(
                    path = %self.path.display(),
                    before = compaction.before + kept.len() as u64,
                    after = len + kept.len() as u64,
                    "state store compacted"
                );
                self.file = file;
                self.compacted_len = len;
            }
            Err(e) => {
                tracing::error!(path = %self.path.display(), error = %e, "cannot compact the state store; it keeps growing until a compaction succeeds");
                remove_aside(&tmp);
            }
        }
    }
}

impl<F> Drop for JsonLines<F> {
    /// Waits for a compaction under way and finishes it, rather than
    /// abandon its thread: one left running would still be writing
    /// `<file>.tmp` when a store opened again on the same directory in this
    /// process (an RM restarted in place, the tests) writes its own there,
    /// and could empty that one just before it is renamed into place. The
    /// wait is one compaction's write at most, and only as the RM stops;
    /// finishing then costs a write and a rename, and leaves the next start
    /// less to read.
    fn drop(&mut self) {
        self.finish_compaction();
    }
}

/// `<path>.tmp`: where a compaction writes before renaming over `path`.
fn aside_path(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    PathBuf::from(tmp)
}

/// `options` creating a file only its owner may read: the records hold
/// secrets (the AM tokens of running attempts).
fn private(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options
}

/// Takes group and other users' access away from `file`.
fn restrict(file: &File) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// The records turned into JSON lines, written to `tmp` and synced: the
/// part of a compaction that runs on its own thread.
fn write_aside<R: Serialize>(tmp: &Path, records: &[R]) -> Result<Aside, StateStoreError> {
    let mut out = Vec::new();
    for record in records {
        serde_json::to_writer(&mut out, record).map_err(|e| io(tmp)(e.into()))?;
        out.push(b'\n');
    }
    // Opened for appending, as the file it replaces was: the same handle
    // takes the records kept and, after the rename, every later one.
    let mut file = private(OpenOptions::new().create(true).append(true))
        .open(tmp)
        .map_err(io(tmp))?;
    // What an RM killed mid-compaction left there is of no use; a file
    // aside left by an older Weft is made private as a new one would be.
    file.set_len(0).map_err(io(tmp))?;
    restrict(&file).map_err(io(tmp))?;
    file.write_all(&out).map_err(io(tmp))?;
    file.sync_all().map_err(io(tmp))?;
    Ok(Aside {
        file,
        len: out.len() as u64,
    })
}

/// Adds `kept` to the file aside and renames it over `path` (so a crash
/// leaves the old file or the new, never a part): the file to append to
/// from then on. Without an `fsync` of `kept`, as every append goes.
fn put_in_place(path: &Path, aside: Aside, kept: &[u8]) -> Result<File, StateStoreError> {
    let Aside { mut file, .. } = aside;
    let tmp = aside_path(path);
    if !kept.is_empty() {
        file.write_all(kept).map_err(io(&tmp))?;
    }
    std::fs::rename(&tmp, path).map_err(io(path))?;
    Ok(file)
}

/// Deletes a file aside that will not be renamed; one left behind is
/// harmless (the next compaction empties it first), so a failure is only
/// logged.
fn remove_aside(tmp: &Path) {
    match std::fs::remove_file(tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(path = %tmp.display(), error = %e, "cannot remove a compaction's file aside");
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex, mpsc};

    use serde::Deserialize;

    use super::*;

    /// The latest value of each key: a `set` replaces it, an unset drops it.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Latest(BTreeMap<String, u64>);

    #[derive(Debug, Serialize, Deserialize)]
    struct Set {
        key: String,
        value: Option<u64>,
    }

    impl Fold for Latest {
        type Record = Set;

        fn apply(&mut self, record: Set) -> Result<(), String> {
            match record.value {
                Some(v) => self.0.insert(record.key, v),
                None => self.0.remove(&record.key),
            };
            Ok(())
        }

        fn compacted(&self) -> Vec<Set> {
            self.0
                .iter()
                .map(|(key, v)| Set {
                    key: key.clone(),
                    value: Some(*v),
                })
                .collect()
        }
    }

    const NAME: &str = "t.jsonl";

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-lines-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The file in `dir`, compacted once more than 256 bytes were appended.
    fn open(dir: &Path) -> JsonLines<Latest> {
        let (mut lines, warnings) =
            JsonLines::open(dir, NAME, "records will not survive", Latest::default()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        lines.set_compaction_floor(256);
        lines
    }

    fn set(lines: &mut JsonLines<Latest>, key: &str, value: Option<u64>) {
        lines.append(Set {
            key: key.to_owned(),
            value,
        });
    }

    /// Sets `key` to 1, 2, ... until a compaction starts; how many were set.
    fn set_until_compacting(lines: &mut JsonLines<Latest>, key: &str) -> u64 {
        for n in 1..100 {
            set(lines, key, Some(n));
            if lines.compaction.is_some() {
                return n;
            }
        }
        panic!("no compaction started");
    }

    /// Holds each compaction's thread once its file aside is written and
    /// synced: the first receiver hears when one is, and it goes on when
    /// the sender sends (or is dropped).
    fn hold(lines: &mut JsonLines<Latest>) -> (mpsc::Receiver<()>, mpsc::Sender<()>) {
        let (reached_tx, reached) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        lines.seam = Some(Seam(Arc::new(move || {
            let _ = reached_tx.send(());
            let _ = release_rx.lock().unwrap().recv();
            Ok(())
        })));
        (reached, release)
    }

    /// What a start reads from the files in `dir` as they are now, as an RM
    /// killed at this moment would leave them: they are opened in a copy,
    /// which is removed after.
    fn fold_after_a_crash(dir: &Path, name: &str) -> Latest {
        let image = temp_dir(name);
        std::fs::create_dir_all(&image).unwrap();
        for file in [NAME.to_owned(), format!("{NAME}.tmp")] {
            if dir.join(&file).exists() {
                std::fs::copy(dir.join(&file), image.join(&file)).unwrap();
            }
        }
        let lines = open(&image);
        let folded = lines.folded().clone();
        drop(lines);
        assert!(!image.join(format!("{NAME}.tmp")).exists());
        std::fs::remove_dir_all(&image).unwrap();
        folded
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn records_appended_while_a_compaction_runs_are_in_the_new_file_and_read_back_the_same() {
        let dir = temp_dir("in-flight");
        let mut lines = open(&dir);
        let (reached, release) = hold(&mut lines);
        set(&mut lines, "gone", Some(7));
        set(&mut lines, "gone", None);
        let n = set_until_compacting(&mut lines, "a");
        reached.recv().unwrap();
        let path = dir.join(NAME);
        let tmp = dir.join(format!("{NAME}.tmp"));
        // Written aside and synced, but not yet in place: the old file
        // still takes every record.
        assert_eq!(read(&tmp), format!("{{\"key\":\"a\",\"value\":{n}}}\n"));
        let before = read(&path);
        set(&mut lines, "b", Some(1));
        set(&mut lines, "a", None);
        set(&mut lines, "c", Some(2));
        let since = "{\"key\":\"b\",\"value\":1}\n{\"key\":\"a\",\"value\":null}\n{\"key\":\"c\",\"value\":2}\n";
        assert_eq!(read(&path), format!("{before}{since}"));
        assert!(lines.compaction.is_some());

        release.send(()).unwrap();
        lines.wait_for_compaction();
        assert!(lines.compaction.is_none());
        assert!(!tmp.exists());
        // The snapshot, then what came after it.
        assert_eq!(
            read(&path),
            format!("{{\"key\":\"a\",\"value\":{n}}}\n{since}")
        );
        // Later records go to the new file.
        set(&mut lines, "d", Some(3));
        assert!(read(&path).ends_with("{\"key\":\"d\",\"value\":3}\n"));
        let expected = Latest(BTreeMap::from([
            ("b".to_owned(), 1),
            ("c".to_owned(), 2),
            ("d".to_owned(), 3),
        ]));
        assert_eq!(lines.folded(), &expected);
        drop(lines);
        let lines = open(&dir);
        assert_eq!(lines.folded(), &expected);
        drop(lines);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_rm_killed_mid_compaction_loses_nothing() {
        let dir = temp_dir("killed");
        let mut lines = open(&dir);
        let (reached, release) = hold(&mut lines);
        set(&mut lines, "x", Some(1));
        set_until_compacting(&mut lines, "a");
        // Killed as the thread writes: the file aside is torn.
        set(&mut lines, "b", Some(2));
        let tmp = dir.join(format!("{NAME}.tmp"));
        let image = temp_dir("killed-torn");
        std::fs::create_dir_all(&image).unwrap();
        std::fs::copy(dir.join(NAME), image.join(NAME)).unwrap();
        std::fs::write(image.join(format!("{NAME}.tmp")), "{\"key\":\"a\",\"va").unwrap();
        assert_eq!(
            fold_after_a_crash(&image, "killed-torn-start"),
            *lines.folded()
        );
        std::fs::remove_dir_all(&image).unwrap();

        // Killed once the file aside is synced, with records since.
        reached.recv().unwrap();
        set(&mut lines, "x", None);
        set(&mut lines, "c", Some(3));
        assert!(tmp.exists());
        assert_eq!(fold_after_a_crash(&dir, "killed-synced"), *lines.folded());

        // Not killed after all: it finishes, and reads back the same.
        release.send(()).unwrap();
        lines.wait_for_compaction();
        assert_eq!(fold_after_a_crash(&dir, "killed-finished"), *lines.folded());
        drop(lines);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_store_dropped_mid_compaction_waits_for_it_and_leaves_one_whole_file() {
        let dir = temp_dir("dropped");
        let mut lines = open(&dir);
        let (reached, release) = hold(&mut lines);
        set_until_compacting(&mut lines, "a");
        reached.recv().unwrap();
        set(&mut lines, "b", Some(1));
        let folded = lines.folded().clone();
        release.send(()).unwrap();
        drop(lines);
        assert!(!dir.join(format!("{NAME}.tmp")).exists());
        // Finished, not abandoned: the snapshot and the record after it.
        assert_eq!(read(&dir.join(NAME)).lines().count(), 2);
        assert_eq!(*open(&dir).folded(), folded);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_quiet_store_finishes_its_compaction_when_polled() {
        let dir = temp_dir("quiet");
        let mut lines = open(&dir);
        set_until_compacting(&mut lines, "a");
        // No record comes: only polling puts the new file in place.
        while lines.compaction.is_some() {
            lines.poll();
            std::thread::yield_now();
        }
        assert_eq!(read(&dir.join(NAME)).lines().count(), 1);
        assert!(!dir.join(format!("{NAME}.tmp")).exists());
        drop(lines);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_compaction_keeps_the_old_file_whole_and_appended_to_and_is_tried_again_later() {
        let dir = temp_dir("failed");
        let mut lines = open(&dir);
        let failing = Arc::new(AtomicBool::new(true));
        let fails = Arc::clone(&failing);
        lines.seam = Some(Seam(Arc::new(move || {
            if fails.load(Ordering::SeqCst) {
                return Err(std::io::Error::other("the disk is on fire"));
            }
            Ok(())
        })));
        let path = dir.join(NAME);
        let n = set_until_compacting(&mut lines, "a");
        set(&mut lines, "b", Some(1));
        lines.wait_for_compaction();
        // Every line appended is there, none lost, and the file aside went.
        let all: String = (1..=n)
            .map(|v| format!("{{\"key\":\"a\",\"value\":{v}}}\n"))
            .chain(["{\"key\":\"b\",\"value\":1}\n".to_owned()])
            .collect();
        assert_eq!(read(&path), all);
        assert!(!dir.join(format!("{NAME}.tmp")).exists());
        // Still appended to, and not compacted again at once.
        set(&mut lines, "c", Some(2));
        assert!(lines.compaction.is_none());
        assert_eq!(read(&path), format!("{all}{{\"key\":\"c\",\"value\":2}}\n"));
        assert_eq!(fold_after_a_crash(&dir, "failed-crash"), *lines.folded());

        // Once as much more was appended, it is tried again, and succeeds.
        failing.store(false, Ordering::SeqCst);
        set_until_compacting(&mut lines, "d");
        lines.wait_for_compaction();
        assert_eq!(read(&path).lines().count(), 4, "{}", read(&path));
        assert_eq!(fold_after_a_crash(&dir, "failed-retried"), *lines.folded());
        drop(lines);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
