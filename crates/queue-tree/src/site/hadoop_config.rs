//! A reader for Hadoop's configuration format
//! (`<configuration><property><name>..</name><value>..</value></property>..`),
//! keeping where each property was set, with Hadoop's rules for repeated and
//! final properties and for `${name}` substitution, for one text or for
//! several layered as Hadoop layers its resources (`core-site.xml` under
//! `yarn-site.xml`, say).
//!
//! It knows no property names: what a value means is the business of its
//! reader (`SchedulerSettings` for the scheduler, the RM service for `weft.*`).
//! It reads text, never files, so XInclude is refused rather than followed.

use std::collections::BTreeMap;

use quick_xml::events::{BytesStart, BytesText, Event};
use quick_xml::reader::Reader;

use super::{Location, SiteError, SiteProblem, SiteWarning};

/// Hadoop's limit on nested `${...}` substitutions.
const MAX_SUBSTITUTIONS: usize = 20;

/// A parsed configuration file: properties by name, and what was odd about it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HadoopConfig {
    properties: BTreeMap<String, Property>,
    warnings: Vec<SiteWarning>,
}

/// One property as it stands after the whole file is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// The name, surrounding whitespace removed (as Hadoop does).
    pub name: String,
    /// The value after `${name}` substitution from the file's other
    /// properties; whitespace is kept, as Hadoop's `get` keeps it.
    pub value: String,
    /// The value as written (XML entities decoded, nothing substituted).
    pub raw_value: String,
    /// `<final>true</final>`: later values in the file are ignored.
    pub is_final: bool,
    /// Where the value is set: its `<value>` element, or the `<property>`
    /// element when the value is an attribute.
    pub location: Location,
}

/// One text of a layered configuration ([`HadoopConfig::parse_layered`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layer<'a> {
    /// What a warning calls this text when it points into it from a later
    /// one (a file name, say).
    pub name: &'a str,
    /// The configuration text.
    pub text: &'a str,
}

impl HadoopConfig {
    /// Reads a configuration file. Problems that make the file ambiguous are
    /// errors, all reported together; oddities Hadoop tolerates are kept as
    /// [`warnings`](HadoopConfig::warnings).
    pub fn parse(text: &str) -> Result<HadoopConfig, SiteError> {
        HadoopConfig::parse_layered(&[Layer { name: "", text }])
    }

    /// Reads several texts as one configuration, as Hadoop's `Configuration`
    /// reads its resources in order: a property of a later text replaces
    /// the same property of an earlier one, silently, unless the earlier is
    /// final; then the later value is ignored, with a warning when it
    /// differs (Hadoop warns only then). Within one text the rules of
    /// [`parse`](HadoopConfig::parse) hold. `${name}` substitution sees the
    /// properties of every text, as it stands after layering. Every
    /// position carries the index of its text ([`Location::layer`]); the
    /// problems of every text are reported together.
    pub fn parse_layered(layers: &[Layer<'_>]) -> Result<HadoopConfig, SiteError> {
        let mut properties = BTreeMap::new();
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        for (idx, layer) in layers.iter().enumerate() {
            let mut parser = Parser::new(
                layer.text,
                u8::try_from(idx).unwrap_or(u8::MAX),
                &layers[..idx],
                properties,
            );
            parser.document();
            properties = parser.properties;
            problems.append(&mut parser.problems);
            warnings.append(&mut parser.warnings);
        }
        if !problems.is_empty() {
            problems.sort_by_key(SiteProblem::location);
            return Err(SiteError { problems });
        }
        let mut config = HadoopConfig {
            properties,
            warnings,
        };
        config.substitute_all();
        config.warnings.sort_by_key(SiteWarning::location);
        Ok(config)
    }

    /// `expr` with Hadoop's `${name}` substitution from this configuration's
    /// properties, taking a name's value from `defaults` when no text sets
    /// it (what Hadoop finds in its `*-default.xml`); `None` when the
    /// references nest too deep.
    pub fn substitute_with_defaults(
        &self,
        expr: &str,
        defaults: &[(&str, &str)],
    ) -> Option<String> {
        substitute(expr, |var| {
            self.properties.get(var).map_or_else(
                || {
                    defaults
                        .iter()
                        .find(|(name, _)| *name == var)
                        .map(|(_, v)| *v)
                },
                |p| Some(p.raw_value.as_str()),
            )
        })
    }

    /// The property called `name`, if the file sets it.
    pub fn get(&self, name: &str) -> Option<&Property> {
        self.properties.get(name)
    }

    /// The value of `name` after substitution, if the file sets it.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.get(name).map(|p| p.value.as_str())
    }

