//! `backprop`: the recurrent back-propagation simulator of PLATINUM §5.3: a three-layer
//! network learning the classic encoder problem (40 units: 16 input, 8 hidden, 16 output;
//! 16 input/output pairs), parallelised by a plain for-loop over units. Each thread
//! simulates its units (unit u to thread u mod p) over and over with no synchronisation at
//! all, relying on the atomicity of word accesses: fine-grain write sharing of the
//! activations, errors and weights, which the coherent memory should give up on and freeze.
//!
//! The network is an n-h-n encoder (`units` = 2n + h, `hidden` = h): every hidden unit
//! receives a connection from every input unit, every output unit from every hidden unit.
//! The weights are stored as the general recurrent simulator stores them, one `units` x
//! `units` matrix (row i: the weights into unit i), and a unit touches only its connected
//! entries. Per pattern an input unit clamps its activation (reads the pattern, writes its
//! activation); a hidden or output unit relaxes its activation (its weight row over the
//! previous layer and those activations, then writes its own), relaxes its error signal
//! backwards (an output unit against the pattern's target; a hidden unit over its column
//! of weights into the output layer and the output errors) and updates its weight row over
//! the previous layer. The network's data are packed as the simulator declared them:
//! weights, activations, errors and the patterns.
//!
//! The computation per connection visited is one single-precision multiply-add on the
//! Butterfly Plus's MC68881 coprocessor at 16.67 MHz: 71 cycles for FMUL and 51 for FADD
//! (register to register, the coprocessor's published times) and about 20 cycles of the
//! MC68020's loop and address arithmetic, 142 cycles or 8.5 us. The loads of the weight and
//! the activation are the simulated references, charged apart.

use super::common::thread_count;
use crate::component::{Op, Program};
use crate::error::ConfigError;
use crate::estimate::{runs_of, Footprint};
use crate::fields::Fields;
use crate::machine::Machine;
use crate::memory::{ArrayId, Layout};
use crate::types::{Ns, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `backprop`, with the paper's network as defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct BackpropConfig {
    /// Units. Default 40 (the §5.3 network: 16 input, 8 hidden, 16 output).
    #[field(min = 3, max = 65_536)]
    pub units: u32,
    /// Hidden units; the rest split evenly into input and output units. Default 8.
    #[field(min = 1, max = 65_534)]
    pub hidden: u32,
    /// Input/output pairs. Default 16 (§5.3).
    #[field(min = 1)]
    pub patterns: u32,
    /// Passes over all patterns each thread makes. Default 20 (not given in the paper).
    #[field(min = 1)]
    pub epochs: u32,
    /// Relaxation steps per pattern, forward and backward. Default 5 (not given in the
    /// paper).
    #[field(min = 1)]
    pub relax_steps: u32,
    /// Threads; default: one per processor.
    #[field(min = 1, max = crate::estimate::MAX_THREADS)]
    pub threads: Option<u32>,
    /// Computation per connection visited (a floating-point multiply-add), in ns.
    /// Default 8500: 142 cycles of the MC68881 and MC68020 at 16.67 MHz (module doc); the
    /// paper gives no figure.
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub compute_ns_per_connection: u64,
}

impl Default for BackpropConfig {
    fn default() -> Self {
        BackpropConfig {
            units: 40,
            hidden: 8,
            patterns: 16,
            epochs: 20,
            relax_steps: 5,
            threads: None,
            compute_ns_per_connection: 8500,
        }
    }
}

impl crate::registry::Describe for BackpropConfig {
    const KIND: &'static str = "backprop";
    const DESCRIPTION: &'static str = "recurrent back-propagation, 16-8-16 encoder, 16 patterns, no synchronisation (PLATINUM 5.3)";
}

impl crate::component::WorkloadParams for BackpropConfig {
    fn footprint(&self, machine: &Machine) -> Result<crate::estimate::Footprint, ConfigError> {
        Backprop::footprint(self, machine)
    }
    fn build(
        &self,
        machine: &Machine,
    ) -> Result<Vec<Box<dyn crate::component::Program>>, ConfigError> {
        Ok(vec![Box::new(Backprop::new(self, machine)?)])
    }
}

inventory::submit!(crate::component::WorkloadEntry::of::<BackpropConfig>());

