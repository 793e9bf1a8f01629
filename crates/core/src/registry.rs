//! Open registries of configurable components (policies, workloads, schedulers).
//!
//! A component is declared in its own file: its configuration type implements the
//! family's trait ([`PolicyParams`](crate::component::PolicyParams),
//! [`WorkloadParams`](crate::component::WorkloadParams),
//! [`SchedulerParams`](crate::component::SchedulerParams)) with its name, description and
//! constructor, and one `inventory::submit!` line registers it. Nothing else names it:
//! `list`, parsing by `kind`, `show`, the field listing and the tests that iterate every
//! component all read the registry. A crate using the core (a test, an extension) can
//! register components of its own the same way.
//!
//! A registered configuration travels as a [`Component`]: its registry entry plus its
//! parameters behind [`Params`], the object-safe face of a configuration struct (clone,
//! compare, serialize, check ranges, downcast). The registry is sorted by name, so every
//! listing is deterministic whatever order the linker collected the entries in.

use crate::error::ConfigError;
use crate::fields::{FieldInfo, Fields};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::any::{Any, TypeId};
use std::fmt;

/// The object-safe face of a component's configuration struct.
pub trait Params: Any + fmt::Debug + Send + Sync {
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn Params>;
    /// Equality with parameters of any type (false across types).
    fn eq_dyn(&self, other: &dyn Params) -> bool;
    /// For downcasting to the concrete configuration type.
    fn as_any(&self) -> &dyn Any;
    /// For downcasting to the concrete configuration type.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The parameters as a serializable value (fields only, no `kind`).
    fn as_serialize(&self) -> &dyn erased_serde::Serialize;
    /// Checks every field against its declared range; `prefix` is the table's path.
    fn check_ranges(&self, prefix: &str) -> Result<(), ConfigError>;
}

impl<T> Params for T
where
    T: Fields + Serialize + Clone + PartialEq + fmt::Debug + Send + Sync + 'static,
{
    fn clone_box(&self) -> Box<dyn Params> {
        Box::new(self.clone())
    }
    fn eq_dyn(&self, other: &dyn Params) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn as_serialize(&self) -> &dyn erased_serde::Serialize {
        self
    }
    fn check_ranges(&self, prefix: &str) -> Result<(), ConfigError> {
        Fields::check_ranges(self, prefix)
    }
}

/// What every registered component declares, whatever its family.
pub trait Describe:
    Params + Fields + Default + DeserializeOwned + Serialize + Clone + PartialEq
{
    /// The registry name, e.g. `holliday-daemon`: the `kind` of its table.
    const KIND: &'static str;
    /// One line saying what the component is and where it comes from.
    const DESCRIPTION: &'static str;
    /// Named settings of the parameters a configuration may start from (`preset =
    /// "NAME"` in its table, other fields overriding it), each with a line saying where
    /// it comes from; `list` and `show` print them. Default: none.
    const PRESETS: &'static [(&'static str, &'static str)] = &[];
}

type DeserializeFn = for<'a, 'de> fn(
    &'a mut dyn erased_serde::Deserializer<'de>,
) -> Result<Box<dyn Params>, erased_serde::Error>;

/// The family-independent part of a registry entry, built from a [`Describe`] type.
pub struct Meta {
    /// The registry name.
    pub kind: &'static str,
    /// The one-line description.
    pub description: &'static str,
    /// The declared fields (doc, range, unit).
    pub fields: fn() -> &'static [FieldInfo],
    /// The default parameters.
    pub default: fn() -> Box<dyn Params>,
    /// Reads the parameters (a table without `kind`).
    pub deserialize: DeserializeFn,
    /// The configuration type, to find the entry of a typed value.
    pub type_id: fn() -> TypeId,
    /// Named settings (name, where it comes from); see [`Describe::PRESETS`].
    pub presets: &'static [(&'static str, &'static str)],
}

fn default_of<C: Describe>() -> Box<dyn Params> {
    Box::new(C::default())
}

fn deserialize_of<C: Describe>(
    d: &mut dyn erased_serde::Deserializer<'_>,
) -> Result<Box<dyn Params>, erased_serde::Error> {
    erased_serde::deserialize::<C>(d).map(|c| Box::new(c) as Box<dyn Params>)
}

