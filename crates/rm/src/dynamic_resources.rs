//! Hadoop's dynamic node resources (`dynamic-resources.xml` in the
//! configuration directory): the size each node it names offers, whatever
//! the node reports, read into `DynamicResources` with every problem named
//! by line, column and property; and what a new file changes among the
//! registered nodes.
//!
//! The file is Hadoop's configuration format, read by the same reader as
//! `weft-site.xml`:
//!
//! ```xml
//! <configuration>
//!   <property><name>yarn.resource.dynamic.nodes</name><value>h1:8041,h2:8041</value></property>
//!   <property><name>yarn.resource.dynamic.h1:8041.memory</name><value>4096</value></property>
//!   <property><name>yarn.resource.dynamic.h1:8041.vcores</name><value>4</value></property>
//!   <property><name>yarn.resource.dynamic.h1:8041.overcommittimeout</name><value>60000</value></property>
//!   ...
//! </configuration>
//! ```
//!
//! This module reads and compares; when the file is read (at start, and on
//! `refresh-nodes-resources`) is the service's business, and carrying out a
//! change is the actor's, through the core's resize (`Input::NodeResized`)
//! for a registered node and in place of the reported size at registration.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use weft_core::{NodeRegistration, ResourceManager};
use weft_model::{Duration, NodeId, Resource};
use weft_queue_tree::site::{HadoopConfig, Location, SiteProblem};

/// The file's name in a configuration directory (Hadoop's
/// `YarnConfiguration.DR_CONFIGURATION_FILE`).
pub const FILE_NAME: &str = "dynamic-resources.xml";

/// The prefix of every property the file holds.
pub const PREFIX: &str = "yarn.resource.dynamic.";

/// The property listing the nodes, comma-separated.
pub const NODES_PROPERTY: &str = "yarn.resource.dynamic.nodes";

/// The longest over-commit timeout, in milliseconds: Hadoop's is an int.
const MAX_TIMEOUT_MS: u64 = i32::MAX as u64;

/// What the file gives one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeResources {
    /// What the node offers, whatever it reports.
    pub capability: Resource,
    /// How long its containers may hold more than `capability` when a
    /// refresh makes it smaller (`None`: no limit, Hadoop's -1).
    pub overcommit_timeout: Option<Duration>,
}

/// The dynamic resources in force: a size for each node the file names.
/// Empty without a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DynamicResources {
    /// Each node's size, by node.
    pub nodes: BTreeMap<NodeId, NodeResources>,
}

/// Why a dynamic resources file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DynamicResourcesError {
    /// It exists but could not be read (unreadable, not a regular file,
    /// too large).
    #[error("cannot read the dynamic resources file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Its content is not a valid dynamic resources file; none of it is used.
    #[error(
        "the dynamic resources file {} is invalid, so none of it is used:{}",
        path.display(),
        render_problems(problems)
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem, in file order; never empty.
        problems: Vec<DynamicResourcesProblem>,
    },
}

/// One problem in a dynamic resources file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DynamicResourcesProblem {
    /// The file is not a Hadoop configuration file (malformed XML, another
    /// root element...).
    #[error(transparent)]
    Format(SiteProblem),
    /// A property with a value that cannot be used.
    #[error("{location}: property {name}: {why}")]
    Property {
        /// Where it is set.
        location: Location,
        /// The property.
        name: String,
        /// What is wrong.
        why: String,
    },
}

impl DynamicResourcesProblem {
    /// Where the problem is.
    pub fn location(&self) -> Location {
        match self {
            DynamicResourcesProblem::Format(p) => p.location(),
            DynamicResourcesProblem::Property { location, .. } => *location,
        }
    }
}

fn render_problems(problems: &[DynamicResourcesProblem]) -> String {
    problems.iter().map(|p| format!("\n  {p}")).collect()
}

/// A registered node whose size a new file changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedResize {
    /// The node.
    pub node: NodeId,
    /// Its size before: what it offers once its containers fit, whatever a
    /// drain, ill health or over-commitment make it offer now.
    pub previous: Resource,
    /// What the file gives it.
    pub resources: NodeResources,
}

