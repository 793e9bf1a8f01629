//! The graph of a crate's top-level modules and its import circles.

use crate::error::Error;
use crate::location::Edge;
use crate::scan::scan_crate;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The top-level modules of one crate and the edges between them.
#[derive(Clone, Debug)]
pub struct ModuleGraph {
    src_dir: PathBuf,
    modules: Vec<String>,
    edges: Vec<Edge>,
}

impl ModuleGraph {
    /// Reads the crate whose source directory is `src_dir` (holding `lib.rs`, or else
    /// `main.rs`) and every module file it declares outside `#[cfg(test)]`.
    pub fn of_crate(src_dir: impl AsRef<Path>) -> Result<ModuleGraph, Error> {
        let src_dir = src_dir.as_ref().to_path_buf();
        let scan = scan_crate(&src_dir)?;
        let edges = scan
            .edges
            .into_iter()
            .map(|((from, to), at)| Edge { from, to, at })
            .collect();
        Ok(ModuleGraph {
            src_dir,
            modules: scan.nodes.into_iter().collect(),
            edges,
        })
    }

    /// The source directory the graph was read from.
    pub fn src_dir(&self) -> &Path {
        &self.src_dir
    }

    /// The nodes, sorted: the crate's top-level modules, and [`ROOT`](crate::ROOT) when
    /// the root defines items of its own or is named by a path.
    pub fn modules(&self) -> &[String] {
        &self.modules
    }

    /// Every edge, sorted by its two ends.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// The edges whose two ends are both among `modules`, sorted by their ends.
    pub fn edges_among(&self, modules: &[String]) -> Vec<&Edge> {
        self.edges
            .iter()
            .filter(|e| modules.contains(&e.from) && modules.contains(&e.to))
            .collect()
    }

    /// The import circles: every strongly connected component of more than one module,
    /// each sorted, the list sorted.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let index: BTreeMap<&str, usize> = self
            .modules
            .iter()
            .enumerate()
            .map(|(i, m)| (m.as_str(), i))
            .collect();
        let mut successors = vec![Vec::new(); self.modules.len()];
        for edge in &self.edges {
            successors[index[edge.from.as_str()]].push(index[edge.to.as_str()]);
        }
        let mut cycles: Vec<Vec<String>> = strongly_connected(&successors)
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|component| {
                let mut names: Vec<String> = component
                    .into_iter()
                    .map(|i| self.modules[i].clone())
                    .collect();
                names.sort();
                names
            })
            .collect();
        cycles.sort();
        cycles
    }
}

/// Tarjan's strongly connected components of the graph given by its successor lists.
fn strongly_connected(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'g> {
        successors: &'g [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn connect(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.successors[v] {
            match s.index[w] {
                None => {
                    connect(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(w_index) if s.on_stack[w] => s.low[v] = s.low[v].min(w_index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let n = successors.len();
    let mut state = State {
        successors,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            connect(&mut state, v);
        }
    }
    state.components
}
