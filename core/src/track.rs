//! A deserializer that knows where it is, so a decode error names its field path
//! (`spec.podGroupTemplates[3].name: invalid type: ...`).
//!
//! Each map key is kept as the text serde_json lends it while its value decodes (no copy for
//! keys without escapes), and the path is written only when an error unwinds through the
//! wrappers. A successful decode therefore allocates nothing for the path: copying every key,
//! as a general path tracker must, doubled the cost of decoding large objects.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

/// Where the last error happened: segments innermost first, pushed as the error unwinds.
#[derive(Default)]
pub struct Track(RefCell<Vec<Segment>>);

enum Segment {
    Key(String),
    Index(usize),
}

impl Track {
    fn push(&self, segment: Segment) {
        self.0.borrow_mut().push(segment);
    }

    /// A value decoded after all: an error a visitor recovered from left no path.
    fn forget(&self) {
        self.0.borrow_mut().clear();
    }

    /// `spec.items[3].name`; empty at the top level.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for segment in self.0.borrow().iter().rev() {
            match segment {
                Segment::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

/// Decodes one value of `de` with its path tracked in `track`.
pub struct Tracked<'t, D> {
    pub de: D,
    pub track: &'t Track,
}

/// Forwards `deserialize_*` methods, wrapping the visitor.
macro_rules! forward_deserialize {
    ($wrap:ident, $state:ident; $($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method($($arg,)* $wrap { inner: visitor, $state: self.$state })
        }
    )*};
}