impl Meta {
    /// The entry of configuration type `C`.
    pub const fn of<C: Describe>() -> Meta {
        Meta {
            kind: C::KIND,
            description: C::DESCRIPTION,
            fields: <C as Fields>::fields,
            default: default_of::<C>,
            deserialize: deserialize_of::<C>,
            type_id: TypeId::of::<C>,
            presets: C::PRESETS,
        }
    }
}

/// A family of components: its entry type (the [`Meta`] plus the family's constructors)
/// and where its registered entries are collected.
pub trait Family: Sized + 'static {
    /// The family's registry entry.
    type Entry: Sync + 'static;
    /// The table the family's configuration lives in (`policy`, `workload`, ...).
    const SECTION: &'static str;
    /// The kind a configuration without one gets.
    const DEFAULT_KIND: &'static str;
    /// The family-independent part of an entry.
    fn meta(entry: &Self::Entry) -> &Meta;
    /// Every registered entry, sorted by name.
    fn entries() -> &'static [&'static Self::Entry];
}

/// Collects a family's submitted entries once, sorted by name; two entries with one name
/// are a programming error caught here (and by the registry tests).
pub(crate) fn sorted<F: Family>(
    it: impl Iterator<Item = &'static F::Entry>,
) -> Vec<&'static F::Entry> {
    let mut v: Vec<_> = it.collect();
    v.sort_by_key(|e| F::meta(e).kind);
    for w in v.windows(2) {
        assert!(
            F::meta(w[0]).kind != F::meta(w[1]).kind,
            "two {} components are registered as `{}`",
            F::SECTION,
            F::meta(w[0]).kind
        );
    }
    v
}

/// A registered component's configuration: its entry and its parameters. Serialized as
/// a table with `kind` first, then the parameters' fields.
pub struct Component<F: Family> {
    entry: &'static F::Entry,
    params: Box<dyn Params>,
}

impl<F: Family> Component<F> {
    /// The configuration `params`, whose type must be registered in the family.
    ///
    /// # Panics
    /// When `C` is not registered: a programming error (a missing `inventory::submit!`).
    pub fn new<C: Describe>(params: C) -> Self {
        let entry = F::entries()
            .iter()
            .find(|e| (F::meta(e).type_id)() == TypeId::of::<C>())
            .unwrap_or_else(|| {
                panic!(
                    "{} `{}` is not registered (inventory::submit! its entry)",
                    F::SECTION,
                    C::KIND
                )
            });
        Component {
            entry,
            params: Box::new(params),
        }
    }

    /// Every registered name, sorted.
    pub fn kinds() -> Vec<&'static str> {
        F::entries().iter().map(|e| F::meta(e).kind).collect()
    }

    /// Every registered component with its default parameters, sorted by name.
    pub fn all() -> Vec<Self> {
        F::entries().iter().map(|&e| Self::defaults(e)).collect()
    }

    /// The component named `kind` with its default parameters.
    pub fn default_of(kind: &str) -> Option<Self> {
        Self::find(kind).map(Self::defaults)
    }

    fn defaults(entry: &'static F::Entry) -> Self {
        Component {
            entry,
            params: (F::meta(entry).default)(),
        }
    }

    fn find(kind: &str) -> Option<&'static F::Entry> {
        F::entries()
            .iter()
            .copied()
            .find(|e| F::meta(e).kind == kind)
    }

    /// The registry entry.
    pub fn entry(&self) -> &'static F::Entry {
        self.entry
    }

    /// The parameters, for the family's constructors.
    pub fn params(&self) -> &dyn Params {
        &*self.params
    }

    /// The registry name.
    pub fn kind(&self) -> &'static str {
        F::meta(self.entry).kind
    }

    /// One line saying what the component is and where it comes from.
    pub fn describe(&self) -> &'static str {
        F::meta(self.entry).description
    }

    /// The component's named settings (name, where it comes from), if it has any.
    pub fn presets(&self) -> &'static [(&'static str, &'static str)] {
        F::meta(self.entry).presets
    }

    /// The component's parameters as declared: doc, range and unit of each.
    pub fn fields(&self) -> &'static [FieldInfo] {
        (F::meta(self.entry).fields)()
    }

    /// Checks the parameters against the ranges declared at their fields; `prefix` is
    /// the table's path (`workload`, `policy`, ...).
    pub fn check_ranges(&self, prefix: &str) -> Result<(), ConfigError> {
        self.params.check_ranges(prefix)
    }

    /// The parameters, if they are of type `C`.
    pub fn get<C: 'static>(&self) -> Option<&C> {
        self.params.as_any().downcast_ref()
    }

    /// The parameters, mutably, if they are of type `C`.
    pub fn get_mut<C: 'static>(&mut self) -> Option<&mut C> {
        self.params.as_any_mut().downcast_mut()
    }

    /// The component named `kind` with its parameters read from `d` (a table without
    /// `kind`), or `None` when no component has that name.
    pub fn deserialize_kind<'de, D: Deserializer<'de>>(
        kind: &str,
        d: D,
    ) -> Option<Result<Self, D::Error>> {
        let entry = Self::find(kind)?;
        let mut erased = <dyn erased_serde::Deserializer>::erase(d);
        Some(
            (F::meta(entry).deserialize)(&mut erased)
                .map(|params| Component { entry, params })
                .map_err(D::Error::custom),
        )
    }
}

