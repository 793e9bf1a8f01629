//! Arbitrary bytes through the Harwell-Boeing reader (and so through the
//! Fortran format interpreter).
//!
//! As for `matrix_market`: errors point into the input, and a matrix that
//! is read satisfies the CSR invariants and survives the writer unchanged.

use crate::check;
use numaplace_sparse::{read_harwell_boeing, to_harwell_boeing};

/// One input.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match read_harwell_boeing(&text, "fuzz.rsa") {
        Ok(m) => {
            check::matrix(&m);
            let back = read_harwell_boeing(&to_harwell_boeing(&m, "FUZZ"), "fuzz.rsa")
                .expect("written Harwell-Boeing must read back");
            assert_eq!(back, m, "Harwell-Boeing round trip changed the matrix");
        }
        Err(e) => check::error(&e, &text),
    }
}
