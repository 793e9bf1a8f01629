//! Fortran fixed-width input formats, as used by Harwell-Boeing files.
//!
//! Harwell-Boeing data cards were written by Fortran `WRITE` statements with
//! the formats stored in the file header, e.g. `(16I5)` or `(1P3D24.15)`.
//! Fields are defined by column positions, not by separators: adjacent fields
//! may touch (`-0.1234E+01-0.5678E+02`), so splitting on whitespace is wrong.
//! This module parses the format text and reads fields the way a Fortran
//! formatted `READ` does, including the input rules that surprise people:
//!
//! * blanks inside a numeric field are ignored (`BN`, the default for
//!   formatted files) or read as zeros after `BZ`; an all-blank field is zero;
//! * the exponent letter may be `E`, `D` or `Q` in either case, or absent
//!   when the exponent is signed (`1.234-05` means `1.234E-05`);
//! * a real field without a decimal point has an implied one `d` digits from
//!   the right (`E16.8` reads `12345` as `0.00012345`);
//! * a scale factor `kP` divides a value by `10^k` only when the field has no
//!   exponent (fields with an exponent are unaffected).
//!
//! Supported edit descriptors: `Iw[.m]`, `Fw.d`, `Ew.d[Ee]`, `Dw.d`,
//! `Gw.d[Ee]`, `ESw.d`, `ENw.d`, `nX`, `kP`, `BN`, `BZ`, `/`, and nested
//! parenthesised groups with repeat counts (`3(1X,E25.16)`). Character,
//! logical and tab descriptors never occur in numeric Harwell-Boeing data and
//! are rejected.

use crate::error::{ErrorKind, MatrixError};

/// Upper bound on expanded format steps; a format needing more is rejected so
/// that a hostile repeat count cannot exhaust memory.
const MAX_STEPS: usize = 100_000;

/// Widest field a data edit descriptor may declare (`I1024`, `E1024.16`).
///
/// A field that runs past the end of its line is padded with blanks, as
/// Fortran does, so the width decides how much text is built per value; a
/// hostile width such as `I999999999999` must not. Real Harwell-Boeing
/// formats use widths below 30.
pub const MAX_FIELD_WIDTH: usize = 1024;

/// How a data edit descriptor interprets its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditKind {
    /// `I`: an integer.
    Integer,
    /// `F`, `E`, `D`, `G`, `ES`, `EN`: a real (all read identically on input).
    Real,
}

/// How blanks inside numeric fields are read (`BN` / `BZ`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlankMode {
    /// Blanks are ignored (`BN`, the default for formatted input).
    Null,
    /// Blanks after the first non-blank character count as zeros (`BZ`).
    Zero,
}

/// One step of an expanded format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Data {
        kind: EditKind,
        width: usize,
        decimals: u32,
    },
    Skip(usize),
    Scale(i32),
    Blank(BlankMode),
    /// Advance this many records (one per `/`; consecutive ones merged).
    NewRecord(usize),
}

/// Parsed format item before expansion of repeat counts.
#[derive(Debug, Clone)]
enum Item {
    Step(Step),
    Group { repeat: usize, items: Vec<Item> },
}

/// A parsed Fortran input format such as `(1P,5E16.8)`.
///
/// Reading follows format reversion: after the last item the next record
/// (line) starts and control returns to the rightmost top-level parenthesised
/// group, or to the start of the format if it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FortranFormat {
    text: String,
    first: Vec<Step>,
    reversion: Vec<Step>,
}

/// Where a value came from: the field's text and position, so errors can
/// name the line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// 0-based record (line) index relative to the first line read.
    pub record: usize,
    /// 0-based starting column.
    pub col: usize,
    pub width: usize,
    pub kind: EditKind,
    pub decimals: u32,
    pub scale: i32,
    pub blank: BlankMode,
}

/// Error while reading a sequence of fields, before a file name is attached.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ReadError {
    /// The values need more records than were provided; carries how many
    /// values were read.
    OutOfRecords { got: usize },
    /// A field on `record` (0-based) is missing or unreadable.
    Field { record: usize, kind: ErrorKind },
}

