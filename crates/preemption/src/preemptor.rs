//! The preemptor: the state preemption keeps between updates (timers, the
//! warn-then-kill ledger, the apps resources are set aside for) and the
//! update that moves it on: starvation, victims, warnings, kills,
//! withdrawals, as data.
//!
//! An update first plans without touching the state, so a view that breaks
//! its contract leaves the preemptor exactly as it was; then it commits.
//! Carrying the output out (telling apps, killing containers, handing freed
//! resources back on their nodes) is the core's job.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use weft_model::{
    AppId, ContainerId, NodeId, Priority, QueuePath, Resource, ResourceType, Time, ratio,
};
use weft_queue_tree::site::{PreemptionModel, SchedulerSettings};

use crate::calc::{Calc, starvation_order};
use crate::classic::{Classic, ClassicPlan};
use crate::error::{PreemptionError, SlotKind};
use crate::ledger::{Ledger, LedgerEntry, Transition, TransitionKind, WithdrawReason};
use crate::requests::{StarvedRequest, starved_requests};
use crate::starvation::{AppTimers, LeafFigures, Starved, unmet_demand, update_leaf};
use crate::victims::{Found, Tables, VictimQueue};
use crate::view::{AppInfo, AppSlot, Location, NodeSlot, PreemptionView, QueueSlot};

/// Preemption's state and its entry points. See the crate documentation for
/// the driving loop.
#[derive(Clone, Debug, Default)]
pub struct Preemptor {
    ledger: Ledger,
    /// By app slot: the timers of the app last seen there.
    apps: Vec<Option<AppTimers>>,
    /// By queue slot: the min-share timer of the leaf last seen there.
    queues: Vec<Option<QueueTimer>>,
    /// Starved apps that may have resources set aside for them on nodes
    /// (hand-back entries).
    claims: BTreeMap<AppId, Claim>,
    last_update: Option<Time>,
    pass: Pass,
    /// The classic model's timers.
    classic: Classic,
    /// The model of the last update that ran with preemption on.
    model: Option<PreemptionModel>,
}

/// What preemption remembers about an app it took resources for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Claim {
    slot: AppSlot,
    /// Once none of its warned containers is left, the time its hand-back
    /// entries end: the allocation delay after the update that noticed.
    expires: Option<Time>,
}

#[derive(Clone, Debug)]
struct QueueTimer {
    path: QueuePath,
    last_at_min_share: Time,
}

/// What one update decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PreemptionOutput {
    /// True when decided in dry-run mode: `starved` says what would have been
    /// preempted, and there are no warnings.
    pub dry_run: bool,
    /// Cluster utilisation: the larger of the memory and vcore fractions allocated.
    pub utilization: f64,
    /// The starved apps this update served, in the order served, with what
    /// was (or in a dry run would be) taken for each.
    pub starved: Vec<StarvedApp>,
    /// Every ledger change: kills and withdrawals by container id, then the
    /// warnings in the order decided.
    pub transitions: Vec<Transition>,
    /// Apps that no longer need what is set aside for them: the core drops
    /// their hand-back entries on every node.
    pub claims_ended: Vec<AppId>,
    /// The earliest kill deadline still pending: the core updates again then.
    pub next_deadline: Option<Time>,
}

/// A starved app, and what was taken for it.
///
/// In the classic model a starved leaf is reported, named by its first app
/// with unmet demand: its deficit is the larger of its fair-share and
/// min-share shortfalls, so one of the two amounts is zero; `requested` is
/// what warned containers and freed room did not cover; each victim is a
/// set of its own. A leaf is reported when its deficit changes or
/// containers are warned for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StarvedApp {
    /// The app.
    pub app: AppId,
    /// Its leaf.
    pub queue: QueuePath,
    /// Fair-share starvation: below its fair-share target for the timeout.
    pub fair_share_starvation: Resource,
    /// Its part of its leaf's min-share starvation.
    pub min_share_starvation: Resource,
    /// What its starved requests add up to (the room preemption looked for).
    pub requested: Resource,
    /// The sets taken, one per container made room for.
    pub victims: Vec<VictimSet>,
}

impl StarvedApp {
    /// Fair-share plus min-share starvation.
    pub fn starvation(&self) -> Resource {
        self.fair_share_starvation + self.min_share_starvation
    }
}

/// Containers on one node whose preemption makes room for one container of
/// the starved app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VictimSet {
    /// The node.
    pub node: NodeId,
    /// The priority of the ask served.
    pub priority: Priority,
    /// The size of the container made room for.
    pub capability: Resource,
    /// The victims.
    pub containers: Vec<Victim>,
}

impl VictimSet {
    /// What the victims hold together.
    pub fn amount(&self) -> Resource {
        self.containers.iter().map(|v| v.resource).sum()
    }
}

