//! Holding a crate's modules to a table of layers.

use crate::graph::ModuleGraph;
use crate::location::Location;
use crate::scan::ROOT;
use std::collections::BTreeMap;
use std::fmt;

/// One way a crate breaks its layer table.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Violation {
    /// A module uses a module of a higher layer.
    Upward {
        /// The module that uses the other.
        from: String,
        /// Its layer.
        from_layer: String,
        /// The module used.
        to: String,
        /// Its layer, above `from_layer`.
        to_layer: String,
        /// The first place where `from` uses `to`.
        at: Location,
    },
    /// A module of the crate is in no layer.
    Unlisted {
        /// The module.
        module: String,
    },
    /// A module is in more than one layer.
    Duplicate {
        /// The module.
        module: String,
        /// The layers that list it, in table order.
        layers: Vec<String>,
    },
    /// A layer lists a name that is not a module of the crate.
    NotAModule {
        /// The name.
        module: String,
        /// The layer that lists it.
        layer: String,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Upward {
                from,
                from_layer,
                to,
                to_layer,
                at,
            } => write!(
                f,
                "{at}: `{from}` (layer {from_layer}) uses `{to}` (layer {to_layer}, higher)"
            ),
            Violation::Unlisted { module } => {
                write!(f, "module `{module}` is in no layer: place it in the table")
            }
            Violation::Duplicate { module, layers } => write!(
                f,
                "module `{module}` is in more than one layer: {}",
                layers.join(", ")
            ),
            Violation::NotAModule { module, layer } => write!(
                f,
                "layer {layer} lists `{module}`, which is not a module of the crate"
            ),
        }
    }
}

impl ModuleGraph {
    /// Holds the modules to `layers`, listed from the lowest layer up, each a name and
    /// its modules: a module may use modules of its own layer and of lower layers only,
    /// and every module of the crate must be in exactly one layer. The root,
    /// [`ROOT`], may be listed even when it is not a node. Returns the violations,
    /// sorted; none when the crate keeps to the table.
    pub fn check_layers(&self, layers: &[(&str, &[&str])]) -> Vec<Violation> {
        let mut violations = Vec::new();
        let mut placed: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (level, (layer, modules)) in layers.iter().enumerate() {
            for &module in *modules {
                placed.entry(module).or_default().push(level);
                if module != ROOT && !self.modules().iter().any(|m| m == module) {
                    violations.push(Violation::NotAModule {
                        module: module.to_string(),
                        layer: layer.to_string(),
                    });
                }
            }
        }
        for (module, levels) in &placed {
            if levels.len() > 1 {
                violations.push(Violation::Duplicate {
                    module: module.to_string(),
                    layers: levels.iter().map(|&l| layers[l].0.to_string()).collect(),
                });
            }
        }
        for module in self.modules() {
            if !placed.contains_key(module.as_str()) {
                violations.push(Violation::Unlisted {
                    module: module.clone(),
                });
            }
        }
        for edge in self.edges() {
            let (Some(from), Some(to)) =
                (placed.get(edge.from.as_str()), placed.get(edge.to.as_str()))
            else {
                continue;
            };
            // A module listed twice is reported as such; its edges are judged by the
            // lowest layer it was given.
            let (from, to) = (from[0], to[0]);
            if to > from {
                violations.push(Violation::Upward {
                    from: edge.from.clone(),
                    from_layer: layers[from].0.to_string(),
                    to: edge.to.clone(),
                    to_layer: layers[to].0.to_string(),
                    at: edge.at.clone(),
                });
            }
        }
        violations.sort();
        violations
    }
}
