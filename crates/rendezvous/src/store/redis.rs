//! [`RedisStore`]: the rendezvous's matches in a Redis server, so that
//! several rendezvous processes (behind one address or one DNS name) share
//! one namespace of codes — the scale-out path when one machine is not
//! enough, as matchmaking services keep their tickets in Redis.
//!
//! Keys, under a prefix (`lockstep` by default): `PREFIX:code:ID` (a code's
//! id in hex) holds `MATCH-ID-HEX:EXPIRES`; `PREFIX:match:MATCH-ID-HEX`
//! holds the [`MatchRecord`]'s encoding. Each key is written with a
//! `PX` a second past its record's expiry, so Redis forgets what expired;
//! the expiry inside the value is what counts, so a rendezvous reads a
//! record exactly as the in-memory store would at the same `now`.
//!
//! A change is optimistic, as Redis transactions are: `WATCH` the key,
//! read it, run the change, and `MULTI`/`EXEC` the write, again from the
//! read if another rendezvous wrote the key meanwhile (at most 16 times).
//!
//! Invariants: every call is bounded by the connection's timeouts (a
//! Redis that does not answer fails the request, typed, and the next call
//! connects again); a value that does not decode is
//! [`StoreError::Corrupt`], never a panic.

use std::time::Duration;

use redis::{Commands, Connection, RedisResult};

use super::{MatchRecord, Store, StoreError};
use crate::code::CodeId;
use crate::ids::MatchId;

/// Attempts of one optimistic change before giving up.
const ATTEMPTS: u32 = 16;
/// How long a Redis call may take.
const TIMEOUT: Duration = Duration::from_millis(500);

/// Matches kept in Redis. See the module documentation.
pub struct RedisStore {
    client: redis::Client,
    connection: Option<Connection>,
    prefix: String,
}

impl core::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("connected", &self.connection.is_some())
            .finish()
    }
}

fn server(e: redis::RedisError) -> StoreError {
    StoreError::Server(e.to_string())
}

/// The `PX` of a value that expires at `expires`, seen at `now`
/// (microseconds): a second past it, at least a millisecond.
fn px(now: u64, expires: u64) -> u64 {
    expires.saturating_sub(now) / 1000 + 1000
}

impl RedisStore {
    /// A store at `url` (`redis://HOST[:PORT][/DB]`), its keys under
    /// `prefix`. Connects (and checks the server answers) at once.
    pub fn open(url: &str, prefix: &str) -> Result<RedisStore, StoreError> {
        let client = redis::Client::open(url).map_err(server)?;
        let mut store = RedisStore {
            client,
            connection: None,
            prefix: prefix.to_string(),
        };
        let _: String = redis::cmd("PING")
            .query(store.connection()?)
            .map_err(server)?;
        Ok(store)
    }

    fn connection(&mut self) -> Result<&mut Connection, StoreError> {
        if self.connection.is_none() {
            let c = self
                .client
                .get_connection_with_timeout(TIMEOUT)
                .map_err(server)?;
            c.set_read_timeout(Some(TIMEOUT)).map_err(server)?;
            c.set_write_timeout(Some(TIMEOUT)).map_err(server)?;
            self.connection = Some(c);
        }
        self.connection
            .as_mut()
            .ok_or_else(|| StoreError::Server("no connection".into()))
    }

    /// Runs `f` on the connection; a failed call drops it, so the next
    /// connects again.
    fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let result = f(self.connection()?);
        if matches!(result, Err(StoreError::Server(_))) {
            self.connection = None;
        }
        result
    }

    fn code_key(&self, code: CodeId) -> String {
        format!("{}:code:{:05x}", self.prefix, code.value())
    }

    fn match_key(&self, id: MatchId) -> String {
        format!("{}:match:{}", self.prefix, id)
    }
}

/// A code's value: its match and when it expires.
fn parse_code(value: &str) -> Option<(MatchId, u64)> {
    let (id, expires) = value.split_once(':')?;
    Some((
        MatchId(u64::from_str_radix(id, 16).ok()?),
        expires.parse().ok()?,
    ))
}

impl Store for RedisStore {
    fn find(&mut self, now: u64, code: CodeId) -> Result<Option<MatchId>, StoreError> {
        let key = self.code_key(code);
        self.with(|c| {
            let value: Option<String> = c.get(&key).map_err(server)?;
            Ok(value
                .as_deref()
                .and_then(parse_code)
                .filter(|(_, expires)| *expires > now)
                .map(|(id, _)| id))
        })
    }

