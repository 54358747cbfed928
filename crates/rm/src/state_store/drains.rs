//! The state store's record of graceful decommissions (drains) under way,
//! in `<dir>/nodes.jsonl` beside `apps.jsonl`: a drain that started or was
//! given new terms (its node, when it started, its deadline, whether it
//! waits for applications, and the timeout users are shown), and a drain
//! that ended (the node was decommissioned or recommissioned, or left).
//!
//! The file follows `apps.jsonl`'s rules (`lines`): compacted at start to
//! the drains still under way, one write per record, torn lines skipped
//! and kept in `nodes.jsonl.skipped`. Times are wall-clock milliseconds
//! since the epoch, since the core's clock starts again with each RM.
//! What becomes of a stored drain after a restart is the actor's business
//! (`actor::drains`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use weft_model::{AppId, NodeId};

use super::StateStoreError;
use super::lines::{Fold, JsonLines};
use crate::hosts::TimeoutSecs;

/// The file in the state directory.
pub(crate) const DRAINS_FILE_NAME: &str = "nodes.jsonl";

/// A drain under way, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredDrain {
    /// The draining node.
    pub(crate) node: NodeId,
    /// When it started draining (epoch milliseconds): new terms count from
    /// here, across restarts too.
    pub(crate) started_ms: u64,
    /// When it is decommissioned whatever still runs there (epoch
    /// milliseconds); `None`: no timeout.
    pub(crate) deadline_ms: Option<u64>,
    /// Whether it also waits for the applications that ran containers on it.
    pub(crate) wait_for_apps: bool,
    /// The timeout users are shown (`decommissioningTimeout`).
    pub(crate) timeout: TimeoutSecs,
    /// With `wait_for_apps`, the apps it waited for when its terms were
    /// stored: after a restart it waits for those still live too, though
    /// their containers there may have ended before it.
    pub(crate) apps: Vec<AppId>,
}

/// The open file, and what its records fold into: the drains stored and
/// not ended, with their last terms.
#[derive(Debug)]
pub(crate) struct DrainStore {
    lines: JsonLines<LiveDrains>,
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "camelCase")]
enum Record {
    /// A drain started, or was given new terms: these replace any before.
    #[serde(rename_all = "camelCase")]
    Draining {
        node: String,
        started_ms: u64,
        /// `None`: no timeout.
        #[serde(default)]
        deadline_ms: Option<u64>,
        wait_for_apps: bool,
        timeout_secs: i64,
        /// Absent in files written before it was kept.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        apps: Vec<String>,
    },
    /// The drain ended, however it did.
    Ended { node: String },
}

impl DrainStore {
    /// Opens (creating if needed) the file in `dir`: the drains it says are
    /// under way, by node, warnings about lines it skipped, and the store,
    /// whose file now holds only those drains.
    pub(crate) fn open(
        dir: &Path,
    ) -> Result<(DrainStore, Vec<StoredDrain>, Vec<String>), StateStoreError> {
        let (lines, warnings) = JsonLines::open(
            dir,
            DRAINS_FILE_NAME,
            "drains started or changed from now on will not survive a restart",
            LiveDrains::default(),
        )?;
        let drains = lines.folded().0.values().cloned().collect();
        Ok((DrainStore { lines }, drains, warnings))
    }

    /// The file written.
    pub(crate) fn path(&self) -> &Path {
        self.lines.path()
    }

    /// Finishes a compaction of the file whose thread is done (see
    /// `lines`), as `StateStore::poll` does.
    pub(crate) fn poll(&mut self) {
        self.lines.poll();
    }

    /// The terms stored for `node`'s drain, if one is under way.
    pub(crate) fn get(&self, node: &NodeId) -> Option<&StoredDrain> {
        self.lines.folded().0.get(node)
    }

    /// A drain started, or was given new terms; terms the file already
    /// holds are not written again.
    pub(crate) fn draining(&mut self, drain: StoredDrain) {
        if self.get(&drain.node) == Some(&drain) {
            return;
        }
        self.lines.append(to_record(&drain));
    }

