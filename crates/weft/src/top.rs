//! `weft top`: YARN's `yarn top` for Weft, a view of the cluster refreshed
//! every few seconds: a header (time, uptime, active users, NodeManagers by
//! state, the chosen queues' applications, memory, vcores and containers)
//! over a table of the accepted and running applications, busiest first.
//!
//! Everything is read over the REST API, as any client could: the cluster's
//! start from `/ws/v1/cluster/info`, the NodeManager counts from
//! `/ws/v1/cluster/metrics`, the queues' figures from `/jmx`'s `QueueMetrics`
//! beans (the figures Hadoop's `QueueStatistics` carry, which
//! `/ws/v1/cluster/scheduler` does not: submitted, completed, killed and
//! failed counts per queue), and the applications from
//! `/ws/v1/cluster/apps`. Turning that into text is `render`, a pure
//! function of the fetched `Snapshot` and the current time, so it is tested
//! on a fixture; the loop around it (clock, terminal, Ctrl-C) is `run`.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write as _};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::Args;
use weft_rm::client::{ClientError, RmClient, encode_query};
use weft_rm::dto::apps::{AppDto, AppsDto};
use weft_rm::dto::cluster::{ClusterInfoDto, ClusterMetricsDto};

use crate::OneShotClient;

/// ANSI: clear the screen and put the cursor home, as TopCLI's `tput clear`.
const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";

/// Lines left free at the bottom of a frame: what `-rows` leaves for
/// applications is the rest after the header (TopCLI's six lines, or three
/// when the queues' figures are withheld), a blank line and the titles.
const FREE_ROWS: usize = 1;

/// `weft top`'s flags, spelled as `yarn top`'s (`-queues`, `-delay`, ...).
#[derive(Args, Debug)]
pub(crate) struct TopArgs {
    #[command(flatten)]
    client: OneShotClient,
    /// Queues whose figures the header sums and whose applications are
    /// listed (comma-separated; `root.a` or `a`); root when none.
    #[arg(long = "queues", value_delimiter = ',')]
    queues: Vec<String>,
    /// Only applications of these users (comma-separated).
    #[arg(long = "users", value_delimiter = ',')]
    users: Vec<String>,
    /// Only applications of these types (comma-separated, any case).
    #[arg(long = "types", value_delimiter = ',')]
    types: Vec<String>,
    /// Width to cut lines to; the terminal's (`COLUMNS`, else 80) when
    /// stdout is one, no limit otherwise.
    #[arg(long = "cols", value_parser = clap::value_parser!(u16).range(20..))]
    cols: Option<u16>,
    /// Height of the view: applications beyond it are not shown; the
    /// terminal's (`LINES`, else 24) when stdout is one, no limit otherwise.
    #[arg(long = "rows", value_parser = clap::value_parser!(u16).range(10..))]
    rows: Option<u16>,
    /// Seconds between refreshes.
    #[arg(long = "delay", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    delay: u64,
    /// Print one frame and exit (an unreachable RM is then an error).
    #[arg(long = "once")]
    once: bool,
}

/// Everything one frame shows, as fetched.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Snapshot {
    /// When the RM started (epoch ms).
    pub(crate) started_on: u64,
    /// The cluster's metrics (the NodeManager counts).
    pub(crate) metrics: ClusterMetricsDto,
    /// The figures of each queue asked for, summed as TopCLI sums them; or
    /// why the RM withholds them (`/jmx` is for administrators when
    /// `hadoop.security.instrumentation.requires.admin` is on).
    pub(crate) queues: Result<QueueFigures, String>,
    /// The accepted and running applications that pass the filters.
    pub(crate) apps: Vec<AppDto>,
}

/// A queue's `QueueMetrics` figures, or the sum over several queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueueFigures {
    pub(crate) apps_submitted: u64,
    pub(crate) apps_running: u64,
    pub(crate) apps_pending: u64,
    pub(crate) apps_completed: u64,
    pub(crate) apps_killed: u64,
    pub(crate) apps_failed: u64,
    pub(crate) available_mb: u64,
    pub(crate) allocated_mb: u64,
    pub(crate) pending_mb: u64,
    pub(crate) reserved_mb: u64,
    pub(crate) available_vcores: u64,
    pub(crate) allocated_vcores: u64,
    pub(crate) pending_vcores: u64,
    pub(crate) reserved_vcores: u64,
    pub(crate) allocated_containers: u64,
    pub(crate) pending_containers: u64,
    pub(crate) reserved_containers: u64,
}

