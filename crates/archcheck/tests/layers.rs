//! Holding a crate's modules to a layer table, one behaviour per test.

mod common;

use common::source;
use numaplace_archcheck::{ModuleGraph, Violation};

const TWO_LAYERS: &[(&str, &[&str])] = &[("bottom", &["low"]), ("top", &["high"])];

#[test]
fn layer_violation_names_the_file_and_line() {
    let dir = source(&[
        ("lib.rs", "mod high;\nmod low;\n"),
        ("high.rs", "pub struct H;\n"),
        ("low.rs", "pub struct L;\n\nuse crate::high::H;\n"),
    ]);
    let graph = ModuleGraph::of_crate(dir.path()).unwrap();
    let violations = graph.check_layers(TWO_LAYERS);
    assert_eq!(violations.len(), 1, "{violations:?}");
    let Violation::Upward { from, to, at, .. } = &violations[0] else {
        panic!("{violations:?}");
    };
    assert_eq!((from.as_str(), to.as_str()), ("low", "high"));
    assert_eq!((at.file.clone(), at.line), (dir.path().join("low.rs"), 3));
    assert!(violations[0].to_string().contains("low.rs:3"));
}

#[test]
fn using_a_lower_or_the_same_layer_is_allowed() {
    let dir = source(&[
        ("lib.rs", "mod high;\nmod low;\nmod low2;\n"),
        ("high.rs", "pub struct H(crate::low::L);\n"),
        ("low.rs", "pub struct L(crate::low2::M);\n"),
        ("low2.rs", "pub struct M;\n"),
    ]);
    let graph = ModuleGraph::of_crate(dir.path()).unwrap();
    let layers: &[(&str, &[&str])] = &[("bottom", &["low", "low2"]), ("top", &["high"])];
    assert_eq!(graph.check_layers(layers), []);
}

#[test]
fn unlisted_module_is_a_violation() {
    let dir = source(&[
        ("lib.rs", "mod high;\nmod low;\nmod new;\n"),
        ("high.rs", ""),
        ("low.rs", ""),
        ("new.rs", ""),
    ]);
    let graph = ModuleGraph::of_crate(dir.path()).unwrap();
    assert_eq!(
        graph.check_layers(TWO_LAYERS),
        [Violation::Unlisted {
            module: "new".into()
        }]
    );
}

#[test]
fn module_in_two_layers_is_a_violation() {
    let dir = source(&[
        ("lib.rs", "mod high;\nmod low;\n"),
        ("high.rs", ""),
        ("low.rs", ""),
    ]);
    let graph = ModuleGraph::of_crate(dir.path()).unwrap();
    let layers: &[(&str, &[&str])] = &[("bottom", &["low"]), ("top", &["high", "low"])];
    assert_eq!(
        graph.check_layers(layers),
        [Violation::Duplicate {
            module: "low".into(),
            layers: vec!["bottom".into(), "top".into()]
        }]
    );
}

#[test]
fn listed_name_that_is_not_a_module_is_a_violation() {
    let dir = source(&[
        ("lib.rs", "mod high;\nmod low;\n"),
        ("high.rs", ""),
        ("low.rs", ""),
    ]);
    let graph = ModuleGraph::of_crate(dir.path()).unwrap();
    let layers: &[(&str, &[&str])] = &[("bottom", &["low", "gone"]), ("top", &["high"])];
    assert_eq!(
        graph.check_layers(layers),
        [Violation::NotAModule {
            module: "gone".into(),
            layer: "bottom".into()
        }]
    );
}
