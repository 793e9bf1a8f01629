//! `dunx` and `larowe`: the dynamic multiple-copy policy of the DUnX kernel on the BBN
//! GP1000 and TC2000, one implementation under two registry names. LaRowe, Wilkes &
//! Ellis (PPoPP 1991, section 2) describe the policy; LaRowe, Ellis & Kaplan ("The
//! robustness of NUMA memory management", SOSP 1991, section 2 and Table 1) name its six
//! parameters. The two names differ only in their defaults:
//!
//! - `larowe`: the SOSP paper's general-purpose default setting (section 4.5):
//!   freeze-window 150 ms, recent-mod 2^16, scan-delay 10 s, sample-passes 0,
//!   defrost-trigger 1, trigger-method 2^16.
//! - `dunx`: psolu's tuned setting of SOSP Table 3 (187.5 ms, 2^16, 10 s, 0, 1, 2^16),
//!   since the PPoPP paper says its policy was tuned to psolu but prints no values; kept
//!   so the `dunx91` reproduction and its records stay as they were. `dunx` is `larowe`
//!   with `preset = "psolu"`.
//!
//! Both take a `preset` naming one of Table 3's tuned settings (`gauss`, `hh3d`,
//! `psolu`, `hough`, `msort`, `wave`) or section 4.5's `general-purpose` one; fields given
//! beside it override it, as a machine's fields override `machine.preset`. Table 3 tunes
//! per application on the GP1000, and section 3 says the same settings served on the
//! TC2000, so the presets are named by application only.
//!
//! Values the paper allows beyond plain numbers: `freeze_window_ns` and `scan_delay_ns`
//! may be `"inf"` (a page is invalidated at most once before it freezes; the scanners
//! never run), and `recent_mod` and `trigger_method` may be negative (never replicate;
//! a defrost always invalidates every mapping). The aged modification count has 16 bits,
//! so 2^16 is the paper's infinity for those two (always replicate on a read fault;
//! always invalidate only the remote mappings).
//!
//! Initial placement is the static policy's: where the program asks, else on the node of
//! the first processor to touch the page. The rest has two parts (SOSP section 2).
//!
//! *Fault handler* (SOSP 2.1, PPoPP section 2). A fault on a page with one copy on another
//! node maps that copy remotely when the page is frozen or was invalidated (migrated, or
//! its replicas dropped by a coherency fault) less than `freeze_window_ns` ago, and freezes
//! it. Otherwise the page migrates here (the source copy's other mappings are invalidated)
//! on a write fault or when it was recently modified, and is replicated here on a read
//! fault. A write to a replicated page invalidates every other copy (a coherency fault);
//! if this node holds no copy, one replica is kept and migrated here ("If no local copy of
//! the page exists, one of the existing replicas is migrated to a local frame"). A read of
//! a replicated page uses or makes a local copy. Neither checks for freezing: "There is no
//! need to check for freezing, since it is impossible for a page that should be frozen to
//! be replicated" (SOSP 2.1). That holds here: a page is frozen only while it has one copy,
//! it is replicated only when neither frozen nor invalidated within the window, and while
//! it has several copies nothing records an invalidation (a coherency fault or migration
//! leaves one copy), so the check would always answer no; a debug assertion says so.
//!
//! *Recently modified* (SOSP 2.1: "comparing the modification history (maintained by the
//! page scanners through aging of the hardware modification bits) to the recent-mod
//! parameter"). The count compared is the 16-bit aged count (the newest scan interval
//! its most significant bit) with that bit also set when the page's modification bit is
//! (written since the last aging): a write not yet aged in counts as one in the newest
//! interval. Choice: the paper compares "the modification history" and does not say
//! whether the bit not yet aged is part of it; without it a page written since the last
//! pass would count as unmodified, and with no scanners (scan-delay = inf) every written
//! page would be replicated on a read fault. Right after a pass the bit is clear and the
//! count is the aged count alone, so recent-mod = 2^16 is still never exceeded. The same
//! count decides `trigger_method`.
//!
//! *Page scanners* (SOSP 2.2). One per node, stealing time on it, every `scan_delay_ns`.
//! "Each time a scanner runs, it collects page reference and modification information
//! for the frames on its processor. Separate local and remote reference counts are
//! maintained": each pass visits every frame on its node, ages the modification bit of
//! the pages whose home copy it holds, and reads and clears the reference count of each
//! mapping of the frame, adding the node's own mapping's to the frame's local count and
//! the other nodes' mappings' to its remote count. The counts come from the `usage`
//! history (per node and page, the references since the count was last read; the
//! counting mechanism Holliday's daemons read), not from one Referenced bit per pass.
//! Choice: PPoPP section 2 defrosts a page "referenced by remote processors as often as
//! local processors", a frequency, and SOSP 2.2 compares "reference counts"; SOSP 4.4's
//! "more samples of the hardware reference bits" suggests DUnX sampled bits, but a bit per
//! pass cannot tell a page read once remotely from one used locally throughout, which is
//! the distinction both papers draw. A count left by a mapping since invalidated is
//! cleared and discarded; the counts belong to the frame, so a migration or a coherency
//! fault that moves the page's home starts them afresh.
//!
//! "After `sample-passes` runs in which a scanner simply collects data, it executes an
//! additional phase in which it examines its frames": for each frozen frame, "If the
//! remote reference count is as great as the local reference count, a counter stored
//! with the frame data structure is incremented. Otherwise, the counter is reset to
//! zero", and `defrost_trigger` successes in a row defrost the page (0: every frozen page
//! at the first check, PLATINUM's strategy, SOSP 4.4). Choice: a frame nobody referenced
//! since the last check is no success (its counter is reset): PPoPP asks that remote
//! processors referenced the page, and defrosting "is only desirable when migrating or
//! replicating that page would improve performance" (SOSP 4.3), which a page nobody uses
//! gives no reason to expect. The counts restart at every check. A defrost invalidates
//! every mapping of the page when its modification count exceeds `trigger_method`, else
//! only the remote ones, and clears the frozen state. With `scan_delay_ns = "inf"` there
//! are no scanners: nothing is aged or defrosted.
//!
//! *A pass's cost.* The papers give none per pass (PPoPP section 4's "5% scanner overhead"
//! is a bound it calls unrealistic). Each frame a pass visits costs one `pte_examine_ns`
//! (its modification bit and its own node's count), each other node's mapping of it one
//! more (that mapping's count). "In the DUnX implementation of the policy, the scanners
//! also work to support the page replacement policy at this time" (SOSP 2.2): a checking
//! pass costs one more `pte_examine_ns` per frame, the look the replacement policy takes
//! at it (an estimate: the simulator replaces no pages, and the papers give no cost).
//!
//! *Phase-change hint* (PPoPP section 2). "The page scanners running in that cluster
//! invalidate all remote virtual mappings to their physical frames. In addition, all
//! frozen pages are defrosted. This essentially resets the page placement policy": the
//! hint also forgets each page's last invalidation, so a page moved within the freeze
//! window before the hint may move again after it instead of freezing at its first fault.
//! The engine cannot wake a daemon early, so the hint's work is done at once and charged
//! to the hinting thread (the system call's caller), one `pte_examine_ns` per page.
//!
//! *The seventh parameter.* PPoPP section 2 says the policy is "controlled by seven
//! parameters" and names what they control only as "the frequency of page scanner daemon
//! runs and the definitions of 'recently migrated or invalidated' and 'recently
//! modified'". The SOSP paper, on the same policy, says "Six parameters control the
//! behavior of the policy" and lists them in Table 1; the frequencies it names ("defrost
//! and triggering decision-points, reference data collection, and aging of usage counts")
//! are all set by scan-delay and sample-passes here. Neither paper names the seventh or
//! gives it a value, so it is not built: a guess (separate windows for migrations and for
//! coherency invalidations, or an aging period apart from the scan) would be a parameter
//! with no source for its value.

