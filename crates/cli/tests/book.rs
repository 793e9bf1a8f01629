//! Every shell example of the book runs.
//!
//! The book is `README.md` and every chapter `docs/src/SUMMARY.md` lists, with the files
//! they include through mdBook's `{{#include PATH}}` expanded in place (a directive stands
//! on a line of its own). In each, every fenced code block whose info string is `sh` is
//! split into commands (a command spans its `\` continuation lines and its here-document;
//! blank and comment lines are skipped), and every command runs with `bash -o pipefail -c`:
//!
//! - in a scratch directory of the chapter's own, the chapter's commands in order, so a
//!   file an earlier command wrote (`cat > run.toml <<'EOF'`, `--json out.json`, results)
//!   is there for the later ones;
//! - with links in that directory to the repository's `experiments` and `crates`, so a
//!   command reads a file of the repository by its path from the repository root (and to
//!   `recorder`, for the recorded programs' traces);
//! - with this test's build of the binary first on the `PATH` as `numaplace`, and
//!   `cargo run --release --` replaced by `numaplace`.
//!
//! A command that exits non-zero (or runs longer than [`TIMEOUT`]) fails the test, which
//! names the file and line where it is written, its exit status and the end of its
//! output. Blocks that are not meant to run say so by another info string (`text`,
//! `toml`, `console`); a `sh` command that calls `cargo` otherwise is refused, since the
//! test could not run it as written.
//!
//! `cargo test -p numaplace --test book -- --nocapture` also prints each chapter's time.

#![cfg(unix)]

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a single command may run.
const TIMEOUT: Duration = Duration::from_secs(300);

/// Files the book includes that `scripts/book` generates at build time (they are not
/// committed): the path as the chapter includes it, and the `numaplace` arguments whose
/// output it is. The test produces them the same way.
const GENERATED: &[(&str, &[&str])] = &[("generated/fields.txt", &["list", "--fields"])];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// `path` relative to the repository root, for messages.
fn shown(path: &Path) -> String {
    let root = repo_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// One line of a chapter with its includes expanded: its text and where it was written.
struct Line {
    text: String,
    file: String,
    line: usize,
}

/// The path of a `{{#include PATH}}` directive standing alone on `line`.
fn include_directive(line: &str) -> Option<&str> {
    let inner = line
        .trim()
        .strip_prefix("{{#include")?
        .strip_suffix("}}")?
        .trim();
    Some(inner)
}

/// Appends the lines of `file`, its includes expanded, to `out`.
fn expand(file: &Path, out: &mut Vec<Line>) {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: cannot read: {e}", shown(file)));
    for (i, text) in text.lines().enumerate() {
        let Some(target) = include_directive(text) else {
            assert!(
                !text.contains("{{#include "),
                "{}:{}: an include must stand on a line of its own",
                shown(file),
                i + 1
            );
            out.push(Line {
                text: text.to_string(),
                file: shown(file),
                line: i + 1,
            });
            continue;
        };
        assert!(
            !target.contains(':'),
            "{}:{}: includes of parts of a file (`{target}`) are not supported here",
            shown(file),
            i + 1
        );
        if let Some((_, args)) = GENERATED.iter().find(|(g, _)| *g == target) {
            let o = Command::new(env!("CARGO_BIN_EXE_numaplace"))
                .args(*args)
                .output()
                .expect("the binary runs");
            assert!(o.status.success(), "numaplace {args:?} failed");
            let label = format!("numaplace {}", args.join(" "));
            for (j, l) in String::from_utf8_lossy(&o.stdout).lines().enumerate() {
                out.push(Line {
                    text: l.to_string(),
                    file: label.clone(),
                    line: j + 1,
                });
            }
        } else {
            let dir = file.parent().expect("a chapter lies in a directory");
            expand(&dir.join(target), out);
        }
    }
}

/// The chapters in reading order: `README.md`, then every chapter `SUMMARY.md` links.
fn chapters() -> Vec<PathBuf> {
    let root = repo_root();
    let src = root.join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("SUMMARY.md exists");
    let mut out = vec![root.join("README.md")];
    for event in Parser::new(&summary) {
        if let Event::Start(Tag::Link { dest_url, .. }) = event {
            out.push(src.join(dest_url.as_ref()));
        }
    }
    out
}

/// A command of a `sh` block and the line where it starts.
struct Cmd {
    file: String,
    line: usize,
    text: String,
}

/// The word that ends the here-document `command` opens (`<<'EOF'`, `<<EOF`, `<<-EOF`).
fn heredoc_end(command: &str) -> Option<(String, bool)> {
    let rest = &command[command.find("<<")? + 2..];
    let (rest, dash) = match rest.strip_prefix('-') {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let word: String = rest
        .trim_start()
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some((word, dash))
}

/// Splits the lines of a `sh` block into commands.
fn commands(lines: &[Line]) -> Vec<Cmd> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let first = &lines[i];
        i += 1;
        let t = first.text.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let mut text = first.text.clone();
        while text.ends_with('\\') && i < lines.len() {
            text.push('\n');
            text.push_str(&lines[i].text);
            i += 1;
        }
        if let Some((end, dash)) = heredoc_end(&text) {
            loop {
                let l = lines.get(i).unwrap_or_else(|| {
                    panic!(
                        "{}:{}: here-document without its `{end}`",
                        first.file, first.line
                    )
                });
                i += 1;
                text.push('\n');
                text.push_str(&l.text);
                let body = if dash {
                    l.text.trim_start_matches('\t')
                } else {
                    &l.text
                };
                if body == end {
                    break;
                }
            }
        }
        out.push(Cmd {
            file: first.file.clone(),
            line: first.line,
            text,
        });
    }
    out
}

