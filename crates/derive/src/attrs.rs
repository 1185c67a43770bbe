//! The `#[canonical(...)]` attributes: parsed from the item, its variants
//! and its fields into plain values, and checked before any code is
//! generated.
//!
//! Invariants: every attribute is parsed here or refused with an error at
//! its own span (a misspelt key is an error, never ignored); a label is
//! fixed at compile time (a `&'static str` literal); a field is either
//! skipped or encoded, never both; a tag is a `u8`.

use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitInt, LitStr};

/// What the item itself says: `#[canonical(prefix = "...", entity = "...",
/// ids(field, ...))]` on a struct or an enum.
#[derive(Default)]
pub struct Container {
    /// Prepended, with a space, to every default field label.
    pub prefix: Option<String>,
    /// Each value starts with an entity mark of this kind.
    pub entity: Option<LitStr>,
    /// The fields whose values identify the entity (each converts to `u32`).
    pub ids: Vec<Ident>,
}

/// What a field says: `#[canonical(skip)]`, `#[canonical(flatten)]`,
/// `#[canonical(name = "...")]`, `#[canonical(max_len = N)]`.
#[derive(Default)]
pub struct FieldAttrs {
    /// Not state: not written, rebuilt with `Default` on decode.
    pub skip: bool,
    /// Written without a label of its own (its type labels its fields).
    pub flatten: bool,
    /// The label, instead of the default.
    pub name: Option<LitStr>,
    /// The most items a `Vec` field may decode to.
    pub max_len: Option<u32>,
}

/// What a variant says: `#[canonical(tag = N)]`.
#[derive(Default)]
pub struct VariantAttrs {
    /// The tag, instead of the declaration order or the discriminant.
    pub tag: Option<u8>,
}

/// The `canonical` attributes in `attrs`, one nested meta at a time.
fn each(
    attrs: &[Attribute],
    mut f: impl FnMut(syn::meta::ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    for attr in attrs.iter().filter(|a| a.path().is_ident("canonical")) {
        attr.parse_nested_meta(&mut f)?;
    }
    Ok(())
}

impl Container {
    /// Parses the item's attributes.
    pub fn parse(attrs: &[Attribute]) -> syn::Result<Container> {
        let mut c = Container::default();
        each(attrs, |meta| {
            if meta.path.is_ident("prefix") {
                let s: LitStr = meta.value()?.parse()?;
                c.prefix = Some(s.value());
            } else if meta.path.is_ident("entity") {
                c.entity = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("ids") {
                meta.parse_nested_meta(|id| {
                    let ident = id.path.get_ident().cloned();
                    c.ids
                        .push(ident.ok_or_else(|| id.error("expected a field name"))?);
                    Ok(())
                })?;
            } else {
                return Err(meta.error(
                    "unknown canonical attribute on an item (expected `prefix`, `entity` or `ids`)",
                ));
            }
            Ok(())
        })?;
        if !c.ids.is_empty() && c.entity.is_none() {
            return Err(syn::Error::new(
                c.ids[0].span(),
                "`ids` names the fields of an entity: add `entity = \"kind\"`",
            ));
        }
        Ok(c)
    }
}

impl FieldAttrs {
    /// Parses a field's attributes.
    pub fn parse(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
        let mut f = FieldAttrs::default();
        let mut span = None;
        each(attrs, |meta| {
            span.get_or_insert(meta.path.span());
            if meta.path.is_ident("skip") {
                f.skip = true;
            } else if meta.path.is_ident("flatten") {
                f.flatten = true;
            } else if meta.path.is_ident("name") {
                f.name = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("max_len") {
                let n: LitInt = meta.value()?.parse()?;
                f.max_len = Some(
                    n.base10_parse::<u32>()
                        .map_err(|_| syn::Error::new(n.span(), "`max_len` must fit in a u32"))?,
                );
            } else {
                return Err(meta.error(
                    "unknown canonical attribute on a field \
                     (expected `skip`, `flatten`, `name` or `max_len`)",
                ));
            }
            Ok(())
        })?;
        let span = span.unwrap_or_else(proc_macro2::Span::call_site);
        if f.skip && (f.flatten || f.name.is_some() || f.max_len.is_some()) {
            return Err(syn::Error::new(
                span,
                "a skipped field is not encoded: `skip` takes no other attribute",
            ));
        }
        if f.flatten && f.name.is_some() {
            return Err(syn::Error::new(
                span,
                "a flattened field has no label of its own: drop `name` or `flatten`",
            ));
        }
        Ok(f)
    }
}

impl VariantAttrs {
    /// Parses a variant's attributes.
    pub fn parse(attrs: &[Attribute]) -> syn::Result<VariantAttrs> {
        let mut v = VariantAttrs::default();
        each(attrs, |meta| {
            if meta.path.is_ident("tag") {
                let n: LitInt = meta.value()?.parse()?;
                v.tag = Some(parse_tag(&n)?);
            } else {
                return Err(meta.error("unknown canonical attribute on a variant (expected `tag`)"));
            }
            Ok(())
        })?;
        Ok(v)
    }
}

/// A tag literal: an integer from 0 to 255.
fn parse_tag(n: &LitInt) -> syn::Result<u8> {
    n.base10_parse::<u8>()
        .map_err(|_| syn::Error::new(n.span(), "a variant's tag is a u8: 0 to 255"))
}

/// A variant's explicit discriminant as a tag: only an integer literal can
/// be read at compile time.
pub fn discriminant_tag(expr: &Expr) -> syn::Result<u8> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(n), ..
        }) => parse_tag(n),
        _ => Err(syn::Error::new(
            expr.span(),
            "a discriminant used as a tag must be an integer literal (or give `#[canonical(tag = N)]`)",
        )),
    }
}

/// The label of a field with no `name`: its name with underscores as spaces
/// (`cube_size` → `cube size`), or its position in a tuple, after the
/// item's prefix if it has one.
pub fn default_label(prefix: Option<&str>, field: &str) -> String {
    let field = field.strip_prefix("r#").unwrap_or(field).replace('_', " ");
    match prefix {
        Some(p) if !p.is_empty() => format!("{p} {field}"),
        _ => field,
    }
}