/// One container taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Victim {
    /// The container.
    pub container: ContainerId,
    /// Its app.
    pub app: AppId,
    /// Its app's leaf.
    pub queue: QueuePath,
    /// Its size.
    pub resource: Resource,
    /// True for an AM container.
    pub is_am: bool,
}

impl Preemptor {
    /// A preemptor with nothing warned and no timers.
    pub fn new() -> Preemptor {
        Preemptor::default()
    }

    /// One update at `now`, from the core's update pass (every
    /// `update-interval-ms`) and at every `next_deadline`.
    ///
    /// With preemption off, every warning is withdrawn and nothing else
    /// happens. In a dry run, the same, and the decisions are reported in
    /// `starved`. Otherwise: warnings whose deadline came are killed,
    /// warnings no longer needed are withdrawn, and, while the cluster is
    /// utilised beyond the threshold, starved apps get victims warned.
    /// `settings.preemption_model` picks the model; when it changes, the
    /// old model's warnings are withdrawn and the new one starts afresh.
    pub fn update<V: PreemptionView>(
        &mut self,
        now: Time,
        view: &V,
        settings: &SchedulerSettings,
    ) -> Result<PreemptionOutput, PreemptionError> {
        if let Some(previous) = self.last_update
            && now < previous
        {
            return Err(PreemptionError::TimeWentBackwards { now, previous });
        }
        let dry_run = settings.preemption && settings.preemption_dry_run;
        let capacity = view.cluster_capacity();
        let allocated = view.cluster_allocated();
        let utilization = ResourceType::ALL
            .iter()
            .map(|ty| ratio(allocated.get(*ty), capacity.get(*ty)))
            .fold(0.0, f64::max);
        let model = settings.preemption_model;
        // A new model starts afresh: it plans as if nothing were warned and
        // no timer had run, and the old model's warnings are withdrawn.
        let switched = settings.preemption && self.model.is_some_and(|m| m != model);
        let fresh = Ledger::default();
        let ledger = if switched { &fresh } else { &self.ledger };
        let plan = if !settings.preemption {
            None
        } else {
            let evaluate = utilization_passes(
                allocated,
                capacity,
                settings.preemption_utilization_threshold.get(),
            );
            match model {
                PreemptionModel::Current => {
                    let no_claims = BTreeMap::new();
                    let context = if switched {
                        Context {
                            ledger,
                            apps: &[],
                            queues: &[],
                            claims: &no_claims,
                        }
                    } else {
                        Context {
                            ledger,
                            apps: &self.apps,
                            queues: &self.queues,
                            claims: &self.claims,
                        }
                    };
                    Some(ModelPlan::Current(
                        self.pass
                            .plan(now, view, settings, dry_run, evaluate, &context)?,
                    ))
                }
                PreemptionModel::Classic => {
                    let classic = if switched {
                        &Classic::default()
                    } else {
                        &self.classic
                    };
                    Some(ModelPlan::Classic(
                        classic.plan(now, view, settings, dry_run, evaluate, ledger)?,
                    ))
                }
            }
        };
        self.last_update = Some(now);
        let mut out = PreemptionOutput {
            dry_run,
            utilization,
            ..PreemptionOutput::default()
        };
        if switched {
            self.withdraw_everything(WithdrawReason::ModelChanged, &mut out);
            self.apps.clear();
            self.queues.clear();
            self.classic.reset();
        }
        match plan {
            Some(ModelPlan::Current(plan)) => self.commit(plan, &mut out),
            Some(ModelPlan::Classic(plan)) => self.commit_classic(plan, &mut out),
            None => {
                self.withdraw_everything(WithdrawReason::PreemptionOff, &mut out);
                self.classic.reset();
            }
        }
        if settings.preemption {
            self.model = Some(model);
        }
        out.next_deadline = self.ledger.next_deadline();
        Ok(out)
    }

    /// The core reports that a container ended (released, finished, lost or
    /// killed). A warned container leaves the ledger as `Released`.
    pub fn container_ended(&mut self, id: ContainerId) -> Option<Transition> {
        let entry = self.ledger.remove(&id)?;
        if !entry.set_aside {
            // The classic model: the room is on its way to the starved queue.
            self.classic.released(&entry);
        }
        Some(transition(id, entry, TransitionKind::Released))
    }

    /// The earliest kill deadline pending.
    pub fn next_deadline(&self) -> Option<Time> {
        self.ledger.next_deadline()
    }