/// What a new file means for the nodes the RM has now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefreshPlan {
    /// The registered nodes the file gives another size, by node.
    pub resizes: Vec<PlannedResize>,
    /// The nodes it names that are not registered: each takes its size
    /// when it registers.
    pub not_registered: Vec<NodeId>,
}

/// A node a refresh resized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resized {
    /// The node.
    pub node: NodeId,
    /// Its size before.
    pub previous: Resource,
    /// Its size now.
    pub capability: Resource,
    /// What it offers now: more than `capability` while its containers
    /// hold more (over-committed).
    pub offering: Resource,
    /// The over-commit timeout it was given (`None`: no limit).
    pub overcommit_timeout: Option<Duration>,
}

/// What putting a new file in force did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourcesRefreshed {
    /// The registered nodes resized, by node.
    pub resized: Vec<Resized>,
    /// The nodes the file names that are not registered, by node: each
    /// takes its size when it registers.
    pub not_registered: Vec<NodeId>,
    /// Why the scheduler refused a node its new size, one line each.
    pub refused: Vec<String>,
}

impl DynamicResources {
    /// Reads the file at `path`: `None` when there is none, which means no
    /// node has a configured size. A size below `min_allocation` (the
    /// smallest container) is a problem: such a node could run nothing.
    pub fn load(
        path: &Path,
        min_allocation: Resource,
    ) -> Result<Option<(DynamicResources, Vec<String>)>, DynamicResourcesError> {
        let read_err = |source| DynamicResourcesError::Read {
            path: path.to_owned(),
            source,
        };
        // A dangling symbolic link is a mistake to report, not "no file".
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read_err(e)),
            Ok(_) => {}
        }
        let text = crate::config::read_config_file(path).map_err(read_err)?;
        DynamicResources::parse(path, &text, min_allocation).map(Some)
    }

    /// Parses `text` as the file read from `path` (which names it in
    /// problems and warnings); the warnings say what was ignored.
    pub fn parse(
        path: &Path,
        text: &str,
        min_allocation: Resource,
    ) -> Result<(DynamicResources, Vec<String>), DynamicResourcesError> {
        let invalid = |problems| DynamicResourcesError::Invalid {
            path: path.to_owned(),
            problems,
        };
        let config = HadoopConfig::parse(text).map_err(|e| {
            invalid(
                e.problems
                    .into_iter()
                    .map(DynamicResourcesProblem::Format)
                    .collect(),
            )
        })?;
        let mut reader = Reader {
            config: &config,
            min_allocation,
            problems: Vec::new(),
            warnings: config
                .warnings()
                .iter()
                .map(|w| (w.location(), w.to_string()))
                .collect(),
        };
        let nodes = reader.nodes();
        if !reader.problems.is_empty() {
            reader
                .problems
                .sort_by_key(DynamicResourcesProblem::location);
            return Err(invalid(reader.problems));
        }
        reader.warnings.sort_by_key(|(at, _)| *at);
        let name = path.display();
        let warnings = reader
            .warnings
            .into_iter()
            .map(|(_, w)| format!("{name}: {w}"))
            .collect();
        Ok((DynamicResources { nodes }, warnings))
    }

    /// What the file gives `node`, if it names it.
    pub fn get(&self, node: &NodeId) -> Option<&NodeResources> {
        self.nodes.get(node)
    }

    /// Gives `reg` the size the file gives its node, as Hadoop's
    /// registration does; the size the node reported when that differs.
    pub fn apply(&self, reg: &mut NodeRegistration) -> Option<Resource> {
        let configured = self.get(&reg.node)?.capability;
        if configured == reg.capability {
            return None;
        }
        Some(std::mem::replace(&mut reg.capability, configured))
    }

    /// What putting `self` in force changes among the nodes `core` has:
    /// each registered node it names whose size differs is resized; the
    /// ones it names that are not registered wait until they register. A
    /// node it no longer names keeps its size until it registers again, as
    /// in Hadoop.
    pub fn plan(&self, core: &ResourceManager) -> RefreshPlan {
        let mut plan = RefreshPlan::default();
        for (node, resources) in &self.nodes {
            match core.node_size(node) {
                Some(previous) if previous == resources.capability => {}
                Some(previous) => plan.resizes.push(PlannedResize {
                    node: node.clone(),
                    previous,
                    resources: *resources,
                }),
                None => plan.not_registered.push(node.clone()),
            }
        }
        plan
    }
}

