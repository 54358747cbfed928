//! The configuration as `GET /conf` shows it: every property the site files
//! set, after layering, with its value, whether it is final and the file it
//! came from, and the values of sensitive properties redacted as Hadoop's
//! `ConfigRedactor` redacts them.
//!
//! The properties the files leave unset are listed too, with the value
//! Weft takes for each (`DEFAULTS`), as Hadoop lists its `*-default.xml`.
//! The readers of each property (`weft-queue-tree`'s `SchedulerSettings`,
//! the service's `read_service`) hold the defaults they apply; the tests
//! here keep the table true to them: every name those readers read is in
//! it or in `NOT_LISTED`, and a configuration setting every listed default
//! reads as one setting nothing.
//!
//! It is built once, when the files are read, so no secret outlives the
//! reading of the files; writing it as XML or JSON is `http::conf`'s.

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

/// The source of a property no file sets (Hadoop names its
/// `yarn-default.xml` or `core-default.xml` there).
pub const DEFAULT_SOURCE: &str = "built-in default";

/// Every property Weft reads, with the value it takes when no file sets it,
/// as written in a site file (`${name}` stands for another property's value,
/// as in Hadoop's `yarn-default.xml`); an empty value is "none". Ordered by
/// name.
pub const DEFAULTS: &[(&str, &str)] = &[
    (
        "hadoop.security.group.mapping",
        "org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback",
    ),
    ("hadoop.security.groups.cache.background.reload", "false"),
    (
        "hadoop.security.groups.cache.background.reload.threads",
        "3",
    ),
    ("hadoop.security.groups.cache.secs", "300"),
    ("hadoop.security.groups.cache.warn.after.ms", "5000"),
    ("hadoop.security.groups.negative-cache.secs", "30"),
    ("hadoop.security.instrumentation.requires.admin", "false"),
    (SENSITIVE_KEYS_PROPERTY, DEFAULT_SENSITIVE_KEYS_TEXT),
    ("hadoop.ssl.require.client.cert", "false"),
    ("hadoop.ssl.server.conf", "ssl-server.xml"),
    (
        "net.topology.node.switch.mapping.impl",
        "org.apache.hadoop.net.ScriptBasedMapping",
    ),
    ("net.topology.script.file.name", ""),
    ("net.topology.script.number.args", "100"),
    ("net.topology.table.file.name", ""),
    ("weft.nm.secret.file", ""),
    ("weft.rm.alloc-file.min-age-ms", "5000"),
    ("weft.rm.alloc-file.reload-interval-ms", "10000"),
    ("weft.rm.audit-log.file", ""),
    ("weft.rm.command-queue", "65536"),
    ("weft.rm.event-log.file", ""),
    ("weft.rm.explain.max-per-second", "50"),
    ("weft.rm.groups.file", ""),
    ("weft.rm.max-request-bytes", "1048576"),
    ("weft.rm.state-store.dir", ""),
    ("weft.rm.topology.timeout-ms", "10000"),
    ("weft.rm.view-refresh-ms", "100"),
    ("yarn.acl.enable", "false"),
    ("yarn.admin.acl", "*"),
    ("yarn.am.liveness-monitor.expiry-interval-ms", "600000"),
    ("yarn.cluster.max-application-priority", "0"),
    ("yarn.http.policy", "HTTP_ONLY"),
    ("yarn.nm.liveness-monitor.expiry-interval-ms", "600000"),
    ("yarn.resource-types.memory-mb.increment-allocation", "1024"),
    ("yarn.resource-types.vcores.increment-allocation", "1"),
    ("yarn.resourcemanager.am.max-attempts", "2"),
    (
        "yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications",
        "true",
    ),
    ("yarn.resourcemanager.max-completed-applications", "1000"),
    (
        "yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs",
        "3600",
    ),
    (
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
        "1000",
    ),
    ("yarn.resourcemanager.nodes.exclude-path", ""),
    ("yarn.resourcemanager.nodes.include-path", ""),
    (
        "yarn.resourcemanager.scheduler.class",
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler",
    ),
    (
        "yarn.resourcemanager.state-store.max-completed-applications",
        "${yarn.resourcemanager.max-completed-applications}",
    ),
    ("yarn.scheduler.fair.allocation.file", "fair-scheduler.xml"),
    ("yarn.scheduler.fair.allow-undeclared-pools", "true"),
    ("yarn.scheduler.fair.am.preemption", "true"),
    ("yarn.scheduler.fair.assignmultiple", "false"),
    ("yarn.scheduler.fair.continuous-scheduling-enabled", "false"),
    ("yarn.scheduler.fair.continuous-scheduling-sleep-ms", "5"),
    ("yarn.scheduler.fair.dynamic.max.assign", "true"),
    ("yarn.scheduler.fair.locality-delay-node-ms", "-1"),
    ("yarn.scheduler.fair.locality-delay-rack-ms", "-1"),
    ("yarn.scheduler.fair.locality.threshold.node", "-1.0"),
    ("yarn.scheduler.fair.locality.threshold.rack", "-1.0"),
    ("yarn.scheduler.fair.max.assign", "-1"),
    ("yarn.scheduler.fair.preemption", "false"),
    (
        "yarn.scheduler.fair.preemption.cluster-utilization-threshold",
        "0.8",
    ),
    ("yarn.scheduler.fair.preemption.dry-run", "false"),
    ("yarn.scheduler.fair.preemption.model", "current"),
    ("yarn.scheduler.fair.reservable-nodes", "0.05"),
    ("yarn.scheduler.fair.sizebasedweight", "false"),
    ("yarn.scheduler.fair.update-interval-ms", "500"),
    ("yarn.scheduler.fair.user-as-default-queue", "true"),
    ("yarn.scheduler.fair.waitTimeBeforeKill", "15000"),
    (
        "yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck",
        "10000",
    ),
    ("yarn.scheduler.include-port-in-node-name", "false"),
    ("yarn.scheduler.maximum-allocation-mb", "8192"),
    ("yarn.scheduler.maximum-allocation-vcores", "4"),
    ("yarn.scheduler.minimum-allocation-mb", "1024"),
    ("yarn.scheduler.minimum-allocation-vcores", "1"),
    (
        "yarn.scheduler.reservation-threshold.increment-multiple",
        "2.0",
    ),
    ("yarn.webapp.enable-rest-app-submissions", "true"),
    ("yarn.webapp.filter-entity-list-by-user", "false"),
];

