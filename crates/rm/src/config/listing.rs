//! The configuration as `GET /conf` shows it: every property the site files
//! set, after layering, with its value, whether it is final and the file it
//! came from, and the values of sensitive properties redacted as Hadoop's
//! `ConfigRedactor` redacts them.
//!
//! It is built once, when the files are read, so no secret outlives the
//! reading of the files; writing it as XML or JSON is `http::conf`'s.
//! Properties the files leave unset are not listed: the defaults live in the
//! readers of each property (`weft-queue-tree`'s `SchedulerSettings`, the
//! service's `read_service`), not in one table a listing could be checked
//! against.

use regex_automata::meta::Regex;
use weft_queue_tree::site::HadoopConfig;

/// `hadoop.security.sensitive-config-keys`: the regular expressions naming
/// the properties whose values are never shown.
pub const SENSITIVE_KEYS_PROPERTY: &str = "hadoop.security.sensitive-config-keys";

/// Hadoop's default for `SENSITIVE_KEYS_PROPERTY` (core-default.xml of
/// Hadoop 3.4): a property whose name any of them finds is redacted.
pub const DEFAULT_SENSITIVE_KEYS: &[&str] = &[
    "secret$",
    "password$",
    "username$",
    "ssl.keystore.pass$",
    "fs.s3.*[Ss]ecret.?[Kk]ey",
    "fs.s3a.*.server-side-encryption.key",
    "fs.s3a.encryption.algorithm",
    "fs.s3a.encryption.key",
    "fs.azure\\.account.key.*",
    "credential$",
    "oauth.*secret",
    "oauth.*password",
    "oauth.*token",
    SENSITIVE_KEYS_PROPERTY,
];

/// What a redacted value is shown as, Hadoop's text.
pub const REDACTED: &str = "<redacted>";

/// The site files' properties as `/conf` lists them, ordered by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfListing {
    properties: Vec<ListedProperty>,
}

/// One property of a [`ConfListing`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedProperty {
    /// The name.
    pub name: String,
    /// The value after `${name}` substitution (what Hadoop's JSON shows),
    /// or [`REDACTED`], also when substitution put a sensitive value in it.
    pub value: String,
    /// The value as written (what Hadoop's XML shows), or [`REDACTED`].
    pub raw_value: String,
    /// `<final>true</final>`.
    pub is_final: bool,
    /// The file that set it: its name (`yarn-site.xml`), as Hadoop names a
    /// resource loaded by name.
    pub source: &'static str,
}

/// Why the sensitive-key patterns cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pattern:?} is not a regular expression: {why}")]
pub struct BadPattern {
    /// The pattern as written.
    pub pattern: String,
    /// What the regular-expression parser said.
    pub why: String,
}

impl ConfListing {
    /// The properties of `config`, each `source` being the name of the file
    /// of its layer (`sources[layer]`), redacted by `redactor`.
    pub fn new(
        config: &HadoopConfig,
        sources: &[&'static str],
        redactor: &Redactor,
    ) -> ConfListing {
        let secrets: Vec<&str> = config
            .properties()
            .filter(|p| redactor.is_sensitive(&p.name) && !p.value.is_empty())
            .map(|p| p.value.as_str())
            .collect();
        let properties = config
            .properties()
            .map(|p| {
                let secret = redactor.is_sensitive(&p.name);
                // `other=${a.secret}` would show the secret once substituted
                // (Hadoop's JSON shows it so); the value as written does not.
                let substituted_secret =
                    p.value != p.raw_value && secrets.iter().any(|s| p.value.contains(s));
                let shown = |v: &str, hide: bool| {
                    if hide {
                        REDACTED.to_owned()
                    } else {
                        v.to_owned()
                    }
                };
                ListedProperty {
                    name: p.name.clone(),
                    value: shown(&p.value, secret || substituted_secret),
                    raw_value: shown(&p.raw_value, secret),
                    is_final: p.is_final,
                    source: sources
                        .get(usize::from(p.location.layer))
                        .copied()
                        .unwrap_or("unknown"),
                }
            })
            .collect();
        ConfListing { properties }
    }

    /// Every property, ordered by name.
    pub fn properties(&self) -> &[ListedProperty] {
        &self.properties
    }

    /// The property called `name`, if the files set it.
    pub fn get(&self, name: &str) -> Option<&ListedProperty> {
        self.properties
            .binary_search_by(|p| p.name.as_str().cmp(name))
            .ok()
            .map(|idx| &self.properties[idx])
    }
}

/// Hadoop's `ConfigRedactor`: a property is sensitive when any of the
/// patterns is found anywhere in its name.
#[derive(Debug)]
pub struct Redactor {
    patterns: Vec<Regex>,
}

impl Redactor {
    /// The patterns `config` gives in `SENSITIVE_KEYS_PROPERTY`, which
    /// replaces Hadoop's default list when set (as Hadoop's `get` with a
    /// default does: an operator who wants to add to the list repeats it),
    /// comma-separated and trimmed as Hadoop's `getTrimmedStrings` splits it.
    pub fn from_config(config: &HadoopConfig) -> Result<Redactor, BadPattern> {
        match config.value(SENSITIVE_KEYS_PROPERTY) {
            Some(list) => Redactor::new(list.split(',').map(str::trim).filter(|p| !p.is_empty())),
            None => Redactor::new(DEFAULT_SENSITIVE_KEYS.iter().copied()),
        }
    }

