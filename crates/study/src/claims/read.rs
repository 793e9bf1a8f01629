//! Reading a claim from its TOML table.
//!
//! Serde's own internally tagged enums buffer the whole table before looking at
//! `kind`, and an error found in the buffer loses its field path and line
//! (`at_least = "x"` would be reported as a type error of the claim as a whole). So
//! the claim is read by hand up to `kind`, and then the struct of that kind reads the
//! rest of the table in place: the struct refuses missing and foreign fields, and the
//! TOML parser's path and line reach every error. Keys written before `kind`, other
//! than the ones every claim has, are buffered and still checked by the struct.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::{Check, Claim, ClaimKind};

impl<'de> Deserialize<'de> for Claim {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct(
            "Claim",
            &["name", "text", "study", "observation", "kind"],
            ClaimVisitor,
        )
    }
}

/// The keys of the fields every claim has, whatever its kind.
const COMMON_FIELDS: &[&str] = &["name", "text", "study", "observation"];

/// The fields every claim has, as they are met.
#[derive(Default)]
struct Common {
    name: Option<String>,
    text: Option<String>,
    study: Option<String>,
    observation: Option<String>,
}

impl Common {
    /// Reads the value of `key` if every claim has that field; `false` otherwise.
    fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        let slot = match key {
            "name" => &mut self.name,
            "text" => &mut self.text,
            "study" => &mut self.study,
            "observation" => &mut self.observation,
            _ => return Ok(false),
        };
        *slot = Some(map.next_value()?);
        Ok(true)
    }
}

struct ClaimVisitor;

impl<'de> Visitor<'de> for ClaimVisitor {
    type Value = Claim;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Claim")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Claim, A::Error> {
        let mut common = Common::default();
        let mut early = Vec::new();
        let kind = loop {
            let Some(key) = map.next_key::<String>()? else {
                return Err(A::Error::missing_field("kind"));
            };
            if key == "kind" {
                break map.next_value::<ClaimKind>()?;
            }
            if !common.read(&key, &mut map)? {
                early.push((key, map.next_value::<toml::Value>()?));
            }
        };
        let mut rest = Rest {
            early: early.into_iter(),
            pending: None,
            map,
            common: &mut common,
        };
        let check = match kind {
            ClaimKind::Ratio => Check::Ratio(rest.read()?),
            ClaimKind::Difference => Check::Difference(rest.read()?),
            ClaimKind::Compare => Check::Compare(rest.read()?),
            ClaimKind::Trend => Check::Trend(rest.read()?),
            ClaimKind::Value => Check::Value(rest.read()?),
            ClaimKind::Speedup => Check::Speedup(rest.read()?),
            ClaimKind::Reported => Check::Reported(rest.read()?),
            ClaimKind::Intervals => Check::Intervals(rest.read()?),
            ClaimKind::Curve => Check::Curve(rest.read()?),
        };
        Ok(Claim {
            name: common.name.ok_or_else(|| A::Error::missing_field("name"))?,
            text: common.text.unwrap_or_default(),
            study: common
                .study
                .ok_or_else(|| A::Error::missing_field("study"))?,
            observation: common.observation,
            check,
        })
    }
}

/// The keys of a claim after `kind`, as a map for the struct of its kind: first those
/// buffered before `kind`, then the rest of the table in place, setting aside the
/// fields every claim has.
struct Rest<'c, A> {
    early: std::vec::IntoIter<(String, toml::Value)>,
    pending: Option<(String, toml::Value)>,
    map: A,
    common: &'c mut Common,
}

impl<'de, A: MapAccess<'de>> Rest<'_, A> {
    fn read<T: Deserialize<'de>>(&mut self) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(self))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rest<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if let Some((key, value)) = self.early.next() {
            let field = seed.deserialize(IntoDeserializer::<A::Error>::into_deserializer(
                key.as_str(),
            ))?;
            self.pending = Some((key, value));
            return Ok(Some(field));
        }
        let mut seed = Some(seed);
        loop {
            match self.map.next_key_seed(KeySeed(&mut seed))? {
                None => return Ok(None),
                Some(Key::Field(field)) => return Ok(Some(field)),
                Some(Key::Common(key)) => {
                    self.common.read(&key, &mut self.map)?;
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.pending.take() {
            // A buffered value has no place in the file any more: name its key.
            Some((key, value)) => seed
                .deserialize(value)
                .map_err(|e| A::Error::custom(format_args!("field `{key}`: {}", e.message()))),
            None => self.map.next_value_seed(seed),
        }
    }
}

/// A key of a claim after `kind`: a field every claim has, or one for the struct of
/// its kind (whose key seed is used only then, so it is lent rather than moved).
enum Key<F> {
    Common(String),
    Field(F),
}

struct KeySeed<'s, K>(&'s mut Option<K>);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, K> {
    type Value = Key<K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(deserializer)?;
        if COMMON_FIELDS.contains(&key.as_str()) {
            return Ok(Key::Common(key));
        }
        let seed = self
            .0
            .take()
            .ok_or_else(|| D::Error::custom("a key was read twice"))?;
        seed.deserialize(key.into_deserializer()).map(Key::Field)
    }
}
