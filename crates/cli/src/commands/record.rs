//! `numaplace record`: a real program's references and synchronisation, recorded by the
//! Valgrind tool of `recorder/` and written as a trace that `--workload trace` replays.

use crate::failure::{user, Failure};
use anyhow::{anyhow, Context};
use clap::Args;
use numaplace_harness::trace::format::Header;
use numaplace_harness::trace::raw;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// `numaplace record`.
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The trace to write.
    #[arg(long, value_name = "TRACE")]
    out: PathBuf,
    /// Folding page size in bytes (a power of two from 64 to 2^30): consecutive references
    /// of a thread to one page of this size in one direction become one run. A machine
    /// replays the trace at any page size at least this large.
    #[arg(long, default_value_t = 4096, value_name = "BYTES")]
    page_size: u64,
    /// The recorder's directory (the Valgrind tool and its preload library); default:
    /// `NUMAPLACE_RECORDER`, else `target/recorder/lib` beside this executable's build.
    #[arg(long, value_name = "DIR")]
    recorder: Option<PathBuf>,
    /// Also run the program without recording, once, and report the recording's slowdown.
    #[arg(long)]
    overhead: bool,
    /// The program and its arguments (after `--`).
    #[arg(required = true, last = true, value_name = "PROGRAM")]
    command: Vec<String>,
}

/// The tool's file in the recorder's directory.
const TOOL: &str = "numaplace-amd64-linux";

/// Where the recorder was built: the flag, the environment, or the build tree this
/// executable belongs to.
fn recorder_dir(a: &RecordArgs) -> Result<PathBuf, Failure> {
    let dir = if let Some(d) = &a.recorder {
        d.clone()
    } else if let Some(d) = std::env::var_os("NUMAPLACE_RECORDER") {
        PathBuf::from(d)
    } else {
        let exe = std::env::current_exe().context("finding this executable")?;
        // target/<profile>/numaplace (or target/<profile>/deps/<test binary>).
        let mut found = None;
        for up in exe.ancestors().skip(1).take(4) {
            let d = up.join("recorder/lib");
            if d.join(TOOL).is_file() {
                found = Some(d);
                break;
            }
        }
        match found {
            Some(d) => d,
            None => {
                return Err(user(anyhow!(
                    "the recorder is not built: run scripts/setup-recorder (it builds the Valgrind tool into target/recorder), or give --recorder DIR"
                )))
            }
        }
    };
    if !dir.join(TOOL).is_file() {
        return Err(user(anyhow!(
            "--recorder {}: no {TOOL} there; run scripts/setup-recorder",
            dir.display()
        )));
    }
    // The core copies it into the program's LD_PRELOAD: it must not be relative.
    dir.canonicalize()
        .with_context(|| format!("the recorder's directory {}", dir.display()))
        .map_err(Failure::from)
}

/// Environment variables that shape a parallel program's run, as set now.
fn environment() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("OMP_") || k.starts_with("GOMP_"))
        .collect();
    v.sort();
    v
}

fn valgrind_version() -> String {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "valgrind".into())
}

/// Records `a.command` into `a.out`.
pub fn run(a: RecordArgs) -> Result<(), Failure> {
    if !a.page_size.is_power_of_two() || !(64..=1 << 30).contains(&a.page_size) {
        return Err(user(anyhow!(
            "--page-size {}: a power of two from 64 to 1073741824 bytes",
            a.page_size
        )));
    }
    let dir = recorder_dir(&a)?;
    let (program, args) = a.command.split_first().expect("clap requires the program");
    let header = Header {
        program: program.clone(),
        args: args.to_vec(),
        page_size: a.page_size,
        recorder: format!(
            "numaplace recorder {} on {}",
            env!("CARGO_PKG_VERSION"),
            valgrind_version()
        ),
        environment: environment(),
    };
    let (reader, writer) = std::io::pipe().context("making the recorder's pipe")?;
    // The tool writes to the pipe's write end, which the child must inherit.
    let fd = writer.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns; clearing FD_CLOEXEC has no other effect.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == -1 {
        return Err(anyhow!(std::io::Error::last_os_error())
            .context("making the pipe inheritable")
            .into());
    }
    let start = Instant::now();
    let mut child = Command::new("valgrind")
        .env("VALGRIND_LIB", &dir)
        .arg("--tool=numaplace")
        .arg("-q")
        .arg(format!("--out-fd={fd}"))
        .arg(format!("--page-size={}", a.page_size))
        .arg("--")
        .args(&a.command)
        .spawn()
        .map_err(|e| {
            user(anyhow!(
                "starting valgrind: {e} (Debian's package `valgrind` provides it; scripts/setup-recorder installs it)"
            ))
        })?;
    // Only the child writes now: the stream ends when it exits.
    drop(writer);
    let out =
        std::fs::File::create(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} {spinner} recording: {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let converted = raw::convert(
        std::io::BufReader::with_capacity(1 << 20, reader),
        Path::new("the recorder's stream"),
        header,
        std::io::BufWriter::new(out),
        &a.out,
        |bytes| bar.set_message(format!("{} MB of raw stream", bytes >> 20)),
    );
    bar.finish_and_clear();
    let status = child.wait().context("waiting for the recorded program")?;
    let recorded = start.elapsed();
    let converted = match converted {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(&a.out);
            return Err(anyhow!(e)
                .context(format!("recording {program} ({status})"))
                .into());
        }
    };
    let index = &converted.index;
    let total = |f: fn(&numaplace_harness::trace::format::ThreadTotals) -> u64| -> u64 {
        index.totals.iter().map(f).sum()
    };
    let size = std::fs::metadata(&a.out).map(|m| m.len()).unwrap_or(0);
    let mut o = std::io::stdout().lock();
    let _ = writeln!(
        o,
        "recorded {program}: {} threads, {} pages of {} bytes, {} references ({} read, {} written) in {} runs, {} instructions",
        index.threads,
        index.pages,
        a.page_size,
        total(|t| t.reads + t.writes),
        total(|t| t.reads),
        total(|t| t.writes),
        total(|t| t.runs),
        total(|t| t.instructions),
    );
    let _ = writeln!(
        o,
        "wrote {} ({} bytes; {} bytes of raw stream) in {:.2} s",
        a.out.display(),
        size,
        converted.raw_bytes,
        recorded.as_secs_f64()
    );
    for n in &index.notes {
        let _ = writeln!(o, "note: {n}");
    }
    if a.overhead {
        let start = Instant::now();
        let native = Command::new(program)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running {program} without recording"))?;
        let t = start.elapsed().as_secs_f64();
        let _ = writeln!(
            o,
            "overhead: {:.2} s recorded, {:.3} s native ({native}): a slowdown of {:.0}x",
            recorded.as_secs_f64(),
            t,
            recorded.as_secs_f64() / t.max(1e-6)
        );
    }
    if !status.success() {
        return Err(
            anyhow!("{program} ended with {status}; the trace holds its run up to then").into(),
        );
    }
    Ok(())
}
