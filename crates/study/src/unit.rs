//! Units a paper prints times in.

use serde::{Deserialize, Serialize};

/// A unit the paper prints a time in; the time metrics are in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PaperUnit {
    /// Seconds.
    #[serde(rename = "s")]
    S,
    /// Milliseconds.
    #[serde(rename = "ms")]
    Ms,
    /// Microseconds.
    #[serde(rename = "us")]
    Us,
    /// Nanoseconds.
    #[serde(rename = "ns")]
    Ns,
}

impl PaperUnit {
    /// Nanoseconds in one of this unit.
    pub fn ns(self) -> f64 {
        match self {
            PaperUnit::S => 1e9,
            PaperUnit::Ms => 1e6,
            PaperUnit::Us => 1e3,
            PaperUnit::Ns => 1.0,
        }
    }

    /// The unit's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            PaperUnit::S => "s",
            PaperUnit::Ms => "ms",
            PaperUnit::Us => "us",
            PaperUnit::Ns => "ns",
        }
    }
}