use crate::component::{DaemonNext, DaemonPlacement, DaemonSpec, Fault, Policy};
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::history::HistoryMode;
use crate::machine::Machine;
use crate::memory::Access;
use crate::mm::Mm;
use crate::stats::Counter;
use crate::tune::{Dim, Scale, Value};
use crate::types::{NodeId, NodeSet, Ns, NsOrInf, ThreadId, Vpn};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::marker::PhantomData;

/// The paper's 2^16: the aged modification count (16 bits) never exceeds it.
pub const TWO_TO_16: i32 = 65_536;

/// One setting of the six parameters (SOSP 1991, Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// freeze-window (ns, or infinite).
    pub freeze_window: NsOrInf,
    /// recent-mod.
    pub recent_mod: i32,
    /// scan-delay (ns, or infinite: no scanners).
    pub scan_delay: NsOrInf,
    /// sample-passes.
    pub sample_passes: u32,
    /// defrost-trigger.
    pub defrost_trigger: u32,
    /// trigger-method.
    pub trigger_method: i32,
}

const fn setting(
    freeze_window_ns: u64,
    recent_mod: i32,
    scan_delay_ns: u64,
    sample_passes: u32,
    defrost_trigger: u32,
    trigger_method: i32,
) -> Setting {
    Setting {
        freeze_window: NsOrInf::Ns(freeze_window_ns),
        recent_mod,
        scan_delay: NsOrInf::Ns(scan_delay_ns),
        sample_passes,
        defrost_trigger,
        trigger_method,
    }
}

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// The SOSP paper's general-purpose default setting (section 4.5): `larowe`'s defaults.
pub const GENERAL_PURPOSE: Setting = setting(150 * MS, TWO_TO_16, 10 * S, 0, 1, TWO_TO_16);

