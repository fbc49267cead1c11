//! The product tree, flattened into products (a leaf with the branches above it), and the component
//! a product is by the component table (`data/components.yaml`): by a product or product-family name
//! or the product's CPE, on one of the component's platforms.

use super::raw::{RawBranch, RawProduct};
use super::version::{parse_version_expr, parse_version_text};
use crate::advisories::{Component, Components};
use gpu_trust_source::ValidationContext;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};

/// Most products one document's tree may hold.
pub const MAX_PRODUCTS: usize = 100_000;
/// Deepest nesting of product-tree branches.
pub const MAX_BRANCH_DEPTH: usize = 20;

/// A leaf of the product tree.
#[derive(Debug, Clone)]
pub(super) struct Product {
    pub(super) id: String,
    /// `(category, name)` of the branches above it, outermost first.
    pub(super) path: Vec<(String, String)>,
    pub(super) name: String,
    pub(super) cpe: Option<String>,
}

impl Product {
    pub(super) fn display(&self) -> String {
        let platform = self
            .path
            .iter()
            .find(|(c, _)| c == "architecture")
            .map(|(_, n)| format!(" ({n})"))
            .unwrap_or_default();
        // The product's name: a product-name branch above it, else a version branch whose name is
        // no version (NVIDIA names the product there), else the product's own name.
        let product = self
            .path
            .iter()
            .rev()
            .find(|(c, _)| c == "product_name")
            .or_else(|| {
                self.path
                    .iter()
                    .rev()
                    .find(|(c, n)| c == "product_version" && parse_version_expr(n).is_none())
            })
            .map(|(_, n)| n.as_str())
            .unwrap_or(&self.name);
        format!("{product}{platform}")
    }

    /// Texts that may hold the version: the leaf branch's name when it is a version branch, then
    /// the product's name.
    pub(super) fn version_texts(&self) -> Vec<&str> {
        let mut out = Vec::new();
        if let Some((c, n)) = self.path.last() {
            if c == "product_version" || c == "product_version_range" {
                out.push(n.as_str());
            }
        }
        out.push(self.name.as_str());
        out
    }
}

pub(super) struct Walk<'a> {
    pub(super) cx: &'a mut ValidationContext,
    pub(super) products: &'a mut BTreeMap<String, Product>,
    pub(super) count: usize,
    pub(super) components: &'a Components,
    /// Product ids defined twice with the same meaning, with both names.
    pub(super) twice: BTreeSet<String>,
}

impl Walk<'_> {
    pub(super) fn branches(
        &mut self,
        list: &[RawBranch],
        path: &mut Vec<(String, String)>,
        depth: usize,
    ) {
        for b in list {
            if depth > MAX_BRANCH_DEPTH {
                self.cx.error(
                    self.cx.loc(&b.name),
                    format!(
                        "CSAF: product tree branches nest deeper than {MAX_BRANCH_DEPTH} levels"
                    ),
                );
                return;
            }
            path.push((b.category.value.clone(), b.name.value.clone()));
            if let Some(p) = &b.product {
                self.product(p, path, Some(&b.name));
            }
            self.branches(&b.branches, path, depth + 1);
            path.pop();
        }
    }

    pub(super) fn product(
        &mut self,
        p: &RawProduct,
        path: &[(String, String)],
        _at: Option<&Spanned<String>>,
    ) {
        self.count += 1;
        if self.count > MAX_PRODUCTS {
            if self.count == MAX_PRODUCTS + 1 {
                self.cx.error(
                    self.cx.loc(&p.product_id),
                    format!("CSAF: more than {MAX_PRODUCTS} products in the product tree"),
                );
            }
            return;
        }
        let id = p.product_id.value.clone();
        let product = Product {
            id: id.clone(),
            path: path.to_vec(),
            name: p.name.value.clone(),
            cpe: p
                .product_identification_helper
                .as_ref()
                .and_then(|h| h.cpe.clone()),
        };
        if let Some(first) = self.products.get(&id) {
            // CSAF requires unique ids (section 6.1.2), but NVIDIA's bulletin 5861 defines one vGPU
            // manager product twice, its name written two ways ("580.159.01All versions prior to and
            // including vGPU 19.5)" and "580.159.01(All versions ..."). Two definitions that read as
            // the same component and versions (or no component the audit knows) are read once, and
            // said; others are an error.
            let reading = |p: &Product| {
                component_of(p, self.components).map(|c| {
                    (
                        c,
                        p.version_texts().into_iter().find_map(parse_version_text),
                    )
                })
            };
            if reading(first) == reading(&product) {
                self.twice
                    .insert(format!("`{id}` (`{}`; `{}`)", first.name, product.name));
            } else {
                self.cx.error(
                    self.cx.loc(&p.product_id),
                    format!(
                        "CSAF: product id `{id}` is defined twice, as `{}` and as `{}`, which read differently",
                        first.name, product.name
                    ),
                );
            }
            return;
        }
        self.products.insert(id, product);
    }
}

/// The component a product is, by the component table.
pub(super) fn component_of(p: &Product, components: &Components) -> Option<Component> {
    let names: Vec<&str> = p
        .path
        .iter()
        .filter(|(c, _)| {
            matches!(
                c.as_str(),
                "product_name" | "product_family" | "product_version" | "product_version_range"
            )
        })
        .map(|(_, n)| n.as_str())
        .chain(std::iter::once(p.name.as_str()))
        .collect();
    let cpe_product = p.cpe.as_deref().and_then(|c| {
        let parts: Vec<&str> = c.split(':').collect();
        (parts.len() > 4 && parts[0] == "cpe").then(|| format!("{}:{}", parts[3], parts[4]))
    });
    let platforms: Vec<String> = p
        .path
        .iter()
        .filter(|(c, _)| c == "architecture")
        .map(|(_, n)| {
            n.split(|ch: char| !ch.is_ascii_alphanumeric())
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .collect();
    components.products.iter().find_map(|entry| {
        let by_name = !entry.name.is_empty()
            && names
                .iter()
                .any(|n| n.trim().eq_ignore_ascii_case(entry.name.trim()));
        let by_cpe = entry
            .cpe
            .as_deref()
            .is_some_and(|c| cpe_product.as_deref() == Some(c));
        let on_platform = entry.platforms.is_empty()
            || platforms.is_empty()
            || platforms
                .iter()
                .any(|p| entry.platforms.iter().any(|e| e.eq_ignore_ascii_case(p)));
        ((by_name || by_cpe) && on_platform).then_some(entry.component)
    })
}
