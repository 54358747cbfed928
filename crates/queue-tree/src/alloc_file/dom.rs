//! A small element tree built from `quick-xml` events, keeping the byte offset
//! of every element, attribute and text so later problems can name a line and
//! column.
//!
//! Only well-formedness is checked here; what the elements mean, and every
//! problem with their content, is the allocation-file walker's business.

use quick_xml::Reader;
use quick_xml::escape::EscapeError;
use quick_xml::events::attributes::AttrError;
use quick_xml::events::{BytesStart, Event};

/// One element with its attributes, child elements and text, in document order.
#[derive(Debug)]
pub(super) struct Element {
    /// The tag name as written (a prefix, if any, is kept).
    pub(super) name: String,
    /// Byte offset of the element's `<`.
    pub(super) offset: usize,
    /// Attributes in document order.
    pub(super) attributes: Vec<Attribute>,
    /// Child elements in document order.
    pub(super) children: Vec<Element>,
    /// The element's own text and CDATA, concatenated and unescaped.
    pub(super) text: String,
    /// Byte offset of the first character of text that is not whitespace.
    pub(super) text_offset: Option<usize>,
}

/// One attribute, its value unescaped.
#[derive(Debug)]
pub(super) struct Attribute {
    /// The name as written.
    pub(super) name: String,
    /// The unescaped value.
    pub(super) value: String,
    /// Byte offset of the attribute's name.
    pub(super) offset: usize,
}

/// Why the text is not a well-formed XML document.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct XmlError {
    /// Byte offset where the problem was found.
    pub(super) offset: usize,
    /// Names of the elements open at that point, outermost first.
    pub(super) open: Vec<String>,
    /// What is wrong.
    pub(super) message: String,
}

impl Element {
    /// The value of the attribute called `name`, if present.
    pub(super) fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }
}

/// How deep elements may nest. An element tree is dropped and walked
/// recursively, so a document nested as deep as its text allows would
/// overflow the stack; an allocation file needs its queues
/// (`MAX_QUEUE_DEPTH`) plus a few levels of settings and rules.
const MAX_DEPTH: usize = 128;

/// Parses a whole document into its root element.
pub(super) fn parse_document(text: &str) -> Result<Element, XmlError> {
    let mut reader = Reader::from_str(text);
    // Whitespace between elements must stay in the event stream: the offset
    // read before each event is then exactly where that event starts.
    reader.config_mut().trim_text(false);
    reader.config_mut().check_end_names = true;

    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let fail = |stack: &[Element], offset: usize, message: String| XmlError {
        offset,
        open: stack.iter().map(|e| e.name.clone()).collect(),
        message,
    };
    // A problem inside a start tag: the element being opened is part of the path.
    let fail_in = |stack: &[Element], (name, offset, message): (String, usize, String)| {
        let mut err = fail(stack, offset, message);
        err.open.push(name);
        err
    };

    loop {
        let offset = position(reader.buffer_position());
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(err) => {
                let at = position(reader.error_position()).max(offset);
                return Err(fail(&stack, at, lowercase_first(&err.to_string())));
            }
        };
        match event {
            Event::Start(start) | Event::Empty(start) if stack.is_empty() && root.is_some() => {
                let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
                return Err(fail(
                    &stack,
                    offset,
                    format!(
                        "a second top-level element <{name}>: a document has exactly one root element"
                    ),
                ));
            }
            Event::Start(start) => {
                let element = open_element(&start, offset).map_err(|e| fail_in(&stack, e))?;
                if stack.len() >= MAX_DEPTH {
                    return Err(fail_in(
                        &stack,
                        (
                            element.name,
                            offset,
                            format!("elements are nested more than {MAX_DEPTH} deep"),
                        ),
                    ));
                }
                stack.push(element);
            }
            Event::Empty(start) => {
                let element = open_element(&start, offset).map_err(|e| fail_in(&stack, e))?;
                close_element(&mut stack, &mut root, element);
            }
            Event::End(_) => {
                // quick-xml has already checked that the names match.
                if let Some(element) = stack.pop() {
                    close_element(&mut stack, &mut root, element);
                }
            }
            Event::Text(raw) => {
                let unescaped = raw.unescape().map_err(|err| {
                    let (at, message) = describe(&err, offset);
                    fail(&stack, at, message)
                })?;
                add_text(&mut stack, offset, &unescaped)
                    .map_err(|(at, msg)| fail(&stack, at, msg))?;
            }
            Event::CData(raw) => {
                let content = String::from_utf8_lossy(&raw.into_inner()).into_owned();
                // The content starts after `<![CDATA[`.
                add_text(&mut stack, offset + "<![CDATA[".len(), &content)
                    .map_err(|(at, msg)| fail(&stack, at, msg))?;
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            Event::Eof => break,
        }
    }

    if let Some(open) = stack.last() {
        let (name, at) = (open.name.clone(), open.offset);
        return Err(fail(
            &stack,
            at,
            format!("element <{name}> is never closed"),
        ));
    }
    root.ok_or_else(|| XmlError {
        offset: text.len(),
        open: Vec::new(),
        message: "the document has no root element".to_owned(),
    })
}

