//! One module per subcommand, named after it: its clap arguments (their doc comments are
//! its `--help`) and its `run`. A command module imports only the shared modules beside
//! `main.rs`, never another command's.

pub mod bench;
pub mod breakeven;
pub mod import;
pub mod list;
pub mod oracle;
pub mod record;
pub mod report;
pub mod reproduce;
pub mod robustness;
pub mod run;
pub mod show;
pub mod sweep;
pub mod tune;
