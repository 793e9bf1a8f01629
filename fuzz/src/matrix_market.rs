//! Arbitrary bytes through the Matrix Market reader.
//!
//! Besides "no panic, no hang, no huge allocation" (which the fuzzer checks),
//! every outcome must make sense: an error points at a line of the input
//! (or the one after its end), and a matrix satisfies the CSR invariants and
//! survives writing and reading back unchanged.

use crate::check;
use numaplace_sparse::{read_matrix_market, to_matrix_market};

/// One input.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match read_matrix_market(&text, "fuzz.mtx") {
        Ok(m) => {
            check::matrix(&m);
            let back = read_matrix_market(&to_matrix_market(&m), "fuzz.mtx")
                .expect("written Matrix Market must read back");
            assert_eq!(back, m, "Matrix Market round trip changed the matrix");
        }
        Err(e) => check::error(&e, &text),
    }
}