/// The `backprop` program.
#[derive(Debug)]
pub struct Backprop {
    layout: Layout,
    weights: ArrayId,
    act: ArrayId,
    err: ArrayId,
    pats: ArrayId,
    units: u64,
    /// Input units (as many output units); hidden units are `units - 2 * inputs`.
    inputs: u64,
    patterns: u32,
    epochs: u32,
    relax: u32,
    threads: u32,
    compute: u64,
    page_size: u64,
    next_epoch: Vec<u32>,
}

impl Backprop {
    /// Validates `c` and lays out the network's arrays.
    fn plan(
        c: &BackpropConfig,
        machine: &Machine,
    ) -> Result<(Layout, [ArrayId; 4], u32, u64), ConfigError> {
        c.check_ranges("workload")?;
        let threads = thread_count("workload.threads", c.threads, machine)?;
        if threads > c.units {
            return Err(ConfigError::new(
                "workload.threads",
                format!(
                    "{threads} threads for {} units: every thread needs a unit",
                    c.units
                ),
            ));
        }
        if c.hidden >= c.units || !(c.units - c.hidden).is_multiple_of(2) {
            return Err(ConfigError::new(
                "workload.hidden",
                format!(
                    "{} hidden of {} units: the rest must split evenly into input and output units",
                    c.hidden, c.units
                ),
            ));
        }
        let ps = machine.page_size();
        let u = c.units as u64;
        let mut layout = Layout::new();
        // Declared one after another, as the simulator's globals were: no page alignment
        // between them.
        let weights = layout.alloc_2d("weights", u, u, 4, ps, 1);
        let act = layout.alloc("activations", u, 4, 4);
        let err = layout.alloc("errors", u, 4, 4);
        let pats = layout.alloc_2d("patterns", c.patterns as u64, u, 4, 4, 1);
        let pages = layout.pages_checked(ps, "workload.units")?;
        Ok((layout, [weights, act, err, pats], threads, pages))
    }

    /// What the program needs, from its parameters alone.
    pub fn footprint(c: &BackpropConfig, machine: &Machine) -> Result<Footprint, ConfigError> {
        let (_, _, threads, pages) = Self::plan(c, machine)?;
        let u = c.units as u64;
        // Per unit and pattern: each relaxation step reads a weight row and the
        // activations and writes its own, then the error pass does the same.
        let per_unit = runs_of(u, 4, machine.page_size())
            .saturating_mul(2)
            .saturating_add(6)
            .saturating_mul(c.relax_steps as u64 + 1);
        let per_epoch = (c.patterns as u64)
            .saturating_mul(u)
            .saturating_mul(per_unit);
        Ok(Footprint {
            pages,
            threads,
            ops: per_epoch
                .saturating_add(threads as u64)
                .saturating_mul(c.epochs as u64),
            buffered_ops: per_epoch.div_ceil(threads as u64).saturating_add(1),
            bytes: threads as u64 * 4,
            iterations: c.epochs as u64,
            size_field: "workload.units",
            ops_field: "workload.epochs",
        })
    }

    /// Builds the program for `machine`.
    pub fn new(c: &BackpropConfig, machine: &Machine) -> Result<Backprop, ConfigError> {
        let (layout, [weights, act, err, pats], threads, _) = Self::plan(c, machine)?;
        let ps = machine.page_size();
        let u = c.units as u64;
        Ok(Backprop {
            layout,
            weights,
            act,
            err,
            pats,
            units: u,
            inputs: ((c.units - c.hidden) / 2) as u64,
            patterns: c.patterns,
            epochs: c.epochs,
            relax: c.relax_steps,
            threads,
            compute: c.compute_ns_per_connection,
            page_size: ps,
            next_epoch: vec![0; threads as usize],
        })
    }

    /// Emits `count` references to each element `(row, col)` for `col` in `cols` of
    /// array `a`, merged per page.
    fn touch(
        &self,
        out: &mut Vec<Op>,
        a: ArrayId,
        row: u64,
        cols: std::ops::Range<u64>,
        write: bool,
    ) {
        let arr = self.layout.array(a);
        super::emit::Emitter {
            page_size: self.page_size,
        }
        .range(
            out,
            arr.addr(row, cols.start),
            cols.end - cols.start,
            arr.elem_bytes,
            1,
            write,
        );
    }

    fn one_ref(&self, out: &mut Vec<Op>, a: ArrayId, row: u64, col: u64, write: bool) {
        let arr = self.layout.array(a);
        super::emit::push_ref(
            out,
            Vpn((arr.addr(row, col) / self.page_size) as u32),
            write,
            1,
        );
    }