/// Turns a byte position reported by the reader into an index.
fn position(pos: u64) -> usize {
    usize::try_from(pos).unwrap_or(usize::MAX)
}

/// Reads a start tag; a problem comes back as (element name, offset, message).
fn open_element(start: &BytesStart<'_>, offset: usize) -> Result<Element, (String, usize, String)> {
    let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
    let content: &[u8] = start;
    // Positions inside the tag count from just after `<`.
    let in_tag = |pos: usize| offset + 1 + pos;
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|err| {
            let (pos, message) = match err {
                AttrError::ExpectedEq(pos) => {
                    (pos, "expected '=' after the attribute name".to_owned())
                }
                AttrError::ExpectedValue(pos) => {
                    (pos, "expected a quoted value after '='".to_owned())
                }
                AttrError::UnquotedValue(pos) => {
                    (pos, "attribute values must be in quotes".to_owned())
                }
                AttrError::ExpectedQuote(pos, quote) => (
                    pos,
                    format!("the attribute value has no closing {}", char::from(quote)),
                ),
                AttrError::Duplicated(pos, _) => (pos, "the attribute is given twice".to_owned()),
            };
            (name.clone(), in_tag(pos), message)
        })?;
        let key = String::from_utf8_lossy(attribute.key.as_ref()).into_owned();
        let key_at = in_tag(distance(content, attribute.key.as_ref()).unwrap_or(0));
        let value_at = distance(content, &attribute.value).map_or(key_at, in_tag);
        let value = attribute
            .unescape_value()
            .map_err(|err| {
                let (at, message) = describe(&err, value_at);
                (name.clone(), at, format!("in attribute {key}: {message}"))
            })?
            .into_owned();
        attributes.push(Attribute {
            name: key,
            value,
            offset: key_at,
        });
    }
    Ok(Element {
        name,
        offset,
        attributes,
        children: Vec::new(),
        text: String::new(),
        text_offset: None,
    })
}

/// Where `part` starts within `whole`, when it is a slice of it (quick-xml
/// hands out attribute names and values as slices of the tag).
fn distance(whole: &[u8], part: &[u8]) -> Option<usize> {
    (part.as_ptr() as usize)
        .checked_sub(whole.as_ptr() as usize)
        .filter(|d| *d <= whole.len())
}

/// A reader error as (offset, message), with positions made absolute from
/// `base`, the start of the text or value being unescaped.
fn describe(err: &quick_xml::Error, base: usize) -> (usize, String) {
    match err {
        // The range covers the entity's name, after the `&`.
        quick_xml::Error::Escape(EscapeError::UnrecognizedEntity(range, entity)) => (
            base + range.start.saturating_sub(1),
            format!(
                "unknown entity &{entity}; (the predefined ones are &lt; &gt; &amp; &quot; &apos;)"
            ),
        ),
        quick_xml::Error::Escape(EscapeError::UnterminatedEntity(range)) => (
            base + range.start,
            "'&' starts an entity without a closing ';' (write &amp; for a literal &)".to_owned(),
        ),
        other => (base, lowercase_first(&other.to_string())),
    }
}

