//! The core's settings: the scheduler's site settings plus the few the
//! ResourceManager itself needs (cluster identity, attempts, history).
//!
//! Reading them from files is the drivers' job; `weft_queue_tree::site`
//! parses the Hadoop-style file.

use weft_queue_tree::TreeSettings;
use weft_queue_tree::site::SchedulerSettings;

/// Everything the core is configured with besides the allocation file.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreSettings {
    /// The `yarn.scheduler.*` settings.
    pub scheduler: SchedulerSettings,
    /// The RM's start time, the `<clusterTimestamp>` in every id it issues.
    pub cluster_timestamp: u64,
    /// RM restart epoch, written into container ids (`container_e<epoch>_...`).
    pub epoch: u32,
    /// Attempts an app gets before it fails (`yarn.resourcemanager.am.max-attempts`, default 2).
    pub max_app_attempts: u32,
    /// Finished apps kept for queries (`yarn.resourcemanager.max-completed-applications`, default 1000).
    pub max_completed_apps: usize,
}

impl Default for CoreSettings {
    fn default() -> CoreSettings {
        CoreSettings {
            scheduler: SchedulerSettings::default(),
            cluster_timestamp: 0,
            epoch: 0,
            max_app_attempts: 2,
            max_completed_apps: 1000,
        }
    }
}

impl CoreSettings {
    /// The subset the queue tree uses.
    pub(crate) fn tree_settings(&self) -> TreeSettings {
        TreeSettings {
            size_based_weight: self.scheduler.size_based_weight,
            max_container_allocation: self.scheduler.max_allocation(),
        }
    }

    /// The attempts an app that asked for `asked` gets: Hadoop's RMAppImpl
    /// takes the app's own value only between 1 and the RM-wide one.
    pub fn app_max_attempts(&self, asked: Option<u32>) -> u32 {
        match asked {
            Some(n) if n >= 1 && n <= self.max_app_attempts => n,
            _ => self.max_app_attempts,
        }
    }
}