/// Every command of every `sh` block of a chapter, in order.
fn chapter_commands(chapter: &Path) -> Vec<Cmd> {
    let mut lines = Vec::new();
    expand(chapter, &mut lines);
    let mut text = String::new();
    let mut starts = Vec::with_capacity(lines.len());
    for l in &lines {
        starts.push(text.len());
        text.push_str(&l.text);
        text.push('\n');
    }
    let line_at = |offset: usize| starts.partition_point(|&s| s <= offset) - 1;
    let mut out = Vec::new();
    let mut block: Option<(String, Option<usize>)> = None;
    for (event, range) in Parser::new(&text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let lang = info
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .next()
                    .unwrap_or("")
                    .to_string();
                block = Some((lang, None));
            }
            Event::Text(_) => {
                if let Some((_, first @ None)) = &mut block {
                    *first = Some(line_at(range.start));
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((lang, Some(first))) = block.take() {
                    if lang == "sh" {
                        // The block's lines up to its closing fence.
                        let end = line_at(range.end.saturating_sub(1));
                        let body: Vec<Line> = lines[first..end]
                            .iter()
                            .map(|l| Line {
                                text: l.text.clone(),
                                file: l.file.clone(),
                                line: l.line,
                            })
                            .collect();
                        out.extend(commands(&body));
                    }
                }
                block = None;
            }
            _ => {}
        }
    }
    out
}

/// A directory holding `numaplace`: a link to the binary under test.
fn bin_dir(scratch: &Path) -> PathBuf {
    let dir = scratch.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_numaplace"), dir.join("numaplace")).unwrap();
    dir
}

/// The last `n` lines of `bytes`.
fn tail(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `cmd` in `dir`; an error message if it fails.
fn run(cmd: &Cmd, dir: &Path, path: &str) -> Result<(), String> {
    let script = cmd.text.replace("cargo run --release --", "numaplace");
    let first_word = script.split_whitespace().next().unwrap_or("");
    if first_word == "cargo" {
        return Err(format!(
            "{}:{}: `{}` is a cargo command in a `sh` block: mark the block `text`",
            cmd.file, cmd.line, cmd.text
        ));
    }
    let out_path = dir.join(".book-test-out");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new("bash")
        .args(["-o", "pipefail", "-c", &script])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .expect("bash runs");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = std::fs::read(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let verdict = match status {
        Some(s) if s.success() => return Ok(()),
        Some(s) => format!("exited with {s}"),
        None => format!("ran longer than {} s", TIMEOUT.as_secs()),
    };
    Err(format!(
        "{}:{}: `{}` {verdict}; its output ends:\n{}",
        cmd.file,
        cmd.line,
        cmd.text,
        tail(&output, 20)
    ))
}

#[test]
fn every_shell_example_of_the_book_runs() {
    let root = repo_root();
    let tools = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir(tools.path()).display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let mut total = 0;
    for chapter in chapters() {
        let cmds = chapter_commands(&chapter);
        if cmds.is_empty() {
            continue;
        }
        let scratch = tempfile::tempdir().unwrap();
        for name in ["experiments", "crates", "recorder"] {
            std::os::unix::fs::symlink(root.join(name), scratch.path().join(name)).unwrap();
        }
        let start = Instant::now();
        for cmd in &cmds {
            if let Err(e) = run(cmd, scratch.path(), &path) {
                failures.push(e);
            }
        }
        total += cmds.len();
        eprintln!(
            "{}: {} commands, {:.1} s",
            shown(&chapter),
            cmds.len(),
            start.elapsed().as_secs_f64()
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {total} commands of the book failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // The parser found the examples: the book has dozens.
    assert!(total >= 50, "only {total} commands found in the book");
}

#[test]
fn commands_are_split_at_continuations_and_here_documents() {
    let lines: Vec<Line> = [
        "# a comment",
        "numaplace run \\",
        "    --seed 2",
        "",
        "cat > a.toml <<'EOF'",
        "# a TOML comment, part of the file",
        "seed = 3",
        "EOF",
        "numaplace list | head -1   # a trailing comment",
    ]
    .iter()
    .enumerate()
    .map(|(i, t)| Line {
        text: t.to_string(),
        file: "f.md".into(),
        line: i + 1,
    })
    .collect();
    let cmds = commands(&lines);
    let got: Vec<(usize, &str)> = cmds.iter().map(|c| (c.line, c.text.as_str())).collect();
    assert_eq!(
        got,
        [
            (2, "numaplace run \\\n    --seed 2"),
            (
                5,
                "cat > a.toml <<'EOF'\n# a TOML comment, part of the file\nseed = 3\nEOF"
            ),
            (9, "numaplace list | head -1   # a trailing comment"),
        ]
    );
}