    /// Every property, ordered by name.
    pub fn properties(&self) -> impl Iterator<Item = &Property> {
        self.properties.values()
    }

    /// The properties whose names start with `prefix`, ordered by name.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Property> + 'a {
        self.properties
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(move |(name, _)| name.starts_with(prefix))
            .map(|(_, p)| p)
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.properties.len()
    }

    /// True when the file sets nothing.
    pub fn is_empty(&self) -> bool {
        self.properties.is_empty()
    }

    /// What was odd about the file, in file order.
    pub fn warnings(&self) -> &[SiteWarning] {
        &self.warnings
    }

    fn substitute_all(&mut self) {
        let raw: BTreeMap<String, String> = self
            .properties
            .iter()
            .map(|(name, p)| (name.clone(), p.raw_value.clone()))
            .collect();
        for property in self.properties.values_mut() {
            match substitute(&property.raw_value, |var| raw.get(var).map(String::as_str)) {
                Some(value) => property.value = value,
                None => self.warnings.push(SiteWarning::SubstitutionTooDeep {
                    location: property.location,
                    name: property.name.clone(),
                }),
            }
        }
    }
}

/// Hadoop's `${name}` substitution: replace the leftmost reference, again and
/// again, until none is left, a reference is unknown (the rest stays as
/// written), or a value refers to itself (the whole value stays as written).
/// `None` when the references nest deeper than Hadoop allows.
fn substitute<'a>(expr: &str, lookup: impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    let mut eval = expr.to_owned();
    for _ in 0..MAX_SUBSTITUTIONS {
        let Some((start, end)) = find_reference(&eval) else {
            return Some(eval);
        };
        let Some(replacement) = lookup(&eval[start + 2..end - 1]) else {
            return Some(eval);
        };
        if replacement.contains(&eval[start..end]) {
            return Some(expr.to_owned());
        }
        eval = format!("{}{replacement}{}", &eval[..start], &eval[end..]);
    }
    None
}

/// The byte range of the leftmost `${name}`, where the name is non-empty and
/// holds no `}`, `$` or space.
fn find_reference(s: &str) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(offset) = s[from..].find("${") {
        let open = from + offset;
        let body = open + 2;
        let mut i = body;
        loop {
            match bytes.get(i) {
                // A reference that never closes: Hadoop stops looking.
                None => return None,
                Some(b'}') if i > body => return Some((open, i + 1)),
                // A `$` may start the next reference itself.
                Some(b'$') => {
                    from = i;
                    break;
                }
                Some(b'}' | b' ') => {
                    from = i + 1;
                    break;
                }
                Some(_) => i += 1,
            }
        }
    }
    None
}

/// Byte offset → line and column.
struct LineIndex<'a> {
    text: &'a str,
    /// The text's index among the layers.
    layer: u8,
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str, layer: u8) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex {
            text,
            layer,
            starts,
        }
    }

    fn locate(&self, offset: usize) -> Location {
        let offset = offset.min(self.text.len());
        let line_idx = self.starts.partition_point(|start| *start <= offset) - 1;
        let line_start = self.starts[line_idx];
        // Offsets from the XML reader sit on character boundaries; be safe anyway.
        let column = self
            .text
            .get(line_start..offset)
            .map_or(offset - line_start, |s| s.chars().count());
        Location {
            layer: self.layer,
            line: saturate(line_idx + 1),
            column: saturate(column + 1),
        }
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The reader hit malformed XML and cannot go on.
struct Stop;

/// A property while its element is being read.
#[derive(Default)]
struct PendingProperty {
    name: Option<String>,
    value: Option<(String, Location)>,
    is_final: Option<(String, Location)>,
}

struct Parser<'a, 'l> {
    reader: Reader<&'a [u8]>,
    lines: LineIndex<'a>,
    /// The texts layered before this one.
    earlier: &'l [Layer<'l>],
    /// What the earlier texts set, and then what this one adds.
    properties: BTreeMap<String, Property>,
    problems: Vec<SiteProblem>,
    warnings: Vec<SiteWarning>,
    /// Byte offset where the last event read starts.
    last_start: usize,
}