/// Which of a node's properties a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Memory,
    Vcores,
    OvercommitTimeout,
}

impl Field {
    const ALL: [Field; 3] = [Field::Memory, Field::Vcores, Field::OvercommitTimeout];

    fn suffix(self) -> &'static str {
        match self {
            Field::Memory => "memory",
            Field::Vcores => "vcores",
            Field::OvercommitTimeout => "overcommittimeout",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.suffix())
    }
}

struct Reader<'a> {
    config: &'a HadoopConfig,
    min_allocation: Resource,
    problems: Vec<DynamicResourcesProblem>,
    warnings: Vec<(Location, String)>,
}

impl Reader<'_> {
    fn warn(&mut self, location: Location, message: String) {
        self.warnings
            .push((location, format!("{location}: {message}")));
    }

    fn problem(&mut self, location: Location, name: &str, why: String) {
        self.problems.push(DynamicResourcesProblem::Property {
            location,
            name: name.to_owned(),
            why,
        });
    }

    /// Every listed node with its sizes; problems and warnings on the side.
    fn nodes(&mut self) -> BTreeMap<NodeId, NodeResources> {
        let config = self.config;
        let mut nodes = BTreeMap::new();
        // The entries as written: Hadoop names a node's properties after
        // the entry, not after the node id it parses to.
        let mut listed: BTreeSet<&str> = BTreeSet::new();
        if let Some(p) = config.get(NODES_PROPERTY) {
            // Hadoop's `getStrings`: comma-separated, empty entries
            // skipped; Weft also trims each (Hadoop would keep the blanks
            // in the node id, which then names no node).
            for entry in p.value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                let node = match entry.parse::<NodeId>() {
                    Ok(node) => node,
                    Err(_) => {
                        self.problem(
                            p.location,
                            NODES_PROPERTY,
                            format!(
                                "{entry:?} is not a node id: write host:port, as the node registers"
                            ),
                        );
                        continue;
                    }
                };
                if !listed.insert(entry) || nodes.contains_key(&node) {
                    self.warn(
                        p.location,
                        format!("property {NODES_PROPERTY}: {entry} is listed more than once"),
                    );
                    continue;
                }
                if let Some(resources) = self.node(entry, p.location) {
                    nodes.insert(node, resources);
                }
            }
        }
        for p in config.properties() {
            let Some(rest) = p.name.strip_prefix(PREFIX) else {
                self.warn(
                    p.location,
                    format!(
                        "property {} is ignored: a dynamic resources file holds only {PREFIX}* properties",
                        p.name
                    ),
                );
                continue;
            };
            if p.name == NODES_PROPERTY {
                continue;
            }
            let known = rest
                .rsplit_once('.')
                .filter(|(_, suffix)| Field::ALL.iter().any(|f| f.suffix() == *suffix));
            match known {
                Some((entry, _)) if listed.contains(entry) => {}
                Some((entry, _)) => self.warn(
                    p.location,
                    format!(
                        "property {} is ignored: {entry} is not listed in {NODES_PROPERTY}",
                        p.name
                    ),
                ),
                None => self.warn(
                    p.location,
                    format!(
                        "unknown property {} (a typo?) is ignored: a node's properties are {PREFIX}<host:port>.memory, .vcores and .overcommittimeout",
                        p.name
                    ),
                ),
            }
        }
        nodes
    }

    /// The sizes of the node listed as `entry` (listed at `listed_at`), or
    /// `None` with the problems noted.
    fn node(&mut self, entry: &str, listed_at: Location) -> Option<NodeResources> {
        let memory = self.size(entry, Field::Memory, listed_at, "MB");
        let vcores = self.size(entry, Field::Vcores, listed_at, "vcores");
        let timeout = self.timeout(entry);
        let capability = Resource::new(memory?, vcores?);
        let min = self.min_allocation;
        if !min.fits_in(&capability) {
            let short = if capability.memory_mb() < min.memory_mb() {
                Field::Memory
            } else {
                Field::Vcores
            };
            let name = property(entry, short);
            let at = self.config.get(&name).map_or(listed_at, |p| p.location);
            self.problem(
                at,
                &name,
                format!(
                    "{entry} would offer {capability}, less than the smallest container {min} (yarn.scheduler.minimum-allocation-mb and -vcores): it could run nothing"
                ),
            );
            return None;
        }
        Some(NodeResources {
            capability,
            overcommit_timeout: timeout?,
        })
    }

    /// A node's memory or vcores: a whole number from 1.
    fn size(&mut self, entry: &str, field: Field, listed_at: Location, unit: &str) -> Option<u64> {
        let name = property(entry, field);
        let Some(p) = self.config.get(&name) else {
            // Hadoop would give the node its NodeManager default (8192 MB,
            // 8 vcores), which is seldom what was meant.
            self.problem(
                listed_at,
                NODES_PROPERTY,
                format!("{entry} is listed, but {name} is not set: give its {field} too"),
            );
            return None;
        };
        let value = p.value.trim();
        let why = match value.parse::<u64>() {
            Ok(0) => format!(
                "0 {unit} leaves the node nothing to offer (to take a node out of service, decommission it)"
            ),
            Ok(n) => return Some(n),
            Err(_) if is_negative_integer(value) => {
                format!("{value} is negative: a size is a whole number of {unit} from 1")
            }
            Err(_) => format!("{value:?} is not a whole number of {unit}"),
        };
        let at = p.location;
        self.problem(at, &name, why);
        None
    }

    /// A node's over-commit timeout: `Some(None)` for none (absent, or -1).
    fn timeout(&mut self, entry: &str) -> Option<Option<Duration>> {
        let name = property(entry, Field::OvercommitTimeout);
        let Some(p) = self.config.get(&name) else {
            return Some(None);
        };
        let value = p.value.trim();
        match value.parse::<i64>() {
            Ok(-1) => return Some(None),
            Ok(ms) if (0..=MAX_TIMEOUT_MS as i64).contains(&ms) => {
                return Some(Some(Duration::from_millis(ms.unsigned_abs())));
            }
            _ => {}
        }
        let at = p.location;
        self.problem(
            at,
            &name,
            format!(
                "{value:?} is not an over-commit timeout: milliseconds from 0 to {MAX_TIMEOUT_MS}, or -1 for none"
            ),
        );
        None
    }
}

