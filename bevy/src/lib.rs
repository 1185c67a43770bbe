//! `lockstep-bevy`: plays one seat of a lockstep match inside a Bevy app.
//!
//! [`LockstepPlugin`] opens the seat's UDP socket, hosts a match or joins
//! one through `lockstep-net`'s runtime, and adds one system to the
//! `PreUpdate` schedule (in [`LockstepSystems`]) that, every frame:
//!
//! 1. hands the seat the local input the app's systems wrote last frame
//!    ([`LocalInput`]; for games whose input is `Orders`, [`LocalHeld`] and
//!    the [`IssueCommand`] messages, see [`LockstepPlugin::with_orders`]);
//! 2. advances the seat without blocking (`lockstep-net`'s
//!    [`SeatRuntime::poll`], the driver any game loop uses): datagrams
//!    received, frames due stepped, datagrams sent;
//! 3. writes every event the runtime handed out as a [`LockstepEvent`]
//!    message (desync reports, rollbacks, heals, membership, the end) and
//!    refreshes [`MatchState`] (the newest game state, its frame and
//!    checksum, how the match ended).
//!
//! So the app's `Update` systems read a fresh state and the frame's events,
//! and the input they write is sent with the next frame the seat samples.
//!
//! Between homes behind NATs, a match is found by its code instead of an
//! address: the host registers its codes at a rendezvous
//! ([`LockstepPlugin::register`]) and a joiner looks its code up
//! ([`LockstepPlugin::join_code`]); the socket's reach layer then carries
//! the match on the path punching opens, or through the relay, and says
//! how in [`ReachMessage`]s.
//!
//! What it owns: the Bevy side only. The match itself — setup, sessions,
//! checksums, healing, the replay log, the end — is the endpoint's
//! (`lockstep-lobby`), moved over the socket by `lockstep-net`'s
//! [`SeatRuntime`], which the app reaches as a non-send resource
//! (`NonSendMut<SeatRuntime<G, W>>`: its endpoint, its log, `leave`).
//!
//! Invariants: nothing of the game's state is kept in ECS components (the
//! state is one `G` value, stepped only by the seat's peer; [`MatchState`]
//! is a copy the app may read); the plugin never blocks a frame; every
//! event reaches the app once, in order; the deterministic crates know
//! nothing of Bevy.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Mutex;

use bevy_app::{App, Plugin, PreUpdate};
use bevy_ecs::prelude::*;
use lockstep_fx::Checksum;
use lockstep_lobby::MatchCode;
use lockstep_lobby::{JoinSetup, Joining};
use lockstep_net::conditioner::LinkShape;
use lockstep_net::entropy::{self, NoEntropy};
use lockstep_net::reach;
use lockstep_net::{
    Invite, Invites, MatchEnd, MatchEvent, MatchSettings, Runtime, STATUS_EVERY, SeatEndpoint,
    SeatPlan, SeatRuntime, SeatTiming, Socket, Want,
};
use lockstep_protocol::seal::Identity;
use lockstep_protocol::{Commanded, SeatId};
use lockstep_rendezvous::{ReachEvent, ReachTiming};
use lockstep_sim::{Game, Match};

/// The guide's Bevy chapter (`docs/guide/bevy.md`): its examples compile
/// and run against this crate here, since the engine's workspace, which
/// builds the rest of the guide, cannot build Bevy.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/bevy.md")]
struct GuideChapter;

/// The input the local player holds now: write it from the app's systems
/// (insert the resource to take the seat from its bot). The plugin hands
/// it to the seat every frame; the seat samples it once per lockstep frame.
/// For a game whose input is `Orders`, use [`LocalHeld`] and
/// [`IssueCommand`] instead (setting the whole input every frame would
/// drop the commands issued since the last sample).
#[derive(Resource, Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalInput<I>(pub I);

/// The held part of an `Orders` input (what is held down, sampled every
/// frame), with [`LockstepPlugin::with_orders`].
#[derive(Resource, Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalHeld<H>(pub H);

