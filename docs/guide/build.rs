//! Turns the guide's markdown chapters into rustdoc pages.
//!
//! Every `*.md` file beside this script is a chapter: `README.md` is the
//! crate's front page (the index), and `some-topic.md` becomes the module
//! `some_topic`, whose docs are the chapter. The chapters are written to be
//! read as plain markdown too (on a forge, in an editor), so their links
//! point at files; this script copies each chapter into `OUT_DIR` with its
//! links rewritten for rustdoc, and writes the module list that
//! `src/lib.rs` includes:
//!
//! - a link to another chapter (`network.md#rollback`) becomes an
//!   intra-doc link (`crate::network#rollback`), which rustdoc checks;
//! - a link to a file of the repository (`../../protocol/SPEC.md`) becomes a
//!   link to that file in the repository's web view (the workspace's
//!   `repository` key), since the rendered pages do not sit beside it;
//! - a Rust block tagged `bevy` (`rust,no_run,bevy`: compiled by the Bevy plugin's own
//!   workspace, which this one cannot build) is marked `ignore` here.
//!
//! Everything else, line numbers included, is unchanged, so a failing
//! doctest's line is the chapter's. Whether every link resolves in the
//! markdown itself is checked by `tests/links.rs`.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::{env, fs};

fn main() {
    let guide = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let repository = env::var("CARGO_PKG_REPOSITORY").unwrap();
    let repo_root = guide.join("../..");
    println!("cargo:rerun-if-changed={}", guide.display());

    let mut chapters: Vec<String> = fs::read_dir(&guide)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".md"))
        .collect();
    chapters.sort();

    let mut modules = String::new();
    for file in &chapters {
        println!("cargo:rerun-if-changed={}", guide.join(file).display());
        let text = fs::read_to_string(guide.join(file)).unwrap();
        let page = rewrite(&text, &chapters, &guide, &repo_root, &repository);
        fs::write(out.join(file), page).unwrap();
        if file == "README.md" {
            continue;
        }
        let module = module_name(file);
        writeln!(
            modules,
            "#[doc = include_str!(concat!(env!(\"OUT_DIR\"), \"/{file}\"))]\npub mod {module} {{}}"
        )
        .unwrap();
    }
    fs::write(out.join("chapters.rs"), modules).unwrap();
}

/// `playing-over-the-internet.md` → `playing_over_the_internet`.
fn module_name(file: &str) -> String {
    let stem = file.trim_end_matches(".md");
    let module = stem.replace('-', "_");
    assert!(
        module
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && module.starts_with(|c: char| c.is_ascii_lowercase()),
        "guide chapter {file}: name chapters in lowercase words joined by '-'"
    );
    module
}

/// The chapter with its links and `bevy` fences rewritten for rustdoc.
fn rewrite(
    text: &str,
    chapters: &[String],
    guide: &Path,
    repo_root: &Path,
    repository: &str,
) -> String {
    let mut page = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                let info = trimmed[m.len()..].trim();
                if info.split(',').any(|tag| tag.trim() == "bevy") {
                    page.push_str(&line.replacen(info, "rust,ignore", 1));
                    continue;
                }
                page.push_str(line);
            }
            (Some(open), Some(m)) if open == m => {
                fence = None;
                page.push_str(line);
            }
            (Some(_), _) => page.push_str(line),
            (None, None) => {
                page.push_str(&rewrite_links(line, chapters, guide, repo_root, repository))
            }
        }
    }
    page
}

/// Rewrites the target of every `[text](target)` on one line of prose.
fn rewrite_links(
    line: &str,
    chapters: &[String],
    guide: &Path,
    repo_root: &Path,
    repository: &str,
) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let image = rest[..at]
            .rfind("![")
            .is_some_and(|open| !rest[open..at].contains(']'));
        out.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        out.push_str(&retarget(
            &rest[..end],
            image,
            chapters,
            guide,
            repo_root,
            repository,
        ));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn retarget(
    target: &str,
    image: bool,
    chapters: &[String],
    guide: &Path,
    repo_root: &Path,
    repository: &str,
) -> String {
    if target.contains("://")
        || target.starts_with('#')
        || target.starts_with("mailto:")
        || target.contains("::")
    {
        return target.to_string();
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, format!("#{f}")),
        None => (target, String::new()),
    };
    if chapters.iter().any(|c| c == path) {
        return if path == "README.md" {
            format!("crate{fragment}")
        } else {
            format!("crate::{}{fragment}", module_name(path))
        };
    }
    let Some(in_repo) = repo_relative(&guide.join(path), repo_root) else {
        return target.to_string();
    };
    let kind = if image {
        "raw"
    } else if guide.join(path).is_dir() {
        "tree"
    } else {
        "blob"
    };
    format!("{repository}/{kind}/main/{in_repo}{fragment}")
}

/// `path` relative to the repository's root, `..` resolved by hand (the
/// file may not exist: the link test reports that, not this script).
fn repo_relative(path: &Path, repo_root: &Path) -> Option<String> {
    let normal = |p: &Path| {
        let mut parts: Vec<String> = Vec::new();
        for c in p.components() {
            match c {
                Component::ParentDir => {
                    parts.pop();
                }
                Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                _ => {}
            }
        }
        parts
    };
    let (path, root) = (normal(path), normal(repo_root));
    path.starts_with(&root)
        .then(|| path[root.len()..].join("/"))
}
