//! Code generation for `#[derive(Canonical)]`: one `impl
//! lockstep_fx::Canonical` per item, with `MIN_BYTES`, `encode` and
//! `decode`.
//!
//! Invariants of the generated code: fields are written and read in
//! declaration order, each through its own type's `Canonical` encoding (so
//! every byte comes from the fixed-width little-endian writers of
//! `lockstep-fx`: no `usize`, no float, no memory layout); an enum writes
//! its `u8` tag first; `decode` only calls bounds-checked readers and
//! returns a `DecodeError` for an unknown tag or a too-long `Vec`, so it
//! has no panic path; `MIN_BYTES` is a sum (or, over variants, a minimum)
//! of the fields' own bounds, never more than a real encoding takes.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Member, Type, parse_quote};

use crate::attrs::{Container, FieldAttrs, VariantAttrs, default_label, discriminant_tag};

/// One field as the generated code sees it.
struct Field {
    /// `self.<member>` in a struct, `<member>: binding` in a pattern.
    member: Member,
    /// The local the field is decoded into (and bound to in an enum arm).
    binding: Ident,
    ty: Type,
    attrs: FieldAttrs,
    /// The label its bytes get (unused if flattened or skipped).
    label: LitStr,
}

/// The three parts of an impl.
struct Body {
    min: TokenStream,
    encode: TokenStream,
    decode: TokenStream,
}

/// Expands `#[derive(Canonical)]` on `input`.
pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let container = Container::parse(&input.attrs)?;
    let body = match &input.data {
        Data::Struct(s) => struct_body(&container, &s.fields)?,
        Data::Enum(e) => {
            if container.entity.is_some() {
                return Err(syn::Error::new(
                    input.ident.span(),
                    "`entity` is for structs: put it on the struct a variant holds",
                ));
            }
            enum_body(&container, &input.ident, e)?
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span(),
                "a union has no canonical encoding: derive Canonical on a struct or an enum",
            ));
        }
    };

    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(parse_quote!(::lockstep_fx::Canonical));
        param.bounds.push(parse_quote!(::core::fmt::Debug));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let name = &input.ident;
    let Body {
        min,
        encode,
        decode,
    } = body;
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics ::lockstep_fx::Canonical for #name #ty_generics #where_clause {
            const MIN_BYTES: u32 = #min;

            fn encode<__S: ::lockstep_fx::Sink>(&self, __w: &mut ::lockstep_fx::StateWriter<__S>) {
                #encode
            }

            fn decode(
                __r: &mut ::lockstep_fx::StateReader<'_>,
            ) -> ::core::result::Result<Self, ::lockstep_fx::DecodeError> {
                #decode
            }
        }
    })
}

/// Refuses, with a message naming the rule, the types the determinism rules
/// keep out of encoded state (`usize` and `isize` differ by target, floats
/// are not deterministic). Nested ones fail anyway: they have no
/// `Canonical` implementation.
fn check_type(ty: &Type) -> syn::Result<()> {
    if let Type::Path(p) = ty {
        if let Some(ident) = p.path.get_ident() {
            let why = match ident.to_string().as_str() {
                "usize" | "isize" => {
                    "`usize` and `isize` differ in size between targets and never enter \
                     encoded state: use `u32` (or `u64`)"
                }
                "f32" | "f64" => "floats never enter the state: use `Fx`",
                _ => return Ok(()),
            };
            return Err(syn::Error::new(ty.span(), why));
        }
    }
    Ok(())
}