/// A one-shot command for the next frame the seat samples, with
/// [`LockstepPlugin::with_orders`]. A command that no longer fits that
/// frame goes with the next one; commands keep their order. At most
/// [`MAX_WAITING_COMMANDS`] wait: while the match stalls (a silent peer),
/// more are refused and counted in [`MatchState::commands_refused`], so
/// memory stays bounded and no command is lost unseen.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct IssueCommand<C>(pub C);

/// The most commands waiting for a frame to take them: 128 full frames.
pub const MAX_WAITING_COMMANDS: usize = 1024;

/// Every event of the seat, as the runtime hands it out: the setup's,
/// each frame stepped and rolled back, desyncs with their whole report,
/// heals, seats dropped and returning, status lines, and the end (last).
/// `event.0.is_routine()` tells the per-frame ones apart.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct LockstepEvent(pub MatchEvent);

/// What the seat's reach layer reported, for a match found by its code
/// ([`LockstepPlugin::register`], [`LockstepPlugin::join_code`]): the
/// rendezvous's answer or refusal, the members, how each is reached
/// (direct, or through the relay) as that changes.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct ReachMessage(pub ReachEvent);

/// The newest state of the match as this seat holds it, refreshed every
/// frame the seat stepped (in rollback mode: the predicted state, which a
/// rollback may replace).
#[derive(Resource, Debug)]
pub struct MatchState<G> {
    /// The game before [`MatchState::frame`] (`None` before the match
    /// starts). A copy (through the game's canonical encoding): changing
    /// it changes nothing in the match.
    pub game: Option<G>,
    /// The next frame to step: how many frames were stepped.
    pub frame: u32,
    /// The checksum of the state after frame `frame - 1`, when the seat
    /// still holds it.
    pub checksum: Option<Checksum>,
    /// This process's seat, once known.
    pub seat: Option<SeatId>,
    /// How the match ended for this process, once it did.
    pub end: Option<MatchEnd>,
    /// Desyncs this seat saw (each one a [`LockstepEvent`] with its report).
    pub desyncs: u32,
    /// [`IssueCommand`]s refused because [`MAX_WAITING_COMMANDS`] were
    /// already waiting (never applied by any seat).
    pub commands_refused: u64,
    /// Whether the runtime still runs; it stops shortly after the end,
    /// once the last datagrams left.
    pub running: bool,
}

impl<G> Default for MatchState<G> {
    fn default() -> MatchState<G> {
        MatchState {
            game: None,
            frame: 0,
            checksum: None,
            seat: None,
            end: None,
            desyncs: 0,
            commands_refused: 0,
            running: true,
        }
    }
}

/// The plugin's systems, in `PreUpdate`: order the app's own systems
/// against this set if they run there too.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LockstepSystems;

/// Why a seat could not start.
#[derive(Debug)]
pub enum StartError {
    /// The socket could not be opened.
    Io(std::io::Error),
    /// No random source for the keys and the token.
    Entropy(NoEntropy),
    /// A match with open seats was to be filed at a rendezvous: only a
    /// code finds a match there.
    NoCode,
}

impl core::fmt::Display for StartError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StartError::Io(e) => write!(f, "cannot open the seat's socket: {e}"),
            StartError::Entropy(e) => write!(f, "{e}"),
            StartError::NoCode => write!(
                f,
                "open seats cannot be found at a rendezvous: host with codes (lockstep_net::entropy::invites)"
            ),
        }
    }
}

impl std::error::Error for StartError {}

impl From<std::io::Error> for StartError {
    fn from(e: std::io::Error) -> StartError {
        StartError::Io(e)
    }
}

impl From<NoEntropy> for StartError {
    fn from(e: NoEntropy) -> StartError {
        StartError::Entropy(e)
    }
}