/// Forwards every `deserialize_*` method but `deserialize_struct`, wrapping the visitor in
/// `$wrap`.
macro_rules! forward_every_deserialize_but_struct {
    ($wrap:ident, $state:ident) => {
        forward_deserialize!($wrap, $state;
            deserialize_any(), deserialize_bool(), deserialize_i8(), deserialize_i16(), deserialize_i32(),
            deserialize_i64(), deserialize_i128(), deserialize_u8(), deserialize_u16(), deserialize_u32(),
            deserialize_u64(), deserialize_u128(), deserialize_f32(), deserialize_f64(), deserialize_char(),
            deserialize_str(), deserialize_string(), deserialize_bytes(), deserialize_byte_buf(),
            deserialize_option(), deserialize_unit(), deserialize_unit_struct(name: &'static str),
            deserialize_newtype_struct(name: &'static str), deserialize_seq(), deserialize_tuple(len: usize),
            deserialize_tuple_struct(name: &'static str, len: usize), deserialize_map(),
            deserialize_enum(name: &'static str, variants: &'static [&'static str]),
            deserialize_identifier(), deserialize_ignored_any(),
        );
    };
}

/// Forwards every `deserialize_*` method, wrapping the visitor in `$wrap`.
macro_rules! forward_every_deserialize {
    ($wrap:ident, $state:ident) => {
        forward_every_deserialize_but_struct!($wrap, $state);
        forward_deserialize!($wrap, $state;
            deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        );
    };
}

/// Calls `$apply!` with the `visit_*` methods of booleans, numbers and characters.
macro_rules! visit_plain_values {
    ($apply:ident) => {
        $apply!(
            visit_bool(bool),
            visit_i8(i8),
            visit_i16(i16),
            visit_i32(i32),
            visit_i64(i64),
            visit_i128(i128),
            visit_u8(u8),
            visit_u16(u16),
            visit_u32(u32),
            visit_u64(u64),
            visit_u128(u128),
            visit_f32(f32),
            visit_f64(f64),
            visit_char(char),
        );
    };
}

/// Forwards `visit_*` methods of plain values to the wrapped visitor.
macro_rules! forward_visit {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Tracked<'_, D> {
    type Error = D::Error;

    forward_every_deserialize_but_struct!(Wrap, track);

    /// A struct is read from a JSON object only, as Kubernetes reads it: serde's derived
    /// structs would also read an array, its elements taken as the fields in order, which no
    /// object means and the apiserver never sends. Not compiling that reading for every type
    /// saves about a tenth of each policy module.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(Wrap { inner: visitor, track: self.track })
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// A visitor whose nested maps, lists and enums are tracked.
struct Wrap<'t, V> {
    inner: V,
    track: &'t Track,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit_plain_values!(forward_visit);
    forward_visit!(
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>),
    );

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_some(Tracked { de, track: self.track })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_newtype_struct(Tracked { de, track: self.track })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_seq(Seq { seq, track: self.track, index: 0 })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(Map { map, track: self.track, key: None })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(Enum { data, track: self.track })
    }
}

/// A seed whose value is decoded tracked.
struct TrackedSeed<'t, S> {
    seed: S,
    track: &'t Track,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for TrackedSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Tracked { de, track: self.track })
    }
}

struct Seq<'t, A> {
    seq: A,
    track: &'t Track,
    index: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, A::Error> {
        match self.seq.next_element_seed(TrackedSeed { seed, track: self.track }) {
            Ok(element) => {
                self.track.forget();
                self.index += 1;
                Ok(element)
            }
            Err(e) => {
                self.track.push(Segment::Index(self.index));
                Err(e)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// A map key (or enum variant) as decoded: lent by the JSON text when it has no escapes.
type Key<'de> = Option<Cow<'de, str>>;

fn segment(key: &mut Key) -> Segment {
    Segment::Key(key.take().map_or_else(|| "?".to_string(), Cow::into_owned))
}

struct Map<'t, 'de, A> {
    map: A,
    track: &'t Track,
    key: Key<'de>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        // Every key is read as text by one compiled reader, then given to the type's seed:
        // reading it through the seed would compile JSON string reading once per type.
        self.key = None;
        let Some(Text(key)) = self.map.next_key::<Text<'de>>()? else { return Ok(None) };
        let value = seed.deserialize(KeyText(key.clone(), PhantomData));
        self.key = Some(key);
        // A key the type refuses (an unknown field) is where the error is.
        value.map(Some).inspect_err(|_| self.track.push(segment(&mut self.key)))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.map.next_value_seed(TrackedSeed { seed, track: self.track }) {
            Ok(value) => {
                self.track.forget();
                Ok(value)
            }
            Err(e) => {
                self.track.push(segment(&mut self.key));
                Err(e)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

struct Enum<'t, A> {
    data: A,
    track: &'t Track,
}

impl<'de, 't, A: EnumAccess<'de>> EnumAccess<'de> for Enum<'t, A> {
    type Error = A::Error;
    type Variant = Variant<'t, 'de, A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant), A::Error> {
        let mut name = None;
        let (value, access) = self.data.variant_seed(CaptureSeed { seed, key: &mut name })?;
        Ok((value, Variant { access, track: self.track, name }))
    }
}

struct Variant<'t, 'de, A> {
    access: A,
    track: &'t Track,
    name: Key<'de>,
}

impl<'de, A: VariantAccess<'de>> Variant<'_, 'de, A> {
    fn tracked<T>(self, decode: impl FnOnce(A, &Track) -> Result<T, A::Error>) -> Result<T, A::Error> {
        let Variant { access, track, mut name } = self;
        decode(access, track).inspect_err(|_| track.push(segment(&mut name)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Variant<'_, 'de, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.access.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.tracked(|access, track| access.newtype_variant_seed(TrackedSeed { seed, track }))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.tracked(|access, track| access.tuple_variant(len, Wrap { inner: visitor, track }))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.tracked(|access, track| access.struct_variant(fields, Wrap { inner: visitor, track }))
    }
}

/// A JSON string lent by the text it is read from when it has no escapes (`Cow<str>`'s own
/// `Deserialize` always copies).
pub struct Text<'de>(pub Cow<'de, str>);

impl<'de: 'a, 'a> de::Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Lent;
        impl<'de> Visitor<'de> for Lent {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(v.to_string().into()))
            }
        }
        d.deserialize_str(Lent)
    }
}

/// A map key's text, read by the seed of the key's type: lent text is handed on as lent.
struct KeyText<'de, E>(Cow<'de, str>, PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for KeyText<'de, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.0 {
            Cow::Borrowed(key) => visitor.visit_borrowed_str(key),
            Cow::Owned(key) => visitor.visit_string(key),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// Decodes an enum variant's name with `seed`, keeping its text in `key`.
struct CaptureSeed<'k, 'de, S> {
    seed: S,
    key: &'k mut Key<'de>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for CaptureSeed<'_, 'de, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(CaptureKey { de, key: self.key })
    }
}

struct CaptureKey<'k, 'de, D> {
    de: D,
    key: &'k mut Key<'de>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for CaptureKey<'_, 'de, D> {
    type Error = D::Error;

    forward_every_deserialize!(CaptureVisit, key);

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// A key's visitor that notes the key's text on the way.
struct CaptureVisit<'k, 'de, V> {
    inner: V,
    key: &'k mut Key<'de>,
}

/// Notes a key given as a number (or another plain value) by its text, then forwards it.
macro_rules! capture_display {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            *self.key = Some(Cow::Owned(v.to_string()));
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for CaptureVisit<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit_plain_values!(capture_display);

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        *self.key = Some(Cow::Owned(v.to_string()));
        self.inner.visit_str(v)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        *self.key = Some(Cow::Borrowed(v));
        self.inner.visit_borrowed_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        *self.key = Some(Cow::Owned(v.clone()));
        self.inner.visit_string(v)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        self.inner.visit_bytes(v)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        self.inner.visit_borrowed_bytes(v)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
        self.inner.visit_byte_buf(v)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_some(de)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_newtype_struct(de)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(map)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(data)
    }
}
