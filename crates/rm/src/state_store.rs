//! The RM's state store (`weft.rm.state-store.dir`, off by default): what
//! it must remember across a restart to take its applications back, as
//! append-only JSON lines in `<dir>/apps.jsonl` — a submission (with the
//! queue placement chose and the AM's launch context), an AM container
//! allocated, an attempt that failed, an app that ended.
//!
//! At start the file is read, folded into the apps still alive, and
//! rewritten with only those (so it never grows beyond the live apps plus
//! what happened since the last start); the actor then feeds each to the
//! core as `Input::AppRecovered`. Containers are not stored: nodes bring
//! theirs back when they re-register, as YARN's work-preserving recovery
//! does. Nodes, asks and finished apps are not stored either.
//!
//! Each record is one `write` on a file opened for appending, with no
//! `fsync`: the store survives the RM being killed, not the machine losing
//! power. A line that does not parse (a torn last write) is skipped with a
//! warning rather than stopping the RM.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use weft_core::{RecoveredApp, Submission};
use weft_model::{AppId, AppPriority, ContainerId, QueuePath};

use crate::dto::ResourceDto;
use crate::view::AppExtra;

/// The file in the state directory.
pub const STATE_FILE_NAME: &str = "apps.jsonl";

/// Why the state store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateStoreError {
    /// The directory or file could not be created, read or rewritten.
    #[error("state store {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// An application the store says was alive, with what recovering it needs.
#[derive(Clone, Debug)]
pub struct StoredApp {
    /// What the core takes back.
    pub recovered: RecoveredApp,
    /// What the shell keeps beside it (launch context, unmanaged flag).
    pub extra: AppExtra,
}

/// The open store: the live apps it knows, and the file it appends to.
#[derive(Debug)]
pub struct StateStore {
    path: PathBuf,
    file: File,
    /// Apps stored and not ended: records about others are not written.
    live: BTreeSet<AppId>,
    /// Set after the first write error, so a full disk is reported once.
    broken: bool,
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "camelCase")]
enum Record {
    /// An accepted submission, placed in `queue`.
    #[serde(rename_all = "camelCase")]
    Submitted {
        app: String,
        user: String,
        name: String,
        app_type: String,
        #[serde(default)]
        tags: Vec<String>,
        queue: String,
        #[serde(default)]
        priority: i32,
        /// `None`: an unmanaged AM.
        #[serde(default)]
        am_resource: Option<ResourceDto>,
        #[serde(default)]
        launch_context: Option<serde_json::Value>,
        /// Written by compaction only: the attempt the app was at.
        #[serde(default = "first_attempt")]
        attempt: u32,
        /// Written by compaction only: that attempt's AM container was allocated.
        #[serde(default)]
        am_container_allocated: bool,
    },
    /// The AM container of an attempt was allocated (the id names the attempt).
    AmAllocated { container: String },
    /// An attempt failed; the next one starts.
    AttemptFailed { app: String },
    /// The application ended (any final state).
    Ended { app: String },
}

fn first_attempt() -> u32 {
    1
}