impl FortranFormat {
    /// Parses a format such as `(16I5)`, `(1P,5E16.8)` or `(3(1X,E25.16))`.
    ///
    /// Blanks are ignored and letters may be in either case, as in Fortran.
    /// Returns [`ErrorKind::BadFormat`] for malformed or unsupported formats,
    /// and for formats without any data descriptor (which could never
    /// deliver a value).
    pub fn parse(text: &str) -> Result<Self, ErrorKind> {
        let bad = |reason: &str| ErrorKind::BadFormat {
            format: text.trim().to_string(),
            reason: reason.to_string(),
        };
        let chars: Vec<char> = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if chars.first() != Some(&'(') {
            return Err(bad("must start with '('"));
        }
        let mut pos = 1;
        let items = parse_list(&chars, &mut pos, 0).map_err(|r| bad(&r))?;
        if pos != chars.len() {
            return Err(bad("text after the closing ')'"));
        }
        let mut first = Vec::new();
        expand(&items, 1, &mut first).map_err(|r| bad(&r))?;
        let mut reversion = Vec::new();
        match items.iter().rposition(|i| matches!(i, Item::Group { .. })) {
            Some(g) => expand(&items[g..g + 1], 1, &mut reversion),
            None => expand(&items, 1, &mut reversion),
        }
        .map_err(|r| bad(&r))?;
        let (first, reversion) = (compress(first), compress(reversion));
        let has_data = |steps: &[Step]| steps.iter().any(|s| matches!(s, Step::Data { .. }));
        if !has_data(&first) || !has_data(&reversion) {
            return Err(bad("no data edit descriptor"));
        }
        Ok(FortranFormat {
            text: text.trim().to_string(),
            first,
            reversion,
        })
    }

    /// The format text as given (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Number of values on each line after the first (for simple formats like
    /// `(16I5)` this is also the count on the first line).
    pub fn values_per_line(&self) -> usize {
        self.reversion
            .iter()
            .filter(|s| matches!(s, Step::Data { .. }))
            .count()
    }

    /// Whether every data descriptor reads integers (`I` editing).
    pub fn is_integer(&self) -> bool {
        self.first.iter().chain(&self.reversion).all(|s| {
            !matches!(
                s,
                Step::Data {
                    kind: EditKind::Real,
                    ..
                }
            )
        })
    }

