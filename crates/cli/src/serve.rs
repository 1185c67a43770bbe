//! `lockstep serve`: a small static HTTP server for the replay viewer
//! (`web/`, built into `target/web` by `web/build`), on this machine only
//! by default. `GET` and `HEAD` only, files under the served folder only.
//! Each connection is answered on its own thread, at most
//! [`MAX_CONNECTIONS`] at once: a browser opens idle connections ahead of
//! its requests, and one idle connection must not hold up the others.
//!
//! Invariants: a request line from the network never panics the server (a
//! malformed or oversized one gets 400); a path with `..`, a backslash or
//! a NUL never leaves the folder (403); nothing but regular files is sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clap::Args;

use crate::error::CliError;

/// Arguments of `lockstep serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The folder to serve (the viewer as `web/build` leaves it).
    #[arg(default_value = "target/web")]
    pub dir: PathBuf,
    /// The TCP port (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The address to listen on (default: this machine only).
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
}

/// The longest request head read (request line and headers).
const MAX_HEAD: u64 = 8 * 1024;

/// The most connections answered at once; more are closed unanswered.
pub const MAX_CONNECTIONS: usize = 32;

/// Runs `lockstep serve` until the process is stopped.
pub fn run(args: &ServeArgs) -> Result<ExitCode, CliError> {
    if !args.dir.join("index.html").is_file() {
        return Err(CliError::new(format!(
            "{}: no index.html (build the viewer first: web/build)",
            args.dir.display()
        )));
    }
    let listener = TcpListener::bind(SocketAddr::new(args.bind, args.port))
        .map_err(|e| CliError::new(format!("cannot listen on {}:{}: {e}", args.bind, args.port)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::new(format!("cannot read the listening address: {e}")))?;
    println!("serving {} at http://{addr}/", args.dir.display());
    let open = Arc::new(AtomicUsize::new(0));
    let dir = Arc::new(args.dir.clone());
    for stream in listener.incoming().flatten() {
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            continue; // dropping the stream closes it
        }
        let (open, dir) = (Arc::clone(&open), Arc::clone(&dir));
        std::thread::spawn(move || {
            // A connection that fails is that client's problem, not the server's.
            let _ = answer(stream, &dir);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads one request from `stream` and answers it.
fn answer(stream: TcpStream, dir: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new((&stream).take(MAX_HEAD));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    // The rest of the head, up to the empty line.
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let (status, kind, body) = respond(&line, dir);
    let head_only = line.starts_with("HEAD ");
    let mut out = &stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if !head_only {
        out.write_all(&body)?;
    }
    out.flush()
}

/// The status, content type and body for a request line.
fn respond(line: &str, dir: &Path) -> (&'static str, &'static str, Vec<u8>) {
    let text = |status, body: &str| {
        (
            status,
            "text/plain; charset=utf-8",
            body.as_bytes().to_vec(),
        )
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return text("400 Bad Request", "bad request\n");
    };
    if method != "GET" && method != "HEAD" {
        return text("405 Method Not Allowed", "GET or HEAD only\n");
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let Some(relative) = path.strip_prefix('/') else {
        return text("400 Bad Request", "bad path\n");
    };
    let relative = if relative.is_empty() || relative.ends_with('/') {
        format!("{relative}index.html")
    } else {
        relative.to_string()
    };
    if relative.split('/').any(|p| p == ".." || p.is_empty())
        || relative.contains(['\\', '\0', '%'])
    {
        return text("403 Forbidden", "forbidden\n");
    }
    let file = dir.join(&relative);
    match std::fs::metadata(&file) {
        Ok(m) if m.is_file() => match std::fs::read(&file) {
            Ok(body) => ("200 OK", content_type(&relative), body),
            Err(_) => text("500 Internal Server Error", "cannot read the file\n"),
        },
        _ => text("404 Not Found", "not found\n"),
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_stay_in_the_folder_and_bad_ones_are_refused() {
        let dir = std::env::temp_dir().join(format!("lockstep-serve-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        std::fs::write(dir.join("index.html"), b"<p>hi</p>").unwrap();
        std::fs::write(dir.join("logs/a.log"), b"LOG").unwrap();
        let status = |line: &str| respond(line, &dir).0;
        assert_eq!(status("GET / HTTP/1.1"), "200 OK");
        assert_eq!(
            respond("GET /?log=logs/a.log HTTP/1.1", &dir).2,
            b"<p>hi</p>"
        );
        assert_eq!(respond("GET /logs/a.log HTTP/1.1", &dir).2, b"LOG");
        assert_eq!(status("GET /missing.js HTTP/1.1"), "404 Not Found");
        for bad in [
            "/../etc/passwd",
            "/logs/../../x",
            "/a%2e%2e/b",
            "//etc/passwd",
            "/a\\b",
        ] {
            assert_eq!(
                status(&format!("GET {bad} HTTP/1.1")),
                "403 Forbidden",
                "{bad}"
            );
        }
        assert_eq!(status("POST / HTTP/1.1"), "405 Method Not Allowed");
        for junk in ["", "GET", "\u{0}\u{1}", "GET nopath HTTP/1.1"] {
            assert_eq!(status(junk), "400 Bad Request", "{junk:?}");
        }
        assert_eq!(content_type("m.wasm"), "application/wasm");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
