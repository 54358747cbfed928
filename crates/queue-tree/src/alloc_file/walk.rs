//! The walk over the element tree: top-level settings, queues, users, and the
//! checks that need the whole file (policy compatibility), collecting every
//! problem and warning with its place.
//!
//! Scalar values are parsed in `values`, placement rules in `rules`; the XML
//! itself is read by `dom`.

use std::collections::BTreeMap;

use weft_model::{Duration, QueuePath, ResourceSpec, SpecKind, parse_resource};

use crate::acl::Acl;
use crate::alloc_file::dom::{self, Element};
use crate::alloc_file::values;
use crate::alloc_file::{
    AllocFileError, AllocFileProblem, AllocFileWarning, LoadedAllocConfig, Located, ProblemKind,
    TypeConflict, WarningKind, rules,
};
use crate::config::{AllocConfig, AmShare, MAX_QUEUE_DEPTH, QueueConfig, QueueKind};
use crate::policy::Policy;

/// Elements with a meaning inside a queue element.
const QUEUE_ELEMENTS: &[&str] = &[
    "minResources",
    "maxResources",
    "maxChildResources",
    "maxContainerAllocation",
    "maxRunningApps",
    "maxAMShare",
    "weight",
    "schedulingPolicy",
    "aclSubmitApps",
    "aclAdministerApps",
    "aclAdministerReservations",
    "aclListReservations",
    "aclSubmitReservations",
    "minSharePreemptionTimeout",
    "fairSharePreemptionTimeout",
    "fairSharePreemptionThreshold",
    "allowPreemptionFrom",
    "reservation",
    "queue",
    "pool",
    "schedulingMode",
    "maxRunningJobs",
    "minMaps",
    "minReduces",
];

/// Elements with a meaning directly inside `allocations`.
const TOP_ELEMENTS: &[&str] = &[
    "queue",
    "pool",
    "user",
    "userMaxAppsDefault",
    "queueMaxAppsDefault",
    "queueMaxResourcesDefault",
    "queueMaxAMShareDefault",
    "defaultQueueSchedulingPolicy",
    "defaultQueueSchedulingMode",
    "defaultMinSharePreemptionTimeout",
    "defaultFairSharePreemptionTimeout",
    "fairSharePreemptionTimeout",
    "defaultFairSharePreemptionThreshold",
    "queuePlacementPolicy",
    "reservation-agent",
    "reservation-policy",
    "reservation-planner",
    "userMaxJobsDefault",
    "poolMaxJobsDefault",
];

/// Elements with a meaning inside a `user` element.
const USER_ELEMENTS: &[&str] = &["maxRunningApps", "maxRunningJobs"];

const IN_QUEUE: &str = "a queue element";
const IN_TOP: &str = "allocations";
const IN_USER: &str = "a user element";

