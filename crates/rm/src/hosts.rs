//! Which nodes may be in the cluster: Hadoop's include and exclude files
//! (`yarn.resourcemanager.nodes.include-path` and `.exclude-path`), read in
//! Hadoop's two formats, and the rule that says whether a node is allowed.
//!
//! A file whose name ends in `.xml` (in any case) is read as Hadoop's XML
//! format, `<hosts><host><name>h1</name><timeout>60</timeout></host></hosts>`,
//! where a name may list several hosts and the timeout (seconds, negative
//! for none) is that host's graceful-decommission timeout; any other file is
//! the plain format, host names separated by whitespace, `#` starting a
//! comment to the end of the line. An entry names a host (every node on it)
//! or one node as `host:port`.
//!
//! This module only reads and decides. When the files are read (at start,
//! and on `refresh-nodes`) is the service's business, and what happens to
//! the nodes a new list disallows is the actor's: nothing here knows about
//! the scheduler.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use weft_model::{Duration, NodeId};
use weft_queue_tree::site::Location;

/// The property naming the include file.
pub const INCLUDE_PROPERTY: &str = "yarn.resourcemanager.nodes.include-path";
/// The property naming the exclude file.
pub const EXCLUDE_PROPERTY: &str = "yarn.resourcemanager.nodes.exclude-path";

/// Which of the two lists a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// Nodes that may join (every node when the list is empty).
    Include,
    /// Nodes that may not.
    Exclude,
}

impl ListKind {
    /// The site property that names the file.
    pub fn property(self) -> &'static str {
        match self {
            ListKind::Include => INCLUDE_PROPERTY,
            ListKind::Exclude => EXCLUDE_PROPERTY,
        }
    }
}

impl fmt::Display for ListKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ListKind::Include => "include",
            ListKind::Exclude => "exclude",
        })
    }
}

/// A graceful-decommission timeout as Hadoop writes one: whole seconds, a
/// negative number meaning no timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeoutSecs(pub i64);

impl TimeoutSecs {
    /// The core's drain timeout: `None` for no timeout.
    pub fn to_drain_timeout(self) -> Option<Duration> {
        u64::try_from(self.0).ok().map(Duration::from_secs)
    }
}

impl fmt::Display for TimeoutSecs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < 0 {
            f.write_str("no timeout")
        } else {
            write!(f, "{} s", self.0)
        }
    }
}

/// One list as read from its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostList {
    /// Include or exclude.
    pub kind: ListKind,
    /// The file it was read from.
    pub path: PathBuf,
    /// Each entry (`host` or `host:port`) with the timeout the XML format
    /// gave it, if any.
    pub entries: BTreeMap<String, Option<TimeoutSecs>>,
}

/// Where the lists come from: the two properties' files, if set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostsFiles {
    /// `yarn.resourcemanager.nodes.include-path`.
    pub include: Option<PathBuf>,
    /// `yarn.resourcemanager.nodes.exclude-path`.
    pub exclude: Option<PathBuf>,
}

impl HostsFiles {
    /// The files with relative paths taken from `dir` (the configuration
    /// directory), as every path in the site file is.
    pub fn resolved(self, dir: &Path) -> HostsFiles {
        // `join` keeps an absolute path as it is.
        HostsFiles {
            include: self.include.map(|p| dir.join(p)),
            exclude: self.exclude.map(|p| dir.join(p)),
        }
    }
}

/// The lists in force; with neither, every node is allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostLists {
    /// The include list, if a file is configured.
    pub include: Option<HostList>,
    /// The exclude list, if a file is configured.
    pub exclude: Option<HostList>,
}

/// Why a node may not be in the cluster.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Disallowed {
    /// An entry of the exclude list names it.
    #[error("{entry} is listed in the exclude file {} ({EXCLUDE_PROPERTY})", path.display())]
    Excluded {
        /// The entry that matched (`host` or `host:port`).
        entry: String,
        /// The exclude file.
        path: PathBuf,
    },
    /// The include list is not empty and does not name it.
    #[error("neither {host} nor {node} is listed in the include file {} ({INCLUDE_PROPERTY})", path.display())]
    NotIncluded {
        /// The node's host.
        host: String,
        /// The node.
        node: NodeId,
        /// The include file.
        path: PathBuf,
    },
}

