//! Bad specs give errors naming the file and the field.

use numaplace_study::parse_spec;

fn err(text: &str) -> String {
    parse_spec(text, "bad.toml").unwrap_err().to_string()
}

const HEAD: &str = "name = \"t\"\n[base]\nworkload.kind = \"jacobi\"\n";

#[test]
fn unknown_top_level_field_is_named() {
    let e = err("name = \"t\"\ntrails = 3\n");
    assert!(
        e.contains("bad.toml") && e.contains("trails") && e.contains("line 2"),
        "{e}"
    );
}

#[test]
fn unknown_field_inside_axis_names_the_axis_path() {
    let e = err(&format!("{HEAD}[[axis]]\nfield = \"a.b\"\nvalue = [1]\n"));
    assert!(e.contains("axis[0]") && e.contains("value"), "{e}");
}

#[test]
fn unknown_field_inside_output_plot_is_named() {
    let e = err(&format!(
        "{HEAD}[[output.plot]]\nkind = \"line\"\nx = \"a\"\nfile = \"f\"\ncolour = 1\n"
    ));
    assert!(e.contains("output.plot[0]") && e.contains("colour"), "{e}");
}

#[test]
fn line_plot_options_on_another_kind_of_plot_are_named() {
    let e = err(&format!(
        "{HEAD}[[output.plot]]\nkind = \"bar\"\nfile = \"f\"\nlevels = [{{ a = 1 }}]\n"
    ));
    assert!(
        e.contains("output.plot[0].levels") && e.contains("only line plots"),
        "{e}"
    );
    let ok = parse_spec(
        &format!("{HEAD}[[output.plot]]\nkind = \"line\"\nx = \"a\"\nfile = \"f\"\nx_scale = \"category\"\nx_unit = \"ms\"\ny_unit = \"s\"\nlevels = [{{ a = 1 }}]\n"),
        "good.toml",
    );
    assert!(ok.is_ok(), "{ok:?}");
}

#[test]
fn empty_axis_values_are_rejected() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"machine.nodes\"\nvalues = []\n"
    ));
    assert!(e.contains("axis[0].values") && e.contains("empty"), "{e}");
}

#[test]
fn range_with_nonpositive_step_is_rejected() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"x.y\"\nrange = {{ from = 1, to = 5, step = 0 }}\n"
    ));
    assert!(e.contains("axis[0].range.step"), "{e}");
}

#[test]
fn range_with_from_above_to_is_rejected() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"x.y\"\nrange = {{ from = 9, to = 5, step = 1 }}\n"
    ));
    assert!(e.contains("axis[0].range") && e.contains("greater"), "{e}");
}

#[test]
fn range_missing_a_part_is_rejected() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"x.y\"\nrange = {{ from = 1, to = 5 }}\n"
    ));
    assert!(
        e.contains("axis[0].range.step") && e.contains("missing"),
        "{e}"
    );
}

#[test]
fn range_with_too_many_points_is_rejected() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"x.y\"\nrange = {{ from = 0, to = 1e9, step = 1 }}\n"
    ));
    assert!(e.contains("axis[0].range") && e.contains("points"), "{e}");
}

#[test]
fn duplicate_axis_fields_are_rejected() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"x.y\"\nvalues = [1]\n[[axis]]\nfield = \"x.y\"\nvalues = [2]\n"
    ));
    assert!(
        e.contains("axis[1].field") && e.contains("duplicate"),
        "{e}"
    );
}

#[test]
fn zero_trials_are_rejected() {
    let e = err("name = \"t\"\ntrials = 0\n");
    assert!(e.contains("`trials`"), "{e}");
}

#[test]
fn wrong_type_names_the_field() {
    let e = err(&format!("{HEAD}[output]\nconfidence = \"high\"\n"));
    assert!(e.contains("output.confidence"), "{e}");
}

#[test]
fn axis_under_a_plain_value_is_rejected() {
    let e = err("name = \"t\"\n[base]\nmachine = \"x\"\n[[axis]]\nfield = \"machine.nodes\"\nvalues = [1]\n");
    assert!(e.contains("axis[0].field"), "{e}");
}

#[test]
fn quick_axis_must_name_an_axis() {
    let e = err(&format!("{HEAD}[quick]\naxis = {{ \"nope.x\" = [1] }}\n"));
    assert!(e.contains("quick.axis.nope.x"), "{e}");
}

#[test]
fn unknown_field_in_output_names_the_file_field_and_line() {
    let e = err(&format!("{HEAD}[output]\nmetrc = \"x\"\n"));
    assert!(
        e.contains("bad.toml") && e.contains("output.metrc") && e.contains("line 5"),
        "{e}"
    );
}

#[test]
fn unknown_field_in_quick_names_the_file_field_and_line() {
    let e = err(&format!("{HEAD}[quick]\ntrails = 1\n"));
    assert!(
        e.contains("bad.toml") && e.contains("quick.trails") && e.contains("line 5"),
        "{e}"
    );
}

#[test]
fn unknown_field_in_an_axis_names_the_file_field_and_line() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"a.b\"\nvalues = [1]\n[[axis]]\nfield = \"c.d\"\nrange = {{ from = 1, to = 3, stp = 1 }}\n"
    ));
    assert!(
        e.contains("bad.toml") && e.contains("axis[1].range.stp") && e.contains("line 9"),
        "{e}"
    );
}

#[test]
fn misspelled_range_key_of_a_quick_axis_names_the_key_and_line() {
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"a.b\"\nvalues = [1, 2]\n[quick]\naxis = {{ \"a.b\" = {{ from = 1, to = 2, stp = 1 }} }}\n"
    ));
    assert!(
        e.contains("quick.axis.a.b") && e.contains("stp") && e.contains("line 8"),
        "{e}"
    );
}

