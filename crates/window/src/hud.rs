//! [`Hud`]: the numbers the window prints over the match — the frame, the
//! seat and its colour, the link (round trip, playout delay), how far the
//! peers' checksums agree, the phase of the match — and the text lines they
//! make ([`Hud::lines`]).
//!
//! Invariant: a `Hud` is plain data filled in by whoever plays the match
//! (the local loop or the network loop); turning it into text is pure, so
//! what the overlay says is tested without a window. The text uses only
//! characters of `lockstep-render`'s built-in font.

use lockstep_render::player_colour_name;

/// Where the match is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Phase {
    /// Not started: waiting for something (the seats to join), said in
    /// capitals.
    Waiting(String),
    /// Being played.
    #[default]
    Playing,
    /// Played to its end (or left): the state shown is the last one.
    Over,
}

/// The network side of a seat, for a match played over UDP.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStatus {
    /// The largest median round trip to another seat, in ms, once measured.
    pub rtt_ms: Option<u64>,
    /// The playout delay, in frames.
    pub delay_frames: u32,
    /// The playout delay, in ms.
    pub delay_ms: u64,
    /// The newest frame whose checksum every seat reported and agreed on.
    pub agreed: Option<u32>,
    /// Desyncs healed so far (states loaded from the authority).
    pub healed: u64,
}

/// What the overlay shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hud {
    /// The game's id (`cubes`).
    pub game: String,
    /// This window's seat.
    pub seat: u8,
    /// Seats in the match.
    pub seats: u8,
    /// The state shown: before this frame is stepped.
    pub frame: u32,
    /// The short checksum of the newest frame stepped (`ShortChecksum`'s
    /// number: the checksum's first 8 bytes, little-endian).
    pub checksum: Option<u64>,
    /// `None`: a local match against bots, no network.
    pub link: Option<LinkStatus>,
    /// Whether a bot plays this seat instead of the keyboard.
    pub bot: bool,
    /// Where the match is.
    pub phase: Phase,
    /// The latest thing worth saying (a seat joined or left, a desync).
    pub note: Option<String>,
}

impl Hud {
    /// The overlay's lines, top to bottom.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{}  SEAT {} OF {} ({})  FRAME {}",
            self.game.to_ascii_uppercase(),
            self.seat,
            self.seats,
            player_colour_name(self.seat),
            self.frame
        )];
        // The first 8 hex digits of the checksum, as `lockstep render`
        // and `lockstep replay` print it.
        let checksum = self.checksum.map_or("-".to_string(), |c| {
            c.to_le_bytes()[..4]
                .iter()
                .map(|b| format!("{b:02X}"))
                .collect()
        });
        match &self.link {
            None => {
                let bots = self.seats.saturating_sub(1);
                let against = match bots {
                    0 => "ALONE".to_string(),
                    1 => "AGAINST 1 BOT".to_string(),
                    n => format!("AGAINST {n} BOTS"),
                };
                lines.push(format!("LOCAL MATCH {against}  CHECKSUM {checksum}"));
            }
            Some(link) => {
                let rtt = link
                    .rtt_ms
                    .map_or("RTT -".to_string(), |r| format!("RTT {r} MS"));
                lines.push(format!(
                    "{rtt}  DELAY {} FR ({} MS)  CHECKSUM {checksum}",
                    link.delay_frames, link.delay_ms
                ));
                let agreed = match link.agreed {
                    Some(f) => format!(
                        "CHECKSUMS AGREE TO FRAME {f} ({} BEHIND)",
                        self.frame.saturating_sub(f.saturating_add(1))
                    ),
                    None => "NO CHECKSUM COMPARED YET".to_string(),
                };
                lines.push(match link.healed {
                    0 => agreed,
                    1 => format!("{agreed}  1 DESYNC HEALED"),
                    n => format!("{agreed}  {n} DESYNCS HEALED"),
                });
            }
        }
        lines.push(match &self.phase {
            Phase::Waiting(what) => what.clone(),
            Phase::Over => "MATCH OVER  ESC CLOSES".to_string(),
            Phase::Playing if self.bot => "A BOT PLAYS THIS SEAT  C CAMERA  ESC LEAVES".to_string(),
            Phase::Playing => {
                "ARROWS PUSH  SPACE BLOWS  Z STICKS  C CAMERA  ESC LEAVES".to_string()
            }
        });
        if let Some(note) = &self.note {
            lines.push(note.to_ascii_uppercase());
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_render::font;

    fn hud(link: Option<LinkStatus>) -> Hud {
        Hud {
            game: "cubes".into(),
            seat: 1,
            seats: 2,
            frame: 1234,
            checksum: Some(0x13f2_d060_0b86_124d),
            link,
            ..Hud::default()
        }
    }

    #[test]
    fn a_local_match_names_the_seat_the_bots_and_the_keys() {
        assert_eq!(
            hud(None).lines(),
            [
                "CUBES  SEAT 1 OF 2 (ORANGE)  FRAME 1234",
                "LOCAL MATCH AGAINST 1 BOT  CHECKSUM 4D12860B",
                "ARROWS PUSH  SPACE BLOWS  Z STICKS  C CAMERA  ESC LEAVES",
            ]
        );
    }

    #[test]
    fn a_networked_match_shows_the_link_and_the_agreement() {
        let link = LinkStatus {
            rtt_ms: Some(152),
            delay_frames: 9,
            delay_ms: 150,
            agreed: Some(1229),
            healed: 1,
        };
        let mut h = hud(Some(link));
        h.phase = Phase::Over;
        h.note = Some("seat 0 left".into());
        assert_eq!(
            h.lines(),
            [
                "CUBES  SEAT 1 OF 2 (ORANGE)  FRAME 1234",
                "RTT 152 MS  DELAY 9 FR (150 MS)  CHECKSUM 4D12860B",
                "CHECKSUMS AGREE TO FRAME 1229 (4 BEHIND)  1 DESYNC HEALED",
                "MATCH OVER  ESC CLOSES",
                "SEAT 0 LEFT",
            ]
        );
        let mut waiting = hud(Some(LinkStatus::default()));
        waiting.phase = Phase::Waiting("WAITING FOR 1 MORE SEAT".into());
        assert_eq!(
            waiting.lines()[1],
            "RTT -  DELAY 0 FR (0 MS)  CHECKSUM 4D12860B"
        );
        assert_eq!(waiting.lines()[2], "NO CHECKSUM COMPARED YET");
        assert_eq!(waiting.lines()[3], "WAITING FOR 1 MORE SEAT");
    }

    #[test]
    fn every_character_is_in_the_font() {
        let unknown = font::glyph('\u{1}');
        let mut h = hud(Some(LinkStatus::default()));
        h.bot = true;
        for line in h.lines().iter().chain(hud(None).lines().iter()) {
            for c in line.chars() {
                assert!(c == '?' || font::glyph(c) != unknown, "{c:?} in {line}");
            }
        }
    }
}