    /// The warned containers `app` owns, with their deadlines, by container
    /// id: what its allocate responses carry as the preemption message.
    pub fn warned_containers(&self, app: AppId) -> impl Iterator<Item = (ContainerId, Time)> + '_ {
        self.ledger
            .owned_by(app)
            .map(|(id, entry)| (*id, entry.deadline))
    }

    /// Every warned container, by id.
    pub fn ledger(&self) -> impl Iterator<Item = (&ContainerId, &LedgerEntry)> {
        self.ledger.iter()
    }

    /// Makes every search read the nodes' containers, never the giving
    /// apps' (tests compare the two).
    #[cfg(test)]
    pub(crate) fn never_index(&mut self) {
        self.pass.tables.never_index = true;
    }

    /// Makes every app above its fair share a giver, whatever the view's
    /// summary of its containers says (tests compare the two).
    #[cfg(test)]
    pub(crate) fn never_read_holdings(&mut self) {
        self.pass.tables.never_read_holdings = true;
    }

    fn withdraw_everything(&mut self, reason: WithdrawReason, out: &mut PreemptionOutput) {
        let ids: Vec<ContainerId> = self.ledger.iter().map(|(id, _)| *id).collect();
        for id in ids {
            if let Some(entry) = self.ledger.remove(&id) {
                out.transitions
                    .push(transition(id, entry, TransitionKind::Withdrawn { reason }));
            }
        }
        out.claims_ended.extend(self.claims.keys().copied());
        self.claims.clear();
    }

    fn commit(&mut self, plan: Plan, out: &mut PreemptionOutput) {
        let pass = &self.pass;
        if self.apps.len() < pass.flat_of_slot.len() {
            self.apps.resize(pass.flat_of_slot.len(), None);
        }
        for (info, timers) in pass.infos.iter().zip(&pass.timers) {
            self.apps[info.slot.0 as usize] = Some(*timers);
        }
        if self.queues.len() < pass.paths.len() {
            self.queues.resize(pass.paths.len(), None);
        }
        for leaf in &pass.leaves {
            self.queues[leaf.slot.0 as usize] = Some(QueueTimer {
                path: leaf.path.clone(),
                last_at_min_share: leaf.last_at_min_share,
            });
        }

        for (id, kind) in plan.removals {
            if let Some(entry) = self.ledger.remove(&id) {
                out.transitions.push(transition(id, entry, kind));
            }
        }
        for (app, expires) in plan.claim_expiries {
            if let Some(claim) = self.claims.get_mut(&app) {
                claim.expires = Some(expires);
            }
        }
        // An app that gets new warnings keeps its claim: ending it too would
        // leave the order in which the core drops and adds entries to chance.
        let renewed: BTreeSet<AppId> = plan.warnings.iter().map(|(_, e)| e.for_app).collect();
        for app in plan.claims_ended {
            if !renewed.contains(&app) {
                self.claims.remove(&app);
                out.claims_ended.push(app);
            }
        }
        for (id, entry) in plan.warnings {
            self.claims.insert(
                entry.for_app,
                Claim {
                    slot: entry.for_slot,
                    expires: None,
                },
            );
            let kind = TransitionKind::Warned {
                deadline: entry.deadline,
            };
            out.transitions.push(transition(id, entry.clone(), kind));
            self.ledger.insert(id, entry);
        }
        out.starved = plan.starved;
    }

    /// Applies a classic plan: kills and withdrawals, then the new
    /// warnings. The classic model holds no claims.
    fn commit_classic(&mut self, mut plan: ClassicPlan, out: &mut PreemptionOutput) {
        self.classic.commit(&mut plan);
        for (id, kind) in plan.removals {
            if let Some(entry) = self.ledger.remove(&id) {
                out.transitions.push(transition(id, entry, kind));
            }
        }
        for (id, entry) in plan.warnings {
            let kind = TransitionKind::Warned {
                deadline: entry.deadline,
            };
            out.transitions.push(transition(id, entry.clone(), kind));
            self.ledger.insert(id, entry);
        }
        out.starved = plan.starved;
    }
}

/// What the model in force planned.
enum ModelPlan {
    Current(Plan),
    Classic(ClassicPlan),
}

fn transition(container: ContainerId, entry: LedgerEntry, kind: TransitionKind) -> Transition {
    Transition {
        container,
        app: entry.app,
        node: entry.node,
        resource: entry.resource,
        for_app: entry.for_app,
        set_aside: entry.set_aside,
        kind,
    }
}

/// The preemptor's state an update plans from, read-only.
struct Context<'a> {
    ledger: &'a Ledger,
    apps: &'a [Option<AppTimers>],
    queues: &'a [Option<QueueTimer>],
    claims: &'a BTreeMap<AppId, Claim>,
}