enum Role<G: Game> {
    Host(Box<HostParts<G>>),
    Join {
        host: SocketAddr,
        invite: Invite,
        identity: Identity,
        random: [u8; 32],
    },
}

/// What a host needs to seat the joiners.
struct HostParts<G: Game> {
    config: G::Config,
    setup: Match,
    settings: MatchSettings,
    invites: Invites,
    identity: Identity,
    secret: [u8; 32],
}

/// What the constructor prepared and `build` consumes.
struct Parts<G: Game> {
    socket: Socket,
    token: u32,
    role: Role<G>,
}

/// Edits the plan a seat plays with (its bot, its replay log).
type PlanEdit<G, W> = Box<dyn Fn(SeatPlan<G, W>) -> SeatPlan<G, W> + Send + Sync>;

/// Plays one seat of a match of `G` in the app; `W` is where its replay
/// log goes (see [`LockstepPlugin::plan`]). Made with
/// [`LockstepPlugin::host`] or [`LockstepPlugin::join`], which open the
/// socket at once (so the host's address is known before any app runs).
pub struct LockstepPlugin<G: Game, W: Write + 'static = Vec<u8>> {
    parts: Mutex<Option<Parts<G>>>,
    plan: PlanEdit<G, W>,
    timing: SeatTiming,
    local_addr: SocketAddr,
    orders: Option<fn(&mut App)>,
}

impl<G, W> LockstepPlugin<G, W>
where
    G: Game + Send + Sync + 'static,
    G::Config: Send,
    G::Input: Send + Sync,
    W: Write + 'static,
{
    /// Hosts a match of `G` with `config` on `setup`, played as `settings`
    /// say, at seat 0, on a UDP socket bound to `bind`, seating and
    /// admitting whom `invites` say (draw codes with
    /// `lockstep_net::entropy::invites` and show the seat code to whom the
    /// player invites; `Invites::OPEN` for a LAN lobby).
    pub fn host(
        bind: SocketAddr,
        config: G::Config,
        setup: Match,
        settings: MatchSettings,
        invites: Invites,
    ) -> Result<Self, StartError> {
        let role = Role::Host(Box::new(HostParts {
            config,
            setup,
            settings,
            invites,
            identity: entropy::identity()?,
            secret: entropy::secret()?,
        }));
        Self::open(bind, role)
    }

    /// Joins the match hosted at `host` with the seat code it gave
    /// (`invite`; `Invite::Open` for a LAN lobby) and plays the seat it
    /// gives, on a UDP socket bound to `bind`.
    pub fn join(bind: SocketAddr, host: SocketAddr, invite: Invite) -> Result<Self, StartError> {
        let role = Role::Join {
            host,
            invite,
            identity: entropy::identity()?,
            random: entropy::secret()?,
        };
        Self::open(bind, role)
    }

    /// Joins the match filed under `code` at the rendezvous `rendezvous`,
    /// on a UDP socket bound to `bind`, and plays the seat the host gives:
    /// the lookup runs in the seat's polls, like everything else (how it
    /// went comes as [`ReachMessage`]s).
    pub fn join_code(
        bind: SocketAddr,
        rendezvous: SocketAddr,
        code: &MatchCode,
    ) -> Result<Self, StartError> {
        let mut plugin = Self::join(bind, bind, Invite::Code(*code))?;
        if let Some(Parts {
            socket,
            role: Role::Join { host, .. },
            ..
        }) = plugin.parts.get_mut().ok().and_then(|p| p.as_mut())
        {
            *host = reach::start_join(socket, rendezvous, code, ReachTiming::default());
        }
        Ok(plugin)
    }

    /// Registers the host's codes (its seat code, then its spectator code
    /// if spectating is by invitation) at the rendezvous `rendezvous`, so
    /// that joiners find this host by them; the registration runs (and is
    /// refreshed) in the seat's polls, and how it went comes as
    /// [`ReachMessage`]s. A host whose seats are open has no code to file
    /// ([`StartError::NoCode`]).
    pub fn register(mut self, rendezvous: SocketAddr) -> Result<Self, StartError> {
        if let Some(Parts {
            socket,
            role: Role::Host(host),
            ..
        }) = self.parts.get_mut().ok().and_then(|p| p.as_mut())
        {
            let Invite::Code(seat) = host.invites.seat else {
                return Err(StartError::NoCode);
            };
            let mut codes = vec![seat];
            codes.extend(host.invites.spectate.code().copied());
            reach::start_host(socket, rendezvous, &codes, ReachTiming::default())?;
        }
        Ok(self)
    }

    fn open(bind: SocketAddr, role: Role<G>) -> Result<Self, StartError> {
        let socket = Socket::open(bind, LinkShape::PERFECT, 1)?;
        let local_addr = socket.local_addr()?;
        let parts = Parts {
            socket,
            token: entropy::token()?,
            role,
        };
        Ok(LockstepPlugin {
            parts: Mutex::new(Some(parts)),
            plan: Box::new(|plan| plan),
            timing: SeatTiming::default(),
            local_addr,
            orders: None,
        })
    }

    /// The address the seat's socket is bound to (a host's: where joiners
    /// find it).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Sets what the seat plays with: `edit` gets a plan with the seat's
    /// token and gives it back with a bot (which plays until the app
    /// inserts [`LocalInput`]) and a replay log, say.
    pub fn plan(
        mut self,
        edit: impl Fn(SeatPlan<G, W>) -> SeatPlan<G, W> + Send + Sync + 'static,
    ) -> Self {
        self.plan = Box::new(edit);
        self
    }

    /// Sets how long the seat waits for things (the start, the linger
    /// after the last frame, a stall).
    pub fn timing(mut self, timing: SeatTiming) -> Self {
        self.timing = timing;
        self
    }
}