    fn new<'a>(patterns: impl Iterator<Item = &'a str>) -> Result<Redactor, BadPattern> {
        let patterns = patterns
            .map(|pattern| {
                Regex::new(pattern).map_err(|e| BadPattern {
                    pattern: pattern.to_owned(),
                    why: syntax_problem(&e),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Redactor { patterns })
    }

    /// Whether the value of the property called `name` is never shown.
    pub fn is_sensitive(&self, name: &str) -> bool {
        self.patterns.iter().any(|p| p.is_match(name))
    }
}

/// What is wrong with a pattern, in one line: the parser's own message
/// draws the pattern and a caret over several lines, and names the pattern
/// only by its index.
fn syntax_problem(e: &regex_automata::meta::BuildError) -> String {
    match e.syntax_error() {
        Some(syntax) => {
            let text = syntax.to_string();
            let last = text.lines().rev().find(|l| !l.trim().is_empty());
            last.map_or(text.clone(), |l| {
                l.trim().trim_start_matches("error: ").to_owned()
            })
        }
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_queue_tree::site::Layer;

    fn config(layers: &[(&str, &str)]) -> HadoopConfig {
        let layers: Vec<Layer<'_>> = layers
            .iter()
            .map(|(name, text)| Layer { name, text })
            .collect();
        HadoopConfig::parse_layered(&layers).unwrap()
    }

    fn site(props: &[(&str, &str)]) -> String {
        let body: String = props
            .iter()
            .map(|(n, v)| format!("<property><name>{n}</name><value>{v}</value></property>"))
            .collect();
        format!("<configuration>{body}</configuration>")
    }

    #[test]
    fn hadoops_default_patterns_redact_secrets_and_leave_the_rest() {
        let r = Redactor::new(DEFAULT_SENSITIVE_KEYS.iter().copied()).unwrap();
        for name in [
            "fs.s3a.secret.key",
            "fs.s3a.bucket.b.server-side-encryption.key",
            "fs.azure.account.key.acct.blob.core.windows.net",
            "ssl.server.keystore.password",
            "hadoop.security.credstore.java-keystore-provider.password",
            "yarn.federation.state-store.sql.username",
            "dfs.webhdfs.oauth2.access.token",
            "weft.rm.some.secret",
            "hadoop.http.authentication.signature.secret",
            SENSITIVE_KEYS_PROPERTY,
        ] {
            assert!(r.is_sensitive(name), "{name} should be redacted");
        }
        for name in [
            "yarn.admin.acl",
            "yarn.resourcemanager.webapp.address",
            "yarn.scheduler.fair.preemption",
            "hadoop.security.group.mapping",
            "password.policy.file",
        ] {
            assert!(!r.is_sensitive(name), "{name} should be shown");
        }
    }

    #[test]
    fn the_property_replaces_the_default_patterns() {
        let c = config(&[(
            "core-site.xml",
            &site(&[(SENSITIVE_KEYS_PROPERTY, " token$ , ,weft\\.rm\\.listen ")]),
        )]);
        let r = Redactor::from_config(&c).unwrap();
        assert!(r.is_sensitive("my.token"));
        assert!(r.is_sensitive("weft.rm.listen"));
        // No longer in the list, so no longer redacted, as in Hadoop.
        assert!(!r.is_sensitive("fs.s3a.secret.key"));
        assert!(!r.is_sensitive(SENSITIVE_KEYS_PROPERTY));
    }

    #[test]
    fn a_bad_pattern_is_refused_with_its_text() {
        let c = config(&[(
            "core-site.xml",
            &site(&[(SENSITIVE_KEYS_PROPERTY, "ok$,(unclosed")]),
        )]);
        let e = Redactor::from_config(&c).unwrap_err();
        assert_eq!(e.pattern, "(unclosed");
        assert_eq!(
            e.to_string(),
            "\"(unclosed\" is not a regular expression: unclosed group"
        );
    }

    #[test]
    fn the_listing_names_each_layer_and_redacts_both_values() {
        let c = config(&[
            (
                "core-site.xml",
                &site(&[
                    ("a.secret", "s3cr3t"),
                    ("db.url", "user:${a.secret}@host"),
                    ("x.dir", "/d"),
                ]),
            ),
            (
                "yarn-site.xml",
                "<configuration><property><name>y.path</name><value>${x.dir}/y</value><final>true</final></property></configuration>",
            ),
        ]);
        let r = Redactor::from_config(&c).unwrap();
        let l = ConfListing::new(&c, &["core-site.xml", "yarn-site.xml"], &r);
        let shown: Vec<_> = l
            .properties()
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.value.as_str(),
                    p.raw_value.as_str(),
                    p.is_final,
                    p.source,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("a.secret", REDACTED, REDACTED, false, "core-site.xml"),
                (
                    "db.url",
                    REDACTED,
                    "user:${a.secret}@host",
                    false,
                    "core-site.xml"
                ),
                ("x.dir", "/d", "/d", false, "core-site.xml"),
                ("y.path", "/d/y", "${x.dir}/y", true, "yarn-site.xml"),
            ]
        );
        assert_eq!(l.get("x.dir").map(|p| p.source), Some("core-site.xml"));
        assert_eq!(l.get("nope"), None);
    }
}