impl StateStore {
    /// Opens (creating if needed) the store in `dir`: the apps it says are
    /// alive, warnings about lines it skipped, and the store, whose file now
    /// holds only those apps.
    pub fn open(dir: &Path) -> Result<(StateStore, Vec<StoredApp>, Vec<String>), StateStoreError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| StateStoreError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join(STATE_FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io(&path)(e)),
        };
        let (apps, warnings) = fold(&text, &path);
        // Compact: the live apps only, written aside and renamed over.
        let tmp = dir.join(format!("{STATE_FILE_NAME}.tmp"));
        let mut out = Vec::new();
        for app in &apps {
            serde_json::to_writer(&mut out, &compacted(app)).expect("records serialize");
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
        let live = apps.iter().map(|a| a.recovered.submission.app).collect();
        Ok((
            StateStore {
                path,
                file,
                live,
                broken: false,
            },
            apps,
            warnings,
        ))
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// An accepted submission, placed in `queue`.
    pub(crate) fn submitted(&mut self, sub: &Submission, queue: &QueuePath, extra: &AppExtra) {
        self.live.insert(sub.app);
        let record = Record::Submitted {
            app: sub.app.to_string(),
            user: sub.user.clone(),
            name: sub.name.clone(),
            app_type: sub.app_type.clone(),
            tags: sub.tags.clone(),
            queue: queue.to_string(),
            priority: sub.priority.0,
            am_resource: sub.am_resource.map(ResourceDto::from_resource),
            launch_context: extra.launch_context.as_deref().cloned(),
            attempt: 1,
            am_container_allocated: false,
        };
        self.append(&record);
    }

    /// An attempt's AM container was allocated.
    pub(crate) fn am_allocated(&mut self, container: ContainerId) {
        if self.live.contains(&container.app()) {
            self.append(&Record::AmAllocated {
                container: container.to_string(),
            });
        }
    }

    /// An attempt failed and the next one starts.
    pub(crate) fn attempt_failed(&mut self, app: AppId) {
        if self.live.contains(&app) {
            self.append(&Record::AttemptFailed {
                app: app.to_string(),
            });
        }
    }

    /// The app ended.
    pub(crate) fn ended(&mut self, app: AppId) {
        if self.live.remove(&app) {
            self.append(&Record::Ended {
                app: app.to_string(),
            });
        }
    }

    fn append(&mut self, record: &Record) {
        if self.broken {
            return;
        }
        let mut line = serde_json::to_vec(record).expect("records serialize");
        line.push(b'\n');
        // One write on an O_APPEND file: a line is never interleaved.
        if let Err(e) = self.file.write_all(&line) {
            self.broken = true;
            tracing::error!(path = %self.path.display(), error = %e, "cannot write the state store; applications submitted from now on will not survive a restart");
        }
    }
}

/// Folds the file's lines into the apps alive at its end, in the order they
/// were submitted, with a warning for each line skipped.
fn fold(text: &str, path: &Path) -> (Vec<StoredApp>, Vec<String>) {
    let mut apps: BTreeMap<AppId, StoredApp> = BTreeMap::new();
    let mut order: Vec<AppId> = Vec::new();
    let mut warnings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let skip = |why: String| format!("{}:{}: skipped: {why}", path.display(), i + 1);
        let record: Record = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                warnings.push(skip(format!("not a state record ({e})")));
                continue;
            }
        };
        match apply(&mut apps, &mut order, record) {
            Ok(()) => {}
            Err(why) => warnings.push(skip(why)),
        }
    }
    let res = order
        .into_iter()
        .filter_map(|id| apps.remove(&id))
        .collect();
    (res, warnings)
}

fn apply(
    apps: &mut BTreeMap<AppId, StoredApp>,
    order: &mut Vec<AppId>,
    record: Record,
) -> Result<(), String> {
    let parse_app = |text: &str| -> Result<AppId, String> {
        text.parse()
            .map_err(|e: weft_model::IdParseError| e.to_string())
    };
    match record {
        Record::Submitted {
            app,
            user,
            name,
            app_type,
            tags,
            queue,
            priority,
            am_resource,
            launch_context,
            attempt,
            am_container_allocated,
        } => {
            let id = parse_app(&app)?;
            let queue = QueuePath::parse(&queue).map_err(|e| e.to_string())?;
            let unmanaged = am_resource.is_none();
            let stored = StoredApp {
                recovered: RecoveredApp {
                    submission: Submission {
                        app: id,
                        user,
                        groups: Vec::new(),
                        queue: Some(queue.to_string()),
                        priority: AppPriority(priority),
                        am_resource: am_resource.map(ResourceDto::to_resource),
                        name,
                        app_type,
                        tags,
                    },
                    queue,
                    attempt: attempt.max(1),
                    am_container_allocated,
                },
                extra: AppExtra {
                    launch_context: launch_context.map(Arc::new),
                    unmanaged,
                    ..AppExtra::default()
                },
            };
            if apps.insert(id, stored).is_none() {
                order.push(id);
            }
        }
        Record::AmAllocated { container } => {
            let c: ContainerId = container
                .parse()
                .map_err(|e: weft_model::IdParseError| e.to_string())?;
            if let Some(app) = apps.get_mut(&c.app()) {
                app.recovered.attempt = c.attempt.attempt;
                app.recovered.am_container_allocated = true;
            }
        }
        Record::AttemptFailed { app } => {
            if let Some(app) = apps.get_mut(&parse_app(&app)?) {
                app.recovered.attempt += 1;
                app.recovered.am_container_allocated = false;
            }
        }
        Record::Ended { app } => {
            let id = parse_app(&app)?;
            apps.remove(&id);
            order.retain(|a| *a != id);
        }
    }
    Ok(())
}