impl<F: Family> Default for Component<F> {
    fn default() -> Self {
        Self::default_of(F::DEFAULT_KIND).expect("the default component is registered")
    }
}

impl<F: Family> Clone for Component<F> {
    fn clone(&self) -> Self {
        Component {
            entry: self.entry,
            params: self.params.clone_box(),
        }
    }
}

impl<F: Family> PartialEq for Component<F> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.entry, other.entry) && self.params.eq_dyn(&*other.params)
    }
}

impl<F: Family> fmt::Debug for Component<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(self.kind()).field(&self.params).finish()
    }
}

impl<F: Family> Serialize for Component<F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a> {
            kind: &'static str,
            #[serde(flatten)]
            params: &'a dyn erased_serde::Serialize,
        }
        Tagged {
            kind: self.kind(),
            params: self.params.as_serialize(),
        }
        .serialize(s)
    }
}

impl<'de, F: Family> Deserialize<'de> for Component<F> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The kind can come after the parameters, so the table is read whole first.
        let mut table = match serde_value::Value::deserialize(d)? {
            serde_value::Value::Map(m) => m,
            _ => return Err(D::Error::custom("expected a table with a `kind`")),
        };
        let kind = match table.remove(&serde_value::Value::String("kind".into())) {
            Some(serde_value::Value::String(k)) => k,
            Some(_) => return Err(D::Error::custom("`kind` must be a string")),
            None => return Err(D::Error::missing_field("kind")),
        };
        let rest = serde_value::ValueDeserializer::<D::Error>::new(serde_value::Value::Map(table));
        Self::deserialize_kind(&kind, rest).unwrap_or_else(|| {
            Err(D::Error::custom(format!(
                "unknown {} `{kind}`; known: {}",
                F::SECTION,
                Self::kinds().join(", ")
            )))
        })
    }
}

/// Declares a family: its tag type, where its entries are collected (sorted once, on
/// first use), and `From` a registered configuration type to the family's [`Component`].
macro_rules! family {
    (
        $(#[$meta:meta])*
        $family:ident: $entry:ident, $params:ident, section $section:literal, default $default:literal
    ) => {
        $(#[$meta])*
        pub struct $family;

        inventory::collect!($entry);

        impl $crate::registry::Family for $family {
            type Entry = $entry;
            const SECTION: &'static str = $section;
            const DEFAULT_KIND: &'static str = $default;
            fn meta(e: &$entry) -> &$crate::registry::Meta {
                &e.meta
            }
            fn entries() -> &'static [&'static $entry] {
                static ENTRIES: std::sync::OnceLock<Vec<&'static $entry>> =
                    std::sync::OnceLock::new();
                ENTRIES.get_or_init(|| {
                    $crate::registry::sorted::<$family>(inventory::iter::<$entry>.into_iter())
                })
            }
        }

        impl<C: $params> From<C> for $crate::registry::Component<$family> {
            fn from(c: C) -> Self {
                Self::new(c)
            }
        }
    };
}

pub(crate) use family;