impl<G, W> LockstepPlugin<G, W>
where
    G: Game + Send + Sync + 'static,
    G::Config: Send,
    G::Input: Commanded + Send + Sync,
    <G::Input as Commanded>::Held: Send + Sync,
    <G::Input as Commanded>::Command: Clone + Send + Sync,
    W: Write + 'static,
{
    /// For a game whose input is `Orders`: takes [`IssueCommand`] messages
    /// and the [`LocalHeld`] resource (instead of [`LocalInput`]).
    pub fn with_orders(mut self) -> Self {
        self.orders = Some(add_orders::<G, W>);
        self
    }
}

impl<G, W> Plugin for LockstepPlugin<G, W>
where
    G: Game + Send + Sync + 'static,
    G::Config: Send,
    G::Input: Send + Sync,
    W: Write + 'static,
{
    fn build(&self, app: &mut App) {
        let parts = self.parts.lock().ok().and_then(|mut p| p.take());
        let Some(parts) = parts else {
            // `build` runs once per plugin: Bevy refuses a second
            // instance of a unique plugin.
            return;
        };
        let plan = (self.plan)(SeatPlan::new(parts.token));
        let now = parts.socket.now();
        let seat = match parts.role {
            Role::Host(host) => {
                let HostParts {
                    config,
                    setup,
                    settings,
                    invites,
                    identity,
                    secret,
                } = *host;
                let endpoint = SeatEndpoint::host(
                    now,
                    config,
                    setup,
                    settings,
                    invites,
                    identity,
                    secret,
                    plan,
                    self.timing,
                );
                SeatRuntime::seat(Runtime::new(parts.socket, endpoint, STATUS_EVERY))
            }
            Role::Join {
                host,
                invite,
                identity,
                random,
            } => {
                let setup = JoinSetup::new(
                    now,
                    host,
                    Want::Seat,
                    invite,
                    identity,
                    random,
                    self.timing.join,
                );
                let rt = Runtime::new(parts.socket, Joining::new(setup), STATUS_EVERY);
                SeatRuntime::joining(rt, plan, self.timing)
            }
        };
        app.insert_non_send(seat)
            .insert_resource(MatchState::<G>::default())
            .add_message::<LockstepEvent>()
            .add_message::<ReachMessage>()
            .add_systems(PreUpdate, drive::<G, W>.in_set(LockstepSystems));
        if let Some(add) = self.orders {
            add(app);
        }
    }
}