fn property(entry: &str, field: Field) -> String {
    format!("{PREFIX}{entry}.{field}")
}

fn is_negative_integer(value: &str) -> bool {
    value
        .strip_prefix('-')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    const MIN: Resource = Resource::new(1024, 1);

    /// The file `props` make, parsed: each node's sizes then the warnings,
    /// or the error.
    fn check(props: &[(&str, &str)], expect: Expect) {
        let text = weft_test_support::site_xml(props);
        let out = match DynamicResources::parse(Path::new("conf/dynamic-resources.xml"), &text, MIN)
        {
            Ok((resources, warnings)) => {
                let mut out = String::new();
                for (node, r) in &resources.nodes {
                    let timeout = r
                        .overcommit_timeout
                        .map_or("none".to_owned(), |t| format!("{} ms", t.as_millis()));
                    out.push_str(&format!("{node}: {} timeout {timeout}\n", r.capability));
                }
                for w in warnings {
                    out.push_str(&format!("warning: {w}\n"));
                }
                out
            }
            Err(e) => format!("error: {e}\n"),
        };
        expect.assert_eq(&out);
    }

    #[test]
    fn hadoops_example_is_read() {
        check(
            &[
                ("yarn.resource.dynamic.nodes", "h1:1234,h2.example.com:1234"),
                ("yarn.resource.dynamic.h1:1234.vcores", "16"),
                ("yarn.resource.dynamic.h1:1234.memory", "1024"),
                ("yarn.resource.dynamic.h1:1234.overcommittimeout", "-1"),
                ("yarn.resource.dynamic.h2.example.com:1234.memory", "8192"),
                ("yarn.resource.dynamic.h2.example.com:1234.vcores", " 8 "),
                (
                    "yarn.resource.dynamic.h2.example.com:1234.overcommittimeout",
                    "60000",
                ),
            ],
            expect![[r#"
                h1:1234: <memory:1024, vCores:16> timeout none
                h2.example.com:1234: <memory:8192, vCores:8> timeout 60000 ms
            "#]],
        );
    }

    #[test]
    fn an_empty_file_or_list_sizes_nothing() {
        check(&[], expect![""]);
        check(&[("yarn.resource.dynamic.nodes", " , ")], expect![""]);
    }

    #[test]
    fn entries_are_trimmed_and_a_repeat_is_a_warning() {
        check(
            &[
                ("yarn.resource.dynamic.nodes", " h1:1 ,,h1:1, h2:2"),
                ("yarn.resource.dynamic.h1:1.memory", "2048"),
                ("yarn.resource.dynamic.h1:1.vcores", "2"),
                ("yarn.resource.dynamic.h2:2.memory", "4096"),
                ("yarn.resource.dynamic.h2:2.vcores", "4"),
            ],
            expect![[r#"
                h1:1: <memory:2048, vCores:2> timeout none
                h2:2: <memory:4096, vCores:4> timeout none
                warning: conf/dynamic-resources.xml: line 2, column 51: property yarn.resource.dynamic.nodes: h1:1 is listed more than once
            "#]],
        );
    }

    #[test]
    fn every_bad_value_is_named_with_its_place_and_nothing_is_used() {
        check(
            &[
                (
                    "yarn.resource.dynamic.nodes",
                    "h1:1,h2,h3:99999,h4:4,h5:5,h6:6,h7:7,h8:8",
                ),
                ("yarn.resource.dynamic.h1:1.memory", "lots"),
                ("yarn.resource.dynamic.h1:1.vcores", "-4"),
                ("yarn.resource.dynamic.h4:4.memory", "4096"),
                ("yarn.resource.dynamic.h5:5.memory", "0"),
                ("yarn.resource.dynamic.h5:5.vcores", "2"),
                ("yarn.resource.dynamic.h6:6.memory", "512"),
                ("yarn.resource.dynamic.h6:6.vcores", "2"),
                ("yarn.resource.dynamic.h7:7.memory", "2048"),
                ("yarn.resource.dynamic.h7:7.vcores", "2.5"),
                ("yarn.resource.dynamic.h8:8.memory", "2048"),
                ("yarn.resource.dynamic.h8:8.vcores", "2"),
                ("yarn.resource.dynamic.h8:8.overcommittimeout", "-2"),
            ],
            expect![[r#"
                error: the dynamic resources file conf/dynamic-resources.xml is invalid, so none of it is used:
                  line 2, column 51: property yarn.resource.dynamic.nodes: "h2" is not a node id: write host:port, as the node registers
                  line 2, column 51: property yarn.resource.dynamic.nodes: "h3:99999" is not a node id: write host:port, as the node registers
                  line 2, column 51: property yarn.resource.dynamic.nodes: h4:4 is listed, but yarn.resource.dynamic.h4:4.vcores is not set: give its vcores too
                  line 3, column 57: property yarn.resource.dynamic.h1:1.memory: "lots" is not a whole number of MB
                  line 4, column 57: property yarn.resource.dynamic.h1:1.vcores: -4 is negative: a size is a whole number of vcores from 1
                  line 6, column 57: property yarn.resource.dynamic.h5:5.memory: 0 MB leaves the node nothing to offer (to take a node out of service, decommission it)
                  line 8, column 57: property yarn.resource.dynamic.h6:6.memory: h6:6 would offer <memory:512, vCores:2>, less than the smallest container <memory:1024, vCores:1> (yarn.scheduler.minimum-allocation-mb and -vcores): it could run nothing
                  line 11, column 57: property yarn.resource.dynamic.h7:7.vcores: "2.5" is not a whole number of vcores
                  line 14, column 68: property yarn.resource.dynamic.h8:8.overcommittimeout: "-2" is not an over-commit timeout: milliseconds from 0 to 2147483647, or -1 for none
            "#]],
        );
    }

    #[test]
    fn a_node_listed_without_sizes_is_an_error_not_hadoops_default() {
        check(
            &[("yarn.resource.dynamic.nodes", "h1:1")],
            expect![[r#"
                error: the dynamic resources file conf/dynamic-resources.xml is invalid, so none of it is used:
                  line 2, column 51: property yarn.resource.dynamic.nodes: h1:1 is listed, but yarn.resource.dynamic.h1:1.memory is not set: give its memory too
                  line 2, column 51: property yarn.resource.dynamic.nodes: h1:1 is listed, but yarn.resource.dynamic.h1:1.vcores is not set: give its vcores too
            "#]],
        );
    }

    #[test]
    fn sizes_for_unlisted_nodes_typos_and_strangers_are_warnings() {
        check(
            &[
                ("yarn.resource.dynamic.nodes", "h1:1"),
                ("yarn.resource.dynamic.h1:1.memory", "2048"),
                ("yarn.resource.dynamic.h1:1.vcores", "2"),
                ("yarn.resource.dynamic.h1:1.memory-mb", "4096"),
                ("yarn.resource.dynamic.h9:9.memory", "4096"),
                ("yarn.resource.dynamic.h9:9.overcommittimeout", "10"),
                ("yarn.resource.dynamic.node", "h9:9"),
                ("yarn.scheduler.minimum-allocation-mb", "512"),
            ],
            expect![[r#"
                h1:1: <memory:2048, vCores:2> timeout none
                warning: conf/dynamic-resources.xml: line 5, column 60: unknown property yarn.resource.dynamic.h1:1.memory-mb (a typo?) is ignored: a node's properties are yarn.resource.dynamic.<host:port>.memory, .vcores and .overcommittimeout
                warning: conf/dynamic-resources.xml: line 6, column 57: property yarn.resource.dynamic.h9:9.memory is ignored: h9:9 is not listed in yarn.resource.dynamic.nodes
                warning: conf/dynamic-resources.xml: line 7, column 68: property yarn.resource.dynamic.h9:9.overcommittimeout is ignored: h9:9 is not listed in yarn.resource.dynamic.nodes
                warning: conf/dynamic-resources.xml: line 8, column 50: unknown property yarn.resource.dynamic.node (a typo?) is ignored: a node's properties are yarn.resource.dynamic.<host:port>.memory, .vcores and .overcommittimeout
                warning: conf/dynamic-resources.xml: line 9, column 60: property yarn.scheduler.minimum-allocation-mb is ignored: a dynamic resources file holds only yarn.resource.dynamic.* properties
            "#]],
        );
    }

    #[test]
    fn malformed_xml_is_an_error_with_its_place() {
        let err = DynamicResources::parse(
            Path::new("d.xml"),
            "<configuration>\n<property><name>yarn.resource.dynamic.nodes</name>",
            MIN,
        )
        .unwrap_err();
        expect![[r#"
            the dynamic resources file d.xml is invalid, so none of it is used:
              line 2, column 1: <property> is never closed"#]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn a_missing_file_is_no_dynamic_resources_and_an_odd_one_is_an_error() {
        let dir = std::env::temp_dir().join(format!("weft-dynres-load-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE_NAME);
        assert!(DynamicResources::load(&path, MIN).unwrap().is_none());
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let err = DynamicResources::load(&path, MIN).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read the dynamic resources file {}: not a regular file",
                path.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_configuration_directorys_file_is_read_at_start_and_a_bad_one_stops_it() {
        use crate::config::{RmConfig, SITE_FILE_NAME};
        let dir = std::env::temp_dir().join(format!("weft-dynres-start-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(SITE_FILE_NAME),
            weft_test_support::site_xml(&[("yarn.scheduler.minimum-allocation-mb", "2048")]),
        )
        .unwrap();
        let path = dir.join(FILE_NAME);

        // No file: no sizes, and nothing to warn about.
        let config = RmConfig::load(Some(&dir)).unwrap();
        assert_eq!(config.dynamic_resources, DynamicResources::default());
        assert_eq!(config.service.dynamic_resources_file(), Some(path.clone()));
        assert!(
            config.warnings.iter().all(|w| !w.contains(FILE_NAME)),
            "{:?}",
            config.warnings
        );

        std::fs::write(
            &path,
            weft_test_support::site_xml(&[
                ("yarn.resource.dynamic.nodes", "h1:8041"),
                ("yarn.resource.dynamic.h1:8041.memory", "4096"),
                ("yarn.resource.dynamic.h1:8041.vcores", "4"),
                ("yarn.resource.dynamic.h2:8041.vcores", "4"),
            ]),
        )
        .unwrap();
        let config = RmConfig::load(Some(&dir)).unwrap();
        let node: NodeId = "h1:8041".parse().unwrap();
        assert_eq!(
            config.dynamic_resources.get(&node).map(|r| r.capability),
            Some(Resource::new(4096, 4))
        );
        let warnings: Vec<&String> = config
            .warnings
            .iter()
            .filter(|w| w.contains(FILE_NAME))
            .collect();
        assert_eq!(
            warnings,
            [&format!(
                "{}: line 5, column 60: property yarn.resource.dynamic.h2:8041.vcores is ignored: h2:8041 is not listed in yarn.resource.dynamic.nodes",
                path.display()
            )]
        );

        // The site's smallest container counts.
        std::fs::write(
            &path,
            weft_test_support::site_xml(&[
                ("yarn.resource.dynamic.nodes", "h1:8041"),
                ("yarn.resource.dynamic.h1:8041.memory", "1024"),
                ("yarn.resource.dynamic.h1:8041.vcores", "4"),
            ]),
        )
        .unwrap();
        let err = RmConfig::load(Some(&dir)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "the dynamic resources file {} is invalid, so none of it is used:\n  line 3, column 60: property yarn.resource.dynamic.h1:8041.memory: h1:8041 would offer <memory:1024, vCores:4>, less than the smallest container <memory:2048, vCores:1> (yarn.scheduler.minimum-allocation-mb and -vcores): it could run nothing",
                path.display()
            )
        );

        // The built-in configuration has no directory, so no file.
        let config = RmConfig::load(None).unwrap();
        assert_eq!(config.service.dynamic_resources_file(), None);
        assert_eq!(config.dynamic_resources, DynamicResources::default());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_registration_takes_the_configured_size() {
        let node: NodeId = "h1:1".parse().unwrap();
        let resources = DynamicResources {
            nodes: BTreeMap::from([(
                node.clone(),
                NodeResources {
                    capability: Resource::new(2048, 2),
                    overcommit_timeout: None,
                },
            )]),
        };
        let mut reg = NodeRegistration {
            node,
            rack: String::new(),
            capability: Resource::new(8192, 8),
            http_address: String::new(),
            running: Vec::new(),
        };
        assert_eq!(resources.apply(&mut reg), Some(Resource::new(8192, 8)));
        assert_eq!(reg.capability, Resource::new(2048, 2));
        // Already the configured size: nothing to say.
        assert_eq!(resources.apply(&mut reg), None);
        reg.node = "h2:1".parse().unwrap();
        reg.capability = Resource::new(8192, 8);
        assert_eq!(resources.apply(&mut reg), None);
        assert_eq!(reg.capability, Resource::new(8192, 8));
    }
}