impl<'a, 'l> Parser<'a, 'l> {
    fn new(
        text: &'a str,
        layer: u8,
        earlier: &'l [Layer<'l>],
        properties: BTreeMap<String, Property>,
    ) -> Parser<'a, 'l> {
        let mut reader = Reader::from_str(text);
        let config = reader.config_mut();
        config.trim_text(false);
        config.check_end_names = true;
        config.expand_empty_elements = false;
        Parser {
            reader,
            lines: LineIndex::new(text, layer),
            earlier,
            properties,
            problems: Vec::new(),
            warnings: Vec::new(),
            last_start: 0,
        }
    }

    fn at(&self, offset: u64) -> Location {
        self.lines
            .locate(usize::try_from(offset).unwrap_or(usize::MAX))
    }

    /// The next event and where it starts.
    fn next(&mut self) -> Result<(Event<'a>, Location), Stop> {
        let start = self.reader.buffer_position();
        self.last_start = usize::try_from(start).unwrap_or(usize::MAX);
        match self.reader.read_event() {
            Ok(event) => Ok((event, self.at(start))),
            Err(err) => {
                let location = self.at(self.reader.error_position());
                self.problems.push(SiteProblem::Xml {
                    location,
                    message: err.to_string(),
                });
                Err(Stop)
            }
        }
    }

    fn document(&mut self) {
        // Malformed XML has already been reported by `next`.
        let _ = self.document_inner();
    }

    fn document_inner(&mut self) -> Result<(), Stop> {
        loop {
            let (event, location) = self.next()?;
            match event {
                Event::Start(e) => {
                    let name = element_name(&e);
                    if name != "configuration" {
                        self.problems.push(SiteProblem::WrongRoot {
                            location,
                            found: name,
                        });
                        return Err(Stop);
                    }
                    self.configuration(location)?;
                    return self.after_root();
                }
                Event::Empty(e) => {
                    let name = element_name(&e);
                    if name != "configuration" {
                        self.problems.push(SiteProblem::WrongRoot {
                            location,
                            found: name,
                        });
                        return Err(Stop);
                    }
                    return self.after_root();
                }
                Event::Text(t) if !is_blank(&t) => {
                    self.problems.push(SiteProblem::Xml {
                        location,
                        message: "text before the root element".to_owned(),
                    });
                    return Err(Stop);
                }
                Event::Eof => {
                    self.problems.push(SiteProblem::NoRoot { location });
                    return Err(Stop);
                }
                // Declarations, comments, processing instructions and DTDs carry no settings.
                _ => {}
            }
        }
    }

    fn after_root(&mut self) -> Result<(), Stop> {
        loop {
            let (event, location) = self.next()?;
            match event {
                Event::Eof => return Ok(()),
                Event::Text(t) if is_blank(&t) => {}
                Event::Comment(_) | Event::PI(_) => {}
                _ => {
                    self.problems.push(SiteProblem::Xml {
                        location,
                        message: "content after the root element".to_owned(),
                    });
                    return Err(Stop);
                }
            }
        }
    }

    /// The children of `<configuration>`, up to its end tag.
    fn configuration(&mut self, open_at: Location) -> Result<(), Stop> {
        loop {
            let (event, location) = self.next()?;
            match event {
                Event::End(_) => return Ok(()),
                Event::Eof => return self.unclosed("configuration", open_at),
                Event::Start(e) => {
                    let name = element_name(&e);
                    if name == "property" {
                        let pending = self.attributes(&e, location);
                        self.property(pending, location)?;
                    } else if is_include(&e) {
                        self.problems.push(SiteProblem::Include {
                            location,
                            element: name.clone(),
                        });
                        self.skip(&name, location)?;
                    } else {
                        self.ignored_element(&name, "configuration", location);
                        self.skip(&name, location)?;
                    }
                }
                Event::Empty(e) => {
                    let name = element_name(&e);
                    if name == "property" {
                        let pending = self.attributes(&e, location);
                        self.finish(pending, location);
                    } else if is_include(&e) {
                        self.problems.push(SiteProblem::Include {
                            location,
                            element: name,
                        });
                    } else {
                        self.ignored_element(&name, "configuration", location);
                    }
                }
                Event::Text(t) if !is_blank(&t) => {
                    self.ignored_text(&t, "configuration");
                }
                Event::CData(_) => {
                    self.warnings.push(SiteWarning::IgnoredText {
                        location,
                        parent: "configuration".to_owned(),
                    });
                }
                _ => {}
            }
        }
    }

    /// Hadoop's short form: `<property name=".." value=".." final="true"/>`.
    fn attributes(&mut self, e: &BytesStart<'_>, location: Location) -> PendingProperty {
        let mut pending = PendingProperty::default();
        for attr in e.attributes() {
            let attr = match attr {
                Ok(attr) => attr,
                Err(err) => {
                    self.problems.push(SiteProblem::Xml {
                        location,
                        message: err.to_string(),
                    });
                    continue;
                }
            };
            let key = String::from_utf8_lossy(attr.key.local_name().as_ref()).into_owned();
            let value = match attr.unescape_value() {
                Ok(v) => v.into_owned(),
                Err(err) => {
                    self.problems.push(SiteProblem::Xml {
                        location,
                        message: err.to_string(),
                    });
                    continue;
                }
            };
            match key.as_str() {
                "name" => pending.name = Some(value.trim().to_owned()),
                "value" => pending.value = Some((value, location)),
                "final" => pending.is_final = Some((value, location)),
                // Hadoop reads `tag` attributes for its own bookkeeping; nothing to keep.
                _ => {}
            }
        }
        pending
    }

    /// The children of a `<property>`, up to its end tag.
    fn property(&mut self, mut pending: PendingProperty, open_at: Location) -> Result<(), Stop> {
        loop {
            let (event, location) = self.next()?;
            match event {
                Event::End(_) => {
                    self.finish(pending, open_at);
                    return Ok(());
                }
                Event::Eof => return self.unclosed("property", open_at),
                Event::Start(e) => {
                    let name = element_name(&e);
                    match field(&name) {
                        Some(field) => {
                            let text = self.field_text(field, location)?;
                            self.set_field(&mut pending, field, text, location);
                        }
                        None => {
                            if !is_known_extra(&name) {
                                self.ignored_element(&name, "property", location);
                            }
                            self.skip(&name, location)?;
                        }
                    }
                }
                Event::Empty(e) => {
                    let name = element_name(&e);
                    match field(&name) {
                        Some(field) => self.set_field(&mut pending, field, String::new(), location),
                        None => {
                            if !is_known_extra(&name) {
                                self.ignored_element(&name, "property", location);
                            }
                        }
                    }
                }
                Event::Text(t) if !is_blank(&t) => {
                    self.ignored_text(&t, "property");
                }
                Event::CData(_) => {
                    self.warnings.push(SiteWarning::IgnoredText {
                        location,
                        parent: "property".to_owned(),
                    });
                }
                _ => {}
            }
        }
    }

    fn set_field(
        &mut self,
        pending: &mut PendingProperty,
        field: &'static str,
        text: String,
        location: Location,
    ) {
        let taken = match field {
            "name" => pending.name.replace(text.trim().to_owned()).is_some(),
            "value" => pending.value.replace((text, location)).is_some(),
            _ => pending.is_final.replace((text, location)).is_some(),
        };
        if taken {
            self.problems.push(SiteProblem::DuplicateField {
                location,
                name: pending.name.clone(),
                field,
            });
        }
    }

    /// The text of `<name>`, `<value>` or `<final>`, up to its end tag.
    fn field_text(&mut self, field: &'static str, open_at: Location) -> Result<String, Stop> {
        let mut text = String::new();
        loop {
            let (event, location) = self.next()?;
            match event {
                Event::End(_) => return Ok(text),
                Event::Eof => return self.unclosed(field, open_at).map(|()| text),
                Event::Text(t) => match t.unescape() {
                    Ok(s) => text.push_str(&s),
                    Err(err) => self.problems.push(SiteProblem::Xml {
                        location,
                        message: err.to_string(),
                    }),
                },
                Event::CData(c) => text.push_str(&String::from_utf8_lossy(&c.into_inner())),
                Event::Start(e) => {
                    let name = element_name(&e);
                    self.problems.push(SiteProblem::ElementInField {
                        location,
                        field,
                        element: name.clone(),
                    });
                    self.skip(&name, location)?;
                }
                Event::Empty(e) => self.problems.push(SiteProblem::ElementInField {
                    location,
                    field,
                    element: element_name(&e),
                }),
                _ => {}
            }
        }
    }

    /// Stores a finished property, applying Hadoop's final and last-wins rules.
    fn finish(&mut self, pending: PendingProperty, open_at: Location) {
        let is_final = match pending.is_final {
            None => false,
            Some((text, location)) => match super::values::parse_bool(&text) {
                Some(b) => b,
                None => {
                    self.problems.push(SiteProblem::InvalidFinal {
                        location,
                        name: pending.name.clone(),
                        value: text,
                    });
                    false
                }
            },
        };
        let Some(name) = pending.name.filter(|n| !n.is_empty()) else {
            self.warnings
                .push(SiteWarning::MissingName { location: open_at });
            return;
        };
        let Some((raw_value, location)) = pending.value else {
            self.warnings.push(SiteWarning::MissingValue {
                location: open_at,
                name,
            });
            return;
        };
        if let Some(previous) = self.properties.get(&name) {
            let same_text = previous.location.layer == location.layer;
            if previous.is_final {
                // Across texts Hadoop warns only when the value differs.
                if same_text || previous.raw_value != raw_value {
                    let final_in = (!same_text).then(|| {
                        self.earlier
                            .get(usize::from(previous.location.layer))
                            .map_or_else(String::new, |l| l.name.to_owned())
                    });
                    self.warnings.push(SiteWarning::FinalOverride {
                        location,
                        name,
                        final_at: previous.location,
                        final_in,
                    });
                }
                return;
            }
            // A later text overriding an earlier one is what layering is for.
            if same_text {
                self.warnings.push(SiteWarning::DuplicateProperty {
                    location,
                    name: name.clone(),
                    previous: previous.location,
                });
            }
        }
        let property = Property {
            name: name.clone(),
            value: raw_value.clone(),
            raw_value,
            is_final,
            location,
        };
        self.properties.insert(name, property);
    }

    /// Skips the rest of an element whose start tag was just read.
    fn skip(&mut self, name: &str, open_at: Location) -> Result<(), Stop> {
        let mut depth = 0usize;
        loop {
            let (event, _) = self.next()?;
            match event {
                Event::Start(_) => depth += 1,
                Event::End(_) if depth == 0 => return Ok(()),
                Event::End(_) => depth -= 1,
                Event::Eof => return self.unclosed(name, open_at),
                _ => {}
            }
        }
    }

    fn unclosed(&mut self, element: &str, location: Location) -> Result<(), Stop> {
        self.problems.push(SiteProblem::Unclosed {
            location,
            element: element.to_owned(),
        });
        Err(Stop)
    }

    /// Warns about stray text, pointing at its first visible character.
    fn ignored_text(&mut self, t: &BytesText<'_>, parent: &str) {
        let leading = t.iter().take_while(|b| b.is_ascii_whitespace()).count();
        self.warnings.push(SiteWarning::IgnoredText {
            location: self.lines.locate(self.last_start.saturating_add(leading)),
            parent: parent.to_owned(),
        });
    }

    fn ignored_element(&mut self, element: &str, parent: &str, location: Location) {
        self.warnings.push(SiteWarning::IgnoredElement {
            location,
            element: element.to_owned(),
            parent: parent.to_owned(),
        });
    }
}