/// The plugin's system: the local input in, the runtime advanced, the
/// events and the newest state out.
fn drive<G, W>(
    mut seat: NonSendMut<SeatRuntime<G, W>>,
    input: Option<Res<LocalInput<G::Input>>>,
    mut state: ResMut<MatchState<G>>,
    mut events: MessageWriter<LockstepEvent>,
    mut reached: MessageWriter<ReachMessage>,
) where
    G: Game + Send + Sync + 'static,
    G::Input: Send + Sync,
    W: Write + 'static,
{
    if let (Some(input), Some(s)) = (input, seat.endpoint_mut()) {
        s.set_input(input.0.clone());
    }
    for e in seat.poll() {
        match &e {
            MatchEvent::Ended(end) => state.end = Some(end.clone()),
            MatchEvent::Peer(lockstep_net::PeerEvent::Desync { .. }) => state.desyncs += 1,
            _ => {}
        }
        events.write(LockstepEvent(e));
    }
    if let Some(reach) = seat.socket_mut().and_then(|s| s.reach_mut()) {
        while let Some(e) = reach.poll_event() {
            reached.write(ReachMessage(e));
        }
    }
    let running = !seat.is_finished();
    if state.running != running {
        state.running = running;
    }
    let Some(peer) = seat.endpoint().and_then(|s| s.peer()) else {
        return;
    };
    let newest = (peer.frame(), peer.newest_checksum().map(|(_, c)| c));
    if state.game.is_some() && (state.frame, state.checksum) == newest {
        return;
    }
    state.seat = Some(peer.session().config().local);
    state.game = G::decode(&peer.game().save()).ok();
    (state.frame, state.checksum) = newest;
}

fn add_orders<G, W>(app: &mut App)
where
    G: Game + Send + Sync + 'static,
    G::Input: Commanded + Send + Sync,
    <G::Input as Commanded>::Held: Send + Sync,
    <G::Input as Commanded>::Command: Clone + Send + Sync,
    W: Write + 'static,
{
    app.add_message::<IssueCommand<<G::Input as Commanded>::Command>>()
        .add_systems(
            PreUpdate,
            issue::<G, W>.in_set(LockstepSystems).before(drive::<G, W>),
        );
}

/// Hands the seat the held part and the commands issued since the last
/// frame; keeps what the seat cannot take yet (no seat before a joiner's
/// roster, a full frame) for the next frame, in order.
fn issue<G, W>(
    mut seat: NonSendMut<SeatRuntime<G, W>>,
    held: Option<Res<LocalHeld<<G::Input as Commanded>::Held>>>,
    mut commands: MessageReader<IssueCommand<<G::Input as Commanded>::Command>>,
    mut waiting: Local<std::collections::VecDeque<<G::Input as Commanded>::Command>>,
    mut state: ResMut<MatchState<G>>,
) where
    G: Game + Send + Sync + 'static,
    G::Input: Commanded + Send + Sync,
    <G::Input as Commanded>::Held: Send + Sync,
    <G::Input as Commanded>::Command: Clone + Send + Sync,
    W: Write + 'static,
{
    for c in commands.read() {
        if waiting.len() < MAX_WAITING_COMMANDS {
            waiting.push_back(c.0.clone());
        } else {
            state.commands_refused += 1;
        }
    }
    let Some(s) = seat.endpoint_mut() else {
        return;
    };
    if let Some(held) = held {
        s.set_held(held.0.clone());
    }
    while let Some(c) = waiting.pop_front() {
        if let Err(c) = s.issue(c) {
            waiting.push_front(c);
            break;
        }
    }
}
