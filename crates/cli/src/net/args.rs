//! The arguments of the networked commands (`host`, `join`, `spectate`,
//! `arbiter`, and `play` through them): the link conditioner, the mode,
//! where to bind, and each command's own, as clap parses them.
//!
//! Invariant: every value from the command line is checked here or by
//! clap, with a message naming the argument; nothing below panics on one.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;
use lockstep_net::conditioner::LinkShape;
use lockstep_net::{InputDelay, Invite, MatchCode, Mode, Rollback};
use lockstep_protocol::MAX_TURN_FRAMES;

use crate::error::CliError;
use crate::report::OutputArgs;
use crate::threads::FrameThreads;

/// The link conditioner's settings, shared by every networked command.
#[derive(Debug, Clone, Args)]
pub struct LinkArgs {
    /// One-way delay added to every datagram sent, in ms.
    #[arg(long, default_value_t = 0)]
    pub delay: u64,
    /// Extra delay, uniform in 0..=JITTER ms.
    #[arg(long, default_value_t = 0)]
    pub jitter: u64,
    /// Datagrams lost on send, in percent (e.g. 2 or 0.5).
    #[arg(long, default_value = "0", value_parser = parse_percent)]
    pub loss: u32,
    /// Mean length of a loss burst, in datagrams (1: independent).
    #[arg(long, default_value_t = 1)]
    pub burst: u32,
    /// Datagrams sent twice, in percent.
    #[arg(long, default_value = "0", value_parser = parse_percent)]
    pub duplicate: u32,
    /// Datagrams held back so later ones overtake them, in percent.
    #[arg(long, default_value = "0", value_parser = parse_percent)]
    pub reorder: u32,
    /// Seed of the conditioner's choices.
    #[arg(long, default_value_t = 1)]
    pub link_seed: u64,
}

impl LinkArgs {
    pub(super) fn shape(&self) -> LinkShape {
        LinkShape {
            delay_micros: self.delay * 1000,
            jitter_micros: self.jitter * 1000,
            loss_ppm: self.loss,
            burst: self.burst.max(1),
            duplicate_ppm: self.duplicate,
            reorder_ppm: self.reorder,
        }
    }
}

/// [`parse_percent`] for a value given outside clap.
pub fn parse_percent_arg(text: &str) -> Result<u32, CliError> {
    parse_percent(text).map_err(|e| CliError::new(format!("--loss: {e}")))
}

/// A percentage with up to four decimals, as parts per million.
fn parse_percent(text: &str) -> Result<u32, String> {
    let bad = || format!("`{text}` is not a percentage from 0 to 100");
    let (whole, frac) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    if frac.len() > 4 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let whole: u32 = whole.parse().map_err(|_| bad())?;
    let frac_ppm: u32 = format!("{frac:0<4}").parse().map_err(|_| bad())?;
    let ppm = whole
        .checked_mul(10_000)
        .and_then(|w| w.checked_add(frac_ppm))
        .ok_or_else(bad)?;
    if ppm > 1_000_000 {
        return Err(bad());
    }
    Ok(ppm)
}

/// How a hosted match steps its frames: lockstep (the default) or rollback.
#[derive(Debug, Clone, Args)]
pub struct ModeArgs {
    /// Play in rollback mode: step each frame at once on predicted inputs
    /// for the players whose inputs have not arrived, and roll back when a
    /// prediction was wrong (default: lockstep, which waits for every
    /// input). Every seat plays the host's mode.
    #[arg(long)]
    pub rollback: bool,
    /// Rollback: frames from sampling an input to stepping its frame, or
    /// `auto` to agree on one from the measured latency (0 to 8 frames).
    #[arg(long, default_value = "auto", value_parser = parse_input_delay)]
    pub input_delay: InputDelay,
    /// Rollback: frames that may be stepped on predictions before waiting
    /// (1 to 64).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub prediction: u32,
    /// Frames in a communication turn (1 to 30): the inputs of a turn's
    /// frames travel in one packet per seat (default 1: a packet every
    /// frame). In lockstep a turn is sampled at its first tick and sent at
    /// once (a command waits half a turn on average); in rollback it is
    /// sent at its last frame. Fewer packets, a little more latency. With
    /// turns, the clock-sync ping also goes once a second and each packet
    /// carries one short checksum. Every seat plays the host's.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_TURN_FRAMES)))]
    pub turn: Option<u32>,
}

