//! Reading a spec's TOML: the file as written, with the path and line of any error.

use serde::Deserialize;

use super::validate::validate;
use super::{QuickSpec, Spec, SpecError};

/// A spec as parsed, before validation: its `[[axis]]` tables and quick axes as
/// written. A quick axis is kept as a TOML value with its place, told apart as a list
/// or a range by validation, so that a misspelled range key is reported as such (an
/// untagged list-or-range would only say that neither matched), with its line.
pub(super) type WrittenSpec = Spec<WrittenAxis, QuickSpec<toml::Spanned<toml::Value>>>;

/// An `[[axis]]` table as written. Kept apart from [`Axis`](super::Axis) because
/// validation needs what was written, not only the values it stands for: it tells an
/// empty `values` from a missing one, and names a missing or bad part of a `range` by
/// its path (`axis[0].range.step`), neither of which serde can do while parsing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WrittenAxis {
    pub(super) field: String,
    #[serde(default)]
    pub(super) values: Option<Vec<toml::Value>>,
    #[serde(default)]
    pub(super) range: Option<Range>,
    #[serde(default)]
    pub(super) labels: Option<Vec<String>>,
}

/// A range of axis values, `{ from, to, step }`; its parts are checked as it is
/// expanded.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Range {
    #[serde(default)]
    pub(super) from: Option<toml::Value>,
    #[serde(default)]
    pub(super) to: Option<toml::Value>,
    #[serde(default)]
    pub(super) step: Option<toml::Value>,
}

/// Converts a 0-based byte offset to a 1-based line number.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Deserializes TOML text into `T`, reporting the field path and line of any
/// error. Shared by specs and paper files.
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: &str,
) -> Result<T, SpecError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        SpecError::Parse {
            origin: origin.to_string(),
            field: if path.is_empty() || path == "." {
                None
            } else {
                Some(path)
            },
            line: inner.span().map(|s| line_of(text, s.start)),
            message: inner.message().trim().to_string(),
        }
    })
}

/// Parses and validates an experiment spec. `origin` names the file in
/// error messages.
pub fn parse_spec(text: &str, origin: &str) -> Result<Spec, SpecError> {
    let written: WrittenSpec = parse_toml(text, origin)?;
    validate(written, text, origin)
}

/// Reads and parses a spec file.
pub fn load_spec(path: &std::path::Path) -> anyhow::Result<Spec> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read spec {}", path.display()))?;
    Ok(parse_spec(&text, &path.display().to_string())?)
}