/// What an update decided, to be committed.
struct Plan {
    /// Ledger entries leaving (killed or withdrawn), by container id.
    removals: Vec<(ContainerId, TransitionKind)>,
    claims_ended: Vec<AppId>,
    /// Claims whose last warning is gone, and when they end.
    claim_expiries: Vec<(AppId, Time)>,
    starved: Vec<StarvedApp>,
    warnings: Vec<(ContainerId, LedgerEntry)>,
}

/// One update's working tables, kept to reuse their allocations.
#[derive(Clone, Debug, Default)]
struct Pass {
    tables: Tables,
    /// By queue slot.
    paths: Vec<Option<QueuePath>>,
    leaves: Vec<PassLeaf>,
    /// Every leaf's apps, leaf after leaf, each in the view's order.
    infos: Vec<AppInfo>,
    /// The apps' timers as this update leaves them, index for index with `infos`.
    timers: Vec<AppTimers>,
    /// By app slot: the index in `infos`, or `NONE`.
    flat_of_slot: Vec<u32>,
    starved: Vec<Starved>,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct PassLeaf {
    slot: QueueSlot,
    path: QueuePath,
    figures: LeafFigures,
    apps: Range<usize>,
    /// As this update leaves it.
    last_at_min_share: Time,
}

/// A starved app waiting its turn: where it is, and how starved.
struct Turn {
    flat: usize,
    fair_share: Resource,
    min_share: Resource,
}

impl Pass {
    fn plan<V: PreemptionView>(
        &mut self,
        now: Time,
        view: &V,
        settings: &SchedulerSettings,
        dry_run: bool,
        evaluate: bool,
        context: &Context<'_>,
    ) -> Result<Plan, PreemptionError> {
        self.gather(now, view, settings, context)?;

        let mut turns = Vec::new();
        for leaf in &mut self.leaves {
            self.starved.clear();
            update_leaf(
                &leaf.figures,
                &self.infos[leaf.apps.clone()],
                &mut self.timers[leaf.apps.clone()],
                &mut leaf.last_at_min_share,
                now,
                evaluate,
                &mut self.starved,
            );
            turns.extend(self.starved.iter().map(|s| Turn {
                flat: leaf.apps.start + s.index,
                fair_share: s.fair_share,
                min_share: s.min_share,
            }));
        }

        let mut plan = Plan {
            removals: Vec::new(),
            claims_ended: Vec::new(),
            claim_expiries: Vec::new(),
            starved: Vec::new(),
            warnings: Vec::new(),
        };
        let ended = self.end_claims(now, settings, context, dry_run, &mut plan);
        self.triage_ledger(now, context.ledger, dry_run, &ended, &mut plan);
        self.fill_tables(context.ledger, &plan);

        if evaluate {
            turns.sort_by(|a, b| {
                starvation_order(&(a.fair_share + a.min_share), &(b.fair_share + b.min_share))
                    .then_with(|| self.infos[a.flat].id.cmp(&self.infos[b.flat].id))
            });
            let mut memo = Vec::new();
            let mut all_nodes = None;
            for turn in &turns {
                let starved = self.serve(
                    now,
                    view,
                    settings,
                    dry_run,
                    turn,
                    &mut memo,
                    &mut all_nodes,
                    &mut plan,
                )?;
                plan.starved.push(starved);
            }
        }
        Ok(plan)
    }

    /// Reads the queues and apps into the tables, checking the view's slots,
    /// with every app's and leaf's timers as the state holds them.
    fn gather<V: PreemptionView>(
        &mut self,
        now: Time,
        view: &V,
        settings: &SchedulerSettings,
        context: &Context<'_>,
    ) -> Result<(), PreemptionError> {
        let n_queues = view.queue_slots();
        let n_apps = view.app_slots();
        let cluster = view.cluster_capacity();
        self.tables.reset(n_apps, n_queues, view.node_slots());
        self.paths.clear();
        self.paths.resize(n_queues, None);
        self.leaves.clear();
        self.infos.clear();
        self.timers.clear();
        self.flat_of_slot.clear();
        self.flat_of_slot.resize(n_apps, NONE);

        for q in view.queues() {
            let i = SlotKind::Queue.index(q.slot.0, n_queues, |i| self.paths[i].is_some())?;
            self.paths[i] = Some(q.path.clone());
            let calc = Calc::for_policy(q.policy, cluster);
            self.tables.queues[i] = VictimQueue::new(
                q.parent,
                calc,
                q.usage,
                q.fair_share,
                q.preemptable,
                settings.am_preemption_enabled(q.path),
            );
            if !q.is_leaf {
                continue;
            }
            let threshold = q.fair_share_preemption_threshold;
            if !(0.0..=1.0).contains(&threshold) {
                return Err(PreemptionError::BadThreshold {
                    queue: q.path.clone(),
                    value: threshold,
                });
            }
            let last_at_min_share = match context.queues.get(i) {
                Some(Some(timer)) if timer.path == *q.path => timer.last_at_min_share,
                _ => now,
            };
            self.leaves.push(PassLeaf {
                slot: q.slot,
                path: q.path.clone(),
                figures: LeafFigures {
                    calc,
                    min_share: q.min_share,
                    demand: q.demand,
                    usage: q.usage,
                    min_share_timeout: q.min_share_preemption_timeout,
                    fair_share_timeout: q.fair_share_preemption_timeout,
                    threshold,
                },
                apps: 0..0,
                last_at_min_share,
            });
        }
        self.check_parents()?;

        for l in 0..self.leaves.len() {
            let leaf = self.leaves[l].slot;
            let start = self.infos.len();
            for app in view.apps(leaf) {
                let i =
                    SlotKind::App.index(app.slot.0, n_apps, |i| self.flat_of_slot[i] != NONE)?;
                self.flat_of_slot[i] = self.infos.len() as u32;
                let timers = match context.apps.get(i) {
                    Some(Some(t)) if t.id == app.id => *t,
                    _ => AppTimers::new(&app),
                };
                self.infos.push(app);
                self.timers.push(timers);
                self.tables
                    .add_app(app.slot, app.id, leaf, app.usage, app.fair_share);
            }
            self.leaves[l].apps = start..self.infos.len();
        }
        Ok(())
    }

