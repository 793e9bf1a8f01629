//! The registries of configurable components: one declaration per component gives its
//! name, its configuration type and its one-line description, and the macro derives the
//! tagged configuration enum, the list of names, defaults and kind-directed parsing from
//! it, so a name is written once.

/// Declares a registry enum: `"name" => Variant(ConfigType) = "description"` per
/// component. The enum is serde-tagged by `kind`; `deserialize_kind` parses a component's
/// table (without its `kind`) straight into its configuration type, so errors carry the
/// field path inside it.
macro_rules! registry {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $kind:literal => $variant:ident($cfg:ty) = $desc:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "kind")]
        pub enum $name {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $kind)]
                $variant($cfg),
            )+
        }

        impl $name {
            /// Every registered name, in declaration order.
            pub const KINDS: &'static [&'static str] = &[$($kind),+];

            /// Every registered component with its default parameters.
            pub fn all() -> Vec<$name> {
                vec![$($name::$variant(<$cfg>::default())),+]
            }

            /// The registry name.
            pub fn kind(&self) -> &'static str {
                match self {
                    $($name::$variant(_) => $kind),+
                }
            }

            /// One line saying what the component is and where it comes from.
            pub fn describe(&self) -> &'static str {
                match self {
                    $($name::$variant(_) => $desc),+
                }
            }

            /// Checks the component's parameters against the ranges declared at their
            /// fields; `prefix` is the table's path (`workload`, `policy`, ...).
            pub fn check_ranges(&self, prefix: &str) -> Result<(), $crate::error::ConfigError> {
                match self {
                    $($name::$variant(c) => $crate::fields::Fields::check_ranges(c, prefix)),+
                }
            }

            /// The component's parameters as declared: doc, range and unit of each.
            pub fn fields(&self) -> &'static [$crate::fields::FieldInfo] {
                match self {
                    $($name::$variant(_) => <$cfg as $crate::fields::Fields>::fields()),+
                }
            }

            /// The component named `kind` with its parameters read from `d` (a table
            /// without `kind`), or `None` when no component has that name.
            pub fn deserialize_kind<'de, D: serde::Deserializer<'de>>(
                kind: &str,
                d: D,
            ) -> Option<Result<$name, D::Error>> {
                match kind {
                    $($kind => Some(<$cfg as serde::Deserialize>::deserialize(d).map($name::$variant)),)+
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use registry;