fn close_element(stack: &mut [Element], root: &mut Option<Element>, element: Element) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None => *root = Some(element),
    }
}

fn add_text(stack: &mut [Element], offset: usize, text: &str) -> Result<(), (usize, String)> {
    let leading = text.len() - text.trim_start().len();
    let has_content = !text.trim().is_empty();
    match stack.last_mut() {
        Some(element) => {
            if has_content && element.text_offset.is_none() {
                element.text_offset = Some(offset + leading);
            }
            element.text.push_str(text);
            Ok(())
        }
        None if has_content => Err((offset + leading, "text outside the root element".to_owned())),
        None => Ok(()),
    }
}

/// quick-xml's messages start with a capital letter; ours do not.
fn lowercase_first(message: &str) -> String {
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (usize, String) {
        let e = parse_document(text).unwrap_err();
        (e.offset, e.message)
    }

    #[test]
    fn keeps_offsets_of_elements_attributes_and_text() {
        let text =
            "<?xml version=\"1.0\"?>\n<a x=\"1\"  y='&lt;'>\n  <b>  hi &amp; bye </b><c/>\n</a>";
        let root = parse_document(text).unwrap();
        assert_eq!(root.name, "a");
        assert_eq!(root.offset, text.find("<a").unwrap());
        assert_eq!(root.attributes[0].offset, text.find("x=").unwrap());
        assert_eq!(root.attributes[1].offset, text.find("y=").unwrap());
        assert_eq!(root.attributes[1].value, "<");
        let b = &root.children[0];
        assert_eq!(b.offset, text.find("<b>").unwrap());
        assert_eq!(b.text, "  hi & bye ");
        assert_eq!(b.text_offset, Some(text.find("hi").unwrap()));
        assert_eq!(root.children[1].name, "c");
        assert_eq!(root.text_offset, None);
    }

    #[test]
    fn cdata_is_text() {
        let root = parse_document("<a><![CDATA[x<y]]></a>").unwrap();
        assert_eq!(root.text, "x<y");
        assert_eq!(root.text_offset, Some(12));
    }

    #[test]
    fn malformed_documents() {
        let (at, msg) = err("<a>\n<b></c>\n</a>");
        assert_eq!(at, 7, "{msg}");
        assert!(
            msg.contains("expected `</b>`, but `</c>` was found"),
            "{msg}"
        );

        let (at, msg) = err("<a>\n  <b>\n</a>");
        assert!(
            msg.contains("mismatch") || msg.contains("expected"),
            "{msg}"
        );
        assert!(at >= 6, "{at}");

        let (at, msg) = err("<a>\n  <b>");
        assert_eq!((at, msg.as_str()), (6, "element <b> is never closed"));

        let (at, msg) = err("<a/><b/>");
        assert_eq!(at, 4);
        assert!(msg.contains("second top-level element <b>"), "{msg}");

        let (at, msg) = err("");
        assert_eq!((at, msg.as_str()), (0, "the document has no root element"));

        let e = parse_document("<r><a x=\"1\" x=\"2\"/></r>").unwrap_err();
        assert_eq!(e.offset, 12);
        assert_eq!(e.open, ["r", "a"]);
        assert_eq!(e.message, "the attribute is given twice");

        let (at, msg) = err("<a>x &nope; y</a>");
        assert_eq!(at, 5);
        assert!(msg.starts_with("unknown entity &nope;"), "{msg}");

        let (at, msg) = err("<a b='1 &amp 2'/>");
        assert_eq!(at, 8);
        assert!(
            msg.starts_with("in attribute b: '&' starts an entity"),
            "{msg}"
        );

        let (at, msg) = err("<a/>junk");
        assert_eq!((at, msg.as_str()), (4, "text outside the root element"));
    }
}