/// The named settings: Table 3's tuned setting of each application (tuned on the GP1000
/// and used unchanged on the TC2000, section 3) and section 4.5's general-purpose one.
pub const PRESETS: [(&str, &str, Setting); 7] = [
    (
        "gauss",
        "SOSP 1991 Table 3, gauss: 125ms, 2^16, 1.5s, 0, 4, 2^16",
        setting(125 * MS, TWO_TO_16, 1_500 * MS, 0, 4, TWO_TO_16),
    ),
    (
        "hh3d",
        "SOSP 1991 Table 3, hh3d: 312.5ms, 2^16, 10s, 0, 4, 2^16",
        setting(312_500_000, TWO_TO_16, 10 * S, 0, 4, TWO_TO_16),
    ),
    (
        "psolu",
        "SOSP 1991 Table 3, psolu: 187.5ms, 2^16, 10s, 0, 1, 2^16 (dunx's defaults)",
        setting(187_500_000, TWO_TO_16, 10 * S, 0, 1, TWO_TO_16),
    ),
    (
        "hough",
        "SOSP 1991 Table 3, hough: 31.25ms, 2^16, 10s, 0, 1, 2^16",
        setting(31_250_000, TWO_TO_16, 10 * S, 0, 1, TWO_TO_16),
    ),
    (
        "msort",
        "SOSP 1991 Table 3, msort: 50ms, 0, 10s, 0, 0, 0",
        setting(50 * MS, 0, 10 * S, 0, 0, 0),
    ),
    (
        "wave",
        "SOSP 1991 Table 3, wave: 250ms, 2^16, 10s, 10, 4, 2^16",
        setting(250 * MS, TWO_TO_16, 10 * S, 10, 4, TWO_TO_16),
    ),
    (
        "general-purpose",
        "SOSP 1991 sec. 4.5, the default setting: 150ms, 2^16, 10s, 0, 1, 2^16 (larowe's defaults)",
        GENERAL_PURPOSE,
    ),
];

const PRESET_LINES: [(&str, &str); 7] = {
    let mut out = [("", ""); 7];
    let mut i = 0;
    while i < PRESETS.len() {
        out[i] = (PRESETS[i].0, PRESETS[i].1);
        i += 1;
    }
    out
};

/// The named setting `name`.
pub fn preset(name: &str) -> Option<Setting> {
    PRESETS.iter().find(|p| p.0 == name).map(|p| p.2)
}

/// A registry name of the policy and its defaults.
pub trait Flavor:
    Clone + Copy + fmt::Debug + PartialEq + Eq + Default + Send + Sync + 'static
{
    /// The registry name.
    const KIND: &'static str;
    /// The one-line description.
    const DESCRIPTION: &'static str;
    /// The defaults.
    const DEFAULTS: Setting;
}

/// `dunx`: psolu's setting as defaults (the PPoPP 1991 policy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DunxKind;

impl Flavor for DunxKind {
    const KIND: &'static str = "dunx";
    const DESCRIPTION: &'static str = "DUnX dynamic policy: remote/migrate/replicate at fault time, freeze within a window, per-node scanners defrost, phase-change hint (LaRowe, Wilkes & Ellis 1991); larowe with psolu's Table 3 setting as defaults";
    const DEFAULTS: Setting = PRESETS[2].2;
}

/// `larowe`: the SOSP paper's general-purpose setting as defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaroweKind;

impl Flavor for LaroweKind {
    const KIND: &'static str = "larowe";
    const DESCRIPTION: &'static str = "the six-parameter DUnX policy of LaRowe, Ellis & Kaplan (SOSP 1991) with its general-purpose defaults; preset = Table 3's tuned settings";
    const DEFAULTS: Setting = GENERAL_PURPOSE;
}

