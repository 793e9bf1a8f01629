//! What makes an edge of the module graph, one behaviour per test.

mod common;

use common::{edges, source};
use numaplace_archcheck::{Error, ModuleGraph};

fn graph(files: &[(&str, &str)]) -> (ModuleGraph, Vec<String>) {
    let dir = source(files);
    let graph = ModuleGraph::of_crate(dir.path()).expect("the fixture parses");
    let edges = edges(&graph, dir.path());
    (graph, edges)
}

#[test]
fn two_module_circle_is_found() {
    let (graph, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        ("b.rs", "pub struct B;\npub fn f(_: crate::a::A) {}\n"),
    ]);
    assert_eq!(graph.cycles(), vec![vec!["a".to_string(), "b".to_string()]]);
    assert_eq!(edges, ["a -> b @ a.rs:1", "b -> a @ b.rs:2"]);
}

#[test]
fn circle_through_a_root_reexport_is_found() {
    let (graph, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\npub use b::Thing;\n"),
        ("a.rs", "pub struct A;\npub fn f(_: crate::Thing) {}\n"),
        ("b.rs", "pub struct Thing(crate::a::A);\n"),
    ]);
    assert_eq!(graph.cycles(), vec![vec!["a".to_string(), "b".to_string()]]);
    assert_eq!(edges, ["a -> b @ a.rs:2", "b -> a @ b.rs:1"]);
}

#[test]
fn reexports_alone_make_no_edge_from_the_root() {
    let (graph, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\npub use a::A;\npub use b::*;\n"),
        ("a.rs", "pub struct A;\n"),
        ("b.rs", "pub struct B;\n"),
    ]);
    assert_eq!(graph.modules(), ["a", "b"]);
    assert!(edges.is_empty(), "{edges:?}");
}

#[test]
fn root_code_using_a_module_is_an_edge_from_the_root() {
    let (graph, edges) = graph(&[
        (
            "main.rs",
            "mod cmd;\nfn helper() {}\nfn main() {\n    cmd::run();\n}\n",
        ),
        ("cmd.rs", "pub fn run() {\n    crate::helper();\n}\n"),
    ]);
    assert_eq!(
        graph.cycles(),
        vec![vec!["cmd".to_string(), "crate".to_string()]]
    );
    assert_eq!(
        edges,
        ["cmd -> crate @ cmd.rs:2", "crate -> cmd @ main.rs:4"]
    );
}

#[test]
fn root_code_using_a_root_import_is_an_edge_to_its_module() {
    let (_, edges) = graph(&[
        (
            "lib.rs",
            "mod a;\nuse a::A;\npub fn make() -> A {\n    A\n}\n",
        ),
        ("a.rs", "pub struct A;\n"),
    ]);
    assert_eq!(edges, ["crate -> a @ lib.rs:3"]);
}

#[test]
fn path_in_a_doc_comment_makes_no_edge() {
    let (graph, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "//! Module docs name [`crate::b::B`].\n\
             /// See [`crate::b::B`].\n\
             #[doc = \"crate::b::B\"]\n\
             pub struct A; // crate::b::B\n\
             /* crate::b::B */\n",
        ),
        ("b.rs", "pub struct B(crate::a::A);\n"),
    ]);
    assert!(graph.cycles().is_empty());
    assert_eq!(edges, ["b -> a @ b.rs:1"]);
}

#[test]
fn cfg_test_module_makes_no_edge() {
    let (graph, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "pub struct A;\n\
             #[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n\
             #[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod more;\n\
             #[cfg(all(test, unix))]\nmod unix_tests;\n",
        ),
        ("a_tests.rs", "use crate::b::B;\n"),
        ("b.rs", "pub struct B(crate::a::A);\n"),
    ]);
    assert!(graph.cycles().is_empty());
    assert_eq!(edges, ["b -> a @ b.rs:1"]);
}

#[test]
fn cfg_test_item_makes_no_edge() {
    let (_, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "pub struct A;\n\
             #[cfg(test)]\nfn helper() -> crate::b::B { crate::b::B }\n\
             impl A {\n    #[cfg(test)]\n    fn new() -> crate::b::B { crate::b::B }\n}\n",
        ),
        ("b.rs", "pub struct B;\n"),
    ]);
    assert!(edges.is_empty(), "{edges:?}");
}

#[test]
fn super_resolves_relative_to_the_files_module() {
    let (_, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a/mod.rs", "mod inner;\npub struct A;\n"),
        (
            "a/inner.rs",
            "use super::A;\nfn f() -> super::super::b::B {\n    todo!()\n}\n",
        ),
        ("b.rs", "pub struct B;\n"),
    ]);
    assert_eq!(edges, ["a -> b @ a/inner.rs:2"]);
}

#[test]
fn self_stays_within_the_module() {
    let (_, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "mod b {\n    pub struct B;\n}\npub use self::b::B;\n",
        ),
        ("b.rs", "pub struct B;\n"),
    ]);
    assert!(edges.is_empty(), "{edges:?}");
}

#[test]
fn path_in_an_attribute_counts() {
    let (_, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\npub use b::TIME_LIMIT;\n"),
        (
            "a.rs",
            "pub struct A {\n    #[field(max = crate::TIME_LIMIT)]\n    pub t: u64,\n}\n",
        ),
        ("b.rs", "pub const TIME_LIMIT: u64 = 1;\n"),
    ]);
    assert_eq!(edges, ["a -> b @ a.rs:2"]);
}

#[test]
fn path_in_a_macro_counts() {
    let (_, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "pub fn f(x: u8) -> bool {\n    matches!(x, crate::b::ONE)\n}\n",
        ),
        ("b.rs", "pub const ONE: u8 = 1;\n"),
    ]);
    assert_eq!(edges, ["a -> b @ a.rs:2"]);
}

#[test]
fn string_in_a_macro_makes_no_edge() {
    let (_, edges) = graph(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "pub fn f() -> String {\n    format!(\"crate::b::ONE {}\", 1)\n}\n",
        ),
        ("b.rs", "pub const ONE: u8 = 1;\n"),
    ]);
    assert!(edges.is_empty(), "{edges:?}");
}

#[test]
fn visibility_makes_no_edge() {
    let (graph, edges) = graph(&[
        ("lib.rs", "mod a;\npub fn f() {}\n"),
        ("a.rs", "pub(crate) struct A;\npub(in crate::a) fn g() {}\n"),
    ]);
    assert_eq!(graph.modules(), ["a", "crate"]);
    assert!(edges.is_empty(), "{edges:?}");
}

#[test]
fn missing_module_file_is_an_error() {
    let dir = source(&[("lib.rs", "mod gone;\n")]);
    let error = ModuleGraph::of_crate(dir.path()).unwrap_err();
    assert!(
        matches!(&error, Error::MissingModule { name, at, .. } if name == "gone" && at.line == 1),
        "{error}"
    );
}
