//! Every relative link in the repository's markdown resolves.
//!
//! Walks every `*.md` file of the repository (build output and fuzz corpora
//! left out), takes each link and image outside code (`[text](target)`,
//! `![alt](target)`, `[label]: target`), and checks that a relative target
//! names a file or folder that exists and, when it carries a `#fragment`
//! into a markdown file, a heading of that file (as a forge makes anchors:
//! lower case, punctuation dropped, spaces to hyphens, `-1`, `-2` for
//! repeats). Web addresses and rustdoc paths (`crate::…`) are not checked
//! here; `cargo doc` with `-D warnings` checks the latter. It also checks
//! that the guide's index links every chapter, so a chapter cannot be
//! written and then lost.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Folders that hold no documentation of ours.
const SKIPPED: [&str; 6] = [
    "target",
    ".git",
    "node_modules",
    "corpus",
    "artifacts",
    ".mirror",
];

fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            if !SKIPPED.contains(&name.as_str()) {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The lines of a markdown file that are prose: fenced blocks blanked,
/// inline code spans removed.
fn prose(text: &str) -> Vec<String> {
    outside_fences(text)
        .iter()
        .map(|line| without_code_spans(line))
        .collect()
}

/// The lines of a markdown file with its fenced blocks blanked.
fn outside_fences(text: &str) -> Vec<String> {
    let mut fence: Option<&str> = None;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
            match (fence, marker) {
                (None, Some(m)) => {
                    fence = Some(m);
                    String::new()
                }
                (Some(open), Some(m)) if open == m => {
                    fence = None;
                    String::new()
                }
                (Some(_), _) => String::new(),
                (None, None) => line.to_string(),
            }
        })
        .collect()
}

fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join("")
}

/// Every link target on a prose line.
fn targets(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        let target = rest[..end].trim();
        let target = target.split_once(' ').map_or(target, |(t, _title)| t);
        found.push(target.trim_matches(['<', '>']).to_string());
        rest = &rest[end..];
    }
    let trimmed = line.trim_start();
    if trimmed.starts_with('[') {
        if let Some((_, target)) = trimmed.split_once("]: ") {
            found.push(target.split_whitespace().next().unwrap_or("").to_string());
        }
    }
    found
}

/// The anchors a forge gives a markdown file's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in outside_fences(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 1;
        while !seen.insert(anchor.clone()) {
            anchor = format!("{slug}-{n}");
            n += 1;
        }
    }
    for line in text.lines() {
        for key in ["id=\"", "name=\""] {
            if let Some((_, rest)) = line.split_once(key) {
                if let Some((id, _)) = rest.split_once('"') {
                    seen.insert(id.to_string());
                }
            }
        }
    }
    seen
}

/// What is wrong with one link of `file`, if anything.
fn check(file: &Path, target: &str) -> Option<String> {
    if target.is_empty() {
        return Some("an empty link".into());
    }
    if target.contains("://") || target.starts_with("mailto:") || target.contains("::") {
        return None;
    }
    let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
    let dest = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap().join(path)
    };
    if !dest.exists() {
        return Some(format!("{target}: no such file"));
    }
    if fragment.is_empty() || !dest.is_file() || dest.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = fs::read_to_string(&dest).unwrap();
    (!anchors(&text).contains(fragment)).then(|| format!("{target}: no heading #{fragment}"))
}

#[test]
fn every_relative_link_resolves() {
    let root = repo_root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    files.sort();
    assert!(
        files.len() > 10,
        "found only {} markdown files under {}",
        files.len(),
        root.display()
    );
    let mut broken = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for (n, line) in prose(&text).iter().enumerate() {
            for target in targets(line) {
                if let Some(problem) = check(file, &target) {
                    let shown = file.strip_prefix(&root).unwrap().display();
                    broken.push(format!("{shown}:{}: {problem}", n + 1));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_index_links_every_chapter() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR"));
    let index = fs::read_to_string(guide.join("README.md")).unwrap();
    let linked: BTreeSet<String> = prose(&index)
        .iter()
        .flat_map(|line| targets(line))
        .map(|t| t.split('#').next().unwrap().to_string())
        .collect();
    let mut missing = Vec::new();
    for entry in fs::read_dir(guide).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "README.md" && !linked.contains(&name) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "chapters the index (docs/guide/README.md) does not link: {missing:?}"
    );
}

#[test]
fn anchors_follow_the_forge() {
    let text = "# Two commands\n## The `lockstep` command line\n## Two commands\n```\n# not a heading\n```\n";
    let found = anchors(text);
    let want: BTreeSet<String> = [
        "two-commands",
        "the-lockstep-command-line",
        "two-commands-1",
    ]
    .map(String::from)
    .into();
    assert_eq!(found, want);
}