    /// Every parent must be a queue of the view, and following parents must
    /// reach a root: the searches walk up the tree.
    fn check_parents(&self) -> Result<(), PreemptionError> {
        let queues = &self.tables.queues;
        for (i, path) in self.paths.iter().enumerate() {
            let Some(path) = path else {
                continue;
            };
            let mut cur = queues[i].parent;
            let mut steps = 0;
            while let Some(parent) = cur {
                let p = parent.0 as usize;
                steps += 1;
                if p >= queues.len() || !queues[p].present || steps > queues.len() {
                    return Err(PreemptionError::BadParent {
                        queue: path.clone(),
                        parent: queues[i].parent.map_or(0, |s| s.0),
                    });
                }
                cur = queues[p].parent;
            }
        }
        Ok(())
    }

    /// The app at `slot` this update, if it is `id`.
    fn flat(&self, slot: AppSlot, id: AppId) -> Option<usize> {
        let flat = *self.flat_of_slot.get(slot.0 as usize)?;
        (flat != NONE && self.infos[flat as usize].id == id).then_some(flat as usize)
    }

    /// Ends the claims of apps that no longer need what is set aside for
    /// them (Hadoop's node preemption-list clean-up, plus "no unmet
    /// demand"), and of apps whose warned containers are all gone since the
    /// allocation delay: what is still held for them then is left over.
    fn end_claims(
        &self,
        now: Time,
        settings: &SchedulerSettings,
        context: &Context<'_>,
        dry_run: bool,
        plan: &mut Plan,
    ) -> BTreeMap<AppId, WithdrawReason> {
        let warned_for: BTreeSet<AppId> = context.ledger.iter().map(|(_, e)| e.for_app).collect();
        let mut ended = BTreeMap::new();
        for (app, claim) in context.claims {
            let reason = if dry_run {
                Some(WithdrawReason::PreemptionOff)
            } else {
                match self.flat(claim.slot, *app) {
                    None => Some(WithdrawReason::BeneficiaryGone),
                    Some(flat) if !self.still_needs(flat) => Some(WithdrawReason::NoLongerNeeded),
                    Some(_) => None,
                }
            };
            if let Some(reason) = reason {
                ended.insert(*app, reason);
                plan.claims_ended.push(*app);
                continue;
            }
            if warned_for.contains(app) {
                continue;
            }
            match claim.expires {
                None => plan
                    .claim_expiries
                    .push((*app, now + settings.preemption_allocation_delay())),
                Some(expires) if expires <= now => plan.claims_ended.push(*app),
                Some(_) => {}
            }
        }
        ended
    }

    fn still_needs(&self, flat: usize) -> bool {
        let info = &self.infos[flat];
        let timers = &self.timers[flat];
        let calc = self.tables.queues[self.tables.apps[info.slot.0 as usize].leaf.0 as usize].calc;
        let starved =
            calc.is_below(&info.usage, &info.fair_share) || !timers.min_share_starvation.is_zero();
        let starvation = timers.fair_share_starvation + timers.min_share_starvation;
        !unmet_demand(info).is_zero() && starved && !starvation.is_zero()
    }

