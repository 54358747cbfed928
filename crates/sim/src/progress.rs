//! A one-line progress bar on stderr for long runs: virtual time against
//! the scenario's horizon, apps ended, and speed against real time. It stays
//! quiet when stderr is not a terminal or `CI` is set, so logs and CI output
//! stay clean.
//!
//! This is the only place besides the command line that reads the wall
//! clock; nothing it measures reaches a report.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use crate::engine::Progress;

/// A progress bar that redraws at most a few times a second.
pub struct ProgressBar {
    enabled: bool,
    started: Instant,
    last_draw: Option<Instant>,
}

impl ProgressBar {
    /// A bar that draws only on an interactive terminal outside CI.
    pub fn for_terminal() -> ProgressBar {
        let enabled = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        ProgressBar {
            enabled,
            started: Instant::now(),
            last_draw: None,
        }
    }

    /// A bar that never draws.
    pub fn hidden() -> ProgressBar {
        ProgressBar {
            enabled: false,
            started: Instant::now(),
            last_draw: None,
        }
    }

    /// Redraws for `p` (throttled).
    pub fn update(&mut self, p: Progress) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let done = p.apps_total > 0 && p.apps_ended == p.apps_total;
        if !done
            && self
                .last_draw
                .is_some_and(|l| now.duration_since(l).as_millis() < 200)
        {
            return;
        }
        self.last_draw = Some(now);
        let frac = if p.horizon.as_millis() == 0 {
            0.0
        } else {
            (p.now.as_millis() as f64 / p.horizon.as_millis() as f64).min(1.0)
        };
        let width = 30;
        let filled = (frac * width as f64).round() as usize;
        let wall = now.duration_since(self.started).as_secs_f64().max(1e-3);
        let speed = p.now.as_millis() as f64 / 1000.0 / wall;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r[{}{}] {:>5.1}% virtual {:>8.0}s  apps {}/{}  {:>9.0}x real time ",
            "#".repeat(filled),
            "-".repeat(width - filled),
            frac * 100.0,
            p.now.as_millis() as f64 / 1000.0,
            p.apps_ended,
            p.apps_total,
            speed
        );
        let _ = err.flush();
    }

    /// Ends the bar's line.
    pub fn finish(&mut self) {
        if self.enabled && self.last_draw.is_some() {
            let _ = writeln!(std::io::stderr().lock());
        }
    }
}