    /// `node`'s drain ended; nothing is written if none was stored.
    pub(crate) fn ended(&mut self, node: &NodeId) {
        if self.get(node).is_some() {
            self.lines.append(Record::Ended {
                node: node.to_string(),
            });
        }
    }
}

fn to_record(d: &StoredDrain) -> Record {
    Record::Draining {
        node: d.node.to_string(),
        started_ms: d.started_ms,
        deadline_ms: d.deadline_ms,
        wait_for_apps: d.wait_for_apps,
        timeout_secs: d.timeout.0,
        apps: d.apps.iter().map(ToString::to_string).collect(),
    }
}

/// The drains under way at the file's end, by node.
#[derive(Debug, Default)]
struct LiveDrains(BTreeMap<NodeId, StoredDrain>);

impl Fold for LiveDrains {
    type Record = Record;

    fn apply(&mut self, record: Record) -> Result<(), String> {
        let parse = |text: &str| -> Result<NodeId, String> {
            text.parse()
                .map_err(|e: weft_model::IdParseError| e.to_string())
        };
        match record {
            Record::Draining {
                node,
                started_ms,
                deadline_ms,
                wait_for_apps,
                timeout_secs,
                apps,
            } => {
                let node = parse(&node)?;
                let apps = apps
                    .iter()
                    .map(|a| a.parse::<AppId>().map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()?;
                if let Some(deadline) = deadline_ms.filter(|d| *d < started_ms) {
                    return Err(format!(
                        "the drain of {node} ends (deadlineMs {deadline}) before it started (startedMs {started_ms})"
                    ));
                }
                let drain = StoredDrain {
                    node: node.clone(),
                    started_ms,
                    deadline_ms,
                    wait_for_apps,
                    timeout: TimeoutSecs(timeout_secs),
                    apps,
                };
                self.0.insert(node, drain);
            }
            Record::Ended { node } => {
                self.0.remove(&parse(&node)?);
            }
        }
        Ok(())
    }

    fn compacted(&self) -> Vec<Record> {
        self.0.values().map(to_record).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use expect_test::expect;

    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-drains-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn drain(node: &str, started_ms: u64, timeout: i64) -> StoredDrain {
        StoredDrain {
            node: node.parse().unwrap(),
            started_ms,
            deadline_ms: u64::try_from(timeout).ok().map(|t| started_ms + t * 1_000),
            wait_for_apps: true,
            timeout: TimeoutSecs(timeout),
            apps: Vec::new(),
        }
    }

    fn render(drains: &[StoredDrain]) -> Vec<String> {
        drains
            .iter()
            .map(|d| {
                format!(
                    "{} started {} deadline {:?} wait {} timeout {} apps {:?}",
                    d.node,
                    d.started_ms,
                    d.deadline_ms,
                    d.wait_for_apps,
                    d.timeout,
                    d.apps.iter().map(ToString::to_string).collect::<Vec<_>>()
                )
            })
            .collect()
    }

    #[test]
    fn drains_under_way_survive_a_reopen_with_their_last_terms_and_the_file_is_compacted() {
        let dir = temp_dir("reopen");
        let (mut store, drains, warnings) = DrainStore::open(&dir).unwrap();
        assert!(drains.is_empty() && warnings.is_empty());
        store.draining(drain("h1:8041", 1_000, 600));
        store.draining(drain("h2:8041", 2_000, -1));
        store.draining(drain("h3:8041", 3_000, 60));
        // New terms for h1: they replace the first; the same terms again
        // are not written.
        let mut shorter = drain("h1:8041", 1_000, 120);
        shorter.apps = vec![AppId::new(1_700_000_000_000, 7)];
        store.draining(shorter.clone());
        store.draining(shorter);
        store.ended(&"h3:8041".parse().unwrap());
        // A drain the store does not hold ends without a record.
        store.ended(&"h9:8041".parse().unwrap());
        let path = dir.join(DRAINS_FILE_NAME);
        assert_eq!(store.path(), path);
        drop(store);
        let text = std::fs::read_to_string(&path).unwrap();
        expect![[r#"
            {"record":"draining","node":"h1:8041","startedMs":1000,"deadlineMs":601000,"waitForApps":true,"timeoutSecs":600}
            {"record":"draining","node":"h2:8041","startedMs":2000,"deadlineMs":null,"waitForApps":true,"timeoutSecs":-1}
            {"record":"draining","node":"h3:8041","startedMs":3000,"deadlineMs":63000,"waitForApps":true,"timeoutSecs":60}
            {"record":"draining","node":"h1:8041","startedMs":1000,"deadlineMs":121000,"waitForApps":true,"timeoutSecs":120,"apps":["application_1700000000000_0007"]}
            {"record":"ended","node":"h3:8041"}
        "#]]
        .assert_eq(&text);

        let (_store, drains, warnings) = DrainStore::open(&dir).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let shown = render(&drains);
        expect![[r#"
            [
                "h1:8041 started 1000 deadline Some(121000) wait true timeout 120 s apps [\"application_1700000000000_0007\"]",
                "h2:8041 started 2000 deadline None wait true timeout no timeout apps []",
            ]
        "#]]
        .assert_debug_eq(&shown);
        // Compacted: one line per drain under way, and it reads back the same.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        let (_store, again, _) = DrainStore::open(&dir).unwrap();
        assert_eq!(again, drains);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn torn_and_unusable_lines_are_skipped_and_kept_aside() {
        let dir = temp_dir("torn");
        std::fs::create_dir_all(&dir).unwrap();
        let text = [
            r#"{"record":"draining","node":"h1:8041","startedMs":5,"deadlineMs":65005,"waitForApps":true,"timeoutSecs":65}"#,
            r#"{"record":"draining","node":"h2","startedMs":5,"waitForApps":true,"timeoutSecs":-1}"#,
            r#"{"record":"draining","node":"h3:1","startedMs":9000,"deadlineMs":8000,"waitForApps":true,"timeoutSecs":0}"#,
            r#"{"record":"draining","node":"h5:1","startedMs":5,"waitForApps":true,"timeoutSecs":-1,"apps":["app_7"]}"#,
            // deadlineMs left out: no timeout.
            r#"{"record":"draining","node":"h4:1","startedMs":5,"waitForApps":false,"timeoutSecs":-1}"#,
            r#"{"record":"ended","node":"h1:80"#,
        ]
        .join("\n");
        std::fs::write(dir.join(DRAINS_FILE_NAME), &text).unwrap();
        let (_store, drains, warnings) = DrainStore::open(&dir).unwrap();
        expect![[r#"
            [
                "h1:8041 started 5 deadline Some(65005) wait true timeout 65 s apps []",
                "h4:1 started 5 deadline None wait false timeout no timeout apps []",
            ]
        "#]]
        .assert_debug_eq(&render(&drains));
        let kept = dir.join("nodes.jsonl.skipped");
        assert!(
            warnings
                .iter()
                .all(|w| w.ends_with(&format!("; kept in {}", kept.display()))),
            "{warnings:?}"
        );
        let why = super::super::lines::skip_reasons(&warnings);
        expect![[r#"
            [
                "invalid node id \"h2\": expected host:port",
                "the drain of h3:1 ends (deadlineMs 8000) before it started (startedMs 9000)",
                "invalid application id \"app_7\": expected application_<clusterTimestamp>_<sequence>",
                "not a state record (EOF while parsing a string at line 1 column 31)",
            ]
        "#]]
        .assert_debug_eq(&why);
        assert!(
            warnings[0].contains("nodes.jsonl:2: skipped: "),
            "{warnings:?}"
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            format!("{}\n{}\n{}\n{}\n", lines[1], lines[2], lines[3], lines[5])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_apps_file_is_left_alone() {
        let dir = temp_dir("beside");
        let (mut store, _, _) = DrainStore::open(&dir).unwrap();
        store.draining(drain("h1:8041", 1, 5));
        let (_apps, stored, warnings) = crate::state_store::StateStore::open(&dir, 10, 0).unwrap();
        assert!(stored.apps.is_empty() && stored.ended.is_empty() && warnings.is_empty());
        let (_store, drains, _) = DrainStore::open(&dir).unwrap();
        assert_eq!(drains.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
