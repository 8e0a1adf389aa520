//! Doc comments → descriptions. Literal doc lines are joined at compile time (one leading space
//! removed, paragraphs kept); `#[doc = include_str!(..)]` and other expressions go through
//! `concat!`, so the text is still known at compile time.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The `#[doc = …]` values of some attributes.
pub fn doc_exprs(attrs: &[Attribute]) -> Vec<Expr> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => Some(nv.value.clone()),
            _ => None,
        })
        .collect()
}

/// A `&'static str` expression for the joined docs, or `None` when there are none (or they are
/// all blank).
pub fn description(exprs: &[Expr]) -> Option<TokenStream> {
    let literals: Option<Vec<String>> = exprs
        .iter()
        .map(|e| match e {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        })
        .collect();
    match literals {
        Some(lines) => {
            let text = join_lines(&lines);
            (!text.is_empty()).then(|| quote!(#text))
        }
        None if exprs.is_empty() => None,
        None => {
            let mut parts = Vec::new();
            for (i, e) in exprs.iter().enumerate() {
                if i > 0 {
                    parts.push(quote!("\n"));
                }
                parts.push(quote!(#e));
            }
            Some(quote!(::core::concat!(#(#parts),*)))
        }
    }
}

/// Joins doc lines: strips the single space `///` leaves, trims blank lines at both ends.
pub fn join_lines(lines: &[String]) -> String {
    let lines: Vec<&str> = lines
        .iter()
        .flat_map(|l| l.split('\n'))
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect();
    lines.join("\n").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_paragraphs_and_strips_the_comment_space() {
        let lines = [" First line.", " second line.", "", " Next   paragraph."].map(String::from);
        assert_eq!(join_lines(&lines), "First line.\nsecond line.\n\nNext   paragraph.");
    }

    #[test]
    fn trims_blank_edges() {
        let lines = ["", " text", ""].map(String::from);
        assert_eq!(join_lines(&lines), "text");
    }
}
