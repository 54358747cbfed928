//! The read-only view preemption reads the cluster through
//! ([`PreemptionView`]) and the plain records it yields.
//!
//! The core implements the view over its own state; tests implement it over
//! hand-built data. Nothing here decides anything: what the records mean for
//! starvation and victims is the business of `starvation` and `victims`.
//!
//! Queues, apps and nodes are named by *slots*: small numbers the view
//! chooses, each stable for as long as its object lives and below the bound
//! the view reports (`queue_slots`, `app_slots`, `node_slots`). A slot may be
//! reused after its object is gone. Slots let one update keep its tables in
//! flat vectors instead of maps.

use weft_model::{AppId, ContainerId, Duration, NodeId, Priority, QueuePath, Resource, Time};
use weft_queue_tree::Policy;

/// A queue's slot (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueSlot(pub u32);

/// An app's slot (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppSlot(pub u32);

/// A node's slot (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeSlot(pub u32);

/// One queue, parent or leaf, with its settings already resolved by the tree
/// (inherited timeouts and threshold, `allowPreemptionFrom` folded down).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueInfo<'a> {
    /// Its slot.
    pub slot: QueueSlot,
    /// The parent's slot; `None` for root only.
    pub parent: Option<QueueSlot>,
    /// Full path.
    pub path: &'a QueuePath,
    /// True for a leaf (a queue that holds apps).
    pub is_leaf: bool,
    /// The queue's policy, which picks the calculator its comparisons use.
    pub policy: Policy,
    /// Guaranteed share (`minResources`).
    pub min_share: Resource,
    /// Demand as of the last fair-share update, capped by the max share.
    pub demand: Resource,
    /// Resources its containers hold now.
    pub usage: Resource,
    /// Instantaneous fair share.
    pub fair_share: Resource,
    /// Time below min share before min-share preemption (`Duration::MAX`: never).
    pub min_share_preemption_timeout: Duration,
    /// Time below the fair-share threshold before fair-share preemption.
    pub fair_share_preemption_timeout: Duration,
    /// Fraction of its fair share below which an app counts as starved, in [0, 1].
    pub fair_share_preemption_threshold: f64,
    /// False when this queue or an ancestor sets `allowPreemptionFrom` false.
    pub preemptable: bool,
    /// Its weight among its siblings (the classic model's comparators read it).
    pub weight: f32,
}

/// One runnable app.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppInfo {
    /// Its slot; the same slot its containers name.
    pub slot: AppSlot,
    /// Its id.
    pub id: AppId,
    /// Resources its containers hold now.
    pub usage: Resource,
    /// Usage plus outstanding asks, as of the last fair-share update.
    pub demand: Resource,
    /// Instantaneous fair share.
    pub fair_share: Resource,
    /// When it started (its fair-share timer starts here).
    pub start: Time,
    /// Its weight among its leaf's apps (the classic model's comparators read it).
    pub weight: f32,
}

/// Where an ask wants its containers (YARN's resource name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Location<'a> {
    /// Anywhere (`*`).
    Any,
    /// Any node of this rack.
    Rack(&'a str),
    /// The node with this name (its host, or `host:port` when node names carry the port).
    Node(&'a str),
}

/// One outstanding ask of an app: YARN's resource request at one location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask<'a> {
    /// Request priority (a smaller number is served first).
    pub priority: Priority,
    /// Size of each container, normalised.
    pub capability: Resource,
    /// Where.
    pub location: Location<'a>,
    /// Containers still wanted at this location.
    pub count: u32,
    /// YARN's `relaxLocality` on this ask: whether the app may be placed
    /// beyond this location.
    pub relax_locality: bool,
}

/// One node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeInfo<'a> {
    /// Its slot.
    pub slot: NodeSlot,
    /// Its id.
    pub id: &'a NodeId,
    /// Its rack.
    pub rack: &'a str,
    /// Total capability.
    pub capability: Resource,
    /// Capability minus what containers hold.
    pub unallocated: Resource,
    /// What a reservation holds on it (zero without one).
    pub reserved: Resource,
    /// The total of the node's hand-back entries: resources preemption set
    /// aside here for starved apps and not yet given to them. An entry starts
    /// at a `Warned` transition with the container's size (while the
    /// container still runs), shrinks as its app receives containers here or
    /// by a `Withdrawn` transition, and ends with a `ClaimEnded` app.
    pub earmarked: Resource,
}

