//! The error type of everything the user gives: names, files, values.

/// An error in what the user gave (a name, a file, a value): reported with exit code 2.
/// Errors about one configuration field carry its dotted path, so a caller (a sweep
/// naming its point, a test) can tell which field is wrong without parsing the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserError {
    /// A configuration field's value is wrong.
    #[error("{}{field}: {message}", source_prefix(.given))]
    Field {
        /// Where the value came from.
        given: ValueSource,
        /// Dotted path of the field, e.g. `workload.n`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The run is larger than a resource limit; `field` drives the estimate.
    #[error("{field}: {message}")]
    Limit {
        /// The field that drives the estimate.
        field: String,
        /// The estimate, the limit and how to lift it.
        message: String,
    },
    /// Anything else: an unknown name, an unreadable or malformed file.
    #[error("{0}")]
    Other(String),
}

/// Where a configuration value came from, for [`UserError::Field`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueSource {
    /// A file, and the line of the field when it is written there.
    File {
        /// The file's name as given.
        origin: String,
        /// 1-based line of the field, when it is written in the file.
        line: Option<usize>,
    },
    /// A `--set` option.
    Set,
    /// Not a file or an option (a built configuration, a default).
    Config,
}

fn source_prefix(s: &ValueSource) -> String {
    match s {
        ValueSource::File {
            origin,
            line: Some(l),
        } => format!("{origin}:{l}: "),
        ValueSource::File { origin, line: None } => format!("{origin}: "),
        ValueSource::Set => "--set ".into(),
        ValueSource::Config => String::new(),
    }
}

impl UserError {
    /// An error with `msg` that is not about one field.
    pub fn new(msg: impl Into<String>) -> UserError {
        UserError::Other(msg.into())
    }

    /// The dotted path of the field the error is about, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            UserError::Field { field, .. } | UserError::Limit { field, .. } => Some(field),
            UserError::Other(_) => None,
        }
    }
}

/// A simulation's error sorted by whose it is: `Ok` the user's input (a configuration the
/// core refuses, a cost or count too large for simulated time, a program stopped on its
/// input: exit code 2 in the CLI), `Err` the simulation's own failure (exit code 1).
pub fn input_error(e: numaplace_core::SimError) -> Result<UserError, numaplace_core::SimError> {
    use numaplace_core::SimError;
    match e {
        SimError::Config(c) => Ok(UserError::new(format!("invalid configuration: {c}"))),
        // A program that stopped early (a replayed trace unreadable mid-run) stopped on
        // its input, as an overflow does on the configuration's numbers.
        e @ (SimError::TimeOverflow { .. } | SimError::Program { .. }) => {
            Ok(UserError::new(e.to_string()))
        }
        other => Err(other),
    }
}

impl From<numaplace_core::ConfigError> for UserError {
    fn from(e: numaplace_core::ConfigError) -> UserError {
        UserError::Field {
            given: ValueSource::Config,
            field: e.field,
            message: e.message,
        }
    }
}