/// Parameters of `dunx` and `larowe` (the kind decides the defaults: see the module
/// documentation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Fields)]
#[serde(bound = "")]
pub struct DunxParams<F: Flavor> {
    /// A named setting the other fields start from (gauss, hh3d, psolu, hough, msort,
    /// wave: SOSP 1991 Table 3; general-purpose: its sec. 4.5); fields given beside it
    /// override it. Absent: the kind's defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// freeze-window (SOSP Table 1, sec. 2.1): a fault on a remote page that migrated or
    /// had its replicas invalidated less than this long ago maps it remotely and freezes
    /// it; "inf": a page is invalidated once at most before it freezes. Default: larowe
    /// 150 ms (sec. 4.5), dunx 187.5 ms (Table 3, psolu).
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub freeze_window_ns: NsOrInf,
    /// recent-mod (SOSP Table 1, sec. 2.1): a read fault migrates instead of replicating
    /// when the page's modification count exceeds this (the 16-bit aged count, the newest
    /// scan interval the most significant, that bit also set by a write since the last
    /// scan).
    /// Negative: never replicate; 65536 (2^16): replicate on every read fault. Default
    /// 65536 (sec. 4.5, Table 3 but msort).
    #[field(min = -65_536, max = 65_536)]
    pub recent_mod: i32,
    /// scan-delay (SOSP Table 1, sec. 2.2): period of each node's page scanner; "inf": no
    /// scanners (nothing is aged or defrosted). Default 10 s (sec. 4.5, Table 3).
    #[field(min = 1_000, max = crate::TIME_LIMIT, unit = "ns")]
    pub scan_delay_ns: NsOrInf,
    /// sample-passes (SOSP Table 1, sec. 2.2): scanner passes that only collect reference
    /// counts before a pass that also checks the frozen frames (0: every pass checks).
    /// Default 0 (sec. 4.5, Table 3).
    #[field(min = 0, max = 1_000_000)]
    pub sample_passes: u32,
    /// defrost-trigger (SOSP Table 1, sec. 2.2): checks in a row in which a frozen frame's
    /// remote reference count was at least its local one (and not both zero) before it is
    /// defrosted (0: at the first check). Default 1 (sec. 4.5, Table 3 psolu).
    #[field(min = 0, max = 1_000_000)]
    pub defrost_trigger: u32,
    /// trigger-method (SOSP Table 1, sec. 2.2): a defrost invalidates every mapping of the
    /// page when its modification count (as for recent-mod) exceeds this, else only the
    /// remote mappings. Negative: always every mapping; 65536: always only the remote
    /// ones. Default 65536 (sec. 4.5, Table 3 but msort).
    #[field(min = -65_536, max = 65_536)]
    pub trigger_method: i32,
    /// The registry name (not in files).
    #[serde(skip)]
    pub kind: PhantomData<F>,
}

/// `dunx`'s parameters.
pub type DunxConfig = DunxParams<DunxKind>;
/// `larowe`'s parameters.
pub type LaroweConfig = DunxParams<LaroweKind>;

impl<F: Flavor> DunxParams<F> {
    /// The parameters holding `s`, without a preset name.
    pub fn from_setting(s: Setting) -> Self {
        DunxParams {
            preset: None,
            freeze_window_ns: s.freeze_window,
            recent_mod: s.recent_mod,
            scan_delay_ns: s.scan_delay,
            sample_passes: s.sample_passes,
            defrost_trigger: s.defrost_trigger,
            trigger_method: s.trigger_method,
            kind: PhantomData,
        }
    }

    /// The named setting `name`, as a configuration naming it.
    pub fn preset(name: &str) -> Option<Self> {
        preset(name).map(|s| DunxParams {
            preset: Some(name.to_string()),
            ..Self::from_setting(s)
        })
    }

    /// The six values.
    pub fn setting(&self) -> Setting {
        Setting {
            freeze_window: self.freeze_window_ns,
            recent_mod: self.recent_mod,
            scan_delay: self.scan_delay_ns,
            sample_passes: self.sample_passes,
            defrost_trigger: self.defrost_trigger,
            trigger_method: self.trigger_method,
        }
    }
}

impl<F: Flavor> Default for DunxParams<F> {
    fn default() -> Self {
        Self::from_setting(F::DEFAULTS)
    }
}

/// A preset's name, checked against the named settings where it is read (so the error
/// names `policy.preset`).
struct PresetName(String);

impl<'de> Deserialize<'de> for PresetName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if preset(&name).is_none() {
            let known: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
            return Err(serde::de::Error::custom(format!(
                "unknown preset `{name}`; known: {}",
                known.join(", ")
            )));
        }
        Ok(PresetName(name))
    }
}

/// The table as written: any field may be absent.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    #[serde(default)]
    preset: Option<PresetName>,
    #[serde(default)]
    freeze_window_ns: Option<NsOrInf>,
    #[serde(default)]
    recent_mod: Option<i32>,
    #[serde(default)]
    scan_delay_ns: Option<NsOrInf>,
    #[serde(default)]
    sample_passes: Option<u32>,
    #[serde(default)]
    defrost_trigger: Option<u32>,
    #[serde(default)]
    trigger_method: Option<i32>,
}

