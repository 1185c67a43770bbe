//! The step's working memory: buffers the pipeline fills and reuses each
//! step (rotations, broadphase proxies and pairs, movers, islands and
//! batches, manifolds, new contacts), kept in the [`World`](crate::World)
//! so a step allocates nothing once warm.
//!
//! Invariant: everything here is derived from the state during a step and
//! never encoded, compared or read across steps as state; dropping it
//! (as decoding a world does) changes no result.

use lockstep_fx::Mat3;

use crate::broadphase::{Broadphase, Proxy};
use crate::contact::{Contact, Event};
use crate::narrowphase::Manifold;
use crate::solver::Batch;
use crate::solver::partition::Islands;

/// A contact to solve this step, with its bodies' mover indices (read
/// once, in contact order, so the passes over the shuffled order never
/// return to the contacts for them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Solving {
    /// Index in the contact cache.
    pub(crate) contact: u32,
    /// Mover index of body `a` and of body `b` (`u32::MAX` for an
    /// immovable body).
    pub(crate) a: u32,
    pub(crate) b: u32,
}

/// Per-step caches derived from the state; never encoded.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) rotations: Vec<Mat3>,
    pub(crate) broadphase: Broadphase,
    pub(crate) proxies: Vec<Proxy>,
    pub(crate) pairs: Vec<(u32, u32)>,
    /// The bodies the solver moves this step, in slot order, and each
    /// slot's index among them (`u32::MAX` for the others).
    pub(crate) movers: Vec<u32>,
    pub(crate) mover_index: Vec<u32>,
    /// This step's contacts to solve, in solve order.
    pub(crate) order: Vec<Solving>,
    /// The movers' islands, their work, and each one's batch.
    pub(crate) islands: Islands,
    pub(crate) work: Vec<u32>,
    pub(crate) batch_of: Vec<u32>,
    /// Each slot's index within its batch.
    pub(crate) local: Vec<u32>,
    pub(crate) batches: Vec<Batch>,
    /// This step's manifold of each pair, in pair order.
    pub(crate) manifolds: Vec<Manifold>,
    pub(crate) new_contacts: Vec<Contact>,
    /// The islands a step's collision found touched, to wake.
    pub(crate) wake: Vec<u32>,
    /// Whether each slot's body was woken this step, and the first
    /// collision's pairs, contacts and events, kept for the collision that
    /// follows the waking (`World::find_woken_pairs`,
    /// `World::collide_woken`).
    pub(crate) woken: Vec<bool>,
    pub(crate) first_pairs: Vec<(u32, u32)>,
    pub(crate) first_contacts: Vec<Contact>,
    pub(crate) first_events: Vec<Event>,
    /// The woken bodies' places among the proxies, the pairs and the
    /// cached contacts (indices) with a woken body, and the contacts and
    /// events that merging those again made.
    pub(crate) woken_proxies: Vec<u32>,
    pub(crate) computed: Vec<(u32, u32)>,
    pub(crate) woken_cache: Vec<usize>,
    pub(crate) woken_contacts: Vec<Contact>,
    pub(crate) woken_events: Vec<Event>,
    /// Sleeping's union-find (`island::update`): each slot's parent, each
    /// root's fewest still frames, and each candidate with its root.
    pub(crate) sleep_parent: Vec<u32>,
    pub(crate) sleep_min_still: Vec<u32>,
    pub(crate) sleep_members: Vec<(u32, u32)>,
    pub(crate) half_spaces: Vec<u32>,
}