/// Parses a whole file; see `parse_alloc_file`.
pub(super) fn parse(text: &str) -> Result<LoadedAllocConfig, AllocFileError> {
    // quick-xml skips a byte order mark without counting it; dropping it here
    // keeps the reader's offsets and ours the same.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut sink = Sink::new(text);
    let config = match dom::parse_document(text) {
        Err(err) => {
            // An element without a name (`<>`) still gets a readable path.
            let element = if err.open.iter().all(|name| name.is_empty()) {
                "(document)".to_owned()
            } else {
                err.open
                    .iter()
                    .map(|n| {
                        if n.is_empty() {
                            "(unnamed)"
                        } else {
                            n.as_str()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/")
            };
            sink.error(
                err.offset,
                &element,
                ProblemKind::MalformedXml {
                    message: err.message,
                },
            );
            None
        }
        Ok(root) if root.name != "allocations" => {
            sink.error(
                root.offset,
                if root.name.is_empty() {
                    "(unnamed)"
                } else {
                    &root.name
                },
                ProblemKind::WrongRootElement {
                    found: root.name.clone(),
                },
            );
            None
        }
        Ok(root) => {
            let mut walker = Walker::new(&mut sink);
            walker.allocations(&root);
            Some(walker.finish())
        }
    };
    let Sink {
        mut problems,
        mut warnings,
        ..
    } = sink;
    // Checks over the whole tree run after the walk; sorting puts their
    // findings back in document order (the sort is stable).
    problems.sort_by_key(|p| (p.line, p.column));
    warnings.sort_by_key(|w| (w.line, w.column));
    match config {
        Some(config) if problems.is_empty() => Ok(LoadedAllocConfig { config, warnings }),
        _ => Err(AllocFileError { problems, warnings }),
    }
}

/// Collects findings, turning byte offsets into lines and columns.
pub(super) struct Sink<'t> {
    text: &'t str,
    line_starts: Vec<usize>,
    problems: Vec<AllocFileProblem>,
    warnings: Vec<AllocFileWarning>,
}

impl<'t> Sink<'t> {
    fn new(text: &'t str) -> Sink<'t> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Sink {
            text,
            line_starts,
            problems: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The 1-based line and character column of a byte offset.
    fn locate(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let index = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts[index];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (index + 1, column + 1)
    }

    /// The 1-based line of a byte offset.
    pub(super) fn line(&self, offset: usize) -> usize {
        self.locate(offset).0
    }

    /// Records a problem.
    pub(super) fn error(&mut self, offset: usize, element: &str, kind: ProblemKind) {
        let (line, column) = self.locate(offset);
        self.problems.push(Located {
            line,
            column,
            element: element.to_owned(),
            kind,
        });
    }

    /// Records a warning.
    pub(super) fn warn(&mut self, offset: usize, element: &str, kind: WarningKind) {
        let (line, column) = self.locate(offset);
        self.warnings.push(Located {
            line,
            column,
            element: element.to_owned(),
            kind,
        });
    }

    /// Warns about attributes other than `allowed` (namespace declarations
    /// and prefixed attributes such as `xsi:...` are left alone).
    pub(super) fn check_attributes(&mut self, el: &Element, element: &str, allowed: &[&str]) {
        for attribute in &el.attributes {
            let name = attribute.name.as_str();
            if allowed.contains(&name) || name == "xmlns" || name.contains(':') {
                continue;
            }
            self.warn(
                attribute.offset,
                element,
                WarningKind::UnknownAttribute {
                    name: name.to_owned(),
                },
            );
        }
    }

    /// Warns about text in an element that should hold only elements.
    pub(super) fn check_no_text(&mut self, el: &Element, element: &str) {
        if let Some(offset) = el.text_offset {
            let trimmed = el.text.trim();
            let mut text: String = trimmed.chars().take(40).collect();
            if text.len() < trimmed.len() {
                text.push('…');
            }
            self.warn(offset, element, WarningKind::UnexpectedText { text });
        }
    }

    /// Warns about an element that has no meaning where it is.
    pub(super) fn unknown_element(
        &mut self,
        el: &Element,
        element: &str,
        within: &'static str,
        known: &[&'static str],
    ) {
        // Elsewhere in the file, an element of this name (or a close one) may mean something.
        let elsewhere: Option<(&[&'static str], &'static str)> = match within {
            IN_QUEUE => Some((TOP_ELEMENTS, "allocations (the top level)")),
            IN_TOP | IN_USER => Some((QUEUE_ELEMENTS, "a queue element")),
            _ => None,
        };
        let name = el.name.as_str();
        let (did_you_mean, belongs_in) = match elsewhere {
            Some((other, place)) if other.contains(&name) && !known.contains(&name) => {
                (None, Some(place))
            }
            _ => match similar_name(name, known) {
                Some(similar) => (Some(similar), None),
                None => match elsewhere
                    .and_then(|(other, place)| Some((similar_name(name, other)?, place)))
                {
                    Some((similar, place)) => (Some(similar), Some(place)),
                    None => (None, None),
                },
            },
        };
        self.warn(
            el.offset,
            element,
            WarningKind::UnknownElement {
                name: el.name.clone(),
                within,
                did_you_mean,
                belongs_in,
            },
        );
    }

    /// The text of an element that holds a value; attributes and child
    /// elements in it are reported and ignored.
    pub(super) fn value<'e>(&mut self, el: &'e Element, element: &str) -> &'e str {
        self.check_attributes(el, element, &[]);
        for child in &el.children {
            let path = child_path(element, child);
            self.unknown_element(child, &path, "a value", &[]);
        }
        &el.text
    }
}

/// The path of `el` below `parent`: its name, with its `name` attribute when it has one.
pub(super) fn child_path(parent: &str, el: &Element) -> String {
    match el.attribute("name") {
        Some(name) => format!("{parent}/{}[@name={:?}]", el.name, name.value),
        None => format!("{parent}/{}", el.name),
    }
}

/// The known name closest to `name`, if it is close enough to be a typo.
fn similar_name(name: &str, known: &[&'static str]) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= 2 && *d * 3 < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Settings already seen in one element, to report repeats (under any spelling).
#[derive(Default)]
struct Seen {
    /// Canonical name → (name as written, offset, element path).
    first: BTreeMap<&'static str, (String, usize, String)>,
}

/// Where a configured queue was declared, for findings made after the walk.
struct Declared {
    offset: usize,
    element: String,
    /// The `schedulingPolicy` element, when the queue sets one.
    policy: Option<(usize, String)>,
}

/// How a queue element relates to the tree.
enum Parent {
    /// The element is `<queue name="root">`.
    IsRoot,
    /// The element is a child of this queue.
    Under(QueuePath),
    /// An ancestor's name was invalid: check the content, register nothing.
    Detached,
}

struct Walker<'s, 't> {
    sink: &'s mut Sink<'t>,
    config: AllocConfig,
    declared: BTreeMap<QueuePath, Declared>,
    /// `defaultQueueSchedulingPolicy` was given but invalid: policy checks
    /// would only report consequences of that one problem.
    default_policy_broken: bool,
}

impl<'s, 't> Walker<'s, 't> {
    fn new(sink: &'s mut Sink<'t>) -> Walker<'s, 't> {
        let mut config = AllocConfig::default();
        config.queues.clear();
        Walker {
            sink,
            config,
            declared: BTreeMap::new(),
            default_policy_broken: false,
        }
    }

    /// Reports a repeated setting and returns false, or records the first one.
    fn first(
        &mut self,
        seen: &mut Seen,
        canonical: &'static str,
        el: &Element,
        element: &str,
    ) -> bool {
        if let Some((first, offset, _)) = seen.first.get(canonical) {
            let first_line = self.sink.line(*offset);
            let kind = ProblemKind::DuplicateElement {
                name: el.name.clone(),
                first: first.clone(),
                first_line,
            };
            self.sink.error(el.offset, element, kind);
            return false;
        }
        seen.first
            .insert(canonical, (el.name.clone(), el.offset, element.to_owned()));
        true
    }

    fn legacy(
        &mut self,
        el: &Element,
        element: &str,
        name: &'static str,
        replacement: &'static str,
    ) {
        self.sink.warn(
            el.offset,
            element,
            WarningKind::LegacyName { name, replacement },
        );
    }

    fn count(&mut self, el: &Element, element: &str) -> Option<u32> {
        let text = self.sink.value(el, element);
        self.ok(el, element, values::parse_count(text))
    }

    fn seconds(&mut self, el: &Element, element: &str) -> Option<Duration> {
        let text = self.sink.value(el, element);
        self.ok(el, element, values::parse_seconds(text))
    }

    fn threshold(&mut self, el: &Element, element: &str) -> Option<f64> {
        let text = self.sink.value(el, element);
        let clamped = self.ok(el, element, values::parse_threshold(text))?;
        if clamped.clamped {
            let kind = WarningKind::Clamped {
                text: text.trim().to_owned(),
                range: "[0, 1]",
                to: clamped.value,
            };
            self.sink.warn(el.offset, element, kind);
        }
        Some(clamped.value)
    }

    fn am_share(&mut self, el: &Element, element: &str) -> Option<AmShare> {
        let text = self.sink.value(el, element);
        let (share, clamped) = self.ok(el, element, values::parse_am_share(text))?;
        if clamped {
            let kind = WarningKind::Clamped {
                text: text.trim().to_owned(),
                range: "[0, 1]",
                to: 1.0,
            };
            self.sink.warn(el.offset, element, kind);
        }
        Some(share)
    }

    fn policy(&mut self, el: &Element, element: &str) -> Option<Policy> {
        let text = self.sink.value(el, element);
        if text.trim().is_empty() {
            let kind = ProblemKind::EmptyValue {
                expected: "a scheduling policy: fair, fifo or drf",
            };
            self.sink.error(el.offset, element, kind);
            return None;
        }
        let parsed = text
            .trim()
            .parse::<Policy>()
            .map_err(|source| ProblemKind::UnknownPolicy { source });
        self.ok(el, element, parsed)
    }

    fn resource(&mut self, el: &Element, element: &str, kind: SpecKind) -> Option<ResourceSpec> {
        let text = self.sink.value(el, element);
        let parsed = parse_resource(text.trim(), kind)
            .map_err(|source| ProblemKind::InvalidResource { source });
        self.ok(el, element, parsed)
    }

    fn text(&mut self, el: &Element, element: &str, expected: &'static str) -> Option<String> {
        let text = self.sink.value(el, element).trim();
        if text.is_empty() {
            self.sink
                .error(el.offset, element, ProblemKind::EmptyValue { expected });
            return None;
        }
        Some(text.to_owned())
    }

    fn ok<T>(&mut self, el: &Element, element: &str, result: Result<T, ProblemKind>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(kind) => {
                self.sink.error(el.offset, element, kind);
                None
            }
        }
    }

    fn allocations(&mut self, root: &Element) {
        let path = "allocations";
        self.sink.check_attributes(root, path, &[]);
        self.sink.check_no_text(root, path);
        let n_queue_elements = root.children.iter().filter(|c| is_queue_element(c)).count();
        let mut seen = Seen::default();
        let mut users: BTreeMap<String, usize> = BTreeMap::new();
        let mut placement = None;
        let mut default_fs_timeout = None;
        let mut legacy_fs_timeout: Option<(Duration, usize)> = None;

        for child in &root.children {
            let element = child_path(path, child);
            let el = child;
            match child.name.as_str() {
                "queue" | "pool" => {
                    let is_root = el
                        .attribute("name")
                        .is_some_and(|n| n.value.eq_ignore_ascii_case("root"));
                    if is_root {
                        if n_queue_elements > 1 {
                            self.sink
                                .error(el.offset, &element, ProblemKind::RootWithSiblings);
                        }
                        self.queue(el, &Parent::IsRoot, path);
                    } else {
                        self.queue(el, &Parent::Under(QueuePath::root()), path);
                    }
                }
                "user" => self.user(el, &element, &mut users),
                name @ ("userMaxAppsDefault" | "userMaxJobsDefault") => {
                    if name == "userMaxJobsDefault" {
                        self.legacy(el, &element, "userMaxJobsDefault", "userMaxAppsDefault");
                    }
                    if self.first(&mut seen, "userMaxAppsDefault", el, &element) {
                        self.config.user_max_apps_default = self.count(el, &element);
                    }
                }
                name @ ("queueMaxAppsDefault" | "poolMaxJobsDefault") => {
                    if name == "poolMaxJobsDefault" {
                        self.legacy(el, &element, "poolMaxJobsDefault", "queueMaxAppsDefault");
                    }
                    if self.first(&mut seen, "queueMaxAppsDefault", el, &element) {
                        self.config.queue_max_apps_default = self.count(el, &element);
                    }
                }
                "queueMaxResourcesDefault" => {
                    if self.first(&mut seen, "queueMaxResourcesDefault", el, &element) {
                        self.config.queue_max_resources_default =
                            self.resource(el, &element, SpecKind::Max);
                    }
                }
                "queueMaxAMShareDefault" => {
                    if self.first(&mut seen, "queueMaxAMShareDefault", el, &element)
                        && let Some(share) = self.am_share(el, &element)
                    {
                        self.config.queue_max_am_share_default = share;
                    }
                }
                "defaultQueueSchedulingPolicy" | "defaultQueueSchedulingMode" => {
                    if self.first(&mut seen, "defaultQueueSchedulingPolicy", el, &element) {
                        match self.policy(el, &element) {
                            Some(policy) => self.config.default_policy = policy,
                            None => self.default_policy_broken = true,
                        }
                    }
                }
                "defaultMinSharePreemptionTimeout" => {
                    if self.first(&mut seen, "defaultMinSharePreemptionTimeout", el, &element)
                        && let Some(timeout) = self.seconds(el, &element)
                    {
                        self.config.default_min_share_preemption_timeout = timeout;
                    }
                }
                "defaultFairSharePreemptionTimeout" => {
                    if self.first(&mut seen, "defaultFairSharePreemptionTimeout", el, &element) {
                        default_fs_timeout = self.seconds(el, &element);
                    }
                }
                "fairSharePreemptionTimeout" => {
                    if self.first(&mut seen, "fairSharePreemptionTimeout", el, &element) {
                        legacy_fs_timeout = self.seconds(el, &element).map(|t| (t, el.offset));
                    }
                }
                "defaultFairSharePreemptionThreshold" => {
                    if self.first(
                        &mut seen,
                        "defaultFairSharePreemptionThreshold",
                        el,
                        &element,
                    ) && let Some(threshold) = self.threshold(el, &element)
                    {
                        self.config.default_fair_share_preemption_threshold = threshold;
                    }
                }
                "queuePlacementPolicy" => {
                    if self.first(&mut seen, "queuePlacementPolicy", el, &element) {
                        placement = Some((el, element));
                    }
                }
                "reservation-agent" => {
                    if self.first(&mut seen, "reservation-agent", el, &element) {
                        self.config.reservation_agent = self.text(el, &element, "a class name");
                    }
                }
                "reservation-policy" => {
                    if self.first(&mut seen, "reservation-policy", el, &element) {
                        self.config.reservation_policy = self.text(el, &element, "a class name");
                    }
                }
                "reservation-planner" => {
                    if self.first(&mut seen, "reservation-planner", el, &element) {
                        self.config.reservation_planner = self.text(el, &element, "a class name");
                    }
                }
                _ => self
                    .sink
                    .unknown_element(el, &element, IN_TOP, TOP_ELEMENTS),
            }
        }

        self.config.default_fair_share_preemption_timeout =
            match (default_fs_timeout, legacy_fs_timeout) {
                (Some(timeout), Some((_, legacy_at))) => {
                    let element = "allocations/fairSharePreemptionTimeout";
                    self.sink
                        .warn(legacy_at, element, WarningKind::LegacyTimeoutShadowed);
                    timeout
                }
                (Some(timeout), None) | (None, Some((timeout, _))) => timeout,
                (None, None) => Duration::MAX,
            };

        // Every configured queue must exist before placement rules can be checked against them.
        self.add_implicit_queues();
        if let Some((el, element)) = placement {
            self.config.placement = rules::placement(self.sink, el, &element, &self.config.queues);
        }
    }

    fn user(&mut self, el: &Element, element: &str, users: &mut BTreeMap<String, usize>) {
        self.sink.check_attributes(el, element, &["name"]);
        self.sink.check_no_text(el, element);
        let name = match el.attribute("name") {
            Some(a) if !a.value.is_empty() => Some(a.value.clone()),
            _ => {
                let kind = ProblemKind::MissingAttribute {
                    attribute: "name",
                    why: "a user element applies to the user it names",
                };
                self.sink.error(el.offset, element, kind);
                None
            }
        };
        let mut seen = Seen::default();
        let mut max_apps = None;
        for child in &el.children {
            let child_element = child_path(element, child);
            match child.name.as_str() {
                name @ ("maxRunningApps" | "maxRunningJobs") => {
                    if name == "maxRunningJobs" {
                        self.legacy(child, &child_element, "maxRunningJobs", "maxRunningApps");
                    }
                    if self.first(&mut seen, "maxRunningApps", child, &child_element) {
                        max_apps = self.count(child, &child_element);
                    }
                }
                _ => self
                    .sink
                    .unknown_element(child, &child_element, IN_USER, USER_ELEMENTS),
            }
        }
        let Some(name) = name else { return };
        if let Some(first) = users.get(&name) {
            let first_line = self.sink.line(*first);
            let kind = ProblemKind::DuplicateUser {
                user: name,
                first_line,
            };
            self.sink.error(el.offset, element, kind);
            return;
        }
        users.insert(name.clone(), el.offset);
        if let Some(max_apps) = max_apps {
            self.config.user_max_apps.insert(name, max_apps);
        }
    }

    fn queue(&mut self, el: &Element, parent: &Parent, parent_element: &str) {
        let element = child_path(parent_element, el);
        let path = match parent {
            Parent::IsRoot => Some(QueuePath::root()),
            Parent::Detached => None,
            Parent::Under(parent) => match el.attribute("name") {
                Some(name) if !name.value.is_empty() => match parent.child(&name.value) {
                    Ok(path) => Some(path),
                    Err(err) => {
                        let kind = ProblemKind::InvalidQueueName {
                            name: name.value.clone(),
                            reason: err.reason,
                        };
                        self.sink.error(name.offset, &element, kind);
                        None
                    }
                },
                Some(_) | None => {
                    let kind = ProblemKind::MissingAttribute {
                        attribute: "name",
                        why: "every queue needs a name",
                    };
                    self.sink.error(el.offset, &element, kind);
                    None
                }
            },
        };
        if let Some(deep) = path.as_ref().filter(|p| p.depth() > MAX_QUEUE_DEPTH) {
            let at = el.attribute("name").map_or(el.offset, |a| a.offset);
            let kind = ProblemKind::QueueTooDeep {
                queue: deep.clone(),
                depth: deep.depth(),
                max: MAX_QUEUE_DEPTH,
            };
            self.sink.error(at, &element, kind);
            // Its children are deeper still: one problem says it.
            return;
        }
        self.sink.check_attributes(el, &element, &["name", "type"]);
        self.sink.check_no_text(el, &element);
        let declared_type = el.attribute("type").and_then(|a| match a.value.as_str() {
            "parent" => Some((QueueKind::Parent, a.offset)),
            "leaf" => Some((QueueKind::Leaf, a.offset)),
            other => {
                let kind = ProblemKind::InvalidQueueType {
                    text: other.to_owned(),
                };
                self.sink.error(a.offset, &element, kind);
                None
            }
        });

        let mut config = QueueConfig::new(
            path.clone().unwrap_or_else(QueuePath::root),
            QueueKind::Leaf,
        );
        let mut seen = Seen::default();
        let mut children = Vec::new();
        for child in &el.children {
            if is_queue_element(child) {
                children.push(child);
            } else {
                let child_element = child_path(&element, child);
                self.queue_setting(child, &child_element, &mut config, &mut seen);
            }
        }

        let is_root = matches!(parent, Parent::IsRoot);
        let is_default = path.as_ref().is_some_and(|p| p.as_str() == "root.default");
        let has_children = !children.is_empty();
        let declared_parent = matches!(declared_type, Some((QueueKind::Parent, _)));
        let reservation_at = seen.first.get("reservation").map(|(_, at, _)| *at);
        let conflict = if is_root
            && (matches!(declared_type, Some((QueueKind::Leaf, _))) || config.reservation)
        {
            let at = reservation_at
                .or(declared_type.map(|(_, at)| at))
                .unwrap_or(el.offset);
            Some((TypeConflict::RootNotParent, at))
        } else if is_default && (has_children || declared_parent) {
            Some((TypeConflict::DefaultQueueAsParent, el.offset))
        } else if config.reservation && (has_children || declared_parent) {
            Some((
                TypeConflict::ReservationOnParent,
                reservation_at.unwrap_or(el.offset),
            ))
        } else if let (Some((QueueKind::Leaf, at)), true) = (declared_type, has_children) {
            Some((TypeConflict::LeafWithChildren, at))
        } else {
            None
        };
        if let Some((conflict, at)) = conflict {
            self.sink
                .error(at, &element, ProblemKind::QueueTypeConflict { conflict });
        }
        config.kind = if is_root || has_children || declared_parent {
            QueueKind::Parent
        } else {
            QueueKind::Leaf
        };

        if let (Some(min), Some(ResourceSpec::Absolute(max))) =
            (config.min_resources, config.max_resources)
            && let (false, Some((_, at, min_element))) =
                (min.fits_in(&max), seen.first.get("minResources"))
        {
            let (at, min_element) = (*at, min_element.clone());
            self.sink
                .error(at, &min_element, ProblemKind::MinAboveMax { min, max });
        }
        if is_root && let Some((_, at, setting)) = seen.first.get("maxContainerAllocation") {
            let (at, setting) = (*at, setting.clone());
            self.sink
                .warn(at, &setting, WarningKind::MaxContainerAllocationOnRoot);
        }
        if config.kind == QueueKind::Parent
            && config.max_am_share.is_some()
            && let (Some(queue), Some((_, at, setting))) = (&path, seen.first.get("maxAMShare"))
        {
            let kind = WarningKind::MaxAmShareOnParent {
                queue: queue.clone(),
            };
            let (at, setting) = (*at, setting.clone());
            self.sink.warn(at, &setting, kind);
        }

        let child_parent = match &path {
            Some(path) => {
                if let Some(first) = self.declared.get(path) {
                    let first_line = self.sink.line(first.offset);
                    let kind = ProblemKind::DuplicateQueue {
                        queue: path.clone(),
                        first_line,
                    };
                    self.sink.error(el.offset, &element, kind);
                } else {
                    let policy = seen
                        .first
                        .get("schedulingPolicy")
                        .map(|(_, at, setting)| (*at, setting.clone()));
                    self.declared.insert(
                        path.clone(),
                        Declared {
                            offset: el.offset,
                            element: element.clone(),
                            policy,
                        },
                    );
                    self.config.queues.insert(path.clone(), config);
                }
                Parent::Under(path.clone())
            }
            None => Parent::Detached,
        };
        for child in children {
            self.queue(child, &child_parent, &element);
        }
    }

    /// One setting inside a queue element.
    fn queue_setting(
        &mut self,
        el: &Element,
        element: &str,
        config: &mut QueueConfig,
        seen: &mut Seen,
    ) {
        match el.name.as_str() {
            "minResources" => {
                if self.first(seen, "minResources", el, element) {
                    config.min_resources = self
                        .resource(el, element, SpecKind::Min)
                        .and_then(|spec| spec.absolute());
                }
            }
            "maxResources" => {
                if self.first(seen, "maxResources", el, element) {
                    config.max_resources = self.resource(el, element, SpecKind::Max);
                }
            }
            "maxChildResources" => {
                if self.first(seen, "maxChildResources", el, element) {
                    config.max_child_resources = self.resource(el, element, SpecKind::Max);
                }
            }
            "maxContainerAllocation" => {
                if self.first(seen, "maxContainerAllocation", el, element) {
                    config.max_container_allocation = self
                        .resource(el, element, SpecKind::ContainerMax)
                        .and_then(|spec| spec.absolute());
                }
            }
            name @ ("maxRunningApps" | "maxRunningJobs") => {
                if name == "maxRunningJobs" {
                    self.legacy(el, element, "maxRunningJobs", "maxRunningApps");
                }
                if self.first(seen, "maxRunningApps", el, element) {
                    config.max_running_apps = self.count(el, element);
                }
            }
            "maxAMShare" => {
                if self.first(seen, "maxAMShare", el, element) {
                    config.max_am_share = self.am_share(el, element);
                }
            }
            "weight" => {
                if self.first(seen, "weight", el, element) {
                    let text = self.sink.value(el, element);
                    config.weight = self.ok(el, element, values::parse_weight(text));
                }
            }
            "schedulingPolicy" | "schedulingMode" => {
                if self.first(seen, "schedulingPolicy", el, element) {
                    config.policy = self.policy(el, element);
                }
            }
            "aclSubmitApps" => {
                if self.first(seen, "aclSubmitApps", el, element) {
                    config.acl_submit_apps = Some(Acl::parse(self.sink.value(el, element)));
                }
            }
            "aclAdministerApps" => {
                if self.first(seen, "aclAdministerApps", el, element) {
                    config.acl_administer_apps = Some(Acl::parse(self.sink.value(el, element)));
                }
            }
            name @ ("aclAdministerReservations"
            | "aclListReservations"
            | "aclSubmitReservations") => {
                // Weft has no ReservationSystem: these lists are accepted so
                // Hadoop files load, and not kept.
                let canonical = match name {
                    "aclAdministerReservations" => "aclAdministerReservations",
                    "aclListReservations" => "aclListReservations",
                    _ => "aclSubmitReservations",
                };
                if self.first(seen, canonical, el, element) {
                    self.sink.value(el, element);
                }
            }
            "minSharePreemptionTimeout" => {
                if self.first(seen, "minSharePreemptionTimeout", el, element) {
                    config.min_share_preemption_timeout = self.seconds(el, element);
                }
            }
            "fairSharePreemptionTimeout" => {
                if self.first(seen, "fairSharePreemptionTimeout", el, element) {
                    config.fair_share_preemption_timeout = self.seconds(el, element);
                }
            }
            "fairSharePreemptionThreshold" => {
                if self.first(seen, "fairSharePreemptionThreshold", el, element) {
                    config.fair_share_preemption_threshold = self.threshold(el, element);
                }
            }
            "allowPreemptionFrom" => {
                if self.first(seen, "allowPreemptionFrom", el, element) {
                    let text = self.sink.value(el, element);
                    config.allow_preemption_from =
                        self.ok(el, element, values::parse_bool("allowPreemptionFrom", text));
                }
            }
            "reservation" => {
                if self.first(seen, "reservation", el, element) {
                    config.reservation = true;
                    let text = self.sink.value(el, element).trim();
                    if !text.is_empty() {
                        let kind = WarningKind::ReservationValueIgnored {
                            text: text.to_owned(),
                        };
                        self.sink.warn(el.offset, element, kind);
                    }
                }
            }
            name @ ("minMaps" | "minReduces") => {
                let name = if name == "minMaps" {
                    "minMaps"
                } else {
                    "minReduces"
                };
                self.sink
                    .warn(el.offset, element, WarningKind::SlotMinimum { name });
            }
            _ => self
                .sink
                .unknown_element(el, element, IN_QUEUE, QUEUE_ELEMENTS),
        }
    }

    /// `root` and `root.default` exist whatever the file says.
    fn add_implicit_queues(&mut self) {
        let root = QueuePath::root();
        let default = root.child("default").expect("a valid name");
        self.config
            .queues
            .entry(root.clone())
            .or_insert_with(|| QueueConfig::new(root, QueueKind::Parent));
        self.config
            .queues
            .entry(default.clone())
            .or_insert_with(|| QueueConfig::new(default, QueueKind::Leaf));
    }

    /// Hadoop's policy rules, applied after defaults: no `fifo` parent, and
    /// every parent's policy accepts each child's.
    fn check_policies(&mut self) {
        if self.default_policy_broken {
            return;
        }
        // A queue whose schedulingPolicy was invalid has no policy to check.
        let broken = |path: &QueuePath, queue: &QueueConfig| {
            queue.policy.is_none() && self.declared.get(path).is_some_and(|d| d.policy.is_some())
        };
        let config = &self.config;
        let effective = |q: &QueueConfig| (config.effective_policy(q), q.policy.is_none());
        let mut found = Vec::new();
        for (path, queue) in &self.config.queues {
            if queue.kind == QueueKind::Parent && queue.policy == Some(Policy::Fifo) {
                found.push((
                    self.place_policy(path),
                    ProblemKind::FifoParent {
                        queue: path.clone(),
                    },
                ));
                continue;
            }
            let Some(parent_path) = path.parent() else {
                continue;
            };
            let Some(parent) = self.config.queues.get(&parent_path) else {
                continue;
            };
            if parent.policy == Some(Policy::Fifo)
                || broken(path, queue)
                || broken(&parent_path, parent)
            {
                // Already reported, as a fifo parent or an invalid policy.
                continue;
            }
            let (parent_policy, parent_from_default) = effective(parent);
            let (child_policy, child_from_default) = effective(queue);
            if parent_policy.accepts_child(child_policy) {
                continue;
            }
            let place = if self.declared.contains_key(path) {
                self.place_policy(path)
            } else {
                self.place_policy(&parent_path)
            };
            found.push((
                place,
                ProblemKind::IncompatiblePolicies {
                    parent: parent_path,
                    parent_policy,
                    parent_from_default,
                    child: path.clone(),
                    child_policy,
                    child_from_default,
                },
            ));
        }
        for ((offset, element), kind) in found {
            self.sink.error(offset, &element, kind);
        }
    }

    /// Where to point at a queue's policy: its `schedulingPolicy` element, or
    /// the queue element, or the top of the file for a queue not in it.
    fn place_policy(&self, path: &QueuePath) -> (usize, String) {
        match self.declared.get(path) {
            Some(declared) => declared
                .policy
                .clone()
                .unwrap_or_else(|| (declared.offset, declared.element.clone())),
            None => (0, "allocations".to_owned()),
        }
    }

    fn finish(mut self) -> AllocConfig {
        self.check_policies();
        self.config
    }
}

fn is_queue_element(el: &Element) -> bool {
    el.name == "queue" || el.name == "pool"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters() {
        let sink = Sink::new("ab\nçé<x>\n");
        assert_eq!(sink.locate(0), (1, 1));
        assert_eq!(sink.locate(3), (2, 1));
        assert_eq!(sink.locate("ab\nçé".len()), (2, 3));
        assert_eq!(sink.locate(1000), (3, 1));
    }

    #[test]
    fn typo_suggestions() {
        assert_eq!(
            similar_name("maxResource", QUEUE_ELEMENTS),
            Some("maxResources")
        );
        assert_eq!(similar_name("Weight", QUEUE_ELEMENTS), Some("weight"));
        assert_eq!(
            similar_name("maxRunningApp", QUEUE_ELEMENTS),
            Some("maxRunningApps")
        );
        assert_eq!(similar_name("colour", QUEUE_ELEMENTS), None);
        assert_eq!(similar_name("e", QUEUE_ELEMENTS), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