impl<'de, F: Flavor> Deserialize<'de> for DunxParams<F> {
    /// The preset's setting (or the kind's defaults) under the fields written.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Written::deserialize(d)?;
        let mut c = match &w.preset {
            Some(PresetName(name)) => Self::preset(name).unwrap_or_default(),
            None => Self::default(),
        };
        if let Some(v) = w.freeze_window_ns {
            c.freeze_window_ns = v;
        }
        if let Some(v) = w.recent_mod {
            c.recent_mod = v;
        }
        if let Some(v) = w.scan_delay_ns {
            c.scan_delay_ns = v;
        }
        if let Some(v) = w.sample_passes {
            c.sample_passes = v;
        }
        if let Some(v) = w.defrost_trigger {
            c.defrost_trigger = v;
        }
        if let Some(v) = w.trigger_method {
            c.trigger_method = v;
        }
        Ok(c)
    }
}

impl<F: Flavor> crate::registry::Describe for DunxParams<F> {
    const KIND: &'static str = F::KIND;
    const DESCRIPTION: &'static str = F::DESCRIPTION;
    const PRESETS: &'static [(&'static str, &'static str)] = &PRESET_LINES;
}

/// Values of `recent_mod` and `trigger_method` beyond their log range: -1 (never
/// replicate; every mapping invalidated at a defrost), 0, and 2^16 (the paper's infinity).
const COUNT_SPECIALS: [Value; 3] = [Value::Int(-1), Value::Int(0), Value::Int(TWO_TO_16 as i64)];

/// Where the tuner searches the six parameters: the ranges the SOSP 1991 paper explores
/// (section 4), on a log scale where its values span decades, with its extremes.
pub const SEARCH_SPACE: [Dim; 6] = [
    Dim {
        field: "freeze_window_ns",
        lo: 1e6,
        hi: 1e10,
        integer: true,
        scale: Scale::Log,
        specials: &[Value::Int(0), Value::Inf],
        source: "1 ms .. 10 s on a log scale, and 0 and inf (sec. 4.2: Table 3's values are 31.25 to 312.5 ms)",
    },
    Dim {
        field: "recent_mod",
        lo: 1.0,
        hi: 65_535.0,
        integer: true,
        scale: Scale::Log,
        specials: &COUNT_SPECIALS,
        source: "1 .. 2^16-1 on a log scale (the aged count's bits), and -1, 0 and 2^16 (sec. 4.1)",
    },
    Dim {
        field: "scan_delay_ns",
        lo: 2.5e8,
        hi: 1e11,
        integer: true,
        scale: Scale::Log,
        specials: &[Value::Inf],
        source: "250 ms .. 100 s on a log scale, and inf (sec. 4.3: Table 3's 1.5 s and 10 s, an optimum near 12 s, inf)",
    },
    Dim::range(
        "sample_passes",
        0.0,
        10.0,
        true,
        Scale::Linear,
        "0 .. 10 (sec. 4.4: the values the paper tried)",
    ),
    Dim::range(
        "defrost_trigger",
        0.0,
        7.0,
        true,
        Scale::Linear,
        "0 .. 7 (sec. 4.4: the values the paper tried)",
    ),
    Dim {
        field: "trigger_method",
        lo: 1.0,
        hi: 65_535.0,
        integer: true,
        scale: Scale::Log,
        specials: &COUNT_SPECIALS,
        source: "as recent_mod (sec. 4.4)",
    },
];

impl<F: Flavor> crate::component::PolicyParams for DunxParams<F> {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::component::Policy>, ConfigError> {
        Ok(Box::new(DunxPolicy::new(self.clone(), machine)?))
    }

    const SEARCH_SPACE: &'static [Dim] = &SEARCH_SPACE;
}

inventory::submit!(crate::component::PolicyEntry::of::<DunxConfig>());
inventory::submit!(crate::component::PolicyEntry::of::<LaroweConfig>());

/// What DUnX keeps per page (the mechanism knows nothing of freezing or reference counts).
#[derive(Clone, Copy, Debug, Default)]
struct PageMeta {
    frozen: bool,
    /// When the page last migrated or had replicas dropped by a coherency fault.
    last_invalidation: Option<Ns>,
    /// References through the home frame's own node's mapping since the last check.
    local: u32,
    /// ... and through other nodes' mappings of the home frame.
    remote: u32,
    /// Checks in a row with the remote count at least the local one (not both zero).
    successes: u32,
}

/// The policy.
#[derive(Debug)]
pub struct DunxPolicy {
    /// The registry name it was built under.
    kind: &'static str,
    config: Setting,
    nodes: u16,
    /// Per page, indexed by page number; sized in `init`.
    pages: Vec<PageMeta>,
    /// Passes each node's scanner has made.
    passes: Vec<u64>,
    /// Copies dropped by coherency faults (the paper's "replicas invalidated").
    replicas_invalidated: u64,
    /// Phase-change hints received.
    hints: u64,
}

