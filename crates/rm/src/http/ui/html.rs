//! A small HTML writer for the web UI: every element is closed where it is
//! opened (its content is a closure), every piece of text and every
//! attribute value is escaped, and a link's target is a `Href`, which is
//! either one of the UI's own paths or an http(s) URL.
//!
//! What a page says, and how numbers and times read, is the page modules'
//! and `format`'s; this module knows only markup.

use std::fmt::{self, Write as _};

/// Markup being written.
#[derive(Debug, Default)]
pub(crate) struct Html {
    out: String,
}

/// A link target that is safe in `href`: a path of this server built from
/// a static prefix and percent-encoded parts, or an http(s) URL (escaped
/// when written, like any attribute).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Href(String);

impl Html {
    /// Nothing written yet.
    pub(crate) fn new() -> Html {
        Html::default()
    }

    /// `<tag attrs>`, what `body` writes, `</tag>`.
    pub(crate) fn el(
        &mut self,
        tag: &'static str,
        attrs: &[(&'static str, &str)],
        body: impl FnOnce(&mut Html),
    ) -> &mut Html {
        self.open(tag, attrs);
        body(self);
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push('>');
        self
    }

    /// `<tag attrs>text</tag>`, the text escaped.
    pub(crate) fn text_el(
        &mut self,
        tag: &'static str,
        attrs: &[(&'static str, &str)],
        text: impl fmt::Display,
    ) -> &mut Html {
        self.el(tag, attrs, |h| {
            h.text(text);
        })
    }

    /// An element without content or end tag (`<meta ...>`, `<br>`).
    pub(crate) fn void(&mut self, tag: &'static str, attrs: &[(&'static str, &str)]) -> &mut Html {
        self.open(tag, attrs);
        self
    }

    /// Text, escaped.
    pub(crate) fn text(&mut self, text: impl fmt::Display) -> &mut Html {
        // Writing into a String cannot fail.
        let _ = write!(Escaper(&mut self.out), "{text}");
        self
    }

    /// A link to `href` reading `text`.
    pub(crate) fn link(&mut self, href: &Href, text: impl fmt::Display) -> &mut Html {
        self.text_el("a", &[("href", &href.0)], text)
    }

    /// A link among others (the navigation bar, a filter), marked with
    /// the class `on` when it is the one in force.
    pub(crate) fn link_marked(
        &mut self,
        href: &Href,
        text: impl fmt::Display,
        on: bool,
    ) -> &mut Html {
        if on {
            self.text_el("a", &[("href", &href.0), ("class", "on")], text)
        } else {
            self.link(href, text)
        }
    }

    /// Markup written into the program, never anything read or received:
    /// the `'static` bound keeps a runtime string out.
    pub(crate) fn markup(&mut self, markup: &'static str) -> &mut Html {
        self.out.push_str(markup);
        self
    }

    /// Markup written by another `Html`, which escaped it as it went.
    pub(crate) fn append(&mut self, other: Html) -> &mut Html {
        self.out.push_str(&other.out);
        self
    }

    /// What was written.
    pub(crate) fn into_string(self) -> String {
        self.out
    }

    /// What was written so far.
    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        &self.out
    }

    fn open(&mut self, tag: &'static str, attrs: &[(&'static str, &str)]) {
        debug_assert!(is_name(tag), "tag {tag:?}");
        self.out.push('<');
        self.out.push_str(tag);
        for (name, value) in attrs {
            debug_assert!(is_name(name), "attribute {name:?}");
            self.out.push(' ');
            self.out.push_str(name);
            self.out.push_str("=\"");
            self.text(value);
            self.out.push('"');
        }
        self.out.push('>');
    }
}

/// Tag and attribute names are the program's own; this only guards against
/// a typo that would break the markup.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Escapes what is written through it, for element content and for
/// double-quoted attribute values alike.
struct Escaper<'a>(&'a mut String);

impl fmt::Write for Escaper<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            match c {
                '&' => self.0.push_str("&amp;"),
                '<' => self.0.push_str("&lt;"),
                '>' => self.0.push_str("&gt;"),
                '"' => self.0.push_str("&quot;"),
                '\'' => self.0.push_str("&#39;"),
                c => self.0.push(c),
            }
        }
        Ok(())
    }
}

impl Href {
    /// One of this server's paths, written into the program.
    pub(crate) fn to(path: &'static str) -> Href {
        debug_assert!(path.starts_with('/'), "{path:?}");
        Href(path.to_owned())
    }

