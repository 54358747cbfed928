//! The decision log: every core `Event`, appended to a file as one JSON
//! object per line (seed 000's event log), buffered and flushed whenever the
//! actor publishes its views and at shutdown; the file follows its path
//! through log rotation (`log_file`).
//!
//! The line format is `dto::events`'; deciding to log is the operator's
//! (`weft.rm.event-log.file` or `weft rm --event-log`).

use std::path::Path;

use weft_core::Event;

use crate::dto::events::event_json;
use crate::log_file::LogFile;

/// Buffered bytes past which lines are written out before the next flush.
const BUFFER: usize = 1 << 16;

/// An open decision log.
pub(crate) struct EventLog {
    file: LogFile,
    /// Lines not written yet.
    buffer: Vec<u8>,
}

impl EventLog {
    /// Opens `path` for appending, creating it if needed.
    pub(crate) fn open(path: &Path) -> std::io::Result<EventLog> {
        Ok(EventLog {
            file: LogFile::open("event log", path)?,
            buffer: Vec::with_capacity(BUFFER),
        })
    }

    /// Appends one event decided at `at` (ms since the epoch), the core's
    /// time zero being `epoch_origin`.
    pub(crate) fn write(&mut self, at: u64, epoch_origin: u64, event: &Event) {
        // Writing JSON into a vector fails only for values serde cannot
        // represent, which the event DTOs have none of.
        if let Err(e) =
            serde_json::to_writer(&mut self.buffer, &event_json(at, epoch_origin, event))
        {
            tracing::error!(path = %self.file.path().display(), error = %e, "an event could not be written as JSON; it is left out of the event log");
            return;
        }
        self.buffer.push(b'\n');
        if self.buffer.len() >= BUFFER {
            self.flush();
        }
    }

    /// Writes buffered lines out.
    pub(crate) fn flush(&mut self) {
        if !self.buffer.is_empty() {
            self.file.append(&self.buffer);
            self.buffer.clear();
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