impl DunxPolicy {
    /// The policy with `config`'s setting for `machine`, its ranges checked first.
    pub fn new<F: Flavor>(
        config: DunxParams<F>,
        machine: &Machine,
    ) -> Result<DunxPolicy, ConfigError> {
        config.check_ranges("policy")?;
        Ok(DunxPolicy {
            kind: F::KIND,
            config: config.setting(),
            nodes: machine.nodes() as u16,
            pages: Vec::new(),
            passes: vec![0; machine.nodes()],
            replicas_invalidated: 0,
            hints: 0,
        })
    }

    /// Whether `vpn` is frozen.
    pub fn is_frozen(&self, vpn: Vpn) -> bool {
        self.pages[vpn.idx()].frozen
    }

    /// When `vpn` last migrated or lost replicas to a coherency fault.
    pub fn last_invalidation(&self, vpn: Vpn) -> Option<Ns> {
        self.pages[vpn.idx()].last_invalidation
    }

    /// Checks in a row in which `vpn`'s remote reference count matched its local one.
    pub fn successes(&self, vpn: Vpn) -> u32 {
        self.pages[vpn.idx()].successes
    }

    /// `vpn`'s home frame's local and remote reference counts since the last check.
    pub fn reference_counts(&self, vpn: Vpn) -> (u32, u32) {
        let m = &self.pages[vpn.idx()];
        (m.local, m.remote)
    }

    /// Copies dropped by coherency faults so far.
    pub fn replicas_invalidated(&self) -> u64 {
        self.replicas_invalidated
    }

    fn recently_invalidated(&self, now: Ns, vpn: Vpn) -> bool {
        match self.pages[vpn.idx()].last_invalidation {
            Some(at) => self.config.freeze_window.exceeds((now - at).0),
            None => false,
        }
    }

    /// Whether a fault on `vpn` maps its remote copy and freezes it: frozen already, or
    /// invalidated within the freeze window.
    fn should_freeze(&self, now: Ns, vpn: Vpn) -> bool {
        self.pages[vpn.idx()].frozen || self.recently_invalidated(now, vpn)
    }

    /// The modification count: the 16-bit aged count, its newest interval's bit also set
    /// when the page was written since the last aging (see the module documentation).
    fn modifications(ctx: &dyn Mm, vpn: Vpn) -> i64 {
        let p = ctx.page(vpn);
        ((p.mod_history | ((p.written_since_age as u32) << 31)) >> 16) as i64
    }

    fn recently_modified(&self, ctx: &dyn Mm, vpn: Vpn) -> bool {
        Self::modifications(ctx, vpn) > self.config.recent_mod as i64
    }

    fn freeze(&mut self, ctx: &mut dyn Mm, vpn: Vpn) {
        self.pages[vpn.idx()].frozen = true;
        ctx.freeze(vpn);
    }

    /// Defrosts frozen `vpn`: invalidates all its mappings when it was recently modified
    /// (a migration is likely next), else the remote ones (a replication is).
    fn defrost(&mut self, ctx: &mut dyn Mm, vpn: Vpn) {
        let all = Self::modifications(ctx, vpn) > self.config.trigger_method as i64;
        let victims = if all {
            ctx.page(vpn).mapped
        } else {
            remote_mappings(ctx, vpn)
        };
        ctx.invalidate_mappings(vpn, victims);
        let m = &mut self.pages[vpn.idx()];
        m.frozen = false;
        m.successes = 0;
        ctx.thaw(vpn);
    }

    /// The page's home frame changed: its reference counts start afresh.
    fn new_frame(&mut self, vpn: Vpn) {
        let m = &mut self.pages[vpn.idx()];
        m.local = 0;
        m.remote = 0;
    }

    /// Moves single-copy `vpn` to `node` as a migration does in DUnX: the source copy's
    /// mappings elsewhere are invalidated (their next references fault and find the page
    /// recently migrated). Refused with nothing changed when `node` has no free frame.
    fn migrate_here(&mut self, ctx: &mut dyn Mm, vpn: Vpn, node: NodeId) -> bool {
        if ctx.free_frames(node) == 0 {
            // Let the mechanism refuse it, so the refusal is counted.
            return ctx.migrate(vpn, node).is_ok();
        }
        let mut others = ctx.page(vpn).mapped;
        others.remove(node);
        ctx.invalidate_mappings(vpn, others);
        if ctx.migrate(vpn, node).is_err() {
            return false;
        }
        self.pages[vpn.idx()].last_invalidation = Some(ctx.now());
        self.new_frame(vpn);
        true
    }