    /// Kills what is due and withdraws what is no longer wanted.
    fn triage_ledger(
        &self,
        now: Time,
        ledger: &Ledger,
        dry_run: bool,
        ended: &BTreeMap<AppId, WithdrawReason>,
        plan: &mut Plan,
    ) {
        for (id, entry) in ledger.iter() {
            let reason = if dry_run {
                Some(WithdrawReason::PreemptionOff)
            } else if let Some(reason) = ended.get(&entry.for_app) {
                Some(*reason)
            } else if self.flat(entry.app_slot, entry.app).is_none() {
                Some(WithdrawReason::OwnerGone)
            } else {
                None
            };
            let kind = match reason {
                Some(reason) => TransitionKind::Withdrawn { reason },
                None if entry.deadline <= now => TransitionKind::Killed,
                None => continue,
            };
            plan.removals.push((*id, kind));
        }
    }

    /// Marks what the ledger holds, and books the losses of the warned
    /// containers that stay taken (the ones killed now included: they run
    /// until the core carries the kill out).
    fn fill_tables(&mut self, ledger: &Ledger, plan: &Plan) {
        let withdrawn: BTreeSet<ContainerId> = plan
            .removals
            .iter()
            .filter(|(_, kind)| matches!(kind, TransitionKind::Withdrawn { .. }))
            .map(|(id, _)| *id)
            .collect();
        for (id, entry) in ledger.iter() {
            let n = entry.node_slot.0 as usize;
            if n < self.tables.warned_on_node.len() {
                self.tables.warned_on_node[n] += entry.resource;
                self.tables.mark(*id, entry.node_slot);
            }
            if withdrawn.contains(id) {
                continue;
            }
            let (Some(_), Some(for_flat)) = (
                self.flat(entry.app_slot, entry.app),
                self.flat(entry.for_slot, entry.for_app),
            ) else {
                continue;
            };
            let for_leaf = self.tables.apps[self.infos[for_flat].slot.0 as usize].leaf;
            self.tables.set_path(for_leaf, true);
            self.tables.add_loss(entry.app_slot, entry.resource);
            self.tables.set_path(for_leaf, false);
        }
    }

    /// Finds victims for one starved app.
    #[expect(
        clippy::too_many_arguments,
        reason = "one update's context, threaded through its steps"
    )]
    fn serve<'v, V: PreemptionView>(
        &mut self,
        now: Time,
        view: &'v V,
        settings: &SchedulerSettings,
        dry_run: bool,
        turn: &Turn,
        memo: &mut Vec<(Resource, Location<'v>, QueueSlot)>,
        all_nodes: &mut Option<Vec<NodeSlot>>,
        plan: &mut Plan,
    ) -> Result<StarvedApp, PreemptionError> {
        let info = self.infos[turn.flat];
        let leaf = self.tables.apps[info.slot.0 as usize].leaf;
        let starvation = turn.fair_share + turn.min_share;
        let mut asks: Vec<_> = view.asks(info.slot).collect();
        let mut requests: Vec<StarvedRequest<'v>> = Vec::new();
        let rack_of = |name: &str| {
            let slot = view.nodes_at(Location::Node(name)).next()?;
            view.node(slot).map(|n| n.rack)
        };
        starved_requests(&mut asks, rack_of, starvation, &mut requests);

        let mut res = StarvedApp {
            app: info.id,
            queue: self.paths[leaf.0 as usize]
                .clone()
                .unwrap_or_else(QueuePath::root),
            fair_share_starvation: turn.fair_share,
            min_share_starvation: turn.min_share,
            requested: requests
                .iter()
                .map(|r| r.capability.saturating_mul(u64::from(r.count)))
                .sum(),
            victims: Vec::new(),
        };
        // Min-share starvation is the leaf's: taking from its own apps would
        // not bring the leaf closer to its min share.
        let leaf_mates_open = !turn.fair_share.is_zero();
        self.tables
            .begin_serving(view, info.slot, leaf, leaf_mates_open);
        let outcome = self.serve_requests(view, &requests, leaf, memo, all_nodes);
        self.tables.end_serving(leaf);
        let found = outcome?;

        let wait = settings.wait_time_before_kill;
        for (f, capability, priority) in found {
            let Some(node) = view.node(f.node) else {
                return Err(PreemptionError::UnknownNode { slot: f.node.0 });
            };
            let mut set = VictimSet {
                node: node.id.clone(),
                priority,
                capability,
                containers: Vec::new(),
            };
            for c in &f.containers {
                let owner = self.tables.apps[c.app.0 as usize];
                set.containers.push(Victim {
                    container: c.id,
                    app: owner.id,
                    queue: self.paths[owner.leaf.0 as usize]
                        .clone()
                        .unwrap_or_else(QueuePath::root),
                    resource: c.resource,
                    is_am: c.is_am,
                });
                if !dry_run {
                    plan.warnings.push((
                        c.id,
                        LedgerEntry {
                            app: owner.id,
                            node: node.id.clone(),
                            resource: c.resource,
                            for_app: info.id,
                            warned_at: now,
                            deadline: now + wait,
                            set_aside: true,
                            app_slot: c.app,
                            node_slot: f.node,
                            for_slot: info.slot,
                        },
                    ));
                }
            }
            res.victims.push(set);
        }
        // As Hadoop: whatever was found, the app waits before it is looked at again.
        self.timers[turn.flat].next_check = now + settings.starvation_recheck_delay();
        Ok(res)
    }

    /// The victim sets for each container of each request, in order.
    fn serve_requests<'v, V: PreemptionView>(
        &mut self,
        view: &'v V,
        requests: &[StarvedRequest<'v>],
        leaf: QueueSlot,
        memo: &mut Vec<(Resource, Location<'v>, QueueSlot)>,
        all_nodes: &mut Option<Vec<NodeSlot>>,
    ) -> Result<Vec<(Found, Resource, Priority)>, PreemptionError> {
        let mut res = Vec::new();
        for request in requests {
            let capability = request.capability;
            let local: Vec<NodeSlot> = match request.location {
                Location::Any => Vec::new(),
                location => view.nodes_at(location).collect(),
            };
            for _ in 0..request.count {
                // Nothing found for this size, place and starved leaf earlier
                // in this update: the search can only find less now.
                if memo.contains(&(capability, request.location, leaf)) {
                    break;
                }
                let all = all_nodes.get_or_insert_with(|| view.nodes().collect());
                let nodes = match request.location {
                    Location::Any => &all[..],
                    _ => &local[..],
                };
                let mut best = self.tables.search(view, nodes, capability)?;
                if request.may_widen && best.as_ref().is_some_and(|f| f.n_ams > 0) {
                    let wider = self.tables.search(view, &all[..], capability)?;
                    if wider.is_some() {
                        best = wider;
                    }
                }
                let Some(found) = best else {
                    memo.push((capability, request.location, leaf));
                    break;
                };
                self.tables.take(&found, capability);
                if !found.containers.is_empty() {
                    res.push((found, capability, request.priority));
                }
            }
        }
        Ok(res)
    }
}