/// The fields of a struct or a variant, with their attributes and labels.
fn fields(container: &Container, fields: &Fields) -> syn::Result<Vec<Field>> {
    let mut out = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for (i, f) in fields.iter().enumerate() {
        let parsed = FieldAttrs::parse(&f.attrs).and_then(|attrs| {
            if !attrs.skip {
                check_type(&f.ty)?;
            }
            Ok(attrs)
        });
        let attrs = match parsed {
            Ok(a) => a,
            Err(e) => {
                match &mut errors {
                    Some(all) => all.combine(e),
                    None => errors = Some(e),
                }
                continue;
            }
        };
        let (member, text) = match &f.ident {
            Some(ident) => (Member::Named(ident.clone()), ident.to_string()),
            None => (Member::Unnamed(i.into()), i.to_string()),
        };
        let label = match &attrs.name {
            Some(name) => name.clone(),
            None => LitStr::new(&default_label(container.prefix.as_deref(), &text), f.span()),
        };
        out.push(Field {
            member,
            binding: format_ident!("__f{}", i),
            ty: f.ty.clone(),
            attrs,
            label,
        });
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The sum of the encoded fields' `MIN_BYTES`, saturating.
fn min_bytes(fields: &[Field]) -> TokenStream {
    let tys = fields.iter().filter(|f| !f.attrs.skip).map(|f| &f.ty);
    quote! { 0u32 #(.saturating_add(<#tys as ::lockstep_fx::Canonical>::MIN_BYTES))* }
}

/// Writes one field, given an expression of type `&T` for its value.
fn encode_field(f: &Field, value: TokenStream) -> TokenStream {
    if f.attrs.skip {
        return TokenStream::new();
    }
    let span = f.ty.span();
    if f.attrs.flatten {
        return quote_spanned! {span=> ::lockstep_fx::Canonical::encode(#value, __w); };
    }
    let label = &f.label;
    quote_spanned! {span=> __w.field(#label, #value); }
}

/// Reads one field into its binding.
fn decode_field(f: &Field) -> TokenStream {
    let (binding, ty) = (&f.binding, &f.ty);
    let span = ty.span();
    if f.attrs.skip {
        return quote_spanned! {span=> let #binding: #ty = ::core::default::Default::default(); };
    }
    match f.attrs.max_len {
        Some(max) => quote_spanned! {span=>
            let #binding: #ty = ::lockstep_fx::decode_vec(__r, #max)?;
        },
        None => quote_spanned! {span=>
            let #binding = <#ty as ::lockstep_fx::Canonical>::decode(__r)?;
        },
    }
}

/// `Self`, `Self(a, b)` or `Self { x: a }` (or a variant path) from the
/// fields' bindings.
fn construct(path: TokenStream, shape: &Fields, fields: &[Field]) -> TokenStream {
    let bindings = fields.iter().map(|f| &f.binding);
    match shape {
        Fields::Named(_) => {
            let members = fields.iter().map(|f| &f.member);
            quote! { #path { #(#members: #bindings),* } }
        }
        Fields::Unnamed(_) => quote! { #path(#(#bindings),*) },
        Fields::Unit => path,
    }
}

fn struct_body(container: &Container, shape: &Fields) -> syn::Result<Body> {
    let fields = fields(container, shape)?;
    let entity = container.entity.as_ref().map(|kind| {
        let ids = container.ids.iter();
        let n = container.ids.len();
        quote! {
            let __ids: [u32; #n] = [#(::core::convert::From::from(self.#ids)),*];
            __w.entity(#kind, &__ids);
        }
    });
    let writes = fields.iter().map(|f| {
        let member = &f.member;
        encode_field(f, quote! { &self.#member })
    });
    let reads = fields.iter().map(decode_field);
    let value = construct(quote! { Self }, shape, &fields);
    let end = container
        .entity
        .as_ref()
        .map(|_| quote! { __w.end_entity(); });
    Ok(Body {
        min: min_bytes(&fields),
        encode: quote! { #entity #(#writes)* #end },
        decode: quote! { #(#reads)* ::core::result::Result::Ok(#value) },
    })
}

fn enum_body(container: &Container, name: &Ident, e: &syn::DataEnum) -> syn::Result<Body> {
    if e.variants.is_empty() {
        return Err(syn::Error::new(
            name.span(),
            "an enum without variants has no value to encode",
        ));
    }
    let mut seen: [Option<&Ident>; 256] = [None; 256];
    let mut next: Option<u8> = Some(0);
    let (mut writes, mut reads, mut mins) = (Vec::new(), Vec::new(), Vec::new());
    for v in &e.variants {
        let attrs = VariantAttrs::parse(&v.attrs)?;
        let tag = match (attrs.tag, &v.discriminant) {
            (Some(tag), _) => tag,
            (None, Some((_, expr))) => discriminant_tag(expr)?,
            (None, None) => next.ok_or_else(|| {
                syn::Error::new(v.ident.span(), "the tag after 255 does not fit in a u8")
            })?,
        };
        if let Some(other) = seen[usize::from(tag)] {
            return Err(syn::Error::new(
                v.ident.span(),
                format!("tag {tag} is already `{other}`'s"),
            ));
        }
        seen[usize::from(tag)] = Some(&v.ident);
        next = tag.checked_add(1);

        let fields = fields(container, &v.fields)?;
        let ident = &v.ident;
        let pattern = match &v.fields {
            Fields::Named(_) => {
                let bound = fields.iter().filter(|f| !f.attrs.skip).map(|f| {
                    let (member, binding) = (&f.member, &f.binding);
                    quote! { #member: #binding }
                });
                quote! { Self::#ident { #(#bound,)* .. } }
            }
            Fields::Unnamed(_) => {
                let bound = fields.iter().map(|f| match f.attrs.skip {
                    true => quote! { _ },
                    false => f.binding.to_token_stream(),
                });
                quote! { Self::#ident(#(#bound),*) }
            }
            Fields::Unit => quote! { Self::#ident },
        };
        let encodes = fields.iter().map(|f| {
            let binding = &f.binding;
            encode_field(f, quote! { #binding })
        });
        writes.push(quote! {
            #pattern => {
                __w.write_u8(#tag);
                #(#encodes)*
            }
        });
        let decodes = fields.iter().map(decode_field);
        let value = construct(quote! { Self::#ident }, &v.fields, &fields);
        reads.push(quote! {
            #tag => {
                #(#decodes)*
                ::core::result::Result::Ok(#value)
            }
        });
        mins.push(min_bytes(&fields));
    }
    let unknown = (e.variants.len() < 256).then(|| {
        let what = LitStr::new(&format!("{name} tag (no such variant)"), Span::call_site());
        quote! {
            _ => ::core::result::Result::Err(::lockstep_fx::DecodeError::Invalid {
                offset: __offset,
                what: #what,
            }),
        }
    });
    Ok(Body {
        min: quote! {
            1u32.saturating_add({
                let mut __min = u32::MAX;
                #({
                    let __v = #mins;
                    if __v < __min {
                        __min = __v;
                    }
                })*
                __min
            })
        },
        encode: quote! {
            match self {
                #(#writes)*
            }
        },
        decode: quote! {
            let __offset = __r.offset();
            match __r.read_u8()? {
                #(#reads)*
                #unknown
            }
        },
    })
}
