//! [`PeerStats`]: what a peer did, counted.
//!
//! Invariant: counters only grow over a peer's life.

/// What a peer did, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// Frames stepped for the first time.
    pub frames_stepped: u64,
    /// Frames stepped again after a state load.
    pub frames_resimulated: u64,
    /// Frames first stepped with a predicted input (rollback mode).
    pub frames_predicted: u64,
    /// Rollbacks carried out (a prediction was wrong, or the sync test).
    pub rollbacks: u64,
    /// Frames stepped again after a rollback.
    pub frames_rolled_back: u64,
    /// Frames that, stepped again from the same state with the same inputs,
    /// gave another checksum: the game is not deterministic (always 0 for
    /// a sound game).
    pub nondeterministic_frames: u64,
    /// States served to drifted peers.
    pub states_served: u64,
    /// Authority states loaded.
    pub states_loaded: u64,
    /// Bytes of the states loaded.
    pub state_bytes_loaded: u64,
    /// Frames written to the replay log.
    pub frames_logged: u64,
    /// Calls the session refused (a bug in the peer if ever non-zero).
    pub refused_calls: u64,
    /// The most bytes of game states the unsettled history held at once
    /// (the peak live state bytes; see [`Peer::state_bytes`](crate::Peer::state_bytes)).
    pub peak_state_bytes: u64,
}
