//! The self-check of `.ci/fuzz`: a target with a failure planted in it.
//!
//! An input that contains [`TOKEN`] fails in the way the environment variable [`PLANT`]
//! names: `panic`, `hang` (sleeps forever) or `alloc` (allocates twice the limit of
//! [`crate::limit`]); any other input passes. Without the variable nothing is planted.
//! The self-check starts it from the Matrix Market seeds, none of which contains the
//! token, and gives it the token in a dictionary: a run that finds the failure shows
//! that inputs are mutated, that the failure is caught and named, and that the failing
//! input is saved. It parses nothing, so a bug in a real target cannot make the
//! self-check fail.

use std::sync::OnceLock;
use std::time::Duration;

/// The bytes that set the planted failure off. `.ci/fuzz` writes the same token into the
/// self-check's dictionary and looks for it in the saved input.
pub const TOKEN: &[u8] = b"numaplace-planted";

/// The environment variable that chooses the planted failure.
pub const PLANT: &str = "NUMAPLACE_FUZZ_PLANT";

/// A failure the self-check plants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plant {
    /// A panic.
    Panic,
    /// An input that never finishes.
    Hang,
    /// A single allocation above the limit.
    Alloc,
}

/// The planted failure [`PLANT`] names, read once; `None` when it is unset or empty.
///
/// # Panics
///
/// On any other value (so a misspelt plant fails at once rather than planting nothing).
pub fn plant() -> Option<Plant> {
    static PLANTED: OnceLock<Option<Plant>> = OnceLock::new();
    *PLANTED.get_or_init(|| {
        let value = std::env::var(PLANT).unwrap_or_default();
        match value.as_str() {
            "" => None,
            "panic" => Some(Plant::Panic),
            "hang" => Some(Plant::Hang),
            "alloc" => Some(Plant::Alloc),
            other => panic!("{PLANT}={other}: expected panic, hang or alloc"),
        }
    })
}

/// One input.
pub fn run(data: &[u8]) {
    let Some(plant) = plant() else {
        return;
    };
    if !data.windows(TOKEN.len()).any(|w| w == TOKEN) {
        return;
    }
    match plant {
        Plant::Panic => panic!("the planted panic"),
        Plant::Hang => loop {
            std::thread::sleep(Duration::from_secs(1));
        },
        Plant::Alloc => {
            let v: Vec<u8> = Vec::with_capacity(2 * crate::limit::MAX_ALLOCATION);
            std::hint::black_box(v);
        }
    }
}