    fn file(
        &mut self,
        now: u64,
        code: CodeId,
        id: MatchId,
        expires: u64,
    ) -> Result<MatchId, StoreError> {
        let key = self.code_key(code);
        self.with(|c| {
            for _ in 0..ATTEMPTS {
                redis::cmd("WATCH").arg(&key).exec(c).map_err(server)?;
                let value: Option<String> = c.get(&key).map_err(server)?;
                if let Some((holder, until)) = value.as_deref().and_then(parse_code) {
                    if until > now && holder != id {
                        redis::cmd("UNWATCH").exec(c).map_err(server)?;
                        return Ok(holder);
                    }
                }
                let written: RedisResult<Option<()>> = redis::pipe()
                    .atomic()
                    .cmd("SET")
                    .arg(&key)
                    .arg(format!("{id}:{expires}"))
                    .arg("PX")
                    .arg(px(now, expires))
                    .ignore()
                    .query(c);
                if written.map_err(server)?.is_some() {
                    return Ok(id);
                }
            }
            Err(StoreError::Server(format!("{key} kept changing")))
        })
    }

    fn change(
        &mut self,
        now: u64,
        id: MatchId,
        change: &mut dyn FnMut(&mut Option<MatchRecord>) -> bool,
    ) -> Result<(), StoreError> {
        let key = self.match_key(id);
        self.with(|c| {
            for _ in 0..ATTEMPTS {
                redis::cmd("WATCH").arg(&key).exec(c).map_err(server)?;
                let bytes: Option<Vec<u8>> = c.get(&key).map_err(server)?;
                let mut record = match bytes {
                    Some(b) => Some(MatchRecord::decode(&b).map_err(StoreError::Corrupt)?),
                    None => None,
                }
                .filter(|r| r.expires > now);
                if !change(&mut record) {
                    redis::cmd("UNWATCH").exec(c).map_err(server)?;
                    return Ok(());
                }
                let mut pipe = redis::pipe();
                pipe.atomic();
                match &record {
                    Some(r) => {
                        pipe.cmd("SET")
                            .arg(&key)
                            .arg(r.encode())
                            .arg("PX")
                            .arg(px(now, r.expires))
                            .ignore();
                    }
                    None => {
                        pipe.cmd("DEL").arg(&key).ignore();
                    }
                }
                let written: Option<()> = pipe.query(c).map_err(server)?;
                if written.is_some() {
                    return Ok(());
                }
            }
            Err(StoreError::Server(format!("{key} kept changing")))
        })
    }

    fn sweep(&mut self, _now: u64) {}

    fn next_sweep(&self) -> Option<u64> {
        None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::store::tests::a_store_files_finds_changes_and_expires;
    use std::process::{Child, Command, Stdio};

    /// A `redis-server` of this test's own on a free loopback port, ended
    /// (and its data gone: nothing is saved) when dropped.
    pub(crate) struct RedisServer {
        child: Child,
        pub(crate) url: String,
    }

    impl RedisServer {
        /// Starts one, or `None` (the test is skipped) where `redis-server`
        /// is not installed — except on CI, which installs it.
        pub(crate) fn start() -> Option<RedisServer> {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .ok()?;
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let child = match child {
                Ok(c) => c,
                Err(_) => {
                    assert!(
                        std::env::var_os("CI").is_none(),
                        "redis-server is missing on CI: .ci/run installs it"
                    );
                    eprintln!(
                        "skipped: redis-server is not installed (apt-get install redis-server)"
                    );
                    return None;
                }
            };
            let server = RedisServer {
                child,
                url: format!("redis://127.0.0.1:{port}/"),
            };
            for _ in 0..100 {
                if RedisStore::open(&server.url, "probe").is_ok() {
                    return Some(server);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            panic!("redis-server on port {port} never answered");
        }
    }

    impl Drop for RedisServer {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Microseconds since the UNIX epoch now (Redis expires keys by its
    /// own clock: the contract runs near it).
    fn wall() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64)
    }

    #[test]
    fn the_redis_store_keeps_the_contract() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let mut store = RedisStore::open(&server.url, "contract").unwrap();
        a_store_files_finds_changes_and_expires(&mut store, wall());
    }

    #[test]
    fn a_corrupt_record_is_refused_by_name_and_a_dead_server_fails_typed() {
        let Some(server) = RedisServer::start() else {
            return;
        };
        let mut store = RedisStore::open(&server.url, "corrupt").unwrap();
        let key = store.match_key(MatchId(3));
        let _: () = store
            .connection()
            .unwrap()
            .set(&key, b"nonsense".as_slice())
            .unwrap();
        let got = store.change(0, MatchId(3), &mut |_| false);
        assert!(matches!(got, Err(StoreError::Corrupt(_))), "{got:?}");
        drop(server);
        let got = store.find(0, CodeId::new(1).unwrap());
        assert!(matches!(got, Err(StoreError::Server(_))), "{got:?}");
        assert!(RedisStore::open("redis://127.0.0.1:1/", "x").is_err());
    }
}