/// Whether the cluster is used past `threshold`, decided as Hadoop's
/// `shouldAttemptPreemption` does: the threshold is read with `getFloat`,
/// and each fraction is divided in `float` (`(float) allocatedMB / clusterMB`),
/// so on a cluster of hundreds of millions of MB the answer can differ from
/// the exact one. An empty resource counts as unused, as `ratio` has it.
fn utilization_passes(allocated: Resource, capacity: Resource, threshold: f64) -> bool {
    let threshold = threshold as f32;
    ResourceType::ALL.iter().any(|ty| {
        let (a, c) = (allocated.get(*ty), capacity.get(*ty));
        let fraction = if c == 0 {
            ratio(a, c) as f32
        } else {
            a as f32 / c as f32
        };
        fraction > threshold
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestView;
    use crate::view::{Ask, ContainerInfo, NodeInfo, QueueInfo};

    /// `b` starved for its fair share against `a` on one full node.
    const CLUSTER: &str = "
        node n1 /r 4096,4
        queue root.a fs=2048,0
        queue root.b fs=2048,0 fsto=0s thr=1
        app a root.a fs=2048,0
        run a n1 4x1024,1
        app b root.b fs=2048,0
        ask b * 2x1024,1
    ";

    /// A view that breaks one rule of the contract on top of a good one.
    struct Broken<'a> {
        inner: &'a TestView,
        queue_bound: Option<usize>,
        duplicate_apps: bool,
    }

    impl PreemptionView for Broken<'_> {
        fn cluster_capacity(&self) -> Resource {
            self.inner.cluster_capacity()
        }
        fn cluster_allocated(&self) -> Resource {
            self.inner.cluster_allocated()
        }
        fn queue_slots(&self) -> usize {
            self.queue_bound.unwrap_or(self.inner.queue_slots())
        }
        fn queues(&self) -> impl Iterator<Item = QueueInfo<'_>> {
            self.inner.queues()
        }
        fn app_slots(&self) -> usize {
            self.inner.app_slots()
        }
        fn apps(&self, leaf: QueueSlot) -> impl Iterator<Item = AppInfo> {
            let mut apps: Vec<AppInfo> = self.inner.apps(leaf).collect();
            if self.duplicate_apps && !apps.is_empty() {
                apps.push(apps[0]);
            }
            apps.into_iter()
        }
        fn asks(&self, app: AppSlot) -> impl Iterator<Item = Ask<'_>> {
            self.inner.asks(app)
        }
        fn node_slots(&self) -> usize {
            self.inner.node_slots()
        }
        fn nodes(&self) -> impl Iterator<Item = NodeSlot> {
            self.inner.nodes()
        }
        fn nodes_at(&self, location: Location<'_>) -> impl Iterator<Item = NodeSlot> {
            self.inner.nodes_at(location)
        }
        fn node(&self, node: NodeSlot) -> Option<NodeInfo<'_>> {
            self.inner.node(node)
        }
        fn containers(&self, node: NodeSlot) -> impl Iterator<Item = ContainerInfo> {
            self.inner.containers(node)
        }
        fn app_containers(&self, app: AppSlot) -> impl Iterator<Item = (NodeSlot, ContainerInfo)> {
            self.inner.app_containers(app)
        }
    }

    fn warned(preemptor: &Preemptor) -> Vec<String> {
        preemptor
            .ledger()
            .map(|(id, e)| format!("{id} until {}", e.deadline))
            .collect()
    }

    #[test]
    fn a_broken_view_is_refused_and_changes_nothing() {
        let view = TestView::parse(CLUSTER);
        let settings = view.settings.clone();
        let mut preemptor = Preemptor::new();
        let out = preemptor
            .update(Time::from_millis(1000), &view, &settings)
            .unwrap();
        assert_eq!(out.transitions.len(), 2);
        let before = warned(&preemptor);

        let bound = Broken {
            inner: &view,
            queue_bound: Some(2),
            duplicate_apps: false,
        };
        let err = preemptor
            .update(Time::from_millis(2000), &bound, &settings)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the view names queue slot 2, not below its bound 2"
        );
        let twice = Broken {
            inner: &view,
            queue_bound: None,
            duplicate_apps: true,
        };
        let err = preemptor
            .update(Time::from_millis(2000), &twice, &settings)
            .unwrap_err();
        assert_eq!(err.to_string(), "the view lists app slot 0 twice");

        let mut bad = view.clone();
        bad.queues[2].threshold = 1.5;
        let err = preemptor
            .update(Time::from_millis(2000), &bad, &settings)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "queue root.b has fair-share preemption threshold 1.5, not in [0, 1]"
        );
        let err = preemptor
            .update(Time::from_millis(500), &view, &settings)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "time went backwards: update at 0.500s after an update at 1.000s"
        );
        assert_eq!(warned(&preemptor), before);

        // The good view still works, and kills at the deadline.
        let out = preemptor
            .update(Time::from_millis(16_000), &view, &settings)
            .unwrap();
        let killed = out
            .transitions
            .iter()
            .filter(|t| t.kind == TransitionKind::Killed)
            .count();
        assert_eq!(killed, 2);
    }

    #[test]
    fn warned_containers_are_listed_per_owner() {
        let view = TestView::parse(CLUSTER);
        let settings = view.settings.clone();
        let mut preemptor = Preemptor::new();
        preemptor
            .update(Time::from_millis(1000), &view, &settings)
            .unwrap();
        let a = view.apps[0].id;
        let listed: Vec<String> = preemptor
            .warned_containers(a)
            .map(|(id, deadline)| format!("{id} {deadline}"))
            .collect();
        assert_eq!(
            listed,
            [
                "container_1_0001_01_000003 16.000s",
                "container_1_0001_01_000004 16.000s"
            ]
        );
        assert_eq!(preemptor.warned_containers(view.apps[1].id).count(), 0);
        assert_eq!(preemptor.next_deadline(), Some(Time::from_millis(16_000)));
        // A warned container that ends is released; another id is not known.
        let id = preemptor.warned_containers(a).next().unwrap().0;
        let t = preemptor.container_ended(id).unwrap();
        assert_eq!(t.kind, TransitionKind::Released);
        assert!(preemptor.container_ended(id).is_none());
    }

    #[test]
    fn utilization_is_compared_in_floats_as_hadoop_does() {
        // 25,322,849 of 253,228,485 MB is a hair above 0.1 exactly, but in
        // `float` the fraction and the threshold are both 0.1f: not above.
        let cap = Resource::new(253_228_485, 1_000);
        assert!(!utilization_passes(Resource::new(25_322_849, 0), cap, 0.1));
        // And the other way: 0.743 read as a float is below this fraction
        // in float, though the exact fraction is below 0.743.
        let cap = Resource::new(407_699_195, 1_000);
        assert!(utilization_passes(
            Resource::new(302_920_501, 0),
            cap,
            0.743
        ));
        // Either resource counts; an empty cluster is unused.
        assert!(utilization_passes(
            Resource::new(0, 900),
            Resource::new(10, 1_000),
            0.8
        ));
        assert!(!utilization_passes(Resource::ZERO, Resource::ZERO, 0.0));
    }
}
