//! numaplace-archcheck: the module structure of a crate, read from its source.
//!
//! [`ModuleGraph::of_crate`] reads a crate's `src/` with `syn` and builds the graph of
//! its top-level modules: an edge `a -> b` says that code in module `a` (or in a module
//! nested in it) names something in module `b`. [`ModuleGraph::cycles`] finds import
//! circles, and [`ModuleGraph::check_layers`] holds the modules to a table of layers.
//! Every edge keeps the file and line of one place that makes it, so a failure says
//! where to look.
//!
//! What counts as an edge: `use` declarations; paths in expressions, types, patterns
//! and trait bounds; `crate::`, `self::` and `super::` paths in the tokens of
//! attributes and macro invocations. Comments and doc comments never count. Test code
//! is exempt: a module or item under `#[cfg(test)]` is skipped with everything in it.
//!
//! The crate root's `mod` and `use` declarations are its facade and make no edge by
//! themselves; a name the root re-exports resolves to the module it comes from
//! (`crate::Engine` after `pub use engine::Engine;` is an edge to `engine`). Items the
//! root defines itself form the node [`ROOT`], and a path in their code that names a
//! root import counts as an edge to the import's module.

mod error;
mod graph;
mod layers;
mod location;
mod scan;

pub use error::Error;
pub use graph::ModuleGraph;
pub use layers::Violation;
pub use location::{Edge, Location};
pub use scan::ROOT;
