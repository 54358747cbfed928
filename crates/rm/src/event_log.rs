//! The decision log: every core `Event`, appended to a file as one JSON
//! object per line (seed 000's event log), buffered and flushed whenever the
//! actor publishes its views and at shutdown.
//!
//! The line format is `dto::events`'; deciding to log is the operator's
//! (`weft.rm.event-log.file` or `weft rm --event-log`).

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use weft_core::Event;

use crate::dto::events::event_json;

/// An open decision log.
pub(crate) struct EventLog {
    path: PathBuf,
    out: BufWriter<File>,
    /// Set after the first write error, so a full disk is reported once, not per event.
    broken: bool,
}

impl EventLog {
    /// Opens `path` for appending, creating it if needed.
    pub(crate) fn open(path: &Path) -> std::io::Result<EventLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(EventLog {
            path: path.to_owned(),
            out: BufWriter::with_capacity(1 << 16, file),
            broken: false,
        })
    }

    /// Appends one event decided at `at` (ms since the epoch), the core's
    /// time zero being `epoch_origin`.
    pub(crate) fn write(&mut self, at: u64, epoch_origin: u64, event: &Event) {
        if self.broken {
            return;
        }
        let res = serde_json::to_writer(&mut self.out, &event_json(at, epoch_origin, event))
            .map_err(std::io::Error::from)
            .and_then(|()| self.out.write_all(b"\n"));
        self.check(res);
    }

    /// Writes buffered lines out.
    pub(crate) fn flush(&mut self) {
        if !self.broken {
            let res = self.out.flush();
            self.check(res);
        }
    }

    fn check(&mut self, res: std::io::Result<()>) {
        if let Err(e) = res {
            self.broken = true;
            tracing::error!(path = %self.path.display(), error = %e, "cannot write the event log; no more events will be logged");
        }
    }
}

#[cfg(test)]
mod tests {
    use weft_model::Time;

    use super::*;

    #[test]
    fn appends_json_lines() {
        let path = std::env::temp_dir().join(format!("weft-events-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut log = EventLog::open(&path).unwrap();
        log.write(5, 0, &Event::Updated { at: Time::ZERO });
        log.write(6, 0, &Event::Updated { at: Time::ZERO });
        log.flush();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"event\":\"Updated\",\"time\":5}\n{\"event\":\"Updated\",\"time\":6}\n"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