fn compacted(app: &StoredApp) -> Record {
    let sub = &app.recovered.submission;
    Record::Submitted {
        app: sub.app.to_string(),
        user: sub.user.clone(),
        name: sub.name.clone(),
        app_type: sub.app_type.clone(),
        tags: sub.tags.clone(),
        queue: app.recovered.queue.to_string(),
        priority: sub.priority.0,
        am_resource: sub.am_resource.map(ResourceDto::from_resource),
        launch_context: app.extra.launch_context.as_deref().cloned(),
        attempt: app.recovered.attempt,
        am_container_allocated: app.recovered.am_container_allocated,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use weft_model::{AttemptId, Resource};

    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn submission(seq: u32, managed: bool) -> Submission {
        Submission {
            app: AppId::new(7, seq),
            user: "alice".into(),
            groups: vec!["staff".into()],
            queue: Some("asked".into()),
            priority: AppPriority(2),
            am_resource: managed.then(|| Resource::new(1024, 1)),
            name: format!("job{seq}"),
            app_type: "YARN".into(),
            tags: vec!["t".into()],
        }
    }

    fn render(apps: &[StoredApp]) -> Vec<String> {
        apps.iter()
            .map(|a| {
                let r = &a.recovered;
                format!(
                    "{} {} attempt {} am allocated {} unmanaged {} context {}",
                    r.submission.app,
                    r.queue,
                    r.attempt,
                    r.am_container_allocated,
                    a.extra.unmanaged,
                    a.extra
                        .launch_context
                        .as_ref()
                        .map_or("-".to_owned(), |c| c.to_string())
                )
            })
            .collect()
    }

    #[test]
    fn live_apps_survive_a_reopen_with_their_attempt_and_the_file_is_compacted() {
        let dir = temp_dir("reopen");
        let (mut store, apps, warnings) = StateStore::open(&dir).unwrap();
        assert!(apps.is_empty() && warnings.is_empty());
        let queue: QueuePath = "root.a".parse().unwrap();
        let ctx = AppExtra {
            launch_context: Some(Arc::new(
                serde_json::json!({"commands": {"command": "sleep 9"}}),
            )),
            ..AppExtra::default()
        };
        store.submitted(&submission(1, true), &queue, &ctx);
        store.submitted(&submission(2, false), &queue, &AppExtra::default());
        store.submitted(&submission(3, false), &queue, &AppExtra::default());
        let attempt1 = AttemptId::new(AppId::new(7, 1), 1);
        store.am_allocated(ContainerId::new(attempt1, 1));
        store.attempt_failed(AppId::new(7, 1));
        store.am_allocated(ContainerId::new(AttemptId::new(AppId::new(7, 1), 2), 1));
        store.ended(AppId::new(7, 3));
        // Records about apps the store does not hold are not written.
        store.ended(AppId::new(7, 9));
        drop(store);
        // A torn last line, as a crash mid-write leaves.
        let path = dir.join(STATE_FILE_NAME);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"record\":\"ended\",\"app\":\"applic");
        std::fs::write(&path, text).unwrap();

        let (_store, apps, warnings) = StateStore::open(&dir).unwrap();
        let shown = render(&apps);
        expect![[r#"
            [
                "application_7_0001 root.a attempt 2 am allocated true unmanaged false context {\"commands\":{\"command\":\"sleep 9\"}}",
                "application_7_0002 root.a attempt 1 am allocated false unmanaged true context -",
            ]
        "#]]
        .assert_debug_eq(&shown);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].ends_with(
                ":8: skipped: not a state record (EOF while parsing a string at line 1 column 31)"
            ),
            "{warnings:?}"
        );
        // Compacted: one line per live app, and it reads back the same.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        let (_store, again, warnings) = StateStore::open(&dir).unwrap();
        assert_eq!(render(&again), shown);
        assert_eq!(again[0].recovered.submission, apps[0].recovered.submission);
        assert!(warnings.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