/// Why a hosts file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// It could not be read (missing, unreadable, not a regular file).
    #[error("cannot read the {kind} file {} ({}): {source}", path.display(), kind.property())]
    Read {
        /// Which list.
        kind: ListKind,
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Its content is not a hosts file.
    #[error("the {kind} file {} ({}) is invalid:{}", path.display(), kind.property(), render_problems(problems))]
    Invalid {
        /// Which list.
        kind: ListKind,
        /// The file.
        path: PathBuf,
        /// Every problem found, in file order; never empty.
        problems: Vec<HostsProblem>,
    },
}

/// One problem in a hosts file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct HostsProblem {
    /// Where.
    pub location: Location,
    /// What is wrong.
    pub message: String,
}

fn render_problems(problems: &[HostsProblem]) -> String {
    problems.iter().map(|p| format!("\n  {p}")).collect()
}

/// True when Hadoop reads `path` as XML: its name ends in `.xml`, in any case.
pub fn is_xml(path: &Path) -> bool {
    path.to_string_lossy().to_lowercase().ends_with(".xml")
}

impl HostList {
    /// Reads the `kind` list from `path`; the warnings say what was ignored.
    pub fn read(kind: ListKind, path: &Path) -> Result<(HostList, Vec<String>), HostsError> {
        let text = crate::config::read_config_file(path).map_err(|source| HostsError::Read {
            kind,
            path: path.to_owned(),
            source,
        })?;
        HostList::parse(kind, path, &text)
    }

    /// Parses `text` as the `kind` list read from `path`, in the format
    /// the file's name calls for.
    pub fn parse(
        kind: ListKind,
        path: &Path,
        text: &str,
    ) -> Result<(HostList, Vec<String>), HostsError> {
        let mut parsed = Parsed::default();
        if is_xml(path) {
            parse_xml(text, &mut parsed);
        } else {
            parse_plain(text, &mut parsed);
        }
        if !parsed.problems.is_empty() {
            parsed.problems.sort_by_key(|p| p.location);
            return Err(HostsError::Invalid {
                kind,
                path: path.to_owned(),
                problems: parsed.problems,
            });
        }
        let name = path.display();
        let mut warnings: Vec<String> = parsed
            .warnings
            .into_iter()
            .map(|(at, w)| format!("{name}: {at}: {w}"))
            .collect();
        let mut entries = BTreeMap::new();
        for (entry, mut timeout, at) in parsed.entries {
            if kind == ListKind::Include && timeout.take().is_some() {
                warnings.push(format!(
                    "{name}: {at}: the timeout of {entry} is ignored: only the exclude file's timeouts mean anything"
                ));
            }
            // As in Hadoop, a later entry for the same host replaces an earlier one.
            if let Some(earlier) = entries.insert(entry.clone(), timeout)
                && earlier != timeout
            {
                warnings.push(format!(
                        "{name}: {at}: {entry} is listed again with another timeout; this later entry counts"
                    ));
            }
        }
        Ok((
            HostList {
                kind,
                path: path.to_owned(),
                entries,
            },
            warnings,
        ))
    }

    /// The entry naming `node`, with its timeout: a `host:port` entry
    /// before a `host` one.
    pub fn entry_for(&self, node: &NodeId) -> Option<(&str, Option<TimeoutSecs>)> {
        let exact = node.to_string();
        self.entries
            .get_key_value(exact.as_str())
            .or_else(|| self.entries.get_key_value(node.host()))
            .map(|(k, v)| (k.as_str(), *v))
    }
}

impl HostLists {
    /// Reads the files of `files`; the warnings say what was ignored.
    pub fn load(files: &HostsFiles) -> Result<(HostLists, Vec<String>), HostsError> {
        let mut warnings = Vec::new();
        let mut read = |kind, path: &Option<PathBuf>| -> Result<Option<HostList>, HostsError> {
            let Some(path) = path else {
                return Ok(None);
            };
            let (list, w) = HostList::read(kind, path)?;
            warnings.extend(w);
            Ok(Some(list))
        };
        let include = read(ListKind::Include, &files.include)?;
        let exclude = read(ListKind::Exclude, &files.exclude)?;
        Ok((HostLists { include, exclude }, warnings))
    }

