//! Code generation for `#[derive(Command)]`: one `impl
//! lockstep_codec::Command` for a struct or an enum whose fields are ranged
//! integers, `bool`s or other commands, packed in as few bits as their
//! ranges allow.
//!
//! The encoding: an enum first writes its variant's index in declaration
//! order as a ranged value `0..=variants - 1` (no bits for a single
//! variant); then every field in declaration order: an integer with
//! `#[command(range = LO..=HI)]` as `value - LO` in
//! `bits_for(HI - LO)` bits ([`BitStream::ranged`]); a `bool` in one bit; any
//! other type through its own `Command` encoding. `MAX_BITS` is the tag's
//! bits plus the widest variant's fields. `schema()` names every variant,
//! field and range, so a change to the encoding changes the input's schema
//! hash.
//!
//! Invariants of the generated code: reading rejects every bit pattern
//! writing never produces (a tag or a value beyond its range is
//! `BitError::OutOfRange`), so decoding is canonical; a value outside its
//! declared range is written clamped into it (the bits stay decodable);
//! no arithmetic can overflow (it is done in `i128`, and a range is checked
//! at compile time to fit its field's type and to span at most `u32::MAX`);
//! nothing panics.
//!
//! [`BitStream::ranged`]: https://docs.rs/lockstep-codec

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitInt, Token, Type};

/// How one field is packed.
enum Packing {
    /// An integer in `lo..=hi`.
    Ranged { lo: i128, hi: i128 },
    /// One bit.
    Bool,
    /// Another command's own encoding.
    Nested,
}

/// One field of a struct or a variant.
struct Field {
    /// `x` or `0`: the name in the schema, and the member in a pattern.
    member: syn::Member,
    /// The local it is bound to.
    binding: Ident,
    ty: Type,
    packing: Packing,
}

const INTEGERS: [&str; 8] = ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"];