#[test]
fn seeds_beyond_a_toml_integer_are_rejected() {
    let e = err("name = \"t\"\nseed_base = 9223372036854775807\ntrials = 2\n");
    assert!(e.contains("trials") && e.contains("seed_base"), "{e}");
    let e = err("name = \"t\"\nseed_base = 9223372036854775806\n[quick]\ntrials = 3\n");
    assert!(e.contains("quick.trials"), "{e}");
}

#[test]
fn run_count_overflow_is_rejected_without_expanding() {
    let e = err(
        "name = \"t\"\nseed_base = 0\ntrials = 9223372036854775807\n[[axis]]\nfield = \"a.b\"\nvalues = [1, 2, 3]\n",
    );
    assert!(
        e.contains("overflows") && e.contains("3 values of a.b"),
        "{e}"
    );
}

mod expansion {
    use numaplace_study::expand;
    use numaplace_study::parse_spec;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The expansion is the full product, numbered in order, with trials
        /// innermost and the first axis outermost.
        #[test]
        fn expansion_is_ordered_cartesian_product(a in 1usize..5, b in 1usize..4, trials in 1u64..4, seed_base in 0u64..100) {
            let av: Vec<String> = (0..a).map(|i| i.to_string()).collect();
            let bv: Vec<String> = (0..b).map(|i| format!("\"v{i}\"")).collect();
            let text = format!(
                "name='p'\ntrials={trials}\nseed_base={seed_base}\n[[axis]]\nfield='x.a'\nvalues=[{}]\n[[axis]]\nfield='x.b'\nvalues=[{}]\n",
                av.join(","), bv.join(",")
            );
            let spec = parse_spec(&text, "p.toml").unwrap();
            let pts = expand(&spec, false);
            prop_assert_eq!(pts.len(), a * b * trials as usize);
            for (i, p) in pts.iter().enumerate() {
                prop_assert_eq!(p.index, i);
                prop_assert_eq!(&p.id, &format!("r{i:06}"));
                prop_assert_eq!(p.seed, seed_base + (i as u64 % trials));
                let ai = i / (b * trials as usize);
                prop_assert_eq!(&p.settings[0].1, &toml::Value::Integer(ai as i64));
            }
        }
    }
}

const CASES: &str = r#"
name = "cases"
[base.policy]
kind = "static"
[[axis]]
field = "type"
labels = ["None", "1D(B50)"]
values = [
  { policy = { kind = "static", placement = "program" } },
  { policy = { kind = "holliday-daemon", blocking_ns = 50000 }, "machine.nodes" = 4 },
]
[quick.axis]
type = ["1D(B50)"]
"#;

#[test]
fn case_axis_applies_every_setting_of_a_case_and_records_its_label() {
    let spec = parse_spec(CASES, "c.toml").unwrap();
    let pts = numaplace_study::expand(&spec, false);
    assert_eq!(pts.len(), 2);
    assert_eq!(
        pts[1].settings,
        vec![("type".to_string(), toml::Value::from("1D(B50)"))]
    );
    let cfg = &pts[1].config;
    assert_eq!(cfg["policy"]["kind"].as_str(), Some("holliday-daemon"));
    assert_eq!(
        cfg["policy"].get("placement"),
        None,
        "the case replaces the policy table"
    );
    assert_eq!(cfg["machine"]["nodes"].as_integer(), Some(4));
}

#[test]
fn quick_mode_narrows_a_case_axis_by_label() {
    let spec = parse_spec(CASES, "c.toml").unwrap();
    let pts = numaplace_study::expand(&spec, true);
    assert_eq!(pts.len(), 1);
    assert_eq!(pts[0].settings[0].1.as_str(), Some("1D(B50)"));
}

#[test]
fn case_axis_needs_one_label_per_value() {
    let e = err(&CASES.replace(r#"labels = ["None", "1D(B50)"]"#, r#"labels = ["None"]"#));
    assert!(e.contains("axis[0].labels"), "{e}");
}

#[test]
fn case_axis_values_must_be_tables() {
    let e = err(r#"
name = "x"
[[axis]]
field = "type"
labels = ["a"]
values = [3]
"#);
    assert!(e.contains("axis[0].values[0]"), "{e}");
}

#[test]
fn quick_cases_add_settings_to_named_cases_in_quick_mode_only() {
    let text = format!(
        "{HEAD}[[axis]]\nfield = \"w\"\nlabels = [\"a\", \"b\"]\nvalues = [{{ \"workload.n\" = 512 }}, {{ \"workload.n\" = 256, \"workload.iterations\" = 9 }}]\n[quick]\ncases = {{ w = {{ b = {{ \"workload.n\" = 16 }} }} }}\n"
    );
    let spec = parse_spec(&text, "good.toml").unwrap();
    let n = |quick: bool, i: usize| {
        let p = &numaplace_study::expand(&spec, quick)[i];
        let w = p.config["workload"].as_table().unwrap();
        (
            w["n"].as_integer(),
            w.get("iterations").and_then(|v| v.as_integer()),
        )
    };
    assert_eq!(n(false, 1), (Some(256), Some(9)));
    assert_eq!(
        n(true, 1),
        (Some(16), Some(9)),
        "the case's own settings stay"
    );
    assert_eq!(n(true, 0), (Some(512), None), "other cases are untouched");
    let e = err(&text.replace("b = {", "c = {"));
    assert!(
        e.contains("quick.cases.w.c") && e.contains("no label"),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD}[[axis]]\nfield = \"workload.n\"\nvalues = [1]\n[quick]\ncases = {{ \"workload.n\" = {{ a = {{ x = 1 }} }} }}\n"
    ));
    assert!(e.contains("no case axis"), "{e}");
}