/// One running container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerInfo {
    /// Its id.
    pub id: ContainerId,
    /// The owning app's slot.
    pub app: AppSlot,
    /// Its size.
    pub resource: Resource,
    /// The priority of the request it was allocated for.
    pub priority: Priority,
    /// True for an application master's container.
    pub is_am: bool,
    /// When it was allocated.
    pub launched: Time,
}

/// An app's containers in brief: enough for a victim search to tell, without
/// reading them, that none of them may be taken (they are all AM containers
/// its queue protects, or each is larger than what the app may lose).
///
/// A bound that is lower than the truth is always right, only less useful:
/// a view may keep each bound as the least size ever held while the app held
/// any container of that kind, and lower it as containers arrive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppHoldings {
    /// `None` when every container the app holds is an AM container;
    /// otherwise a size that none of its other containers is below in any
    /// resource type (their componentwise minimum, or less).
    pub least_non_am: Option<Resource>,
    /// `None` when the app holds no AM container; otherwise a size that none
    /// of its AM containers is below in any resource type.
    pub least_am: Option<Resource>,
}

/// What preemption reads, and no more. Every method is a cheap read of state
/// the core keeps anyway; iteration order must be the same for the same
/// state, since it decides ties.
pub trait PreemptionView {
    /// Sum of the capabilities of the nodes in service.
    fn cluster_capacity(&self) -> Resource;

    /// Sum of what all containers hold.
    fn cluster_allocated(&self) -> Resource;

    /// Every queue slot is below this.
    fn queue_slots(&self) -> usize;

    /// Every queue, root included, each once, in a fixed order (path order,
    /// say).
    fn queues(&self) -> impl Iterator<Item = QueueInfo<'_>>;

    /// Every app slot is below this.
    fn app_slots(&self) -> usize;

    /// The runnable apps of a leaf, each once. Apps with unmet demand must
    /// come in the leaf policy's order (the order it offers them a node);
    /// apps without may come anywhere.
    fn apps(&self, leaf: QueueSlot) -> impl Iterator<Item = AppInfo>;

    /// An app's outstanding asks, in any fixed order. Asked only for starved apps.
    fn asks(&self, app: AppSlot) -> impl Iterator<Item = Ask<'_>>;

    /// Every node slot is below this.
    fn node_slots(&self) -> usize;

    /// The nodes in service, each once, in the order victims are searched
    /// (node id order, say).
    fn nodes(&self) -> impl Iterator<Item = NodeSlot>;

    /// The nodes in service at a location: the nodes of a rack, or the node
    /// (usually one) with a name, in the same relative order as `nodes`.
    /// Never asked for `Location::Any`.
    fn nodes_at(&self, location: Location<'_>) -> impl Iterator<Item = NodeSlot>;

    /// One node, or `None` when the slot holds no node in service.
    fn node(&self, node: NodeSlot) -> Option<NodeInfo<'_>>;

    /// The containers running on a node, in any fixed order.
    fn containers(&self, node: NodeSlot) -> impl Iterator<Item = ContainerInfo>;

    /// The containers an app holds, with their nodes, in any fixed order.
    /// Asked only when few apps may give, so a search can skip reading every
    /// node's containers; the same containers as `containers` lists.
    fn app_containers(&self, app: AppSlot) -> impl Iterator<Item = (NodeSlot, ContainerInfo)>;

    /// The app's containers in brief, for a view that keeps such a summary
    /// (see [`AppHoldings`] for what it must promise). With one, a search
    /// skips apps that cannot give anything, instead of reading the
    /// containers of every node where they run. `None`, the default, makes
    /// every app above its fair share a candidate; the decisions are the
    /// same either way.
    fn app_holdings(&self, app: AppSlot) -> Option<AppHoldings> {
        let _ = app;
        None
    }
}