impl ModeArgs {
    /// The session mode these ask for.
    pub fn mode(&self) -> Mode {
        if !self.rollback {
            return Mode::Lockstep;
        }
        Mode::Rollback(Rollback {
            max_prediction: self.prediction,
            input_delay: self.input_delay,
            sync_test_frames: 0,
        })
    }

    /// The arguments that ask for the same mode (to start a process with).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(turn) = self.turn {
            args.extend(["--turn".into(), turn.to_string()]);
        }
        if !self.rollback {
            return args;
        }
        let delay = match self.input_delay {
            InputDelay::Fixed(d) => d.to_string(),
            InputDelay::Adaptive { .. } => "auto".into(),
        };
        args.extend([
            "--rollback".into(),
            "--input-delay".into(),
            delay,
            "--prediction".into(),
            self.prediction.to_string(),
        ]);
        args
    }
}

/// `auto` or a number of frames from 0 to 255.
fn parse_input_delay(text: &str) -> Result<InputDelay, String> {
    if text.trim() == "auto" {
        return Ok(Rollback::DEFAULT.input_delay);
    }
    match text.trim().parse::<u8>() {
        Ok(d) => Ok(InputDelay::Fixed(u32::from(d))),
        Err(_) => Err(format!(
            "`{text}` is neither `auto` nor a number of frames from 0 to 255"
        )),
    }
}

/// Where a joining process listens.
#[derive(Debug, Clone, Args)]
pub struct BindArgs {
    /// The address to listen on (default: every address of the host's
    /// family).
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// The UDP port to listen on (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
}

/// Arguments of `lockstep host`.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// The game (default: the only one registered).
    pub game: Option<String>,
    /// Seats, each played by a bot (default: 2 for cubes, 4 for rts).
    #[arg(long, alias = "players")]
    pub seats: Option<u8>,
    /// The UDP port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value_t = 7777)]
    pub port: u16,
    /// The address to listen on (default: every IPv6 and IPv4 address).
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// The game's settings file (TOML; default: the embedded settings).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// How the match is played (TOML: any fields of the match settings —
    /// the session's delays, timeouts and mode, the log's layout, the
    /// spectators' relay — every seat plays the host's; the flags below
    /// override it).
    #[arg(long, value_name = "FILE")]
    pub match_settings: Option<PathBuf>,
    /// The match seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Frames to play.
    #[arg(long, default_value_t = 1200)]
    pub frames: u32,
    /// Frames per second.
    #[arg(long, default_value_t = 60)]
    pub tick_rate: u16,
    /// Where to write this seat's replay log.
    #[arg(long, default_value = "target/net/seat-0.log")]
    pub log: PathBuf,
    /// Send every packet in clear, unauthenticated (for tests on a trusted
    /// network; by default every session packet is sealed with keys agreed
    /// at setup).
    #[arg(long)]
    pub insecure: bool,
    /// Take an arbiter: one `lockstep arbiter` process that joins through
    /// this host settles the disputes two seats cannot (its checksum says
    /// which seat is right); every seat waits for its word in a dispute.
    #[arg(long)]
    pub arbiter: bool,
    /// An open lobby, for a LAN party: anyone who reaches the port may sit
    /// and watch, no code asked (by default only those given the seat code
    /// sit, and only those given the spectator code watch). Not with
    /// --rendezvous: a match found by its code is entered with it.
    #[arg(long, conflicts_with = "rendezvous")]
    pub open: bool,
    /// Anyone who reaches the port may watch (the seats still take their
    /// code). Not with --rendezvous: there the spectators find the match
    /// by the spectator code, so publish that code instead.
    #[arg(long, conflicts_with = "rendezvous")]
    pub public_spectating: bool,
    #[command(flatten)]
    pub reach: ReachArgs,
    #[command(flatten)]
    pub threads: FrameThreads,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Finding a match through a rendezvous instead of by address.