    /// Yields the field positions a `READ` with this format visits, in order,
    /// for as many values as the caller consumes.
    pub(crate) fn slots(&self) -> impl Iterator<Item = Slot> + '_ {
        let mut in_first = true;
        let mut pos = 0usize;
        let mut record = 0usize;
        let mut col = 0usize;
        let mut scale = 0i32;
        let mut blank = BlankMode::Null;
        std::iter::from_fn(move || loop {
            let steps = if in_first {
                &self.first
            } else {
                &self.reversion
            };
            if pos == steps.len() {
                // End of the format with values still wanted: next record,
                // and revert. `parse` guarantees the reversion part has data,
                // and `compress` that at most four other steps precede each
                // data step, so every value costs a bounded number of turns.
                in_first = false;
                pos = 0;
                record = record.saturating_add(1);
                col = 0;
                continue;
            }
            let step = steps[pos];
            pos += 1;
            match step {
                Step::Data {
                    kind,
                    width,
                    decimals,
                } => {
                    let slot = Slot {
                        record,
                        col,
                        width,
                        kind,
                        decimals,
                        scale,
                        blank,
                    };
                    col = col.saturating_add(width);
                    return Some(slot);
                }
                Step::Skip(n) => col = col.saturating_add(n),
                Step::Scale(k) => scale = k,
                Step::Blank(m) => blank = m,
                Step::NewRecord(n) => {
                    record = record.saturating_add(n);
                    col = 0;
                }
            }
        })
    }

    /// Reads `count` values from `lines` (one record per line), calling
    /// `convert` on each field; returns each value with its 0-based record
    /// index and the number of records used.
    pub(crate) fn read_with<T>(
        &self,
        lines: &[&str],
        count: usize,
        mut convert: impl FnMut(&Slot, &str) -> Result<T, ErrorKind>,
    ) -> Result<(Vec<(T, usize)>, usize), ReadError> {
        // Each value needs at least one character of a line (a field that
        // starts past the end of its line is an error), so the text present
        // bounds what `count`, a number from a header, may reserve.
        let room: usize = lines.iter().map(|l| l.len()).sum();
        let mut out = Vec::with_capacity(count.min(room));
        let mut used = 0;
        for slot in self.slots().take(count) {
            let Some(line) = lines.get(slot.record) else {
                return Err(ReadError::OutOfRecords { got: out.len() });
            };
            let text = field_text(line, &slot).map_err(|kind| ReadError::Field {
                record: slot.record,
                kind,
            })?;
            let value = convert(&slot, &text).map_err(|kind| ReadError::Field {
                record: slot.record,
                kind,
            })?;
            out.push((value, slot.record));
            used = slot.record + 1;
        }
        Ok((out, used))
    }

    /// Reads `count` real values from `text`, one record per line, as a
    /// Fortran `READ` would (integer fields are accepted and converted).
    ///
    /// `name` and `first_line` (the 1-based line number of the first line of
    /// `text` in the original input) only serve the error message.
    pub fn read_reals(
        &self,
        name: &str,
        text: &str,
        first_line: usize,
        count: usize,
    ) -> Result<Vec<f64>, MatrixError> {
        let lines: Vec<&str> = text.lines().collect();
        self.read_with(&lines, count, read_real_slot)
            .map(|(v, _)| v.into_iter().map(|(x, _)| x).collect())
            .map_err(|e| located(name, first_line, lines.len(), count, e))
    }

    /// Reads `count` integer values from `text`, one record per line; fails
    /// on real (`E`, `F`, ...) descriptors since an integer cannot be read
    /// with them. Arguments as for [`read_reals`](Self::read_reals).
    pub fn read_ints(
        &self,
        name: &str,
        text: &str,
        first_line: usize,
        count: usize,
    ) -> Result<Vec<i64>, MatrixError> {
        let lines: Vec<&str> = text.lines().collect();
        self.read_with(&lines, count, read_int_slot)
            .map(|(v, _)| v.into_iter().map(|(x, _)| x).collect())
            .map_err(|e| located(name, first_line, lines.len(), count, e))
    }
}

/// Attaches name and line to a [`ReadError`] for the public helpers.
fn located(
    name: &str,
    first_line: usize,
    nlines: usize,
    count: usize,
    e: ReadError,
) -> MatrixError {
    match e {
        ReadError::OutOfRecords { got } => MatrixError::at(
            name,
            first_line.saturating_add(nlines),
            ErrorKind::Truncated(format!("expected {count} values, found {got}")),
        ),
        ReadError::Field { record, kind } => {
            MatrixError::at(name, first_line.saturating_add(record), kind)
        }
    }
}

/// Reads a field as an integer, rejecting real descriptors.
pub(crate) fn read_int_slot(slot: &Slot, field: &str) -> Result<i64, ErrorKind> {
    match slot.kind {
        EditKind::Integer => parse_integer_field(field, slot.blank),
        EditKind::Real => Err(ErrorKind::BadNumber {
            text: field.trim().to_string(),
            reason: "integer data needs an I edit descriptor".into(),
        }),
    }
}

/// Reads a field as a real; integer descriptors give whole numbers.
pub(crate) fn read_real_slot(slot: &Slot, field: &str) -> Result<f64, ErrorKind> {
    match slot.kind {
        EditKind::Integer => parse_integer_field(field, slot.blank).map(|i| i as f64),
        EditKind::Real => parse_real_field(field, slot.decimals, slot.scale, slot.blank),
    }
}

/// Cuts the field of `slot` out of `line`, padding a line that ends inside
/// the field with blanks (Fortran `PAD='YES'`). A field that starts at or
/// after the end of the line is reported as missing rather than read as
/// zero, because in practice that means a cut-off line, not a blank value.
fn field_text(line: &str, slot: &Slot) -> Result<String, ErrorKind> {
    let bytes = line.as_bytes();
    if slot.col >= bytes.len() {
        return Err(ErrorKind::Truncated(format!(
            "line ends before the field at columns {}-{}",
            slot.col.saturating_add(1),
            slot.col.saturating_add(slot.width)
        )));
    }
    let end = slot.col.saturating_add(slot.width).min(bytes.len());
    let raw = &bytes[slot.col..end];
    if !raw.is_ascii() {
        return Err(ErrorKind::BadNumber {
            text: String::from_utf8_lossy(raw).into_owned(),
            reason: "non-ASCII character in numeric field".into(),
        });
    }
    let mut s = String::from_utf8_lossy(raw).into_owned();
    while s.len() < slot.width {
        s.push(' ');
    }
    Ok(s)
}