    /// Whether `node` may be in the cluster, as Hadoop decides: not named
    /// by the exclude list, and named by the include list unless that list
    /// is empty.
    pub fn check(&self, node: &NodeId) -> Result<(), Disallowed> {
        if let Some(ex) = &self.exclude
            && let Some((entry, _)) = ex.entry_for(node)
        {
            return Err(Disallowed::Excluded {
                entry: entry.to_owned(),
                path: ex.path.clone(),
            });
        }
        if let Some(inc) = &self.include
            && !inc.entries.is_empty()
            && inc.entry_for(node).is_none()
        {
            return Err(Disallowed::NotIncluded {
                host: node.host().to_owned(),
                node: node.clone(),
                path: inc.path.clone(),
            });
        }
        Ok(())
    }

    /// The timeout the exclude file's XML gives `node`, if any.
    pub fn exclude_timeout(&self, node: &NodeId) -> Option<TimeoutSecs> {
        self.exclude.as_ref()?.entry_for(node)?.1
    }
}

/// What a file held, before it is accepted: entries with where they were
/// written, and what is wrong or ignored.
#[derive(Default)]
struct Parsed {
    entries: Vec<(String, Option<TimeoutSecs>, Location)>,
    problems: Vec<HostsProblem>,
    warnings: Vec<(Location, String)>,
}

impl Parsed {
    fn problem(&mut self, location: Location, message: impl Into<String>) {
        self.problems.push(HostsProblem {
            location,
            message: message.into(),
        });
    }
}

/// The line and column (in characters) of byte `offset` in `text`.
fn location_at(text: &str, offset: usize) -> Location {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Location {
        layer: 0,
        line: u32::try_from(before.matches('\n').count() + 1).unwrap_or(u32::MAX),
        column: u32::try_from(before[line_start..].chars().count() + 1).unwrap_or(u32::MAX),
    }
}

/// Checks one entry: a host name, or `host:port`. Node ids cannot hold
/// `:` or `/` in their host, so anything else could never match a node,
/// and is more likely a mistake than an intention.
fn check_entry(entry: &str) -> Result<(), String> {
    if entry.starts_with('<') {
        return Err(format!(
            "{entry:?} looks like XML, but this file is read as plain host names: Hadoop reads a hosts file as XML only when its name ends in .xml"
        ));
    }
    let (host, port) = match entry.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (entry, None),
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !host_ok {
        return Err(format!(
            "{entry:?} is not a host name or host:port (a host name has only letters, digits, '.', '-' and '_')"
        ));
    }
    if let Some(port) = port {
        let port_ok = !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u16>().is_ok();
        if !port_ok {
            return Err(format!(
                "{entry:?} is not host:port: the port must be a number from 0 to 65535"
            ));
        }
    }
    Ok(())
}

/// Hadoop's plain format: entries separated by whitespace; a word starting
/// with `#` makes the rest of its line a comment.
fn parse_plain(text: &str, parsed: &mut Parsed) {
    let mut line_start = 0;
    for line in text.split('\n') {
        let mut rest = line;
        loop {
            let trimmed = rest.trim_start();
            if trimmed.is_empty() {
                break;
            }
            let start = line.len() - trimmed.len();
            let word_len = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
            let word = &trimmed[..word_len];
            rest = &trimmed[word_len..];
            if word.starts_with('#') {
                break;
            }
            let at = location_at(text, line_start + start);
            match check_entry(word) {
                Ok(()) => parsed.entries.push((word.to_owned(), None, at)),
                Err(why) => parsed.problem(at, why),
            }
        }
        line_start += line.len() + 1;
    }
}

/// How deep elements may nest; a hosts file needs three levels.
const MAX_XML_DEPTH: usize = 32;

/// Which field of the open `<host>` its text goes to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Name,
    Timeout,
    /// An element already reported or warned about (a field given twice,
    /// an element that is not part of a hosts file): its text goes with it.
    Ignored,
}

/// A `<host>` being read: where it opened, and its fields' text with the
/// byte offset of their first non-blank character.
struct HostDraft {
    at: Location,
    depth: usize,
    name: Option<(String, Option<usize>)>,
    timeout: Option<(String, Option<usize>)>,
}

