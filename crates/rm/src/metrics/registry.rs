//! The registry every Weft daemon builds for its own metrics: a
//! `metrics-exporter-prometheus` recorder that is never installed as the
//! process's global one, so that daemons sharing a process (`weft local`'s
//! RM and node agents, the tests' clusters) each render only what they
//! registered; with each metric's help text and unit described up front,
//! Weft's latency buckets, and the text format `GET /metrics` answers.
//!
//! Which metrics a daemon has, and when they move, is its own business: the
//! RM's are `metrics`', a node agent's `weft_nm::metrics`'.

use std::time::Duration;

use metrics::{
    Counter, Gauge, Histogram, Key, KeyName, Label, Level, Metadata, Recorder, SharedString, Unit,
};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use metrics_util::MetricKindMask;

/// The content type of the text exposition format every `/metrics` answers.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One metric's name, unit and help text.
pub type Description = (&'static str, Option<Unit>, &'static str);

/// What a `Registry` is built with.
#[derive(Clone, Copy, Debug)]
pub struct RegistrySettings<'a> {
    /// Every metric it holds, in groups. A name ending in `_total` is a
    /// counter, one listed in `histograms` a histogram, any other a gauge.
    pub descriptions: &'a [&'a [Description]],
    /// The histograms among them.
    pub histograms: &'a [&'static str],
    /// The bucket bounds, in seconds, of every histogram whose name ends in
    /// `_seconds`.
    pub latency_buckets: &'a [f64],
    /// Counters and gauges nobody touched for this long are dropped from the
    /// output (for series of things that went away); `None` keeps every
    /// series for good.
    pub idle_timeout: Option<Duration>,
}

/// A daemon's metric registry. Its handles (`counter`, `gauge`,
/// `histogram`) are cheap to clone and to update from any thread.
pub struct Registry {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Registry")
    }
}

static METADATA: Metadata<'static> =
    Metadata::new("weft_rm", Level::INFO, Some("weft_rm::metrics"));

impl Registry {
    /// A registry with every metric of `settings` described.
    ///
    /// # Panics
    ///
    /// If `settings.latency_buckets` is empty: the buckets are the caller's
    /// constant, so that is a bug, found by any test that builds one.
    pub fn new(settings: RegistrySettings<'_>) -> Registry {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Suffix("_seconds".to_owned()),
                settings.latency_buckets,
            )
            .expect("the latency buckets are a valid, non-empty list")
            .idle_timeout(
                MetricKindMask::GAUGE | MetricKindMask::COUNTER,
                settings.idle_timeout,
            )
            .build_recorder();
        for (name, unit, help) in settings.descriptions.iter().copied().flatten() {
            let key = KeyName::from_const_str(name);
            let help = SharedString::const_str(help);
            if name.ends_with("_total") {
                recorder.describe_counter(key, *unit, help);
            } else if settings.histograms.contains(name) {
                recorder.describe_histogram(key, *unit, help);
            } else {
                recorder.describe_gauge(key, *unit, help);
            }
        }
        let handle = recorder.handle();
        Registry { recorder, handle }
    }

    /// The counter `name` with `labels` (registered by the first call).
    pub fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.recorder
            .register_counter(&Key::from_parts(name, labels), &METADATA)
    }

    /// The gauge `name` with `labels` (registered by the first call).
    pub fn gauge(&self, name: &'static str, labels: Vec<Label>) -> Gauge {
        self.recorder
            .register_gauge(&Key::from_parts(name, labels), &METADATA)
    }

    /// The histogram `name`, without labels (registered by the first call).
    pub fn histogram(&self, name: &'static str) -> Histogram {
        self.recorder
            .register_histogram(&Key::from_static_name(name), &METADATA)
    }

    /// The text exposition format (version 0.0.4) of every metric registered.
    pub fn render(&self) -> String {
        self.handle.render()
    }

    /// Drains recorded histogram samples into their buckets. A render does
    /// it too; run it every few seconds anyway, so that samples do not pile
    /// up while nobody scrapes.
    pub fn run_upkeep(&self) {
        self.handle.run_upkeep();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESCRIBED: &[Description] = &[
        ("test_things_total", Some(Unit::Count), "Things done."),
        ("test_level_bytes", Some(Unit::Bytes), "How full."),
        ("test_wait_seconds", Some(Unit::Seconds), "How long."),
    ];

    fn registry() -> Registry {
        Registry::new(RegistrySettings {
            descriptions: &[DESCRIBED],
            histograms: &["test_wait_seconds"],
            latency_buckets: &[0.1, 1.0],
            idle_timeout: None,
        })
    }

    #[test]
    fn kinds_follow_the_names_and_each_registry_renders_its_own() {
        let a = registry();
        let b = registry();
        a.counter("test_things_total", vec![Label::new("kind", "x")])
            .increment(2);
        a.gauge("test_level_bytes", vec![]).set(1024.0);
        a.histogram("test_wait_seconds").record(0.5);
        b.counter("test_things_total", vec![Label::new("kind", "x")])
            .increment(7);
        let text = a.render();
        for line in [
            "# HELP test_things_total Things done.",
            "# TYPE test_things_total counter",
            "test_things_total{kind=\"x\"} 2",
            "# TYPE test_level_bytes gauge",
            "test_level_bytes 1024",
            "# TYPE test_wait_seconds histogram",
            "test_wait_seconds_bucket{le=\"0.1\"} 0",
            "test_wait_seconds_bucket{le=\"1\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
        }
        assert!(b.render().contains("test_things_total{kind=\"x\"} 7"));
        assert!(!b.render().contains("test_level_bytes"));
    }
}