    /// The coherency fault of a write to replicated `vpn`, keeping the copy on `keep`.
    fn invalidate_replicas(&mut self, ctx: &mut dyn Mm, vpn: Vpn, keep: NodeId) {
        let page = ctx.page(vpn);
        let dropped = page.copies.len().saturating_sub(1);
        ctx.coherency_fault(vpn, keep);
        self.replicas_invalidated += dropped as u64;
        self.pages[vpn.idx()].last_invalidation = Some(ctx.now());
        if keep != page.home {
            self.new_frame(vpn);
        }
    }

    fn write_to_replicated(&mut self, ctx: &mut dyn Mm, f: Fault) {
        debug_assert!(
            !self.should_freeze(ctx.now(), f.vpn),
            "a replicated page should never be frozen (SOSP 1991 sec. 2.1)"
        );
        if ctx.page(f.vpn).copies.contains(f.node) {
            self.invalidate_replicas(ctx, f.vpn, f.node);
        } else {
            let keep = ctx
                .nearest_copy(f.vpn, f.node)
                .unwrap_or(ctx.page(f.vpn).home);
            self.invalidate_replicas(ctx, f.vpn, keep);
            if !self.migrate_here(ctx, f.vpn, f.node) {
                ctx.map_nearest(f.vpn, f.node, Access::Write);
                return;
            }
        }
        let _ = ctx.map_to(f.vpn, f.node, f.node, Access::Write);
    }

    fn read_replicated(&mut self, ctx: &mut dyn Mm, f: Fault) {
        debug_assert!(
            !self.should_freeze(ctx.now(), f.vpn),
            "a replicated page should never be frozen (SOSP 1991 sec. 2.1)"
        );
        if ctx.page(f.vpn).copies.contains(f.node) || ctx.replicate(f.vpn, f.node).is_ok() {
            let _ = ctx.map_to(f.vpn, f.node, f.node, Access::Read);
        } else {
            ctx.map_nearest(f.vpn, f.node, Access::Read);
        }
    }

    /// A fault on a single copy held by another node.
    fn remote_single(&mut self, ctx: &mut dyn Mm, f: Fault) {
        let access = if f.write { Access::Write } else { Access::Read };
        if self.should_freeze(ctx.now(), f.vpn) {
            if !self.pages[f.vpn.idx()].frozen {
                self.freeze(ctx, f.vpn);
            }
            ctx.map_nearest(f.vpn, f.node, access);
            return;
        }
        let moved = if f.write || self.recently_modified(ctx, f.vpn) {
            self.migrate_here(ctx, f.vpn, f.node)
        } else {
            // Replication restricts every writable mapping to read-only first.
            ctx.replicate(f.vpn, f.node).is_ok()
        };
        if moved {
            let local = if ctx.page(f.vpn).copies.len() > 1 {
                Access::Read
            } else {
                access
            };
            let _ = ctx.map_to(f.vpn, f.node, f.node, local);
        } else {
            // No free frame here: use the remote copy.
            ctx.map_nearest(f.vpn, f.node, access);
        }
    }

    /// Reads and clears the reference counts of the mappings of node `n`'s copy of
    /// `vpn` (one `examine` per other node's mapping; the frame's own is the caller's):
    /// its own node's and the other nodes' together. The home frame's scanner also
    /// clears the counts of nodes that no longer map the page, and discards them.
    fn read_counts(&mut self, ctx: &mut dyn Mm, vpn: Vpn, n: NodeId, examine: Ns) -> (u32, u32) {
        let page = ctx.page(vpn);
        let home = page.home == n;
        let (mut local, mut remote) = (0u32, 0u32);
        for m in 0..self.nodes {
            let m = NodeId(m);
            let mapped = page.mapped.contains(m);
            let maps_here = mapped && ctx.mapping(vpn, m).target == n;
            if maps_here && m != n {
                ctx.charge(examine);
            }
            let stale = home && !mapped;
            if !(maps_here || stale) || ctx.history().peek(vpn, m) == 0 {
                continue;
            }
            let c = ctx.examine_history(vpn, m);
            if !maps_here {
                continue;
            }
            if m == n {
                local = local.saturating_add(c);
            } else {
                remote = remote.saturating_add(c);
            }
        }
        (local, remote)
    }