#[derive(Debug, Clone, Args)]
pub struct ReachArgs {
    /// Find each other through the rendezvous at this address (`lockstep
    /// rendezvous`, anywhere every player reaches): the host registers a
    /// match code and prints it, a joiner gives the code instead of an
    /// address; paths between homes behind NATs are punched, or relayed.
    #[arg(long, value_name = "ADDR")]
    pub rendezvous: Option<String>,
    /// With --rendezvous: send everything through the relay (no hole
    /// punching).
    #[arg(long, requires = "rendezvous")]
    pub relayed: bool,
}

/// Arguments of `lockstep join`.
#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The host's address, e.g. 127.0.0.1:7777 (with --rendezvous: the
    /// match code, e.g. 4K7Q-M2XHP9).
    pub host: String,
    /// The seat code the host printed, e.g. 4K7Q-M2XHP9 (case, hyphens and
    /// spaces do not matter): this process proves it, and the host must
    /// prove it back. Not needed by an open lobby, nor by `--rejoin`, nor
    /// with --rendezvous (the code given there is the one proven).
    #[arg(long, value_name = "CODE", conflicts_with_all = ["rejoin", "rendezvous"])]
    pub code: Option<MatchCode>,
    /// Take back a dropped seat of the running match (this process restarts
    /// a seat whose process died): proves it holds the seat's key from
    /// `--key`, waiting (up to 30 s) for the host to drop the seat.
    #[arg(long, requires = "key")]
    pub rejoin: bool,
    /// The seat's key file: written when the seat is taken (default: the
    /// log's path with the extension `key`), read by `--rejoin`.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Where to write this seat's replay log (default:
    /// target/net/seat-N.log, N the seat given).
    #[arg(long)]
    pub log: Option<PathBuf>,
    #[command(flatten)]
    pub reach: ReachArgs,
    #[command(flatten)]
    pub threads: FrameThreads,
    #[command(flatten)]
    pub bind: BindArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where a process without a seat connects, and how it prints: what `lockstep
/// spectate` and `lockstep arbiter` share.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// The host's address, e.g. 127.0.0.1:7777 (with --rendezvous: the
    /// match's spectator code).
    pub host: String,
    #[command(flatten)]
    pub reach: ReachArgs,
    #[command(flatten)]
    pub bind: BindArgs,
    #[command(flatten)]
    pub link: LinkArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `lockstep spectate`.
#[derive(Debug, Args)]
pub struct SpectateArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// The spectator code the host printed (not needed when spectating is
    /// public, nor by the arbiter, nor with --rendezvous: the code given
    /// there is the one proven).
    #[arg(long, value_name = "CODE", conflicts_with_all = ["arbiter", "rendezvous"])]
    pub code: Option<MatchCode>,
    /// Watch compressed snapshots (60 a second under 256 kbit/s, coded
    /// against acked baselines, shown interpolated) instead of simulating
    /// the match.
    #[arg(long, conflicts_with_all = ["arbiter", "threads"])]
    pub snapshots: bool,
    /// Watch as the match's arbiter (a match hosted with `--arbiter`):
    /// when two seats dispute a frame that no majority and no self-check
    /// settles, this process's checksum of it says which seat is right.
    /// `lockstep arbiter ADDR` is the same.
    #[arg(long)]
    pub arbiter: bool,
    #[command(flatten)]
    pub threads: FrameThreads,
}

/// The invitation a code given on the command line stands for.
pub fn invite_of(code: Option<MatchCode>) -> Invite {
    code.map_or(Invite::Open, Invite::Code)
}

impl SpectateArgs {
    /// `lockstep arbiter`: `lockstep spectate --arbiter`.
    pub fn arbiter(connect: ConnectArgs) -> SpectateArgs {
        SpectateArgs {
            connect,
            code: None,
            snapshots: false,
            arbiter: true,
            threads: FrameThreads::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_percent;

    #[test]
    fn percentages_parse_without_floats() {
        assert_eq!(parse_percent("2"), Ok(20_000));
        assert_eq!(parse_percent("0.5"), Ok(5_000));
        assert_eq!(parse_percent("100"), Ok(1_000_000));
        assert_eq!(parse_percent("12.3456"), Ok(123_456));
        for bad in ["", "-1", "101", "1.23456", "x", "1e3"] {
            assert!(parse_percent(bad).is_err(), "{bad}");
        }
    }
}