fn element_name(e: &BytesStart<'_>) -> String {
    String::from_utf8_lossy(e.name().as_ref()).into_owned()
}

fn is_include(e: &BytesStart<'_>) -> bool {
    e.local_name().as_ref() == b"include"
}

fn is_blank(t: &BytesText<'_>) -> bool {
    t.iter().all(u8::is_ascii_whitespace)
}

/// The property children that hold a setting.
fn field(name: &str) -> Option<&'static str> {
    match name {
        "name" => Some("name"),
        "value" => Some("value"),
        "final" => Some("final"),
        _ => None,
    }
}

/// Property children Hadoop defines but that carry no setting.
fn is_known_extra(name: &str) -> bool {
    matches!(name, "description" | "source" | "tag")
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// Parses `text` and renders its properties and warnings, or its problems.
    fn check(text: &str, expect: Expect) {
        let rendered = match HadoopConfig::parse(text) {
            Ok(config) => {
                let mut out = String::new();
                for p in config.properties() {
                    out.push_str(&format!(
                        "{}:{} {} = {:?}{}{}\n",
                        p.location.line,
                        p.location.column,
                        p.name,
                        p.value,
                        if p.value == p.raw_value {
                            String::new()
                        } else {
                            format!(" (raw {:?})", p.raw_value)
                        },
                        if p.is_final { " final" } else { "" },
                    ));
                }
                for w in config.warnings() {
                    out.push_str(&format!("warning: {w}\n"));
                }
                out
            }
            Err(err) => format!("{err}\n"),
        };
        expect.assert_eq(&rendered);
    }

    #[test]
    fn properties_with_positions() {
        check(
            r#"<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!-- site overrides -->
<configuration>
  <property>
    <name> yarn.scheduler.fair.preemption </name>
    <value>true</value>
    <description>Turn preemption on.</description>
  </property>
  <property>
    <name>weft.http.address</name>
    <value>  0.0.0.0:8088 </value>
    <final>true</final>
    <source>programmatically</source>
    <tag>RM</tag>
  </property>
  <property name="short.form" value="a &amp; b" final="false"/>
  <property><name>empty</name><value/></property>
  <property><name>cdata</name><value><![CDATA[<x> & y]]></value></property>
  <property><name>ünïcode</name>   <value>ß</value></property>
</configuration>
"#,
            expect![[r#"
                19:31 cdata = "<x> & y"
                18:31 empty = ""
                17:3 short.form = "a & b"
                12:5 weft.http.address = "  0.0.0.0:8088 " final
                7:5 yarn.scheduler.fair.preemption = "true"
                20:36 ünïcode = "ß"
            "#]],
        );
    }

    #[test]
    fn later_value_wins_unless_final() {
        check(
            r#"<configuration>
<property><name>a</name><value>1</value></property>
<property><name>a</name><value>2</value></property>
<property><name>b</name><value>1</value><final>true</final></property>
<property><name>b</name><value>2</value></property>
<property><name>b</name><value>3</value><final>true</final></property>
</configuration>"#,
            expect![[r#"
                3:25 a = "2"
                4:25 b = "1" final
                warning: line 3, column 25: property a is set again (first at line 2, column 25); the later value wins
                warning: line 5, column 25: property b is final (set at line 4, column 25); this later value is ignored
                warning: line 6, column 25: property b is final (set at line 4, column 25); this later value is ignored
            "#]],
        );
    }

    #[test]
    fn later_texts_override_earlier_ones_unless_final() {
        let yarn = r#"<configuration>
<property><name>a</name><value>1</value></property>
<property><name>b</name><value>1</value><final>true</final></property>
<property><name>c</name><value>1</value><final>true</final></property>
<property><name>host</name><value>rm1</value></property>
<property><name>address</name><value>${host}:8088</value></property>
<property><name>a</name><value>1.5</value></property>
</configuration>"#;
        let weft = r#"<configuration>
<property><name>a</name><value>2</value></property>
<property><name>b</name><value>2</value></property>
<property><name>c</name><value>1</value></property>
<property><name>host</name><value>rm2</value></property>
<property><name>uses.a</name><value>${a}</value></property>
</configuration>"#;
        let config = HadoopConfig::parse_layered(&[
            Layer {
                name: "yarn-site.xml",
                text: yarn,
            },
            Layer {
                name: "weft-site.xml",
                text: weft,
            },
        ])
        .unwrap();
        let rendered: Vec<String> = config
            .properties()
            .map(|p| {
                let l = p.location;
                format!(
                    "{}:{}:{} {} = {}",
                    l.layer, l.line, l.column, p.name, p.value
                )
            })
            .chain(
                config
                    .warnings()
                    .iter()
                    .map(|w| format!("warning in {}: {w}", w.location().layer)),
            )
            .collect();
        // The later text wins silently (a repeat within a text still warns);
        // a final value stays, and only a different later value is flagged,
        // naming the text the final one is in; substitution sees the
        // layered result.
        expect![[r#"
            [
                "1:2:25 a = 2",
                "0:6:31 address = rm2:8088",
                "0:3:25 b = 1",
                "0:4:25 c = 1",
                "1:5:28 host = rm2",
                "1:6:30 uses.a = 2",
                "warning in 0: line 7, column 25: property a is set again (first at line 2, column 25); the later value wins",
                "warning in 1: line 3, column 25: property b is final (set at line 3, column 25 of yarn-site.xml); this later value is ignored",
            ]
        "#]]
        .assert_debug_eq(&rendered);

        // Problems of every text are reported together, in text order.
        let err = HadoopConfig::parse_layered(&[
            Layer {
                name: "a",
                text: "<configuration>\n<property><name>x</name><value>1</value><final>no</final></property>\n</configuration>",
            },
            Layer {
                name: "b",
                text: "<configuration>",
            },
        ])
        .unwrap_err();
        let located: Vec<(u8, u32)> = err
            .problems
            .iter()
            .map(|p| (p.location().layer, p.location().line))
            .collect();
        assert_eq!(located, [(0, 2), (1, 1)], "{err}");
    }

    #[test]
    fn substitution_falls_back_on_given_defaults() {
        let config = HadoopConfig::parse(
            r#"<configuration>
<property><name>port</name><value>9000</value></property>
</configuration>"#,
        )
        .unwrap();
        let defaults = [("host", "0.0.0.0"), ("port", "8088")];
        assert_eq!(
            config.substitute_with_defaults("${host}:${port}", &defaults),
            Some("0.0.0.0:9000".to_owned())
        );
        assert_eq!(
            config.substitute_with_defaults("${nope}", &defaults),
            Some("${nope}".to_owned())
        );
    }

    #[test]
    fn tolerated_oddities_are_warnings() {
        check(
            r#"<configuration>
  stray text
  <property><value>no name</value></property>
  <property><name>no.value</name></property>
  <property><name>  </name><value>blank name</value></property>
  <property><name>x</name><value>1</value><comment>hi</comment>more text</property>
  <pool name="old"><weight>2</weight></pool>
  <empty/>
</configuration>"#,
            expect![[r#"
                6:27 x = "1"
                warning: line 2, column 3: text directly inside <configuration> is ignored
                warning: line 3, column 3: a <property> without a <name> is ignored
                warning: line 4, column 3: property no.value has no <value> and is ignored
                warning: line 5, column 3: a <property> without a <name> is ignored
                warning: line 6, column 43: <comment> inside <property> is ignored
                warning: line 6, column 64: text directly inside <property> is ignored
                warning: line 7, column 3: <pool> inside <configuration> is ignored
                warning: line 8, column 3: <empty> inside <configuration> is ignored
            "#]],
        );
    }

    #[test]
    fn substitution_follows_hadoop() {
        check(
            r#"<configuration>
<property><name>host</name><value>rm1</value></property>
<property><name>port</name><value>8032</value></property>
<property><name>address</name><value>${host}:${port}</value></property>
<property><name>chained</name><value>${address}/x</value></property>
<property><name>unknown</name><value>${nope}:${port}</value></property>
<property><name>self</name><value>a${self}</value></property>
<property><name>loop.a</name><value>${loop.b}</value></property>
<property><name>loop.b</name><value>${loop.a}</value></property>
<property><name>not.refs</name><value>${} ${a b} $${port} ${port</value></property>
<property><name>dollar.inside</name><value>${a${port}}</value></property>
</configuration>"#,
            expect![[r#"
                4:31 address = "rm1:8032" (raw "${host}:${port}")
                5:31 chained = "rm1:8032/x" (raw "${address}/x")
                11:37 dollar.inside = "${a8032}" (raw "${a${port}}")
                2:28 host = "rm1"
                8:30 loop.a = "${loop.b}"
                9:30 loop.b = "${loop.a}"
                10:32 not.refs = "${} ${a b} $8032 ${port" (raw "${} ${a b} $${port} ${port")
                3:28 port = "8032"
                7:28 self = "a${self}"
                6:31 unknown = "${nope}:${port}"
                warning: line 8, column 30: property loop.a: variable substitution is nested too deep (a cycle?); the value is kept as written
                warning: line 9, column 30: property loop.b: variable substitution is nested too deep (a cycle?); the value is kept as written
            "#]],
        );
    }

    #[test]
    fn ambiguous_properties_are_errors() {
        check(
            r#"<configuration>
  <property><name>a</name><name>b</name><value>1</value></property>
  <property><name>c</name><value>1</value><value>2</value></property>
  <property><name>d</name><value>1<b>bold</b></value></property>
  <property><name>e</name><value>1</value><final>yes</final></property>
  <property name="f" value="1"><value>2</value></property>
  <xi:include href="other.xml" xmlns:xi="http://www.w3.org/2001/XInclude"/>
</configuration>"#,
            expect![[r#"
                the site configuration has 6 problems:
                  line 2, column 27: property b: <name> is given more than once
                  line 3, column 43: property c: <value> is given more than once
                  line 4, column 35: <value> contains the element <b>; expected text only
                  line 5, column 43: property e: <final> is "yes", expected true or false
                  line 6, column 32: property f: <value> is given more than once
                  line 7, column 3: <xi:include> is not supported: put the included properties in this file
            "#]],
        );
    }

    #[test]
    fn malformed_documents() {
        check(
            "",
            expect![[r#"
                the site configuration has 1 problem:
                  line 1, column 1: no <configuration> element
            "#]],
        );
        check(
            "<allocations></allocations>",
            expect![[r#"
                the site configuration has 1 problem:
                  line 1, column 1: the root element is <allocations>, expected <configuration>
            "#]],
        );
        check(
            "<configuration>\n  <property><name>a</name><value>1</value></property>\n",
            expect![[r#"
                the site configuration has 1 problem:
                  line 1, column 1: <configuration> is never closed
            "#]],
        );
        check(
            "<configuration>\n  <property><name>a</name><value>1</valu></property>\n</configuration>",
            expect![[r#"
                the site configuration has 1 problem:
                  line 2, column 35: malformed XML: ill-formed document: expected `</value>`, but `</valu>` was found
            "#]],
        );
        check(
            "<configuration>\n  <property><name>a</name><value>&bogus;</value></property>\n</configuration>",
            expect![[r#"
                the site configuration has 1 problem:
                  line 2, column 34: malformed XML: at 1..6: unrecognized entity `bogus`
            "#]],
        );
        check(
            "<configuration/>\n<configuration/>",
            expect![[r#"
                the site configuration has 1 problem:
                  line 2, column 1: malformed XML: content after the root element
            "#]],
        );
        check(
            "<configuration><property><name>a</name><value>1</value>",
            expect![[r#"
                the site configuration has 1 problem:
                  line 1, column 16: <property> is never closed
            "#]],
        );
    }

    #[test]
    fn an_empty_configuration_is_fine() {
        let config = HadoopConfig::parse("<configuration/>").unwrap();
        assert!(config.is_empty());
        assert_eq!(config.len(), 0);
        assert!(config.warnings().is_empty());
    }

    fn escape(text: &str) -> String {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    }

    proptest::proptest! {
        #[test]
        fn written_properties_read_back(
            pairs in proptest::collection::vec(("[a-z][a-z0-9.-]{0,12}", "[ -~]{0,16}"), 0..12),
            short_form in proptest::bool::ANY,
        ) {
            let mut text = String::from("<configuration>\n");
            let mut expected = BTreeMap::new();
            for (name, value) in &pairs {
                if short_form {
                    text.push_str(&format!("<property name=\"{name}\" value=\"{}\"/>\n", escape(value)));
                } else {
                    text.push_str(&format!(
                        "<property><name>{name}</name><value>{}</value></property>\n",
                        escape(value)
                    ));
                }
                expected.insert(name.clone(), value.clone());
            }
            text.push_str("</configuration>");
            let config = HadoopConfig::parse(&text).unwrap();
            let read: BTreeMap<String, String> = config
                .properties()
                .map(|p| (p.name.clone(), p.raw_value.clone()))
                .collect();
            proptest::prop_assert_eq!(read, expected);
            proptest::prop_assert_eq!(config.warnings().len() - n_substitution_warnings(&config), pairs.len() - config.len());
        }

        #[test]
        fn damaged_files_never_panic(cut_at in 0usize..400, cut_len in 0usize..40, junk in "[<>/&;\"a-z ]{0,6}") {
            let text = r#"<?xml version="1.0"?>
<configuration>
  <property><name>a</name><value>1 &amp; ${b}</value><final>true</final></property>
  <property name="b" value="2"/>
  <property><name>c</name><value><![CDATA[x]]></value><description>d</description></property>
</configuration>"#;
            let start = cut_at.min(text.len());
            let end = (start + cut_len).min(text.len());
            let damaged = format!("{}{junk}{}", &text[..start], &text[end..]);
            match HadoopConfig::parse(&damaged) {
                Ok(config) => proptest::prop_assert!(config.len() <= 3),
                Err(err) => proptest::prop_assert!(!err.problems.is_empty()),
            }
        }
    }

    fn n_substitution_warnings(config: &HadoopConfig) -> usize {
        config
            .warnings()
            .iter()
            .filter(|w| matches!(w, SiteWarning::SubstitutionTooDeep { .. }))
            .count()
    }

    #[test]
    fn lookups() {
        let config = HadoopConfig::parse(
            r#"<configuration>
<property><name>weft.a</name><value>1</value></property>
<property><name>weft.b</name><value>2</value></property>
<property><name>weftx</name><value>3</value></property>
<property><name>yarn.a</name><value>4</value></property>
</configuration>"#,
        )
        .unwrap();
        assert_eq!(config.value("weft.b"), Some("2"));
        assert_eq!(config.value("weft.c"), None);
        assert_eq!(config.get("yarn.a").unwrap().location.line, 5);
        let names: Vec<&str> = config
            .with_prefix("weft.")
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["weft.a", "weft.b"]);
        assert_eq!(config.properties().count(), 4);
    }
}