/// `DEFAULT_SENSITIVE_KEYS` as the property's value.
const DEFAULT_SENSITIVE_KEYS_TEXT: &str = "secret$,password$,username$,ssl.keystore.pass$,fs.s3.*[Ss]ecret.?[Kk]ey,fs.s3a.*.server-side-encryption.key,fs.s3a.encryption.algorithm,fs.s3a.encryption.key,fs.azure\\.account.key.*,credential$,oauth.*secret,oauth.*password,oauth.*token,hadoop.security.sensitive-config-keys";

/// Names Weft reads that `DEFAULTS` leaves out, and why: no value of theirs
/// stands for what Weft does when they are unset.
pub const NOT_LISTED: &[(&str, &str)] = &[
    (
        "weft.rm.listen",
        "the address follows yarn.resourcemanager.webapp.address when a file sets that",
    ),
    ("yarn.resourcemanager.webapp.address", "the listen address"),
    (
        "yarn.resourcemanager.webapp.https.address",
        "the listen address under HTTPS_ONLY",
    ),
    ("yarn.resourcemanager.hostname", "the listen address"),
    ("yarn.resourcemanager.bind-host", "the listen address"),
    (
        "yarn.scheduler.increment-allocation-mb",
        "deprecated for yarn.resource-types.memory-mb.increment-allocation",
    ),
    (
        "yarn.scheduler.increment-allocation-vcores",
        "deprecated for yarn.resource-types.vcores.increment-allocation",
    ),
    (
        "yarn.resourcemanager.display.per-user-apps",
        "deprecated for yarn.webapp.filter-entity-list-by-user",
    ),
    ("yarn.resourcemanager.address", "only warned about"),
    (
        "yarn.resourcemanager.scheduler.address",
        "only warned about",
    ),
    (
        "yarn.resourcemanager.resource-tracker.address",
        "only warned about",
    ),
    ("yarn.resourcemanager.admin.address", "only warned about"),
    ("yarn.resourcemanager.ha.enabled", "only warned about"),
    ("hadoop.security.authentication", "only warned about"),
    ("yarn.resourcemanager.principal", "only warned about"),
    ("yarn.resourcemanager.keytab", "only warned about"),
    (
        "yarn.scheduler.fair.preemptionInterval",
        "ignored with a warning",
    ),
    (
        "yarn.scheduler.fair.event-log-enabled",
        "ignored with a warning",
    ),
    (
        "yarn.scheduler.fair.migration.mode",
        "ignored with a warning",
    ),
    (
        "yarn.scheduler.fair.no-terminal-rule.check",
        "ignored with a warning",
    ),
];

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
    /// resource loaded by name; [`DEFAULT_SOURCE`] for a default.
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
    /// of its layer (`sources[layer]`), and the `DEFAULTS` it leaves unset,
    /// redacted by `redactor`.
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
            .collect::<Vec<_>>();
        let defaults = DEFAULTS
            .iter()
            .filter(|(name, _)| config.get(name).is_none())
            .map(|(name, raw)| {
                let shown = |v: &str| {
                    if redactor.is_sensitive(name) {
                        REDACTED.to_owned()
                    } else {
                        v.to_owned()
                    }
                };
                // Only `${...}` of names the files or the table know; the
                // depth limit cannot bind on the table's own values.
                let value = config
                    .substitute_with_defaults(raw, DEFAULTS)
                    .unwrap_or_else(|| (*raw).to_owned());
                ListedProperty {
                    name: (*name).to_owned(),
                    value: shown(&value),
                    raw_value: shown(raw),
                    is_final: false,
                    source: DEFAULT_SOURCE,
                }
            })
            .collect::<Vec<_>>();
        let mut properties = properties;
        properties.extend(defaults);
        properties.sort_by(|a, b| a.name.cmp(&b.name));
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

    /// The settings a site file of `props` gives, with its warnings.
    fn read(props: &[(&str, &str)]) -> super::super::Site {
        let text = weft_test_support::site_xml(props);
        let mut warnings = Vec::new();
        super::super::parse_site(
            &[("weft-site.xml", "weft-site.xml".to_owned(), text)],
            &mut warnings,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_defaults_listed_are_the_defaults_applied() {
        let unset = read(&[]);
        let set = read(DEFAULTS);
        assert_eq!(set.scheduler, unset.scheduler);
        assert_eq!(set.core, unset.core);
        assert_eq!(set.service, unset.service);
        // A default that follows another property follows it when a file
        // sets that one.
        let c = config(&[(
            "yarn-site.xml",
            &site(&[("yarn.resourcemanager.max-completed-applications", "50")]),
        )]);
        let l = ConfListing::new(&c, &["yarn-site.xml"], &Redactor::from_config(&c).unwrap());
        let p = l
            .get("yarn.resourcemanager.state-store.max-completed-applications")
            .unwrap();
        assert_eq!(
            (p.value.as_str(), p.raw_value.as_str(), p.source),
            (
                "50",
                "${yarn.resourcemanager.max-completed-applications}",
                DEFAULT_SOURCE
            )
        );
    }

    #[test]
    fn every_property_read_is_listed_or_said_why_not() {
        // The files whose readers read site properties, without their tests.
        let sources = [
            include_str!("../../../queue-tree/src/site/settings.rs"),
            include_str!("../config.rs"),
            include_str!("../hosts.rs"),
            include_str!("../node_secret.rs"),
            include_str!("../topology.rs"),
        ];
        let name =
            Regex::new(r#""((?:yarn|weft|hadoop|net)\.[A-Za-z0-9._-]*[A-Za-z0-9_-])""#).unwrap();
        let mut read = std::collections::BTreeSet::from([SENSITIVE_KEYS_PROPERTY]);
        for text in sources {
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for caps in name.captures_iter(code) {
                if let Some(span) = caps.get_group(1) {
                    read.insert(&code[span.range()]);
                }
            }
        }
        let listed: std::collections::BTreeSet<&str> =
            DEFAULTS.iter().chain(NOT_LISTED).map(|(n, _)| *n).collect();
        let missing: Vec<_> = read.difference(&listed).collect();
        assert!(
            missing.is_empty(),
            "read but neither in DEFAULTS nor in NOT_LISTED: {missing:?}"
        );
        let stale: Vec<_> = listed.difference(&read).collect();
        assert!(stale.is_empty(), "listed but no longer read: {stale:?}");
        let names: Vec<&str> = DEFAULTS.iter().map(|(n, _)| *n).collect();
        assert!(
            names.is_sorted_by(|a, b| a < b),
            "DEFAULTS not ordered by name"
        );
        assert_eq!(
            DEFAULT_SENSITIVE_KEYS_TEXT,
            DEFAULT_SENSITIVE_KEYS.join(",")
        );
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
            .filter(|p| p.source != DEFAULT_SOURCE)
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
