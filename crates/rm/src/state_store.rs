//! The RM's state store (`weft.rm.state-store.dir`, off by default): what
//! it must remember across a restart to take its applications back, as
//! append-only JSON lines in `<dir>/apps.jsonl` — a submission (with the
//! queue placement chose, the AM's launch context, the app's ACLs and the
//! lifetime expiry),
//! an AM container allocated, an attempt that failed, a new lifetime
//! expiry, an app that ended. Expiries are wall-clock milliseconds, since
//! the core's clock starts again with every run. The graceful
//! decommissions under way go beside it in `<dir>/nodes.jsonl` (`drains`).
//!
//! At start the file is read, folded into the apps still alive, and
//! rewritten with only those (so it never grows beyond the live apps plus
//! what happened since the last start); the actor then feeds each to the
//! core as `Input::AppRecovered`. Containers are not stored: nodes bring
//! theirs back when they re-register, as YARN's work-preserving recovery
//! does. Asks and finished apps are not stored either.
//!
//! Each record is one `write` on a file opened for appending, with no
//! `fsync`: the store survives the RM being killed, not the machine losing
//! power. A line that does not parse (a torn last write, even one torn
//! inside a character) or cannot be applied is skipped with a warning
//! rather than stopping the RM, and appended to `apps.jsonl.skipped` before
//! the rewrite, which would otherwise delete it for good. Both files follow
//! these rules through the same code (`lines`); what their records mean is
//! theirs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use weft_core::{RecoveredApp, Submission};
use weft_model::{AppId, AppPriority, ContainerId, QueuePath};
use weft_queue_tree::Acl;

use crate::access::AppAcls;
use crate::dto::ResourceDto;
use crate::view::AppExtra;

pub(crate) mod drains;
mod lines;

use lines::{Fold, JsonLines};

/// The file in the state directory.
pub const STATE_FILE_NAME: &str = "apps.jsonl";

/// Where lines skipped at start are kept, beside the state file: the
/// compaction that follows would otherwise delete them for good.
pub const SKIPPED_FILE_NAME: &str = "apps.jsonl.skipped";

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
    /// When it is killed for its lifetime, in wall-clock milliseconds since
    /// the epoch (`recovered.lifetime_expiry` is left for the actor to set
    /// on its own clock).
    pub lifetime_expiry_ms: Option<u64>,
}

/// The open store: the live apps it knows, and the file it appends to.
#[derive(Debug)]
pub struct StateStore {
    lines: JsonLines,
    /// Apps stored and not ended: records about others are not written.
    live: BTreeSet<AppId>,
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "camelCase")]
#[expect(
    clippy::large_enum_variant,
    reason = "a record lives while one line is written or read; only compaction, once a start, holds one per live app"
)]
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
        /// When it is killed for its lifetime (ms since the epoch); absent
        /// without a lifetime, and in files written before lifetimes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lifetime_expiry: Option<u64>,
        /// The app's own ACLs; absent when it has none, and in files
        /// written before them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        application_acls: Option<StoredAcls>,
    },
    /// The app was given a new lifetime expiry (ms since the epoch).
    LifetimeSet { app: String, expiry: u64 },
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

/// An app's ACLs in Hadoop's text form, by YARN's names; one not stored is nobody's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct StoredAcls {
    #[serde(rename = "VIEW_APP", default, skip_serializing_if = "Option::is_none")]
    view: Option<String>,
    #[serde(
        rename = "MODIFY_APP",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    modify: Option<String>,
}

impl StoredAcls {
    /// What to store of `acls`: nothing when they name nobody.
    fn of(acls: &AppAcls) -> Option<StoredAcls> {
        let text = |acl: &Acl| (!acl.is_nobody()).then(|| acl.to_string());
        (!acls.is_empty()).then(|| StoredAcls {
            view: text(&acls.view),
            modify: text(&acls.modify),
        })
    }

    fn acls(&self) -> AppAcls {
        let acl = |text: &Option<String>| text.as_deref().map_or_else(Acl::nobody, Acl::parse);
        AppAcls {
            view: acl(&self.view),
            modify: acl(&self.modify),
        }
    }
}

