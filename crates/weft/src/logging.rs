//! The process's logging: one subscriber writing text or JSON lines to
//! standard error, behind a filter that starts from `RUST_LOG` (or the
//! command's default) and can be changed while the process runs, which
//! is what `weft_rm::log_levels::LogLevels` asks of it for `/logLevel`.
//!
//! Which directives to write and how a target's level is read are
//! `weft_rm::log_levels`'; this module only swaps the filter.

use std::sync::Arc;

use tracing::level_filters::LevelFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Registry, reload};
use weft_rm::log_levels::{self, LevelChange, LogLevelError, LogLevels, Target};

use crate::LogFormat;

/// Installs the process's subscriber, filtered by `RUST_LOG` or else
/// `default_directives`, and returns its filter to change while it runs.
pub(crate) fn init(format: LogFormat, default_directives: &str) -> Arc<ReloadableFilter> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_directives));
    let (filter, handle) = reload::Layer::new(filter);
    let lines = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(filter);
    match format {
        LogFormat::Text => registry.with(lines).init(),
        LogFormat::Json => registry.with(lines.json()).init(),
    }
    Arc::new(ReloadableFilter { handle })
}

/// The filter of a subscriber built on a reloadable `EnvFilter`.
#[derive(Debug)]
pub(crate) struct ReloadableFilter {
    handle: reload::Handle<EnvFilter, Registry>,
}

impl LogLevels for ReloadableFilter {
    fn directives(&self) -> String {
        // The subscriber lives as long as the process; were it gone there
        // would be nothing filtered, which no directive says better than none.
        self.handle
            .with_current(ToString::to_string)
            .unwrap_or_default()
    }

    fn set_level(&self, target: &Target, level: LevelFilter) -> Result<LevelChange, LogLevelError> {
        let mut res = None;
        // Read, edit and swap under the handle's one lock, so two changes
        // at once both land and each reports what it replaced.
        let swapped = self.handle.modify(|filter| {
            let before = filter.to_string();
            let edited = log_levels::with_level(&before, target, level);
            res = Some(match EnvFilter::try_new(&edited) {
                Ok(new) => {
                    *filter = new;
                    Ok(LevelChange {
                        before,
                        after: filter.to_string(),
                    })
                }
                Err(e) => Err(LogLevelError::Refused {
                    directives: edited,
                    why: e.to_string(),
                }),
            });
        });
        let refused = |why: String| LogLevelError::Refused {
            directives: log_levels::with_level(&self.directives(), target, level),
            why,
        };
        match (swapped, res) {
            (Ok(()), Some(res)) => res,
            (Err(e), _) => Err(refused(e.to_string())),
            // `modify` calls the closure whenever it answers Ok.
            (Ok(()), None) => Err(refused("the filter was not changed".to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::*;

    #[test]
    fn setting_a_targets_level_changes_what_is_logged_for_it_alone() {
        let (filter, handle) = reload::Layer::new(EnvFilter::new("info"));
        let levels = ReloadableFilter { handle };
        let subscriber = tracing_subscriber::registry().with(filter);
        tracing::subscriber::with_default(subscriber, || {
            assert!(!tracing::enabled!(target: "weft_core", Level::DEBUG));
            assert!(tracing::enabled!(target: "weft_core", Level::INFO));
            let change = levels
                .set_level(&Target::parse("weft_core").unwrap(), LevelFilter::DEBUG)
                .unwrap();
            assert_eq!(
                (change.before.as_str(), change.after.as_str()),
                ("info", "weft_core=debug,info")
            );
            assert_eq!(levels.directives(), change.after);
            assert!(tracing::enabled!(target: "weft_core", Level::DEBUG));
            assert!(tracing::enabled!(target: "weft_core::assign", Level::DEBUG));
            assert!(!tracing::enabled!(target: "weft_core", Level::TRACE));
            assert!(!tracing::enabled!(target: "weft_rm::actor", Level::DEBUG));
            assert!(tracing::enabled!(target: "weft_rm::actor", Level::INFO));
            // And back off again.
            levels
                .set_level(&Target::parse("weft_core").unwrap(), LevelFilter::OFF)
                .unwrap();
            assert!(!tracing::enabled!(target: "weft_core", Level::ERROR));
            assert!(tracing::enabled!(target: "weft_rm::actor", Level::INFO));
        });
    }

    #[test]
    fn the_filter_lists_the_most_specific_directive_first() {
        // docs/api.md's example. The handle works only while its layer lives.
        let (_layer, handle) =
            reload::Layer::<_, Registry>::new(EnvFilter::new("warn,weft_rm::audit=info"));
        let levels = ReloadableFilter { handle };
        let change = levels
            .set_level(&Target::parse("weft_core").unwrap(), LevelFilter::DEBUG)
            .unwrap();
        assert_eq!(change.after, "weft_rm::audit=info,weft_core=debug,warn");
    }
}
