//! A seat's [`Peer`] as the window sees it: the overlay's link numbers
//! ([`link_status`]) and the whole picture of its newest frame
//! ([`picture_of`]).
//!
//! Invariant: only reads the peer (its game, session and counters); the
//! one thing a window ever gives a peer is the local input, through
//! `Peer::set_input`, which the caller does.

use std::io::Write;

use lockstep_peer::Peer;
use lockstep_protocol::SeatId;
use lockstep_render::Depict;
use lockstep_sim::Game;

use crate::hud::{Hud, LinkStatus, Phase};
use crate::screen::Picture;

/// The link numbers of `peer`'s seat: the largest median round trip to
/// another seat, the playout delay (frames and ms), the newest frame every
/// seat's checksum agreed on, and the states loaded to heal a desync.
pub fn link_status<G: Game, W: Write>(peer: &Peer<G, W>) -> LinkStatus {
    let session = peer.session();
    let config = session.config();
    let delay_frames = session.delay_frames();
    LinkStatus {
        rtt_ms: (0..config.seats)
            .filter(|p| *p != config.local.0)
            .filter_map(|p| session.rtt_micros(SeatId(p)))
            .max()
            .map(|r| r / 1000),
        delay_frames,
        delay_ms: u64::from(delay_frames).saturating_mul(config.tick_micros) / 1000,
        agreed: session.newest_clean(),
        healed: peer.stats().states_loaded,
    }
}

/// The picture of `peer`'s newest frame, playing (`bot`: a bot holds the
/// seat's controls).
pub fn picture_of<G: Game + Depict, W: Write>(peer: &Peer<G, W>, bot: bool) -> Picture {
    let config = peer.session().config();
    Picture {
        scene: peer.game().scene(),
        follow: peer.game().camera_target(config.local.0),
        hud: Hud {
            game: G::ID.to_string(),
            seat: config.local.0,
            seats: config.seats,
            frame: peer.frame(),
            checksum: peer.newest_checksum().map(|(_, c)| c.short().0),
            link: Some(link_status(peer)),
            bot,
            phase: Phase::Playing,
            note: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_games::Demo;
    use lockstep_games::cubes::Cubes;
    use lockstep_peer::PeerSettings;
    use lockstep_protocol::Instant;
    use lockstep_sim::Match;

    #[test]
    fn two_seats_on_virtual_time_report_their_link_and_agreement() {
        let setup = Match {
            seats: 2,
            seed: 3,
            tick_rate: 60,
        };
        let mut config = Cubes::default_config();
        config.field.grid = 4;
        let mut peers: Vec<Peer<Cubes, std::io::Sink>> = (0..2u8)
            .map(|seat| {
                let settings = PeerSettings::new(&setup, SeatId(seat), 40 + u32::from(seat));
                let mut peer = Peer::new(&config, setup, settings, std::io::sink()).unwrap();
                peer.set_bot(Box::new(Cubes::bot(seat, setup.seed)));
                peer
            })
            .collect();
        // 20 ms each way: datagrams wait in flight until their time comes.
        let mut flight: Vec<(Instant, usize, u8, Vec<u8>)> = Vec::new();
        let mut now = Instant::ZERO;
        while peers.iter().any(|p| p.frame() < 90) {
            for (i, peer) in peers.iter_mut().enumerate() {
                if peer.poll_timeout().is_some_and(|t| t <= now) {
                    peer.handle_timeout(now);
                }
                while peer.poll_event().is_some() {}
                while let Some(t) = peer.poll_transmit(now) {
                    flight.push((now.plus(20_000), t.to.index(), i as u8, t.bytes));
                }
            }
            let (due, later): (Vec<_>, Vec<_>) = flight.drain(..).partition(|d| d.0 <= now);
            flight = later;
            for (_, to, from, bytes) in due {
                peers[to].handle_datagram(now, SeatId(from), &bytes);
            }
            now = now.plus(1_000);
        }
        let picture = picture_of(&peers[1], false);
        let hud = &picture.hud;
        assert_eq!((hud.seat, hud.seats, hud.frame), (1, 2, peers[1].frame()));
        let link = hud.link.clone().unwrap();
        let rtt = link.rtt_ms.expect("measured");
        assert!(
            (40..=80).contains(&rtt),
            "rtt {rtt} ms over a 40 ms round trip"
        );
        assert_eq!(link.delay_ms, u64::from(link.delay_frames) * 16_666 / 1000);
        let agreed = link.agreed.expect("checksums compared");
        assert!(
            agreed < hud.frame && agreed + 30 > hud.frame,
            "{agreed} vs {}",
            hud.frame
        );
        assert_eq!(link.healed, 0);
        assert_eq!(
            hud.checksum,
            peers[1].newest_checksum().map(|(_, c)| c.short().0)
        );
        assert_eq!(
            picture.scene.solids.len(),
            2 + peers[1].game().cube_count() as usize
        );
    }
}