    /// One pattern's work for unit `i`.
    fn unit(&self, p: u64, i: u64, out: &mut Vec<Op>) {
        let (n, u) = (self.inputs, self.units);
        let hidden = n..u - n;
        if i < n {
            // An input unit: clamp its activation to the pattern.
            self.one_ref(out, self.pats, p, i, false);
            self.one_ref(out, self.act, 0, i, true);
            return;
        }
        // The layer feeding unit i, and the layer it feeds (none for an output unit).
        let (prev, next) = if hidden.contains(&i) {
            (0..n, u - n..u)
        } else {
            (hidden.clone(), u..u)
        };
        let fan_in = Ns(self.compute * (prev.end - prev.start));
        for _ in 0..self.relax {
            self.touch(out, self.weights, i, prev.clone(), false);
            self.touch(out, self.act, 0, prev.clone(), false);
            out.push(Op::Compute(fan_in));
            self.one_ref(out, self.act, 0, i, true);
        }
        if next.is_empty() {
            // An output unit's error: its activation against the target (the pattern's
            // input at the same position, the encoder's task).
            self.one_ref(out, self.pats, p, i - (u - n), false);
            out.push(Op::Compute(Ns(self.compute)));
            self.one_ref(out, self.err, 0, i, true);
        } else {
            // A hidden unit relaxes its error backwards over the weights out of it (its
            // column in the output layer's rows) and the output errors.
            let fan_out = Ns(self.compute * (next.end - next.start));
            for _ in 0..self.relax {
                for j in next.clone() {
                    self.one_ref(out, self.weights, j, i, false);
                }
                self.touch(out, self.err, 0, next.clone(), false);
                out.push(Op::Compute(fan_out));
                self.one_ref(out, self.err, 0, i, true);
            }
        }
        // Weight update of row i over the previous layer.
        self.touch(out, self.act, 0, prev.clone(), false);
        self.touch(out, self.weights, i, prev.clone(), false);
        out.push(Op::Compute(fan_in));
        self.touch(out, self.weights, i, prev, true);
    }
}

impl Program for Backprop {
    fn name(&self) -> &str {
        "backprop"
    }
    fn threads(&self) -> u32 {
        self.threads
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn placement_hints(&self) -> &[Option<u32>] {
        &[]
    }
    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        let e = self.next_epoch[t as usize];
        if e >= self.epochs {
            return;
        }
        self.next_epoch[t as usize] = e + 1;
        for p in 0..self.patterns as u64 {
            for i in (t as u64..self.units).step_by(self.threads as usize) {
                self.unit(p, i, out);
            }
        }
        out.push(Op::IterationEnd(e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine::new(crate::mm::test_machine_config(4)).unwrap()
    }

    /// The computations one pattern's work for unit `i` charges, in connections.
    fn connections(i: u64) -> Vec<u64> {
        let c = BackpropConfig::default();
        let b = Backprop::new(&c, &machine()).unwrap();
        let mut out = Vec::new();
        b.unit(0, i, &mut out);
        out.iter()
            .filter_map(|op| match op {
                Op::Compute(ns) => Some(ns.0 / c.compute_ns_per_connection),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_default_network_is_the_16_8_16_encoder() {
        let b = Backprop::new(&BackpropConfig::default(), &machine()).unwrap();
        assert_eq!((b.inputs, b.units - 2 * b.inputs), (16, 8));
    }

    #[test]
    fn an_input_unit_only_clamps_its_activation() {
        assert!(connections(3).is_empty());
    }

    #[test]
    fn a_hidden_unit_sums_over_the_inputs_and_back_over_the_outputs() {
        // Five relaxation steps forward over 16 inputs, five backward over 16 outputs,
        // then the weight update over 16 inputs.
        let mut want = vec![16; 5];
        want.extend([16; 5]);
        want.push(16);
        assert_eq!(connections(20), want);
    }

    #[test]
    fn an_output_unit_sums_over_the_hidden_layer_and_compares_with_its_target() {
        let mut want = vec![8; 5];
        want.extend([1, 8]);
        assert_eq!(connections(30), want);
    }

    #[test]
    fn hidden_units_that_leave_an_uneven_split_are_an_error_naming_the_field() {
        let c = BackpropConfig {
            hidden: 7,
            ..Default::default()
        };
        let e = Backprop::new(&c, &machine()).unwrap_err();
        assert_eq!(e.field, "workload.hidden");
    }
}
