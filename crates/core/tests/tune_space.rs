//! The search spaces policies declare for `numaplace tune`: valid against the fields they
//! tune, and every draw a value of the space.

use numaplace_core::component::PolicyConfig;
use numaplace_core::tune::{Dim, Scale, Space, Value};
use rand::SeedableRng;

fn larowe() -> PolicyConfig {
    PolicyConfig::default_of("larowe").expect("larowe is registered")
}

#[test]
fn every_declared_space_is_valid_against_its_policys_fields() {
    let mut tunable = 0;
    for p in PolicyConfig::all() {
        let space = p.search_space();
        if space.dims.is_empty() {
            continue;
        }
        tunable += 1;
        space
            .validate(p.fields())
            .unwrap_or_else(|e| panic!("{}: {e}", p.kind()));
    }
    assert!(tunable >= 2, "larowe and dunx declare spaces");
}

#[test]
fn larowe_tunes_its_six_parameters_with_the_papers_extremes() {
    let space = larowe().search_space();
    let fields: Vec<&str> = space.dims.iter().map(|d| d.field).collect();
    assert_eq!(
        fields,
        [
            "freeze_window_ns",
            "recent_mod",
            "scan_delay_ns",
            "sample_passes",
            "defrost_trigger",
            "trigger_method"
        ]
    );
    let fw = space.dim("freeze_window_ns").unwrap();
    assert_eq!(fw.scale, Scale::Log);
    assert!(fw.specials.contains(&Value::Inf) && fw.specials.contains(&Value::Int(0)));
    let rm = space.dim("recent_mod").unwrap();
    assert!(rm.specials.contains(&Value::Int(-1)) && rm.specials.contains(&Value::Int(65_536)));
    assert!(space
        .dim("scan_delay_ns")
        .unwrap()
        .specials
        .contains(&Value::Inf));
}

#[test]
fn draws_stay_in_the_space_and_reach_every_special_value() {
    let space = larowe().search_space();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let mut seen_inf = false;
    let mut seen_negative = false;
    let (mut lo_fw, mut hi_fw) = (f64::INFINITY, 0.0f64);
    for _ in 0..20_000 {
        let v = space.sample(&mut rng);
        assert!(space.contains(&v), "{v:?}");
        seen_inf |= v[0] == Value::Inf;
        seen_negative |= v[1] == Value::Int(-1);
        if let Value::Int(x) = v[0] {
            if x > 0 {
                lo_fw = lo_fw.min(x as f64);
                hi_fw = hi_fw.max(x as f64);
            }
        }
    }
    assert!(seen_inf && seen_negative);
    // Log scale: the draws cover the decades, near both ends of 1 ms .. 10 s.
    assert!(lo_fw < 2e6 && hi_fw > 5e9, "{lo_fw} .. {hi_fw}");
}

#[test]
fn a_range_beyond_the_fields_declared_range_is_refused() {
    let p = larowe();
    let mut space = p.search_space();
    space.narrow("recent_mod", 1.0, 1e6).unwrap();
    let e = space.validate(p.fields()).unwrap_err();
    assert_eq!(e.field, "recent_mod");
    assert!(e.message.contains("declared range"), "{e}");
}

#[test]
fn an_empty_or_non_positive_log_range_is_refused() {
    let p = larowe();
    let mut space = p.search_space();
    space.narrow("freeze_window_ns", 1e9, 1e6).unwrap();
    assert!(space
        .validate(p.fields())
        .unwrap_err()
        .message
        .contains("exceeds"));
    let mut space = p.search_space();
    space.narrow("freeze_window_ns", 0.0, 1e6).unwrap();
    assert!(space
        .validate(p.fields())
        .unwrap_err()
        .message
        .contains("positive"));
}

#[test]
fn a_parameter_the_policy_does_not_have_is_refused() {
    let p = larowe();
    let space = Space::new(&[Dim::range(
        "no_such",
        0.0,
        1.0,
        false,
        Scale::Linear,
        "test",
    )]);
    assert!(space
        .validate(p.fields())
        .unwrap_err()
        .message
        .contains("no such"));
    assert!(p.search_space().narrow("no_such", 0.0, 1.0).is_err());
}

#[test]
fn a_fixed_parameter_leaves_the_space() {
    let mut space = larowe().search_space();
    assert!(space.fix("sample_passes"));
    assert!(space.dim("sample_passes").is_none());
    assert_eq!(space.dims.len(), 5);
}
