//! The wire formats: every JSON (and XML) body the service reads or writes,
//! as plain serde structs with the field names of the contract, and the
//! explicit conversions between them and the core's types.
//!
//! Handlers and the actor use these; nothing here talks to the network or to
//! the core. `docs/api.md` documents every field.

pub mod am;
pub mod apps;
pub mod attempts;
pub mod cluster;
pub mod events;
pub mod explain;
pub mod nm;
pub mod statistics;

use serde::{Deserialize, Serialize};
use weft_model::Resource;

/// A resource as YARN's REST API writes it: memory in MB and virtual cores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceDto {
    /// Memory in MB.
    pub memory: u64,
    /// Virtual cores.
    #[serde(rename = "vCores")]
    pub vcores: u64,
}

impl ResourceDto {
    /// The wire form of `res`; an unbounded component is written as `i64::MAX`
    /// clamped to what JSON readers handle (Hadoop writes `Long.MAX_VALUE` too).
    pub fn from_resource(res: Resource) -> ResourceDto {
        ResourceDto {
            memory: res.memory_mb().min(i64::MAX as u64),
            vcores: res.vcores().min(i64::MAX as u64),
        }
    }

    /// The core's form.
    pub fn to_resource(self) -> Resource {
        Resource::new(self.memory, self.vcores)
    }
}

/// A field of a request body that parsed as JSON but means nothing valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct InvalidField {
    /// Where, as a path into the body (`containers[2].containerId`).
    pub field: String,
    /// What is wrong with the value, naming it.
    pub why: String,
}

impl InvalidField {
    /// A problem with `field`.
    pub fn new(field: impl Into<String>, why: impl Into<String>) -> InvalidField {
        InvalidField {
            field: field.into(),
            why: why.into(),
        }
    }
}

/// Parses an id-like field, naming the field on failure.
pub(crate) fn parse_field<T>(field: impl Into<String>, text: &str) -> Result<T, InvalidField>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e: T::Err| InvalidField::new(field, e.to_string()))
}

/// Milliseconds since the Unix epoch, the unit of every timestamp on the wire.
pub type EpochMillis = u64;

/// Ids written as their text (`container_...`, `host:port`) and read back
/// by parsing it, with no intermediate `String` either way.
pub(crate) mod as_text {
    use std::fmt;
    use std::marker::PhantomData;
    use std::str::FromStr;

    use serde::de::Visitor;
    use serde::{Deserializer, Serializer};

    pub(crate) fn serialize<T: fmt::Display, S: Serializer>(
        v: &T,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    struct Parse<T>(PhantomData<T>);

    impl<T> Visitor<'_> for Parse<T>
    where
        T: FromStr,
        T::Err: fmt::Display,
    {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an id as a string")
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
            v.parse().map_err(E::custom)
        }
    }

    pub(crate) fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: fmt::Display,
        D: Deserializer<'de>,
    {
        d.deserialize_str(Parse(PhantomData))
    }
}

/// One string or a list of strings (JSON), or an element's text (XML, whose
/// readers present `<tag>a</tag>` as a map holding the text).
pub(crate) mod one_or_many {
    use std::fmt;

    use serde::Deserialize;
    use serde::de::{MapAccess, SeqAccess, Visitor};

    /// The strings read.
    pub(crate) struct Strings(pub(crate) Vec<String>);

    struct OneOrMany;

    impl<'de> Visitor<'de> for OneOrMany {
        type Value = Strings;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string or a list of strings")
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Strings, E> {
            Ok(Strings(vec![v.to_owned()]))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strings, A::Error> {
            let mut res = Vec::new();
            while let Some(item) = seq.next_element::<String>()? {
                res.push(item);
            }
            Ok(Strings(res))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strings, A::Error> {
            let mut res = Vec::new();
            while let Some((_, text)) = map.next_entry::<String, String>()? {
                res.push(text);
            }
            Ok(Strings(res))
        }
    }

    impl<'de> Deserialize<'de> for Strings {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Strings, D::Error> {
            d.deserialize_any(OneOrMany)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_round_trips_with_yarn_names() {
        let dto = ResourceDto::from_resource(Resource::new(2048, 3));
        let json = serde_json::to_string(&dto).unwrap();
        assert_eq!(json, r#"{"memory":2048,"vCores":3}"#);
        let back: ResourceDto = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_resource(), Resource::new(2048, 3));
    }

    #[test]
    fn unbounded_is_clamped_to_a_long() {
        let dto = ResourceDto::from_resource(Resource::UNBOUNDED);
        assert_eq!(dto.memory, i64::MAX as u64);
    }
}