/// Applies the blank rule: drops leading blanks, then drops (`BN`) or zeroes
/// (`BZ`) the remaining ones.
fn squeeze_blanks(field: &str, blank: BlankMode) -> String {
    let trimmed = field.trim_start_matches(' ');
    match blank {
        BlankMode::Null => trimmed.chars().filter(|&c| c != ' ').collect(),
        BlankMode::Zero => trimmed
            .chars()
            .map(|c| if c == ' ' { '0' } else { c })
            .collect(),
    }
}

/// Reads an `I` field: optional sign and digits, blanks handled per `blank`,
/// all-blank meaning zero.
pub fn parse_integer_field(field: &str, blank: BlankMode) -> Result<i64, ErrorKind> {
    let s = squeeze_blanks(field, blank);
    let bad = |reason: &str| ErrorKind::BadNumber {
        text: field.trim().to_string(),
        reason: reason.to_string(),
    };
    if s.is_empty() {
        return Ok(0);
    }
    let digits = s.strip_prefix(['+', '-']).unwrap_or(&s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("not an integer"));
    }
    // i64 parsing accepts a leading '+', so the whole text can be handed over.
    s.parse::<i64>().map_err(|_| bad("integer too large"))
}

/// Reads a real field (`F`, `E`, `D`, `G`, `ES`, `EN` editing) per the
/// Fortran input rules described in the [module documentation](self):
/// `decimals` is the `d` of `Ew.d` (used only when the field has no decimal
/// point) and `scale` the current `kP` factor (used only when the field has
/// no exponent).
pub fn parse_real_field(
    field: &str,
    decimals: u32,
    scale: i32,
    blank: BlankMode,
) -> Result<f64, ErrorKind> {
    let s = squeeze_blanks(field, blank);
    let bad = |reason: &str| ErrorKind::BadNumber {
        text: field.trim().to_string(),
        reason: reason.to_string(),
    };
    if s.is_empty() {
        return Ok(0.0);
    }
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b[0] {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut int_digits = String::new();
    let mut frac_digits = String::new();
    let mut has_point = false;
    while i < b.len() {
        match b[i] {
            d @ b'0'..=b'9' => {
                if has_point {
                    frac_digits.push(d as char)
                } else {
                    int_digits.push(d as char)
                }
            }
            b'.' if !has_point => has_point = true,
            _ => break,
        }
        i += 1;
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return Err(bad("no digits in mantissa"));
    }
    let exponent: Option<i64> = if i == b.len() {
        None
    } else {
        let mut j = i;
        if matches!(b[j], b'E' | b'e' | b'D' | b'd' | b'Q' | b'q') {
            j += 1;
        } else if !matches!(b[j], b'+' | b'-') {
            return Err(bad("unexpected character"));
        }
        let exp_negative = match b.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let exp_digits = &s[j..];
        if exp_digits.is_empty() || !exp_digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad("malformed exponent"));
        }
        // Exponents beyond any f64 range saturate; the final finiteness
        // check then rejects overflow, and underflow becomes zero as in
        // Fortran.
        let magnitude = exp_digits
            .trim_start_matches('0')
            .parse::<i64>()
            .unwrap_or(if exp_digits.bytes().all(|c| c == b'0') {
                0
            } else {
                1_000_000
            })
            .min(1_000_000);
        Some(if exp_negative { -magnitude } else { magnitude })
    };
    // Value = digits * 10^power, where digits = int_digits ++ frac_digits.
    let mut power: i64 = exponent.unwrap_or(0);
    if has_point {
        power -= frac_digits.len() as i64;
    } else {
        power -= i64::from(decimals);
    }
    if exponent.is_none() {
        power -= i64::from(scale);
    }
    let text = format!(
        "{}{}{}e{}",
        if negative { "-" } else { "" },
        int_digits,
        frac_digits,
        power
    );
    let value: f64 = text.parse().map_err(|_| bad("not a number"))?;
    if !value.is_finite() {
        return Err(bad("value out of range"));
    }
    Ok(value)
}

