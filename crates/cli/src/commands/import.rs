//! `numaplace import`: a trace recorded elsewhere turned into numaplace's trace format.

use crate::failure::{user, Failure};
use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use numaplace_harness::trace::format::Header;
use numaplace_harness::trace::{lackey, TraceError};
use std::io::Write;
use std::path::PathBuf;

/// Formats `import` reads.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    /// Valgrind lackey's text (`valgrind --tool=lackey --trace-mem=yes --log-file=FILE`):
    /// one thread, no synchronisation.
    Lackey,
}

/// `numaplace import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The trace recorded elsewhere.
    input: PathBuf,
    /// Its format.
    #[arg(long, value_enum)]
    format: Format,
    /// The trace to write.
    #[arg(long, value_name = "TRACE")]
    out: PathBuf,
    /// Folding page size in bytes (a power of two from 64 to 2^30), as for `record`.
    #[arg(long, default_value_t = 4096, value_name = "BYTES")]
    page_size: u64,
}

/// Imports `a.input` into `a.out`.
pub fn run(a: ImportArgs) -> Result<(), Failure> {
    if !a.page_size.is_power_of_two() || !(64..=1 << 30).contains(&a.page_size) {
        return Err(user(anyhow!(
            "--page-size {}: a power of two from 64 to 1073741824 bytes",
            a.page_size
        )));
    }
    let input =
        std::fs::File::open(&a.input).map_err(|e| user(anyhow!("{}: {e}", a.input.display())))?;
    let out =
        std::fs::File::create(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let header = Header {
        program: a.input.display().to_string(),
        args: vec![],
        page_size: a.page_size,
        recorder: "Valgrind lackey (imported)".into(),
        environment: vec![],
    };
    let index = match a.format {
        Format::Lackey => lackey::import(
            std::io::BufReader::with_capacity(1 << 20, input),
            &a.input,
            header,
            std::io::BufWriter::new(out),
            &a.out,
        ),
    };
    let index = match index {
        Ok(i) => i,
        Err(e) => {
            let _ = std::fs::remove_file(&a.out);
            return Err(match e {
                TraceError::Line { .. } | TraceError::Corrupt { .. } => user(anyhow!(e)),
                other => anyhow!(other).into(),
            });
        }
    };
    let t = &index.totals[0];
    let _ = writeln!(
        std::io::stdout().lock(),
        "imported {}: {} references ({} read, {} written) in {} runs, {} instructions, {} pages; wrote {}",
        a.input.display(),
        t.reads + t.writes,
        t.reads,
        t.writes,
        t.runs,
        t.instructions,
        index.pages,
        a.out.display()
    );
    Ok(())
}