/// Hadoop's XML format: every `<host>` element, each with a `<name>` (one
/// host or several separated by commas or whitespace) and an optional
/// `<timeout>` in seconds. Hadoop reads `<host>` elements wherever they
/// are; so does this, but it says what it ignores, and refuses what would
/// silently name no host (a `<host>` without a name, stray text).
fn parse_xml(text: &str, parsed: &mut Parsed) {
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(false);
    reader.config_mut().check_end_names = true;
    let mut doc = XmlHosts {
        text,
        parsed,
        stack: Vec::new(),
        host: None,
        field: None,
        root_seen: false,
    };
    loop {
        let offset = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => {
                let pos = usize::try_from(reader.error_position()).unwrap_or(offset);
                let at = location_at(text, pos.max(offset));
                doc.parsed.problem(at, format!("not well-formed XML: {e}"));
                return;
            }
        };
        let keep_going = match event {
            Event::Start(start) => doc.open(&element_name(&start), offset),
            Event::Empty(start) => {
                let going = doc.open(&element_name(&start), offset);
                doc.close();
                going
            }
            Event::End(_) => {
                // quick-xml has checked that the names match.
                doc.close();
                true
            }
            Event::Text(raw) => match raw.unescape() {
                Ok(content) => {
                    doc.add_text(&content, offset);
                    true
                }
                Err(e) => {
                    doc.parsed
                        .problem(location_at(text, offset), format!("bad text: {e}"));
                    true
                }
            },
            Event::CData(raw) => {
                let content = String::from_utf8_lossy(&raw.into_inner()).into_owned();
                doc.add_text(&content, offset + "<![CDATA[".len());
                true
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => true,
            Event::Eof => break,
        };
        if !keep_going {
            return;
        }
    }
    let end = location_at(text, text.len());
    if let Some(open) = doc.stack.last() {
        let message = format!("element <{open}> is never closed");
        doc.parsed.problem(end, message);
    } else if !doc.root_seen {
        doc.parsed.problem(
            end,
            "no <hosts> element: an XML hosts file holds <hosts><host><name>...</name></host></hosts>",
        );
    }
}

fn element_name(start: &BytesStart<'_>) -> String {
    String::from_utf8_lossy(start.name().as_ref()).into_owned()
}

/// The state of an XML hosts file being read.
struct XmlHosts<'a> {
    text: &'a str,
    parsed: &'a mut Parsed,
    /// The open elements, outermost first.
    stack: Vec<String>,
    host: Option<HostDraft>,
    /// The `<host>` field being read, and the depth of its element.
    field: Option<(Field, usize)>,
    root_seen: bool,
}