    /// One scanner pass over node `n`'s frames.
    fn scan(&mut self, ctx: &mut dyn Mm, n: NodeId) {
        ctx.count_daemon_pass();
        let pass = self.passes[n.idx()];
        self.passes[n.idx()] = pass + 1;
        let check =
            pass % (self.config.sample_passes as u64 + 1) == self.config.sample_passes as u64;
        let examine = Ns(ctx.machine().costs().pte_examine_ns);
        for v in 0..ctx.npages() as u32 {
            let vpn = Vpn(v);
            let page = ctx.page(vpn);
            if !page.copies.contains(n) {
                continue;
            }
            // The frame's modification bit and its own node's count; at a check, the
            // replacement policy's look at it as well.
            ctx.charge(examine);
            if check {
                ctx.charge(examine);
            }
            let home = page.home == n;
            if home {
                ctx.age_modifications(vpn);
            }
            let (local, remote) = self.read_counts(ctx, vpn, n, examine);
            if !home {
                // Only the home frame can be frozen: a replica's counts decide nothing.
                continue;
            }
            let meta = &mut self.pages[v as usize];
            meta.local = meta.local.saturating_add(local);
            meta.remote = meta.remote.saturating_add(remote);
            if !check {
                continue;
            }
            let (local, remote) = (meta.local, meta.remote);
            meta.local = 0;
            meta.remote = 0;
            if !meta.frozen {
                continue;
            }
            // "referenced by remote processors as often as local processors": a frame
            // nobody referenced is no success.
            if remote >= local && remote > 0 {
                meta.successes = meta.successes.saturating_add(1);
            } else {
                meta.successes = 0;
            }
            if meta.successes >= self.config.defrost_trigger {
                self.defrost(ctx, vpn);
            }
        }
    }
}

/// The nodes whose mapping of `vpn` points at another node's copy.
fn remote_mappings(ctx: &dyn Mm, vpn: Vpn) -> NodeSet {
    let mut out = NodeSet::EMPTY;
    for n in ctx.page(vpn).mapped.iter() {
        if ctx.mapping(vpn, n).target != n {
            out.insert(n);
        }
    }
    out
}

impl Policy for DunxPolicy {
    fn name(&self) -> &'static str {
        self.kind
    }

    fn history(&self) -> HistoryMode {
        // The scanners compare how often pages are referenced (module documentation).
        HistoryMode::Usage
    }

    fn state_bytes_per_page(&self) -> u64 {
        std::mem::size_of::<PageMeta>() as u64
    }

    fn init(&mut self, ctx: &mut dyn Mm) {
        self.pages = vec![PageMeta::default(); ctx.npages()];
    }

    fn initial_placement(
        &mut self,
        _machine: &Machine,
        _vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        hint
    }

    fn on_fault(&mut self, ctx: &mut dyn Mm, f: Fault) {
        let access = if f.write { Access::Write } else { Access::Read };
        if ctx.page(f.vpn).copies.is_empty() {
            // First touch: the page's first physical copy is on the toucher's node.
            ctx.place_near(f.vpn, f.node);
        }
        let page = ctx.page(f.vpn);
        if page.copies.len() > 1 {
            if f.write {
                self.write_to_replicated(ctx, f);
            } else {
                self.read_replicated(ctx, f);
            }
        } else if page.home == f.node {
            let _ = ctx.map_to(f.vpn, f.node, f.node, access);
        } else {
            self.remote_single(ctx, f);
        }
    }

    fn daemons(&self, machine: &Machine) -> Vec<DaemonSpec> {
        // scan-delay = infinity: no scanners at all.
        let Some(delay) = self.config.scan_delay.finite() else {
            return Vec::new();
        };
        // A memory-only node's scanner runs on the nearest node with processors.
        (0..self.nodes)
            .map(|n| DaemonSpec {
                name: format!("scanner-{n}"),
                placement: DaemonPlacement::StealOn(machine.nearest_with_procs(NodeId(n))),
                first_wake: Ns(delay),
            })
            .collect()
    }

    fn on_daemon(&mut self, ctx: &mut dyn Mm, id: usize) -> DaemonNext {
        let Some(delay) = self.config.scan_delay.finite() else {
            return DaemonNext::Stop;
        };
        self.scan(ctx, NodeId(id as u16));
        DaemonNext::After(Ns(delay))
    }

    fn on_phase_hint(&mut self, ctx: &mut dyn Mm, _thread: ThreadId) {
        self.hints += 1;
        let examine = Ns(ctx.machine().costs().pte_examine_ns);
        for v in 0..ctx.npages() as u32 {
            let vpn = Vpn(v);
            if ctx.page(vpn).copies.is_empty() {
                continue;
            }
            ctx.charge(examine);
            // "This essentially resets the page placement policy" (PPoPP sec. 2).
            self.pages[v as usize].last_invalidation = None;
            if self.pages[v as usize].frozen {
                self.defrost(ctx, vpn);
            } else {
                let remote = remote_mappings(ctx, vpn);
                ctx.invalidate_mappings(vpn, remote);
            }
        }
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "replicas_invalidated",
                label: "replicas invalidated",
                value: self.replicas_invalidated,
            },
            Counter {
                name: "phase_hints",
                label: "phase-change hints",
                value: self.hints,
            },
        ]
    }
}

#[cfg(test)]
#[path = "tests/dunx.rs"]
mod tests;