/// Parses items up to the matching `)` (consumed). `depth` limits nesting so
/// that deeply nested input cannot overflow the stack.
fn parse_list(chars: &[char], pos: &mut usize, depth: usize) -> Result<Vec<Item>, String> {
    if depth > 16 {
        return Err("parentheses nested too deeply".into());
    }
    let mut items = Vec::new();
    loop {
        let Some(&c) = chars.get(*pos) else {
            return Err("missing ')'".into());
        };
        match c {
            ',' => {
                *pos += 1;
                continue;
            }
            ')' => {
                *pos += 1;
                return Ok(items);
            }
            '/' => {
                *pos += 1;
                items.push(Item::Step(Step::NewRecord(1)));
                continue;
            }
            _ => {}
        }
        let negative = chars.get(*pos) == Some(&'-');
        let signed = matches!(chars.get(*pos), Some('-') | Some('+'));
        if signed {
            *pos += 1;
        }
        let number = read_number(chars, pos)?;
        let Some(&letter) = chars.get(*pos) else {
            return Err("format ends after a number".into());
        };
        *pos += 1;
        if signed && letter != 'P' {
            return Err("sign is only allowed on a scale factor".into());
        }
        let repeat = number.unwrap_or(1);
        if number == Some(0) && letter != 'P' && letter != 'X' {
            return Err("repeat count of zero".into());
        }
        match letter {
            'P' => {
                let k = number.ok_or("P needs a scale factor")?;
                let k = i32::try_from(k).map_err(|_| "scale factor too large")?;
                items.push(Item::Step(Step::Scale(if negative { -k } else { k })));
            }
            'X' => items.push(Item::Step(Step::Skip(repeat))),
            '(' => {
                let inner = parse_list(chars, pos, depth + 1)?;
                if inner.is_empty() {
                    return Err("empty group".into());
                }
                items.push(Item::Group {
                    repeat,
                    items: inner,
                });
            }
            'B' => {
                if number.is_some() {
                    return Err("BN/BZ take no repeat count".into());
                }
                let mode = match chars.get(*pos) {
                    Some('N') => BlankMode::Null,
                    Some('Z') => BlankMode::Zero,
                    _ => return Err("unknown B descriptor".into()),
                };
                *pos += 1;
                items.push(Item::Step(Step::Blank(mode)));
            }
            'I' => {
                let width = read_width(chars, pos, "I")?;
                if chars.get(*pos) == Some(&'.') {
                    // Iw.m: the minimum digit count matters only on output.
                    *pos += 1;
                    read_number(chars, pos)?.ok_or("I.m needs m")?;
                }
                push_data(&mut items, repeat, EditKind::Integer, width, 0);
            }
            'F' | 'E' | 'D' | 'G' => {
                if letter == 'E' && matches!(chars.get(*pos), Some('S') | Some('N')) {
                    *pos += 1; // ES / EN read like E on input
                }
                let width = read_width(chars, pos, "real")?;
                let decimals = if chars.get(*pos) == Some(&'.') {
                    *pos += 1;
                    read_number(chars, pos)?.ok_or("missing digits after '.'")?
                } else if letter == 'G' {
                    0
                } else {
                    return Err(format!("{letter}{width} needs a .d part"));
                };
                let decimals = u32::try_from(decimals).map_err(|_| "d too large")?;
                if matches!(letter, 'E' | 'G') && chars.get(*pos) == Some(&'E') {
                    // Ew.dEe: exponent width, irrelevant on input.
                    *pos += 1;
                    read_number(chars, pos)?.ok_or("missing exponent width")?;
                }
                push_data(&mut items, repeat, EditKind::Real, width, decimals);
            }
            other => {
                return Err(format!(
                    "edit descriptor {other:?} is not supported for numeric data"
                ))
            }
        }
    }
}

fn push_data(items: &mut Vec<Item>, repeat: usize, kind: EditKind, width: usize, decimals: u32) {
    let step = Step::Data {
        kind,
        width,
        decimals,
    };
    if repeat == 1 {
        items.push(Item::Step(step));
    } else {
        items.push(Item::Group {
            repeat,
            items: vec![Item::Step(step)],
        });
    }
}

