//! Reading `[[claim]]` tables: each kind takes exactly its own fields, and a claim
//! that is missing one, has one of another kind or an unknown key is refused with a
//! message naming the claim or its path, the field and the line.

use numaplace_study::claims::{Check, Order};
use numaplace_study::reproduce::load_paper;

/// Loads a paper with one study `s` and `claim` as its only `[[claim]]`; the error text
/// if it is refused.
fn load(claim: &str) -> Result<Vec<numaplace_study::Claim>, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), "name = \"s\"\n").unwrap();
    let paper = format!(
        "title = \"t\"\nstudies = [\"s.toml\"]\n\n[[claim]]\nname = \"c\"\nstudy = \"s\"\n{claim}"
    );
    std::fs::write(dir.path().join("paper.toml"), paper).unwrap();
    load_paper(dir.path())
        .map(|(paper, _)| paper.claims)
        .map_err(|e| format!("{e:#}"))
}

fn refused(claim: &str) -> String {
    load(claim).expect_err("the claim should be refused")
}

#[test]
fn a_claim_without_a_field_its_kind_requires_is_refused_naming_claim_field_and_line() {
    let e = refused("kind = \"ratio\"\nat_least = 1.0\n");
    assert!(
        e.contains("claim[0] `c` (line 4)") && e.contains("missing field `right`"),
        "{e}"
    );
}

#[test]
fn a_field_of_another_kind_is_refused_naming_the_field_and_its_line() {
    let e = refused("kind = \"ratio\"\nright = {}\nat_least = 1.0\ntolerance = 0.5\n");
    assert!(
        e.contains("claim[0].tolerance") && e.contains("unknown field `tolerance`"),
        "{e}"
    );
    assert!(e.contains("(line 10)"), "{e}");
}

#[test]
fn an_unknown_key_is_refused_naming_the_key_and_its_line() {
    let e = refused("kind = \"value\"\nat_most = 1.0\nat_mots = 2.0\n");
    assert!(
        e.contains("claim[0].at_mots") && e.contains("unknown field `at_mots`"),
        "{e}"
    );
    assert!(e.contains("(line 9)"), "{e}");
}

#[test]
fn a_field_written_before_kind_is_still_checked_against_the_kind() {
    let e = refused("tolerance = 0.5\nkind = \"ratio\"\nright = {}\nat_least = 1.0\n");
    assert!(e.contains("unknown field `tolerance`"), "{e}");
}

#[test]
fn a_mistyped_field_is_named_with_its_path_and_line() {
    let e = refused("kind = \"ratio\"\nright = {}\nat_least = \"much\"\n");
    assert!(
        e.contains("claim[0].at_least") && e.contains("(line 9)"),
        "{e}"
    );
}

#[test]
fn a_mistyped_field_written_before_kind_is_named() {
    let e = refused("at_least = \"much\"\nkind = \"ratio\"\nright = {}\n");
    assert!(e.contains("at_least") && e.contains("expected f64"), "{e}");
}

#[test]
fn a_trend_refuses_the_direction_of_a_comparison() {
    let e = refused("kind = \"trend\"\nover = \"a.b\"\nexpect = \"less\"\n");
    assert!(
        e.contains("claim[0].expect") && e.contains("`increasing` or `decreasing`"),
        "{e}"
    );
}

#[test]
fn a_compare_accepts_the_sign_aliases_of_its_direction() {
    let claims = load("kind = \"compare\"\nright = {}\nexpect = \"<\"\n").unwrap();
    match &claims[0].check {
        Check::Compare(c) => assert_eq!(c.expect, Order::Less),
        other => panic!("read as {other:?}"),
    }
}

#[test]
fn common_fields_may_follow_the_fields_of_the_kind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.toml"), "name = \"s\"\n").unwrap();
    let paper = "title = \"t\"\nstudies = [\"s.toml\"]\n\n[[claim]]\nkind = \"value\"\n\
                 at_most = 1.0\nname = \"late\"\ntext = \"words\"\nstudy = \"s\"\n";
    std::fs::write(dir.path().join("paper.toml"), paper).unwrap();
    let (paper, _) = load_paper(dir.path()).unwrap();
    let c = &paper.claims[0];
    assert_eq!((c.name.as_str(), c.text.as_str()), ("late", "words"));
}

#[test]
fn a_claim_without_a_kind_is_refused_naming_the_field() {
    let e = refused("at_most = 1.0\n");
    assert!(e.contains("claim[0] `c`") && e.contains("`kind`"), "{e}");
}

#[test]
fn a_speedup_with_right_but_no_bound_or_direction_is_refused() {
    let e = refused("kind = \"speedup\"\nover = \"a.b\"\nat = 4\nright = {}\n");
    assert!(
        e.contains("claim[0] `c` (line 4)") && e.contains("`expect`"),
        "{e}"
    );
}
