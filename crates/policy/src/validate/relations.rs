//! `trust.relations`: the level between two declared tenants, each pair once.

use super::check::PolicyCheck;
use crate::policy::Relation;
use crate::raw::{self, S};
use gpu_trust_model::{Location, Trust};
use std::collections::BTreeMap;

impl PolicyCheck {
    pub(super) fn relations(
        &mut self,
        raw: Vec<S<raw::RawRelation>>,
        declared: &BTreeMap<String, Location>,
    ) -> Vec<Relation> {
        let mut seen: BTreeMap<[String; 2], (Trust, u32)> = BTreeMap::new();
        let mut out = Vec::new();
        for entry in raw {
            let loc = self.cx.loc(&entry);
            let r = entry.value;
            let level = match &r.level {
                None => {
                    self.cx.error(
                        loc.clone(),
                        "relation needs a `level` (none, limited or full)",
                    );
                    None
                }
                Some(l) => self.trust_level(l),
            };
            if r.tenants.len() != 2 {
                self.cx.error(
                    loc,
                    format!(
                        "a relation names exactly two tenants; this one names {}",
                        r.tenants.len()
                    ),
                );
                continue;
            }
            let mut known = true;
            for t in &r.tenants {
                if !declared.contains_key(&t.value) {
                    self.cx.error(
                        self.cx.loc(t),
                        format!(
                            "relation names tenant `{}`, which is not declared under `tenants` (a declared tenant may list no namespaces and be filled by the tenant label)",
                            t.value
                        ),
                    );
                    known = false;
                }
            }
            let (a, b) = (&r.tenants[0], &r.tenants[1]);
            if a.value == b.value {
                self.cx.error(
                    self.cx.loc(b),
                    format!(
                        "relation pairs tenant `{}` with itself (trust inside one tenant is always full)",
                        a.value
                    ),
                );
                continue;
            }
            let (Some(level), true) = (level, known) else {
                continue;
            };
            let mut pair = [a.value.clone(), b.value.clone()];
            pair.sort();
            match seen.get(&pair) {
                Some((first, line)) if *first != level => {
                    self.cx.error(
                        loc,
                        format!(
                            "tenants `{}` and `{}` are related twice with different levels: {first} (line {line}) and {level}",
                            pair[0], pair[1]
                        ),
                    );
                }
                Some(_) => {}
                None => {
                    seen.insert(pair.clone(), (level, loc.line));
                    out.push(Relation {
                        tenants: pair,
                        level,
                        location: loc,
                    });
                }
            }
        }
        out
    }
}