impl XmlHosts<'_> {
    /// An element opens at byte `offset`; false when reading cannot go on.
    fn open(&mut self, name: &str, offset: usize) -> bool {
        let at = location_at(self.text, offset);
        if self.stack.is_empty() {
            if self.root_seen {
                self.parsed.problem(
                    at,
                    format!("a second top-level element <{name}>: a document has one root element"),
                );
                return false;
            }
            self.root_seen = true;
            if name != "hosts" {
                self.parsed.warnings.push((
                    at,
                    format!("the root element is <{name}>, not <hosts>; its <host> elements are read anyway, as Hadoop reads them"),
                ));
            }
        }
        let parent_is_host = self
            .host
            .as_ref()
            .is_some_and(|h| h.depth == self.stack.len());
        self.stack.push(name.to_owned());
        if self.stack.len() > MAX_XML_DEPTH {
            self.parsed
                .problem(at, format!("elements nest more than {MAX_XML_DEPTH} deep"));
            return false;
        }
        let depth = self.stack.len();
        let in_host = self.host.is_some();
        match name {
            "host" if in_host => {
                self.parsed.problem(at, "a <host> inside another <host>");
                return false;
            }
            "host" => {
                self.host = Some(HostDraft {
                    at,
                    depth,
                    name: None,
                    timeout: None,
                });
            }
            "name" | "timeout" if parent_is_host => {
                let Some(draft) = self.host.as_mut() else {
                    return true;
                };
                let (which, slot) = if name == "name" {
                    (Field::Name, &mut draft.name)
                } else {
                    (Field::Timeout, &mut draft.timeout)
                };
                if slot.is_some() {
                    self.parsed
                        .problem(at, format!("a second <{name}> in one <host>"));
                    self.field = Some((Field::Ignored, depth));
                } else {
                    *slot = Some((String::new(), None));
                    self.field = Some((which, depth));
                }
            }
            // The root, whatever its name (warned about above).
            _ if depth == 1 => {}
            _ if self.field.is_some() => {}
            _ if in_host => {
                self.parsed.warnings.push((
                    at,
                    format!("<{name}> is not part of a <host> entry (<name>, <timeout>); ignored"),
                ));
                self.field = Some((Field::Ignored, depth));
            }
            _ => {
                self.parsed
                    .warnings
                    .push((at, format!("<{name}> is not a <host> entry; ignored")));
                self.field = Some((Field::Ignored, depth));
            }
        }
        true
    }

    /// The innermost element closes.
    fn close(&mut self) {
        let depth = self.stack.len();
        self.stack.pop();
        if self.field.is_some_and(|(_, d)| d == depth) {
            self.field = None;
        }
        if self.host.as_ref().is_some_and(|h| h.depth == depth)
            && let Some(draft) = self.host.take()
        {
            self.finish_host(draft);
        }
    }

    /// Text at byte `offset`: a field's when one is open; elsewhere only
    /// blanks, since a host named outside `<name>` would be named in vain.
    fn add_text(&mut self, content: &str, offset: usize) {
        let first = content
            .find(|c: char| !c.is_whitespace())
            .map(|i| offset + i);
        let slot = match (self.field, self.host.as_mut()) {
            (Some((Field::Name, _)), Some(h)) => h.name.as_mut(),
            (Some((Field::Timeout, _)), Some(h)) => h.timeout.as_mut(),
            (Some((Field::Ignored, _)), _) => return,
            _ => None,
        };
        match slot {
            Some((value, at)) => {
                value.push_str(content);
                if at.is_none() {
                    *at = first;
                }
            }
            None => {
                if let Some(first) = first {
                    let words = content.trim();
                    self.parsed.problem(
                        location_at(self.text, first),
                        format!(
                            "text {words:?} outside a <host>'s <name> or <timeout> names no host; write <host><name>{words}</name></host>"
                        ),
                    );
                }
            }
        }
    }

    fn finish_host(&mut self, draft: HostDraft) {
        let timeout = match &draft.timeout {
            None => None,
            Some((value, at)) => {
                let at = location_at(self.text, at.unwrap_or(0));
                match value.trim().parse::<i32>() {
                    Ok(secs) => Some(TimeoutSecs(i64::from(secs))),
                    Err(_) => {
                        let at = if value.trim().is_empty() {
                            draft.at
                        } else {
                            at
                        };
                        self.parsed.problem(
                            at,
                            format!(
                                "timeout {:?} is not a whole number of seconds (negative for no timeout)",
                                value.trim()
                            ),
                        );
                        return;
                    }
                }
            }
        };
        let Some((names, Some(start))) = &draft.name else {
            self.parsed
                .problem(draft.at, "a <host> without a <name>: it names no host");
            return;
        };
        // Several hosts may share an entry, separated by commas or blanks.
        let mut rest = names.as_str();
        let mut base = *start - (names.len() - names.trim_start().len());
        loop {
            let skipped = rest.len()
                - rest
                    .trim_start_matches(|c: char| c == ',' || c.is_whitespace())
                    .len();
            rest = &rest[skipped..];
            base += skipped;
            if rest.is_empty() {
                break;
            }
            let len = rest
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let entry = &rest[..len];
            let at = location_at(self.text, base);
            match check_entry(entry) {
                Ok(()) => self.parsed.entries.push((entry.to_owned(), timeout, at)),
                Err(why) => self.parsed.problem(at, why),
            }
            rest = &rest[len..];
            base += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn node(id: &str) -> NodeId {
        id.parse().unwrap()
    }

    /// The entries of a list, or its error, as text.
    fn check(kind: ListKind, file: &str, text: &str) -> String {
        match HostList::parse(kind, Path::new(file), text) {
            Ok((list, warnings)) => {
                let mut out: Vec<String> = list
                    .entries
                    .iter()
                    .map(|(e, t)| match t {
                        Some(t) => format!("{e} timeout={}", t.0),
                        None => e.clone(),
                    })
                    .collect();
                out.extend(warnings.iter().map(|w| format!("warning: {w}")));
                out.join("\n")
            }
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_plain_format_is_words_with_comments() {
        let text = "# decommissioned for the disk swap\nh1 h2\th3\n\n  h4:8041 # only this node of h4\nh5#not-a-comment\n";
        expect![[r#"
            the exclude file /etc/weft/exclude (yarn.resourcemanager.nodes.exclude-path) is invalid:
              line 5, column 1: "h5#not-a-comment" is not a host name or host:port (a host name has only letters, digits, '.', '-' and '_')"#]]
        .assert_eq(&check(ListKind::Exclude, "/etc/weft/exclude", text));
        let text =
            "# decommissioned for the disk swap\nh1 h2\th3\n\n  h4:8041 # only this node of h4\n";
        expect![[r#"
            h1
            h2
            h3
            h4:8041"#]]
        .assert_eq(&check(ListKind::Exclude, "/etc/weft/exclude", text));
        assert_eq!(check(ListKind::Include, "empty", "  \n# nothing\n"), "");
    }

    #[test]
    fn every_bad_plain_entry_is_named_with_its_position() {
        let text = "h1 h:x\nbad/host  h2:70000 ok\n<hosts><host><name>h9</name></host></hosts>\n";
        expect![[r#"
            the include file incl (yarn.resourcemanager.nodes.include-path) is invalid:
              line 1, column 4: "h:x" is not host:port: the port must be a number from 0 to 65535
              line 2, column 1: "bad/host" is not a host name or host:port (a host name has only letters, digits, '.', '-' and '_')
              line 2, column 11: "h2:70000" is not host:port: the port must be a number from 0 to 65535
              line 3, column 1: "<hosts><host><name>h9</name></host></hosts>" looks like XML, but this file is read as plain host names: Hadoop reads a hosts file as XML only when its name ends in .xml"#]]
        .assert_eq(&check(ListKind::Include, "incl", text));
    }

    #[test]
    fn the_xml_format_gives_per_host_timeouts() {
        let text = r#"<?xml version="1.0"?>
<hosts>
  <!-- a comment -->
  <host><name>h1</name></host>
  <host><name>h2</name><timeout>123</timeout></host>
  <host><name>h3</name><timeout>-1</timeout></host>
  <host><name>h4, h5,h6
    h7:8041</name><timeout> 1800 </timeout></host>
  <host><name><![CDATA[h8]]></name></host>
</hosts>
"#;
        expect![[r#"
            h1
            h2 timeout=123
            h3 timeout=-1
            h4 timeout=1800
            h5 timeout=1800
            h6 timeout=1800
            h7:8041 timeout=1800
            h8"#]]
        .assert_eq(&check(ListKind::Exclude, "/x/EXCLUDE.XML", text));
    }

    #[test]
    fn xml_problems_are_named_with_their_position() {
        let text = "<hosts>\n  <host><timeout>5</timeout></host>\n  <host><name>h1</name><timeout>soon</timeout></host>\n  <host><name>h2</name><name>h3</name></host>\n  stray\n  <host><name>a/b</name></host>\n</hosts>";
        expect![[r#"
            the exclude file ex.xml (yarn.resourcemanager.nodes.exclude-path) is invalid:
              line 2, column 3: a <host> without a <name>: it names no host
              line 3, column 33: timeout "soon" is not a whole number of seconds (negative for no timeout)
              line 4, column 24: a second <name> in one <host>
              line 5, column 3: text "stray" outside a <host>'s <name> or <timeout> names no host; write <host><name>stray</name></host>
              line 6, column 15: "a/b" is not a host name or host:port (a host name has only letters, digits, '.', '-' and '_')"#]]
        .assert_eq(&check(ListKind::Exclude, "ex.xml", text));
        expect![[r#"
            the exclude file ex.xml (yarn.resourcemanager.nodes.exclude-path) is invalid:
              line 2, column 17: not well-formed XML: ill-formed document: expected `</name>`, but `</host>` was found"#]]
        .assert_eq(&check(
            ListKind::Exclude,
            "ex.xml",
            "<hosts>\n  <host><name>h1</host>\n</hosts>",
        ));
        expect![[r#"
            the exclude file ex.xml (yarn.resourcemanager.nodes.exclude-path) is invalid:
              line 1, column 1: no <hosts> element: an XML hosts file holds <hosts><host><name>...</name></host></hosts>"#]]
        .assert_eq(&check(ListKind::Exclude, "ex.xml", ""));
        expect![[r#"
            the exclude file ex.xml (yarn.resourcemanager.nodes.exclude-path) is invalid:
              line 2, column 1: element <hosts> is never closed"#]]
        .assert_eq(&check(ListKind::Exclude, "ex.xml", "<hosts>\n"));
    }

    #[test]
    fn what_is_ignored_is_said() {
        let text = "<nodes>\n  <host><name>h1</name><rack>/r1</rack></host>\n  <comment/>\n  <host><name>h1</name><timeout>9</timeout></host>\n</nodes>";
        expect![[r#"
            h1 timeout=9
            warning: ex.xml: line 1, column 1: the root element is <nodes>, not <hosts>; its <host> elements are read anyway, as Hadoop reads them
            warning: ex.xml: line 2, column 24: <rack> is not part of a <host> entry (<name>, <timeout>); ignored
            warning: ex.xml: line 3, column 3: <comment> is not a <host> entry; ignored
            warning: ex.xml: line 4, column 15: h1 is listed again with another timeout; this later entry counts"#]]
        .assert_eq(&check(ListKind::Exclude, "ex.xml", text));
        expect![[r#"
            h1
            warning: in.xml: line 1, column 20: the timeout of h1 is ignored: only the exclude file's timeouts mean anything"#]]
        .assert_eq(&check(
            ListKind::Include,
            "in.xml",
            "<hosts><host><name>h1</name><timeout>5</timeout></host></hosts>",
        ));
    }

    #[test]
    fn a_node_is_matched_by_host_or_host_and_port() {
        let list = |kind, text| HostList::parse(kind, Path::new("f"), text).unwrap().0;
        let lists = HostLists {
            include: Some(list(ListKind::Include, "h1 h2 h3:8041")),
            exclude: Some(list(ListKind::Exclude, "h2 h1:9000")),
        };
        assert_eq!(lists.check(&node("h1:8041")), Ok(()));
        assert_eq!(lists.check(&node("h3:8041")), Ok(()));
        assert_eq!(
            lists.check(&node("h1:9000")).unwrap_err().to_string(),
            "h1:9000 is listed in the exclude file f (yarn.resourcemanager.nodes.exclude-path)"
        );
        assert_eq!(
            lists.check(&node("h2:8041")).unwrap_err().to_string(),
            "h2 is listed in the exclude file f (yarn.resourcemanager.nodes.exclude-path)"
        );
        assert_eq!(
            lists.check(&node("h3:9")).unwrap_err().to_string(),
            "neither h3 nor h3:9 is listed in the include file f (yarn.resourcemanager.nodes.include-path)"
        );
        // An empty include list includes every node.
        let open = HostLists {
            include: Some(list(ListKind::Include, "# nobody\n")),
            exclude: None,
        };
        assert_eq!(open.check(&node("anything:1")), Ok(()));
        assert_eq!(HostLists::default().check(&node("h:1")), Ok(()));
    }

    #[test]
    fn a_host_and_port_entry_gives_its_timeout_before_the_hosts() {
        let (ex, _) = HostList::parse(
            ListKind::Exclude,
            Path::new("ex.xml"),
            "<hosts><host><name>h1</name><timeout>60</timeout></host><host><name>h1:8041</name><timeout>5</timeout></host><host><name>h2</name></host></hosts>",
        )
        .unwrap();
        let lists = HostLists {
            include: None,
            exclude: Some(ex),
        };
        assert_eq!(
            lists.exclude_timeout(&node("h1:8041")),
            Some(TimeoutSecs(5))
        );
        assert_eq!(lists.exclude_timeout(&node("h1:9")), Some(TimeoutSecs(60)));
        assert_eq!(lists.exclude_timeout(&node("h2:9")), None);
        assert_eq!(lists.exclude_timeout(&node("h3:9")), None);
        assert_eq!(
            TimeoutSecs(60).to_drain_timeout(),
            Some(Duration::from_secs(60))
        );
        assert_eq!(TimeoutSecs(-1).to_drain_timeout(), None);
    }

    #[test]
    fn xml_is_chosen_by_the_files_name_as_hadoop_chooses() {
        assert!(is_xml(Path::new("/etc/hadoop/yarn.exclude.xml")));
        assert!(is_xml(Path::new("EXCLUDE.XML")));
        assert!(!is_xml(Path::new("/etc/hadoop/yarn.exclude")));
        assert!(!is_xml(Path::new("exclude.xml.bak")));
    }

    #[test]
    fn a_missing_file_names_the_path_and_the_property() {
        let files = HostsFiles {
            include: None,
            exclude: Some(PathBuf::from("/nonexistent/weft-exclude")),
        };
        let err = HostLists::load(&files).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot read the exclude file /nonexistent/weft-exclude (yarn.resourcemanager.nodes.exclude-path): No such file or directory (os error 2)"
        );
    }
}
