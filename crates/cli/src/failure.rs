//! The error every command returns, with its exit code, so `main` maps them in one place.

use numaplace_harness::UserError;

/// An error with the exit code it deserves: 2 for bad input, 1 for anything else, 0 for
/// a reader that went away (a closed pipe ends the program quietly).
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// What went wrong.
    pub err: anyhow::Error,
}

impl Failure {
    /// A reader that went away: the program ends quietly with success.
    pub fn closed_pipe() -> Failure {
        Failure {
            code: 0,
            err: anyhow::anyhow!("standard output closed"),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(err: anyhow::Error) -> Failure {
        let code = if err.downcast_ref::<UserError>().is_some() {
            2
        } else {
            1
        };
        Failure { code, err }
    }
}

impl From<UserError> for Failure {
    fn from(e: UserError) -> Failure {
        Failure {
            code: 2,
            err: e.into(),
        }
    }
}

/// `e` as bad input (exit code 2).
pub fn user(e: anyhow::Error) -> Failure {
    Failure { code: 2, err: e }
}