/// Expands `#[derive(Command)]` on `input`.
pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "derive(Command) takes no generic parameters: a command's encoding is fixed",
        ));
    }
    let variants: Vec<(Option<&Ident>, &Fields)> = match &input.data {
        Data::Struct(s) => vec![(None, &s.fields)],
        Data::Enum(e) if e.variants.is_empty() => {
            return Err(syn::Error::new(
                name.span(),
                "an enum without variants is no command",
            ));
        }
        Data::Enum(e) => e
            .variants
            .iter()
            .map(|v| (Some(&v.ident), &v.fields))
            .collect(),
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span(),
                "a union is no command",
            ));
        }
    };
    let is_enum = matches!(input.data, Data::Enum(_));
    let last = variants.len() as u32 - 1;
    let what_tag = format!("{name} variant");

    let mut schema = vec![format!("{name}")];
    if is_enum {
        schema.push(format!("variant 0..={last}"));
    }
    let (mut writes, mut reads, mut widths, mut asserts) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut all_fields = Vec::new();
    for (index, (variant, shape)) in variants.iter().enumerate() {
        let fields = fields(shape)?;
        let path = match variant {
            Some(v) => quote! { Self::#v },
            None => quote! { Self },
        };
        let index = index as u32;
        let tag_write = is_enum.then(|| {
            quote! {
                let mut __tag: u32 = #index;
                __s.ranged(&mut __tag, 0, #last, #what_tag)?;
            }
        });
        let pattern = pattern(&path, shape, &fields);
        let field_writes = fields.iter().map(write_field);
        writes.push(quote! {
            #pattern => {
                #tag_write
                #(#field_writes)*
            }
        });
        let field_reads = fields.iter().map(read_field);
        let value = construct(&path, shape, &fields);
        reads.push(quote! {
            #index => {
                #(#field_reads)*
                ::core::result::Result::Ok(#value)
            }
        });
        let bits = fields.iter().map(field_bits);
        widths.push(quote! { 0u32 #(.saturating_add(#bits))* });
        asserts.extend(fields.iter().filter_map(range_check));
        let described: Vec<String> = fields.iter().map(describe).collect();
        let label = variant.map(Ident::to_string);
        schema.push(match (label, described.is_empty()) {
            (Some(v), true) => v,
            (Some(v), false) => format!("{v} {{ {} }}", described.join(", ")),
            (None, _) => described.join(", "),
        });
        all_fields.extend(fields);
    }
    let tag_bits = if is_enum {
        quote! { ::lockstep_codec::bits::bits_for(#last as u64) }
    } else {
        quote! { 0u32 }
    };
    // A nested command's schema is part of this one's, read when asked.
    let nested: Vec<&Type> = all_fields
        .iter()
        .filter(|f| matches!(f.packing, Packing::Nested))
        .map(|f| &f.ty)
        .collect();
    let schema_text = schema.join("; ");
    let schema_body = if nested.is_empty() {
        quote! { #schema_text }
    } else {
        let format = schema_text
            .replace('{', "{{")
            .replace('}', "}}")
            .replace(NESTED, "({})");
        quote! {
            static __SCHEMA: ::std::sync::OnceLock<::std::string::String> =
                ::std::sync::OnceLock::new();
            __SCHEMA.get_or_init(|| {
                ::std::format!(#format, #(<#nested as ::lockstep_codec::Command>::schema()),*)
            })
        }
    };
    let read_tag = if is_enum {
        quote! {
            let __at = __s.bit_position();
            let mut __tag: u32 = 0;
            __s.ranged(&mut __tag, 0, #last, #what_tag)?;
        }
    } else {
        quote! { let __at = __s.bit_position(); let __tag: u32 = 0; }
    };
    Ok(quote! {
        #[automatically_derived]
        impl ::lockstep_codec::Command for #name {
            const MAX_BITS: u32 = {
                #(#asserts)*
                let mut __widest = 0u32;
                #({
                    let __w = #widths;
                    if __w > __widest {
                        __widest = __w;
                    }
                })*
                (#tag_bits).saturating_add(__widest)
            };

            fn schema() -> &'static str {
                #schema_body
            }

            fn serialize<__S: ::lockstep_codec::bits::BitStream>(
                &mut self,
                __s: &mut __S,
            ) -> ::core::result::Result<(), ::lockstep_codec::bits::BitError> {
                if __S::READING {
                    *self = <Self as ::lockstep_codec::Command>::read(__s)?;
                    return ::core::result::Result::Ok(());
                }
                match self {
                    #(#writes)*
                }
                ::core::result::Result::Ok(())
            }

            fn read<__S: ::lockstep_codec::bits::BitStream>(
                __s: &mut __S,
            ) -> ::core::result::Result<Self, ::lockstep_codec::bits::BitError> {
                #read_tag
                match __tag {
                    #(#reads)*
                    _ => ::core::result::Result::Err(::lockstep_codec::bits::BitError::OutOfRange {
                        bit: __at,
                        what: #what_tag,
                    }),
                }
            }
        }
    })
}

/// Where a nested command's schema goes in the schema text.
const NESTED: &str = "\u{0}";

/// The fields of a struct or a variant, with how each is packed.
fn fields(shape: &Fields) -> syn::Result<Vec<Field>> {
    let mut out = Vec::new();
    for (i, f) in shape.iter().enumerate() {
        let range = range_attr(&f.attrs)?;
        let ty_name = match &f.ty {
            Type::Path(p) => p.path.get_ident().map(Ident::to_string),
            _ => None,
        };
        let integer = ty_name.as_deref().is_some_and(|t| INTEGERS.contains(&t));
        let packing = match (range, ty_name.as_deref()) {
            (Some((lo, hi)), _) if integer => Packing::Ranged { lo, hi },
            (Some(_), _) => {
                return Err(syn::Error::new(
                    f.ty.span(),
                    "`range` is for integer fields (u8, u16, u32, u64, i8, i16, i32, i64)",
                ));
            }
            (None, Some("bool")) => Packing::Bool,
            (None, _) if integer => {
                return Err(syn::Error::new(
                    f.ty.span(),
                    "an integer field of a command needs its range, to be packed in as few bits as it allows: `#[command(range = 0..=99)]`",
                ));
            }
            (None, Some("usize" | "isize" | "f32" | "f64")) => {
                return Err(syn::Error::new(
                    f.ty.span(),
                    "a command holds integers with a range, bools and other commands (`usize` differs by target; floats never enter the simulation)",
                ));
            }
            (None, _) => Packing::Nested,
        };
        let member = match &f.ident {
            Some(ident) => syn::Member::Named(ident.clone()),
            None => syn::Member::Unnamed(i.into()),
        };
        out.push(Field {
            member,
            binding: format_ident!("__f{}", i),
            ty: f.ty.clone(),
            packing,
        });
    }
    Ok(out)
}

/// The `#[command(range = LO..=HI)]` of a field, if any.
fn range_attr(attrs: &[syn::Attribute]) -> syn::Result<Option<(i128, i128)>> {
    let mut range = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("command")) {
        attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("range") {
                return Err(meta.error("unknown command attribute on a field (expected `range`)"));
            }
            let input = meta.value()?;
            let span = input.span();
            let lo = signed(input)?;
            if input.parse::<Option<Token![..=]>>()?.is_none() {
                return Err(input.error("a command range is inclusive: `LO..=HI`"));
            }
            let hi = signed(input)?;
            if lo > hi {
                return Err(syn::Error::new(
                    span,
                    "an empty range: its start is above its end",
                ));
            }
            if hi - lo > i128::from(u32::MAX) {
                return Err(syn::Error::new(
                    span,
                    "a command range spans at most 2^32 values",
                ));
            }
            range = Some((lo, hi));
            Ok(())
        })?;
    }
    Ok(range)
}

/// An integer literal, or a negated one.
fn signed(input: ParseStream<'_>) -> syn::Result<i128> {
    let negative = input.parse::<Option<Token![-]>>()?.is_some();
    let n: LitInt = input.parse()?;
    let v = n.base10_parse::<i128>()?;
    Ok(if negative { -v } else { v })
}

/// `Self::V { x: __f0, .. }`, `Self::V(__f0)`, `Self::V` or `Self { .. }`.
fn pattern(path: &TokenStream, shape: &Fields, fields: &[Field]) -> TokenStream {
    let bindings = fields.iter().map(|f| &f.binding);
    match shape {
        Fields::Named(_) => {
            let members = fields.iter().map(|f| &f.member);
            quote! { #path { #(#members: #bindings),* } }
        }
        Fields::Unnamed(_) => quote! { #path(#(#bindings),*) },
        Fields::Unit => quote! { #path },
    }
}

/// The value from the fields' bindings.
fn construct(path: &TokenStream, shape: &Fields, fields: &[Field]) -> TokenStream {
    pattern(path, shape, fields)
}

/// Writes one field bound (by reference) to its binding.
fn write_field(f: &Field) -> TokenStream {
    let (b, what) = (&f.binding, member_text(&f.member));
    match f.packing {
        Packing::Ranged { lo, hi } => {
            let span = (hi - lo) as u32;
            quote! {
                let mut __v = (::core::primitive::i128::from(*#b).clamp(#lo, #hi) - #lo) as u32;
                __s.ranged(&mut __v, 0, #span, #what)?;
            }
        }
        Packing::Bool => quote! {
            let mut __v: bool = *#b;
            __s.bool(&mut __v)?;
        },
        Packing::Nested => quote! {
            ::lockstep_codec::Command::serialize(#b, __s)?;
        },
    }
}

/// Reads one field into its binding.
fn read_field(f: &Field) -> TokenStream {
    let (b, ty, what) = (&f.binding, &f.ty, member_text(&f.member));
    match f.packing {
        Packing::Ranged { lo, hi } => {
            let span = (hi - lo) as u32;
            quote! {
                let __field_at = __s.bit_position();
                let mut __v: u32 = 0;
                __s.ranged(&mut __v, 0, #span, #what)?;
                let #b = <#ty as ::core::convert::TryFrom<i128>>::try_from(::core::primitive::i128::from(__v) + #lo)
                    .map_err(|_| ::lockstep_codec::bits::BitError::OutOfRange { bit: __field_at, what: #what })?;
            }
        }
        Packing::Bool => quote! {
            let mut #b = false;
            __s.bool(&mut #b)?;
        },
        Packing::Nested => quote! {
            let #b = <#ty as ::lockstep_codec::Command>::read(__s)?;
        },
    }
}

/// The most bits one field takes.
fn field_bits(f: &Field) -> TokenStream {
    let ty = &f.ty;
    match f.packing {
        Packing::Ranged { lo, hi } => {
            let span = (hi - lo) as u64;
            quote! { ::lockstep_codec::bits::bits_for(#span) }
        }
        Packing::Bool => quote! { 1u32 },
        Packing::Nested => quote! { <#ty as ::lockstep_codec::Command>::MAX_BITS },
    }
}

/// A compile-time check that a field's range fits its type.
fn range_check(f: &Field) -> Option<TokenStream> {
    let Packing::Ranged { lo, hi } = f.packing else {
        return None;
    };
    let ty = &f.ty;
    let message = format!(
        "the range of `{}` does not fit its type",
        member_text(&f.member)
    );
    Some(quote! {
        ::core::assert!(
            #lo >= <#ty>::MIN as i128 && #hi <= <#ty>::MAX as i128,
            #message
        );
    })
}

/// A field in the schema: `x 0..=1023`, `fire bool`, `order (…)`.
fn describe(f: &Field) -> String {
    let name = member_text(&f.member);
    match f.packing {
        Packing::Ranged { lo, hi } => format!("{name} {lo}..={hi}"),
        Packing::Bool => format!("{name} bool"),
        Packing::Nested => format!("{name} {NESTED}"),
    }
}

fn member_text(m: &syn::Member) -> String {
    match m {
        syn::Member::Named(i) => i.to_string().trim_start_matches("r#").to_string(),
        syn::Member::Unnamed(i) => i.index.to_string(),
    }
}