impl StateStore {
    /// Opens (creating if needed) the store in `dir`: the apps it says are
    /// alive, warnings about lines it skipped, and the store, whose file now
    /// holds only those apps.
    pub fn open(dir: &Path) -> Result<(StateStore, Vec<StoredApp>, Vec<String>), StateStoreError> {
        let (lines, folded, warnings) = JsonLines::open::<LiveApps>(
            dir,
            STATE_FILE_NAME,
            "applications submitted from now on will not survive a restart",
        )?;
        let apps = folded.into_apps();
        let live = apps.iter().map(|a| a.recovered.submission.app).collect();
        Ok((StateStore { lines, live }, apps, warnings))
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// An accepted submission, placed in `queue`, killed at
    /// `lifetime_expiry` (ms since the epoch) if it has a lifetime.
    pub(crate) fn submitted(
        &mut self,
        sub: &Submission,
        queue: &QueuePath,
        extra: &AppExtra,
        lifetime_expiry: Option<u64>,
    ) {
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
            lifetime_expiry,
            application_acls: StoredAcls::of(&extra.acls),
        };
        self.lines.append(&record);
    }

    /// The app was given a new lifetime expiry (ms since the epoch).
    pub(crate) fn lifetime_set(&mut self, app: AppId, expiry: u64) {
        if self.live.contains(&app) {
            self.lines.append(&Record::LifetimeSet {
                app: app.to_string(),
                expiry,
            });
        }
    }

    /// An attempt's AM container was allocated.
    pub(crate) fn am_allocated(&mut self, container: ContainerId) {
        if self.live.contains(&container.app()) {
            self.lines.append(&Record::AmAllocated {
                container: container.to_string(),
            });
        }
    }

    /// An attempt failed and the next one starts.
    pub(crate) fn attempt_failed(&mut self, app: AppId) {
        if self.live.contains(&app) {
            self.lines.append(&Record::AttemptFailed {
                app: app.to_string(),
            });
        }
    }

    /// The app ended.
    pub(crate) fn ended(&mut self, app: AppId) {
        if self.live.remove(&app) {
            self.lines.append(&Record::Ended {
                app: app.to_string(),
            });
        }
    }
}

/// The apps alive at the file's end, in the order they were submitted.
#[derive(Default)]
struct LiveApps {
    apps: BTreeMap<AppId, StoredApp>,
    order: Vec<AppId>,
}

impl LiveApps {
    fn into_apps(self) -> Vec<StoredApp> {
        let LiveApps { mut apps, order } = self;
        order
            .into_iter()
            .filter_map(|id| apps.remove(&id))
            .collect()
    }
}

impl Fold for LiveApps {
    type Record = Record;

    fn apply(&mut self, record: Record) -> Result<(), String> {
        apply(&mut self.apps, &mut self.order, record)
    }

    fn compacted(&self) -> Vec<Record> {
        self.order
            .iter()
            .filter_map(|id| self.apps.get(id))
            .map(compacted)
            .collect()
    }
}