    /// `base/segment`, the segment (an id, a state) percent-encoded.
    pub(crate) fn under(base: &'static str, segment: &str) -> Href {
        let mut h = Href::to(base);
        h.0.push('/');
        encode_into(&mut h.0, segment);
        h
    }

    /// This link with `key=value` added to its query, the value
    /// percent-encoded.
    pub(crate) fn with_query(mut self, key: &'static str, value: &str) -> Href {
        self.0.push(if self.0.contains('?') { '&' } else { '?' });
        self.0.push_str(key);
        self.0.push('=');
        encode_into(&mut self.0, value);
        self
    }

    /// This link to the element with `id` on its page.
    pub(crate) fn with_fragment(mut self, id: &str) -> Href {
        self.0.push('#');
        encode_into(&mut self.0, id);
        self
    }

    /// `url` when it is an absolute http or https URL with no whitespace or
    /// control character in it; anything else (`javascript:`, `data:`, a
    /// relative path) is not linked, only shown as text.
    pub(crate) fn external(url: &str) -> Option<Href> {
        let scheme_end = url.find("://")?;
        let scheme = &url[..scheme_end];
        let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
        let clean = !url.chars().any(|c| c.is_whitespace() || c.is_control());
        (web && clean && url.len() > scheme_end + 3).then(|| Href(url.to_owned()))
    }

    /// The target as written into `href` (before escaping).
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// Appends `text` percent-encoded, keeping only RFC 3986's unreserved
/// characters and `:` (node ids are `host:port`, and a colon is allowed
/// in a path segment after the first).
fn encode_into(out: &mut String, text: &str) {
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn text_and_attributes_are_escaped() {
        let mut h = Html::new();
        h.el("p", &[("title", "a \"quoted\" 'title' & <more>")], |h| {
            h.text("<script>alert('x')</script> & done");
        });
        expect![[r#"<p title="a &quot;quoted&quot; &#39;title&#39; &amp; &lt;more&gt;">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; done</p>"#]]
            .assert_eq(h.as_str());
    }

    #[test]
    fn elements_nest_and_close_in_order() {
        let mut h = Html::new();
        h.markup("<!DOCTYPE html>");
        h.el("table", &[], |h| {
            h.el("tr", &[("class", "leaf")], |h| {
                h.text_el("td", &[], 42);
                h.text_el("td", &[], "x");
            });
        });
        h.void("br", &[]);
        expect![[
            r#"<!DOCTYPE html><table><tr class="leaf"><td>42</td><td>x</td></tr></table><br>"#
        ]]
        .assert_eq(&h.into_string());
    }

    #[test]
    fn only_http_urls_are_linked() {
        for good in [
            "http://am.example:8080/proxy",
            "HTTPS://x.example/a?b=c&d=\"e\"",
        ] {
            assert_eq!(Href::external(good).unwrap().as_str(), good);
        }
        for bad in [
            "javascript:alert(1)",
            " javascript://x",
            "data:text/html,<script>",
            "/relative/path",
            "am.example:8080",
            "http://",
            "http://a b",
            "http://a\nb",
            "ftp://files.example/",
            "",
        ] {
            assert_eq!(Href::external(bad), None, "{bad:?}");
        }
        // A quote in a URL cannot leave the attribute.
        let mut h = Html::new();
        h.link(&Href::external("http://x/\"><script>").unwrap(), "am");
        assert_eq!(
            h.as_str(),
            r#"<a href="http://x/&quot;&gt;&lt;script&gt;">am</a>"#
        );
    }

    #[test]
    fn paths_encode_their_parts() {
        assert_eq!(
            Href::under("/cluster/node", "h1.example:8041").as_str(),
            "/cluster/node/h1.example:8041"
        );
        assert_eq!(
            Href::under("/cluster/app", "a b/../c?d#e").as_str(),
            "/cluster/app/a%20b%2F..%2Fc%3Fd%23e"
        );
        assert_eq!(
            Href::to("/cluster/apps")
                .with_query("queue", "root.a&b")
                .with_query("states", "RUNNING,ACCEPTED")
                .as_str(),
            "/cluster/apps?queue=root.a%26b&states=RUNNING%2CACCEPTED"
        );
        assert_eq!(
            Href::to("/cluster/scheduler")
                .with_fragment("queue-root.a")
                .as_str(),
            "/cluster/scheduler#queue-root.a"
        );
    }
}