/// How a frame is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The queues named with `-queues` (the header says `root` when none).
    pub(crate) queues: Vec<String>,
    /// Lines are cut to this many characters.
    pub(crate) cols: Option<usize>,
    /// At most this many lines in all; applications beyond are left out.
    pub(crate) rows: Option<usize>,
}

/// The frame for `snap` at `now_ms` (epoch ms): TopCLI's header lines, a
/// blank line, the column titles and one line per application, sorted as
/// TopCLI sorts by default (most containers first; here then by id, so
/// equal apps keep a stable order between frames).
pub(crate) fn render(snap: &Snapshot, now_ms: u64, layout: &Layout) -> String {
    let mut lines = header(snap, now_ms, layout);
    lines.push(String::new());
    lines.push(
        COLUMNS
            .iter()
            .map(|c| c.cell(c.title))
            .collect::<Vec<_>>()
            .join(" "),
    );
    let mut apps: Vec<&AppDto> = snap.apps.iter().collect();
    apps.sort_by(|a, b| {
        b.running_containers
            .cmp(&a.running_containers)
            .then_with(|| a.id.cmp(&b.id))
    });
    let withheld = apps.iter().filter(|a| is_withheld(a)).count();
    let room = layout
        .rows
        .map_or(usize::MAX, |r| r.saturating_sub(lines.len() + FREE_ROWS));
    // The note about withheld apps takes a row of its own.
    let room = if withheld > 0 {
        room.saturating_sub(1)
    } else {
        room
    };
    for app in apps.into_iter().take(room) {
        lines.push(
            COLUMNS
                .iter()
                .map(|c| c.cell(&(c.value)(app)))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    if withheld > 0 {
        lines.push(format!(
            "({withheld} of these applications withheld: their usage and times are shown only to \
             their owners, the administrators and their VIEW_APP ACL; --user names you)"
        ));
    }
    let mut out = String::new();
    for line in lines {
        let line = match layout.cols {
            Some(cols) => line.chars().take(cols).collect(),
            None => line,
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn header(snap: &Snapshot, now_ms: u64, layout: &Layout) -> Vec<String> {
    let uptime_mins = now_ms.saturating_sub(snap.started_on) / 60_000;
    let queues = if layout.queues.is_empty() {
        "root".to_owned()
    } else {
        layout.queues.join(",")
    };
    let users: BTreeSet<&str> = snap.apps.iter().map(|a| a.user.as_str()).collect();
    let n = &snap.metrics;
    let mut lines = vec![
        format!(
            "weft top - {}, up {}d, {}:{}, {} active users, queue(s): {queues}",
            clock_time(now_ms),
            uptime_mins / (24 * 60),
            uptime_mins / 60 % 24,
            uptime_mins % 60,
            users.len(),
        ),
        format!(
            "NodeManager(s): {} total, {} active, {} unhealthy, {} decommissioned, {} lost, {} rebooted",
            n.total_nodes,
            n.active_nodes,
            n.unhealthy_nodes,
            n.decommissioned_nodes,
            n.lost_nodes,
            n.rebooted_nodes
        ),
    ];
    match &snap.queues {
        Ok(q) => lines.extend(queue_lines(q)),
        Err(why) => lines.push(format!("Queue(s): withheld: {why}")),
    }
    lines
}

fn queue_lines(q: &QueueFigures) -> [String; 4] {
    let gb = |mb: u64| mb / 1024;
    [
        format!(
            "Queue(s) Applications: {} running, {} submitted, {} pending, {} completed, {} killed, {} failed",
            q.apps_running,
            q.apps_submitted,
            q.apps_pending,
            q.apps_completed,
            q.apps_killed,
            q.apps_failed
        ),
        format!(
            "Queue(s) Mem(GB): {} available, {} allocated, {} pending, {} reserved",
            gb(q.available_mb),
            gb(q.allocated_mb),
            gb(q.pending_mb),
            gb(q.reserved_mb)
        ),
        format!(
            "Queue(s) VCores: {} available, {} allocated, {} pending, {} reserved",
            q.available_vcores, q.allocated_vcores, q.pending_vcores, q.reserved_vcores
        ),
        format!(
            "Queue(s) Containers: {} allocated, {} pending, {} reserved",
            q.allocated_containers, q.pending_containers, q.reserved_containers
        ),
    ]
}

/// `HH:MM:SS+00:00`: TopCLI's ISO time without the `T`, in UTC, since the
/// binary has no time-zone database.
fn clock_time(epoch_ms: u64) -> String {
    let secs = epoch_ms / 1000 % 86_400;
    format!(
        "{:02}:{:02}:{:02}+00:00",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `dd:HH:mm`, TopCLI's running time.
fn running_time(elapsed_ms: u64) -> String {
    let mins = elapsed_ms / 60_000;
    format!(
        "{:02}:{:02}:{:02}",
        mins / (24 * 60),
        mins / 60 % 24,
        mins % 60
    )
}

/// Whether the RM left out what the caller may not see of `app` (its
/// usage and times): such a report has no start time, which every app has.
fn is_withheld(app: &AppDto) -> bool {
    app.started_time == 0
}

/// `value` of `app`, or `-` where the RM withheld it.
fn unless_withheld(app: &AppDto, value: impl FnOnce(&AppDto) -> String) -> String {
    if is_withheld(app) {
        "-".to_owned()
    } else {
        value(app)
    }
}

/// One column of the table: its title, its width (right-aligned unless
/// `left`; 0 for the last, which runs to the end of the line) and its value.
struct Column {
    title: &'static str,
    width: usize,
    left: bool,
    value: fn(&AppDto) -> String,
}

impl Column {
    fn cell(&self, text: &str) -> String {
        if self.left {
            format!("{text:<w$}", w = self.width)
        } else {
            format!("{text:>w$}", w = self.width)
        }
    }
}

/// TopCLI's columns, widths and values. The REST API reports no count of
/// an app's reserved containers, so `#RCONT` shows `-`.
const COLUMNS: &[Column] = &[
    Column {
        title: "APPLICATIONID",
        width: 31,
        left: false,
        value: |a| a.id.clone(),
    },
    Column {
        title: "USER",
        width: 10,
        left: true,
        value: |a| a.user.clone(),
    },
    Column {
        title: "TYPE",
        width: 10,
        left: false,
        value: |a| a.application_type.to_lowercase(),
    },
    Column {
        title: "QUEUE",
        width: 10,
        left: false,
        value: |a| a.queue.clone(),
    },
    Column {
        title: "PRIOR",
        width: 5,
        left: false,
        value: |a| a.priority.to_string(),
    },
    Column {
        title: "#CONT",
        width: 7,
        left: false,
        value: |a| unless_withheld(a, |a| a.running_containers.to_string()),
    },
    Column {
        title: "#RCONT",
        width: 7,
        left: false,
        value: |_| "-".to_owned(),
    },
    Column {
        title: "VCORES",
        width: 7,
        left: false,
        value: |a| unless_withheld(a, |a| a.allocated_vcores.to_string()),
    },
    Column {
        title: "RVCORES",
        width: 7,
        left: false,
        value: |a| unless_withheld(a, |a| a.reserved_vcores.to_string()),
    },
    Column {
        title: "MEM",
        width: 7,
        left: false,
        value: |a| unless_withheld(a, |a| format!("{}G", a.allocated_mb / 1024)),
    },
    Column {
        title: "RMEM",
        width: 7,
        left: false,
        value: |a| unless_withheld(a, |a| format!("{}G", a.reserved_mb / 1024)),
    },
    Column {
        title: "VCORESECS",
        width: 10,
        left: false,
        value: |a| a.vcore_seconds.to_string(),
    },
    Column {
        title: "MEMSECS",
        width: 10,
        left: false,
        value: |a| (a.memory_seconds / 1024).to_string(),
    },
    Column {
        title: "%PROGR",
        width: 6,
        left: false,
        value: |a| format!("{:.2}", a.progress),
    },
    Column {
        title: "TIME",
        width: 10,
        left: false,
        value: |a| unless_withheld(a, |a| running_time(a.elapsed_time)),
    },
    Column {
        title: "NAME",
        width: 0,
        left: true,
        value: |a| a.name.clone(),
    },
];

/// Whether `queue` (an app's or a bean's full path) is the one named
/// `wanted`, given as a full path or without its `root.`.
fn queue_named(queue: &str, wanted: &str) -> bool {
    queue == wanted || queue.strip_prefix("root.") == Some(wanted)
}

/// Fetches one frame's data.
async fn fetch(c: &mut RmClient, a: &TopArgs) -> anyhow::Result<Snapshot> {
    let info: ClusterInfoDto =
        serde_json::from_value(get_wrapped(c, "/ws/v1/cluster/info", "clusterInfo").await?)
            .context("cannot decode /ws/v1/cluster/info")?;
    let metrics: ClusterMetricsDto =
        serde_json::from_value(get_wrapped(c, "/ws/v1/cluster/metrics", "clusterMetrics").await?)
            .context("cannot decode /ws/v1/cluster/metrics")?;
    let queues = match c
        .get::<serde_json::Value>("/jmx?qry=Hadoop:service=ResourceManager,name=QueueMetrics,*")
        .await
    {
        Ok(jmx) => Ok(queue_figures(&jmx, &a.queues)?),
        // The rest of the frame is still the caller's to see.
        Err(ClientError::Remote { status, exception }) if matches!(status.as_u16(), 401 | 403) => {
            Err(exception.message)
        }
        Err(e) => return Err(e.into()),
    };
    let mut path = "/ws/v1/cluster/apps?states=ACCEPTED,RUNNING".to_owned();
    if !a.types.is_empty() {
        path.push_str("&applicationTypes=");
        path.push_str(&encode_query(&a.types.join(",")));
    }
    let apps: AppsDto = serde_json::from_value(get_wrapped(c, &path, "apps").await?)
        .context("cannot decode /ws/v1/cluster/apps")?;
    let apps = apps
        .app
        .into_iter()
        .filter(|app| a.users.is_empty() || a.users.contains(&app.user))
        .filter(|app| a.queues.is_empty() || a.queues.iter().any(|q| queue_named(&app.queue, q)))
        .collect();
    Ok(Snapshot {
        started_on: info.started_on,
        metrics,
        queues,
        apps,
    })
}

/// The sum of the named queues' beans in a `/jmx` answer (root's when
/// none is named); a name no bean has is an error, so a typo is not shown
/// as an idle queue.
fn queue_figures(jmx: &serde_json::Value, wanted: &[String]) -> anyhow::Result<QueueFigures> {
    let beans = jmx["beans"].as_array().cloned().unwrap_or_default();
    let root = ["root".to_owned()];
    let wanted = if wanted.is_empty() { &root[..] } else { wanted };
    let mut sum = QueueFigures::default();
    for name in wanted {
        let bean = beans
            .iter()
            .find(|b| {
                b["tag.Queue"]
                    .as_str()
                    .is_some_and(|q| queue_named(q, name))
            })
            .with_context(|| format!("-queues: the RM has no queue named {name:?}"))?;
        let n = |attr: &str| bean[attr].as_u64().unwrap_or(0);
        sum.apps_submitted += n("AppsSubmitted");
        sum.apps_running += n("AppsRunning");
        sum.apps_pending += n("AppsPending");
        sum.apps_completed += n("AppsCompleted");
        sum.apps_killed += n("AppsKilled");
        sum.apps_failed += n("AppsFailed");
        sum.available_mb += n("AvailableMB");
        sum.allocated_mb += n("AllocatedMB");
        sum.pending_mb += n("PendingMB");
        sum.reserved_mb += n("ReservedMB");
        sum.available_vcores += n("AvailableVCores");
        sum.allocated_vcores += n("AllocatedVCores");
        sum.pending_vcores += n("PendingVCores");
        sum.reserved_vcores += n("ReservedVCores");
        sum.allocated_containers += n("AllocatedContainers");
        sum.pending_containers += n("PendingContainers");
        sum.reserved_containers += n("ReservedContainers");
    }
    Ok(sum)
}

/// Fetches `path` and takes out the object Hadoop wraps in `root`
/// (`null`, as Hadoop writes an empty list, becomes an empty object).
async fn get_wrapped(
    c: &mut RmClient,
    path: &str,
    root: &str,
) -> anyhow::Result<serde_json::Value> {
    let mut value: serde_json::Value = c.get(path).await?;
    let inner = value
        .get_mut(root)
        .map(serde_json::Value::take)
        .with_context(|| format!("{path}: the answer has no {root:?} object"))?;
    Ok(if inner.is_null() {
        serde_json::Value::Object(serde_json::Map::new())
    } else {
        inner
    })
}

fn epoch_ms_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A size from the environment (`COLUMNS`, `LINES`), as shells export it.
fn env_size(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

/// Runs `weft top`: one frame with `--once`; otherwise a frame every
/// `-delay` seconds until Ctrl-C, redrawn in place on a terminal and
/// printed one after another (blank line between) when stdout is not one.
/// In the refreshing mode an RM that does not answer is shown as an error
/// in place of the frame and asked again at the next refresh.
#[expect(clippy::print_stdout, reason = "the view is the command's output")]
pub(crate) async fn run(a: TopArgs) -> anyhow::Result<()> {
    let mut c = a.client.connect()?;
    let terminal = std::io::stdout().is_terminal() && !a.once;
    let layout = Layout {
        queues: a.queues.clone(),
        cols: a
            .cols
            .map(usize::from)
            .or_else(|| terminal.then(|| env_size("COLUMNS", 80))),
        rows: a
            .rows
            .map(usize::from)
            .or_else(|| terminal.then(|| env_size("LINES", 24))),
    };
    if a.once {
        let snap = fetch(&mut c, &a).await?;
        print!("{}", render(&snap, epoch_ms_now(), &layout));
        return Ok(());
    }
    let mut first = true;
    loop {
        let text = match fetch(&mut c, &a).await {
            Ok(snap) => render(&snap, epoch_ms_now(), &layout),
            Err(e) => format!(
                "weft top - {}: cannot read the RM: {}\n(trying again every {}s; Ctrl-C to quit)\n",
                clock_time(epoch_ms_now()),
                crate::describe(&e),
                a.delay
            ),
        };
        if terminal {
            print!("{CLEAR_SCREEN}{text}");
        } else {
            if !first {
                println!();
            }
            print!("{text}");
        }
        first = false;
        let _ = std::io::stdout().flush();
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(a.delay)) => {}
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    if terminal {
        print!("{CLEAR_SCREEN}");
        let _ = std::io::stdout().flush();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use serde_json::json;

    use super::*;

    /// 2026-11-22 12:34:56 UTC.
    const NOW: u64 = 1_795_350_896_000;

    fn app(id: u32, user: &str, queue: &str, containers: u32, mb: u64) -> AppDto {
        let v = json!({
            "id": format!("application_1795300000000_{id:04}"),
            "user": user, "name": format!("job {id}"), "queue": queue,
            "state": "RUNNING", "finalStatus": "UNDEFINED", "progress": 12.5,
            "trackingUI": "", "trackingUrl": "", "diagnostics": "",
            "clusterId": 1795300000000u64, "applicationType": "MAPREDUCE",
            "applicationTags": "", "priority": id % 3, "startedTime": NOW - 90_061_000u64 * u64::from(id),
            "launchTime": 0, "finishedTime": 0,
            "elapsedTime": 90_061_000u64 * u64::from(id),
            "amContainerLogs": "", "amHostHttpAddress": "", "amRPCAddress": "",
            "allocatedMB": mb, "allocatedVCores": containers,
            "reservedMB": if id == 2 { 2048 } else { 0 },
            "reservedVCores": if id == 2 { 1 } else { 0 },
            "runningContainers": containers,
            "memorySeconds": mb * 600, "vcoreSeconds": u64::from(containers) * 600,
            "queueUsagePercentage": 0.0, "clusterUsagePercentage": 0.0,
            "preemptedResourceMB": 0, "preemptedResourceVCores": 0,
            "numNonAMContainerPreempted": 0, "numAMContainerPreempted": 0,
            "logAggregationStatus": "DISABLED", "unmanagedApplication": false,
            "appNodeLabelExpression": "", "amNodeLabelExpression": "",
            "pendingMB": 0, "pendingVCores": 0, "fairShareMB": 0,
        });
        serde_json::from_value(v).expect("the fixture is an AppDto")
    }

    fn snapshot() -> Snapshot {
        let metrics = json!({
            "appsSubmitted": 9, "appsCompleted": 4, "appsPending": 1, "appsRunning": 3,
            "appsFailed": 1, "appsKilled": 1, "reservedMB": 2048, "availableMB": 20480,
            "allocatedMB": 12288, "pendingMB": 1024, "totalMB": 32768,
            "reservedVirtualCores": 1, "availableVirtualCores": 20,
            "allocatedVirtualCores": 12, "pendingVirtualCores": 1,
            "totalVirtualCores": 32, "containersAllocated": 12, "containersReserved": 1,
            "containersPending": 1, "totalNodes": 5, "activeNodes": 3, "lostNodes": 1,
            "unhealthyNodes": 0, "decommissioningNodes": 0, "decommissionedNodes": 1,
            "rebootedNodes": 0, "shutdownNodes": 0,
        });
        Snapshot {
            // Up 1 day, 2 hours and 3 minutes at NOW.
            started_on: NOW - 93_780_000,
            metrics: serde_json::from_value(metrics).expect("the fixture is ClusterMetricsDto"),
            queues: Ok(QueueFigures {
                apps_submitted: 9,
                apps_running: 3,
                apps_pending: 1,
                apps_completed: 4,
                apps_killed: 1,
                apps_failed: 1,
                available_mb: 20480,
                allocated_mb: 12288,
                pending_mb: 1024,
                reserved_mb: 2048,
                available_vcores: 20,
                allocated_vcores: 12,
                pending_vcores: 1,
                reserved_vcores: 1,
                allocated_containers: 12,
                pending_containers: 1,
                reserved_containers: 1,
            }),
            apps: vec![
                app(1, "alice", "root.a", 2, 2048),
                app(2, "bob", "root.b", 7, 7168),
                app(3, "alice", "root.a", 3, 3072),
                app(4, "carol", "root.b", 3, 3072),
                // As a caller without VIEW_APP gets it.
                app(5, "dave", "root.a", 4, 4096).withheld(),
            ],
        }
    }

    fn check(layout: &Layout, expected: Expect) {
        expected.assert_eq(&render(&snapshot(), NOW, layout));
    }

    #[test]
    fn a_frame_has_topcli_header_and_apps_busiest_first() {
        check(
            &Layout {
                queues: Vec::new(),
                cols: None,
                rows: None,
            },
            expect![[r#"
                weft top - 12:34:56+00:00, up 1d, 2:3, 4 active users, queue(s): root
                NodeManager(s): 5 total, 3 active, 0 unhealthy, 1 decommissioned, 1 lost, 0 rebooted
                Queue(s) Applications: 3 running, 9 submitted, 1 pending, 4 completed, 1 killed, 1 failed
                Queue(s) Mem(GB): 20 available, 12 allocated, 1 pending, 2 reserved
                Queue(s) VCores: 20 available, 12 allocated, 1 pending, 1 reserved
                Queue(s) Containers: 12 allocated, 1 pending, 1 reserved

                                  APPLICATIONID USER             TYPE      QUEUE PRIOR   #CONT  #RCONT  VCORES RVCORES     MEM    RMEM  VCORESECS    MEMSECS %PROGR       TIME NAME
                 application_1795300000000_0002 bob         mapreduce     root.b     2       7       -       7       1      7G      2G       4200       4200  12.50   02:02:02 job 2
                 application_1795300000000_0003 alice       mapreduce     root.a     0       3       -       3       0      3G      0G       1800       1800  12.50   03:03:03 job 3
                 application_1795300000000_0004 carol       mapreduce     root.b     1       3       -       3       0      3G      0G       1800       1800  12.50   04:04:04 job 4
                 application_1795300000000_0001 alice       mapreduce     root.a     1       2       -       2       0      2G      0G       1200       1200  12.50   01:01:01 job 1
                 application_1795300000000_0005 dave        mapreduce     root.a     2       -       -       -       -       -       -       2400       2400  12.50          - job 5
                (1 of these applications withheld: their usage and times are shown only to their owners, the administrators and their VIEW_APP ACL; --user names you)
            "#]],
        );
    }

    #[test]
    fn queue_figures_the_rm_withholds_leave_a_line_saying_why() {
        let mut snap = snapshot();
        snap.queues = Err("user bob is not a cluster administrator (yarn.admin.acl) and may not read /jmx (hadoop.security.instrumentation.requires.admin is true)".to_owned());
        let layout = Layout {
            queues: Vec::new(),
            cols: None,
            rows: Some(8),
        };
        expect![[r#"
            weft top - 12:34:56+00:00, up 1d, 2:3, 4 active users, queue(s): root
            NodeManager(s): 5 total, 3 active, 0 unhealthy, 1 decommissioned, 1 lost, 0 rebooted
            Queue(s): withheld: user bob is not a cluster administrator (yarn.admin.acl) and may not read /jmx (hadoop.security.instrumentation.requires.admin is true)

                              APPLICATIONID USER             TYPE      QUEUE PRIOR   #CONT  #RCONT  VCORES RVCORES     MEM    RMEM  VCORESECS    MEMSECS %PROGR       TIME NAME
             application_1795300000000_0002 bob         mapreduce     root.b     2       7       -       7       1      7G      2G       4200       4200  12.50   02:02:02 job 2
            (1 of these applications withheld: their usage and times are shown only to their owners, the administrators and their VIEW_APP ACL; --user names you)
        "#]]
        .assert_eq(&render(&snap, NOW, &layout));
    }

    #[test]
    fn rows_and_cols_cut_the_frame() {
        check(
            &Layout {
                queues: vec!["a".to_owned(), "root.b".to_owned()],
                cols: Some(60),
                rows: Some(11),
            },
            expect![[r#"
                weft top - 12:34:56+00:00, up 1d, 2:3, 4 active users, queue
                NodeManager(s): 5 total, 3 active, 0 unhealthy, 1 decommissi
                Queue(s) Applications: 3 running, 9 submitted, 1 pending, 4
                Queue(s) Mem(GB): 20 available, 12 allocated, 1 pending, 2 r
                Queue(s) VCores: 20 available, 12 allocated, 1 pending, 1 re
                Queue(s) Containers: 12 allocated, 1 pending, 1 reserved

                                  APPLICATIONID USER             TYPE      Q
                 application_1795300000000_0002 bob         mapreduce     ro
                (1 of these applications withheld: their usage and times are
            "#]],
        );
    }

    #[test]
    fn queue_figures_sum_the_named_queues_and_refuse_unknown_ones() {
        let jmx = json!({"beans": [
            {"name": "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root",
             "tag.Queue": "root", "AppsRunning": 3, "AllocatedMB": 4096},
            {"name": "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=a",
             "tag.Queue": "root.a", "AppsRunning": 1, "AllocatedMB": 1024, "AppsKilled": 2},
            {"name": "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=b",
             "tag.Queue": "root.b", "AppsRunning": 2, "AllocatedMB": 3072},
        ]});
        let root = queue_figures(&jmx, &[]).unwrap();
        assert_eq!((root.apps_running, root.allocated_mb), (3, 4096));
        let ab = queue_figures(&jmx, &["a".to_owned(), "root.b".to_owned()]).unwrap();
        assert_eq!(
            (ab.apps_running, ab.allocated_mb, ab.apps_killed),
            (3, 4096, 2)
        );
        assert_eq!(
            queue_figures(&jmx, &["c".to_owned()])
                .unwrap_err()
                .to_string(),
            "-queues: the RM has no queue named \"c\""
        );
    }
}