/// `attempt` if an attempt after it can still be numbered: the core counts
/// attempts on by one, so the last number would leave it nowhere to go.
fn usable_attempt(attempt: u32) -> Result<u32, String> {
    if attempt == u32::MAX {
        return Err(format!(
            "attempt {attempt} leaves no number for a next attempt"
        ));
    }
    Ok(attempt)
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
            lifetime_expiry,
            application_acls,
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
                        lifetime: None,
                    },
                    queue,
                    attempt: usable_attempt(attempt)?.max(1),
                    am_container_allocated,
                    lifetime_expiry: None,
                },
                extra: AppExtra {
                    launch_context: launch_context.map(Arc::new),
                    unmanaged,
                    acls: application_acls.map(|a| a.acls()).unwrap_or_default(),
                    ..AppExtra::default()
                },
                lifetime_expiry_ms: lifetime_expiry,
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
                app.recovered.attempt = usable_attempt(c.attempt.attempt)?;
                app.recovered.am_container_allocated = true;
            }
        }
        Record::AttemptFailed { app } => {
            if let Some(app) = apps.get_mut(&parse_app(&app)?) {
                app.recovered.attempt = usable_attempt(app.recovered.attempt.saturating_add(1))?;
                app.recovered.am_container_allocated = false;
            }
        }
        Record::LifetimeSet { app, expiry } => {
            if let Some(app) = apps.get_mut(&parse_app(&app)?) {
                app.lifetime_expiry_ms = Some(expiry);
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
        lifetime_expiry: app.lifetime_expiry_ms,
        application_acls: StoredAcls::of(&app.extra.acls),
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
            lifetime: None,
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
        store.submitted(&submission(1, true), &queue, &ctx, None);
        store.submitted(&submission(2, false), &queue, &AppExtra::default(), None);
        store.submitted(&submission(3, false), &queue, &AppExtra::default(), None);
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
            warnings[0].ends_with(&format!(
                ":8: skipped: not a state record (EOF while parsing a string at line 1 column 31); kept in {}",
                dir.join(SKIPPED_FILE_NAME).display()
            )),
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

    fn submitted_line(seq: u32, name: &str, attempt: u32) -> String {
        format!(
            r#"{{"record":"submitted","app":"application_7_{seq:04}","user":"alice","name":"{name}","appType":"YARN","queue":"root.a","amResource":{{"memory":1024,"vCores":1}},"attempt":{attempt}}}"#
        )
    }

    #[test]
    fn a_write_torn_inside_a_character_is_skipped_like_any_torn_line() {
        let dir = temp_dir("torn-utf8");
        std::fs::create_dir_all(&dir).unwrap();
        // serde_json writes non-ASCII text as raw UTF-8: a crash can cut a
        // character in half, which used to make the whole file unreadable.
        let mut bytes = format!("{}\n", submitted_line(1, "jöb", 1)).into_bytes();
        let torn = submitted_line(2, "é", 1);
        let cut = torn.find('é').unwrap() + 1;
        bytes.extend_from_slice(&torn.as_bytes()[..cut]);
        std::fs::write(dir.join(STATE_FILE_NAME), &bytes).unwrap();
        let (_store, apps, warnings) = StateStore::open(&dir).unwrap();
        assert_eq!(apps.len(), 1);
        assert_eq!(apps[0].recovered.submission.name, "jöb");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains(":2: skipped: not a state record ("),
            "{warnings:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn attempt_numbers_that_leave_no_next_attempt_are_skipped() {
        let dir = temp_dir("attempts");
        std::fs::create_dir_all(&dir).unwrap();
        let text = [
            submitted_line(1, "a", u32::MAX - 1),
            r#"{"record":"attemptFailed","app":"application_7_0001"}"#.to_owned(),
            submitted_line(2, "b", u32::MAX),
            // Once a panic on overflow at start.
            r#"{"record":"attemptFailed","app":"application_7_0002"}"#.to_owned(),
            submitted_line(3, "c", 1),
            r#"{"record":"amAllocated","container":"container_7_0003_4294967295_000001"}"#
                .to_owned(),
        ]
        .join("\n");
        std::fs::write(dir.join(STATE_FILE_NAME), text).unwrap();
        let (_store, apps, warnings) = StateStore::open(&dir).unwrap();
        let attempts: Vec<(String, u32)> = apps
            .iter()
            .map(|a| (a.recovered.submission.app.to_string(), a.recovered.attempt))
            .collect();
        assert_eq!(
            attempts,
            [
                ("application_7_0001".to_owned(), u32::MAX - 1),
                ("application_7_0003".to_owned(), 1)
            ]
        );
        let why: Vec<&str> = warnings
            .iter()
            .map(|w| {
                let why = w.split_once(": skipped: ").unwrap().1;
                why.split_once("; kept in ").unwrap().0
            })
            .collect();
        expect![[r#"
            [
                "attempt 4294967295 leaves no number for a next attempt",
                "attempt 4294967295 leaves no number for a next attempt",
                "attempt 4294967295 leaves no number for a next attempt",
            ]
        "#]]
        .assert_debug_eq(&why);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lifetime_expiries_survive_a_reopen_and_files_from_before_them_load() {
        let dir = temp_dir("lifetime");
        std::fs::create_dir_all(&dir).unwrap();
        // A file written before lifetimes existed.
        let old = format!("{}\n", submitted_line(1, "old", 1));
        std::fs::write(dir.join(STATE_FILE_NAME), &old).unwrap();
        let (mut store, apps, warnings) = StateStore::open(&dir).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(apps[0].lifetime_expiry_ms, None);
        // An app without a lifetime is written without the field, so an
        // older Weft reads the file as it wrote it.
        let compacted = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        assert!(!compacted.contains("lifetime"), "{compacted}");
        let queue: QueuePath = "root.a".parse().unwrap();
        store.submitted(
            &submission(2, true),
            &queue,
            &AppExtra::default(),
            Some(1_700_000_600_000),
        );
        store.lifetime_set(AppId::new(7, 2), 1_700_001_200_000);
        // An app that had none gains one.
        store.lifetime_set(AppId::new(7, 1), 1_700_000_900_000);
        // Records about apps the store does not hold are not written.
        store.lifetime_set(AppId::new(7, 9), 1);
        drop(store);
        let text = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        assert_eq!(
            text.matches(r#""record":"lifetimeSet""#).count(),
            2,
            "{text}"
        );
        let expiries = |apps: &[StoredApp]| -> Vec<(u32, Option<u64>)> {
            apps.iter()
                .map(|a| (a.recovered.submission.app.seq, a.lifetime_expiry_ms))
                .collect()
        };
        let (_store, apps, warnings) = StateStore::open(&dir).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let want = vec![(1, Some(1_700_000_900_000)), (2, Some(1_700_001_200_000))];
        assert_eq!(expiries(&apps), want);
        // Compacted into the submissions, and read back the same.
        let text = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.contains(r#""lifetimeExpiry":1700001200000"#), "{text}");
        let (_store, again, _) = StateStore::open(&dir).unwrap();
        assert_eq!(expiries(&again), want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn application_acls_survive_a_reopen_and_files_from_before_them_load() {
        let dir = temp_dir("acls");
        std::fs::create_dir_all(&dir).unwrap();
        // A file written before application ACLs: the app has none.
        std::fs::write(
            dir.join(STATE_FILE_NAME),
            format!("{}\n", submitted_line(1, "old", 1)),
        )
        .unwrap();
        let (mut store, apps, warnings) = StateStore::open(&dir).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(apps[0].extra.acls, AppAcls::default());
        let queue: QueuePath = "root.a".parse().unwrap();
        let with_acls = AppExtra {
            acls: AppAcls {
                view: Acl::parse("bob viewers"),
                modify: Acl::nobody(),
            },
            ..AppExtra::default()
        };
        store.submitted(&submission(2, true), &queue, &with_acls, None);
        drop(store);
        let text = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        // An app without ACLs is written without the field.
        assert_eq!(text.matches("applicationAcls").count(), 1, "{text}");
        assert!(
            text.contains(r#""applicationAcls":{"VIEW_APP":"bob viewers"}"#),
            "{text}"
        );
        for _ in 0..2 {
            // Read back, then read back the compacted file.
            let (_store, apps, warnings) = StateStore::open(&dir).unwrap();
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(apps[0].extra.acls, AppAcls::default());
            assert_eq!(apps[1].extra.acls, with_acls.acls);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn skipped_lines_are_kept_aside_not_compacted_away() {
        let dir = temp_dir("kept");
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!(
            "{}\n{{\"record\":\"ended\",\"app\":\"appl\0\0\n{{\"record\":\"renamed\"}}\n{}\n",
            submitted_line(1, "a", 1),
            submitted_line(2, "b", 1)
        );
        std::fs::write(dir.join(STATE_FILE_NAME), &text).unwrap();
        let (_store, apps, warnings) = StateStore::open(&dir).unwrap();
        assert_eq!(apps.len(), 2);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        let kept = dir.join(SKIPPED_FILE_NAME);
        assert!(
            warnings
                .iter()
                .all(|w| w.ends_with(&format!("; kept in {}", kept.display()))),
            "{warnings:?}"
        );
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            format!("{}\n{}\n", lines[1], lines[2])
        );
        // A later start with more to skip adds to the lines kept.
        let mut again = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        again.push_str("garbage\n");
        std::fs::write(dir.join(STATE_FILE_NAME), again).unwrap();
        let (_store, apps, _) = StateStore::open(&dir).unwrap();
        assert_eq!(apps.len(), 2);
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            format!("{}\n{}\ngarbage\n", lines[1], lines[2])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