/// Reads an unsigned decimal number if one starts at `pos`.
fn read_number(chars: &[char], pos: &mut usize) -> Result<Option<usize>, String> {
    let start = *pos;
    let mut value: usize = 0;
    while let Some(d) = chars.get(*pos).and_then(|c| c.to_digit(10)) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as usize))
            .ok_or("number too large")?;
        *pos += 1;
    }
    Ok((*pos > start).then_some(value))
}

/// Reads a nonzero field width of at most [`MAX_FIELD_WIDTH`].
fn read_width(chars: &[char], pos: &mut usize, what: &str) -> Result<usize, String> {
    match read_number(chars, pos)? {
        Some(w) if w > MAX_FIELD_WIDTH => Err(format!(
            "{what} field width {w} is above the limit of {MAX_FIELD_WIDTH}"
        )),
        Some(w) if w > 0 => Ok(w),
        _ => Err(format!("{what} descriptor needs a nonzero width")),
    }
}

/// Replaces every run of consecutive non-data steps by at most four steps
/// with the same effect: the records to advance, the columns to skip after
/// the last record break, the last scale factor and the last blank mode.
///
/// Without this a format could place up to [`MAX_STEPS`] control steps
/// (`(BN,BN,...,I1)`) before each value, and reading would cost that many
/// steps per value: quadratic time in the size of a hostile file.
fn compress(steps: Vec<Step>) -> Vec<Step> {
    #[derive(Default)]
    struct Run {
        records: usize,
        skip: usize,
        scale: Option<i32>,
        blank: Option<BlankMode>,
    }
    fn flush(run: &mut Run, out: &mut Vec<Step>) {
        let run = std::mem::take(run);
        if run.records > 0 {
            out.push(Step::NewRecord(run.records));
        }
        if run.skip > 0 {
            out.push(Step::Skip(run.skip));
        }
        if let Some(k) = run.scale {
            out.push(Step::Scale(k));
        }
        if let Some(m) = run.blank {
            out.push(Step::Blank(m));
        }
    }
    let mut out = Vec::with_capacity(steps.len());
    let mut run = Run::default();
    for step in steps {
        match step {
            Step::Data { .. } => {
                flush(&mut run, &mut out);
                out.push(step);
            }
            Step::Skip(n) => run.skip = run.skip.saturating_add(n),
            Step::NewRecord(n) => {
                // A record break makes earlier skips moot: it resets the column.
                run.records = run.records.saturating_add(n);
                run.skip = 0;
            }
            Step::Scale(k) => run.scale = Some(k),
            Step::Blank(m) => run.blank = Some(m),
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Flattens items with repeat counts into `out`, bounded by [`MAX_STEPS`].
fn expand(items: &[Item], repeat: usize, out: &mut Vec<Step>) -> Result<(), String> {
    for _ in 0..repeat {
        for item in items {
            match item {
                Item::Step(s) => {
                    if out.len() >= MAX_STEPS {
                        return Err("format expands to too many fields".into());
                    }
                    out.push(*s);
                }
                Item::Group { repeat, items } => expand(items, *repeat, out)?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversion_goes_to_last_top_level_group() {
        let f = FortranFormat::parse("(2X,3(1X,E10.3))").unwrap();
        let cols: Vec<(usize, usize)> = f.slots().take(6).map(|s| (s.record, s.col)).collect();
        // First record skips 2 columns; reverted records do not.
        assert_eq!(
            cols,
            vec![(0, 3), (0, 14), (0, 25), (1, 1), (1, 12), (1, 23)]
        );
    }

    #[test]
    fn slash_starts_a_new_record() {
        let f = FortranFormat::parse("(2I3/I4)").unwrap();
        let recs: Vec<(usize, usize)> = f.slots().take(4).map(|s| (s.record, s.col)).collect();
        assert_eq!(recs, vec![(0, 0), (0, 3), (1, 0), (2, 0)]);
    }

    #[test]
    fn zero_repeat_of_huge_group_is_bounded() {
        assert!(FortranFormat::parse("(999999999(999999999I1))").is_err());
    }
}
