//! Step 3, trust groups: sharing groups of tenants that may share a device, cliques of groups that may
//! share a GPU.

use crate::file::PlanInput;
use crate::unit::{Rep, Res, Share, Unit, UnitKind};
use std::collections::{BTreeMap, BTreeSet};

/// Tenants that may share a device (trust `full`, no isolation contract) form sharing groups; groups
/// that may share a GPU (trust above `none` between every two tenants) form cliques.
pub(super) struct TrustGroups {
    pub(super) groups: Vec<Vec<usize>>,
    pub(super) group_of: BTreeMap<usize, usize>,
    pub(super) clique_of_group: Vec<usize>,
}

impl TrustGroups {
    pub(super) fn of(input: &PlanInput, tenants: &BTreeSet<usize>) -> TrustGroups {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of: BTreeMap<usize, usize> = BTreeMap::new();
        for &t in tenants {
            let conf = input.tenants[t].confidential;
            let found = groups.iter().position(|g| {
                !conf
                    && g.iter()
                        .all(|&o| !input.tenants[o].confidential && input.may_share_device(t, o))
            });
            let gi = match found {
                Some(gi) => gi,
                None => {
                    groups.push(Vec::new());
                    groups.len() - 1
                }
            };
            groups[gi].push(t);
            group_of.insert(t, gi);
        }
        let mut cliques: Vec<Vec<usize>> = Vec::new();
        let mut clique_of_group: Vec<usize> = vec![0; groups.len()];
        for (gi, g) in groups.iter().enumerate() {
            let conf = g.iter().any(|&t| input.tenants[t].confidential);
            let found = cliques.iter().position(|c| {
                !conf
                    && c.iter().all(|&og| {
                        groups[og].iter().all(|&o| {
                            !input.tenants[o].confidential
                                && g.iter().all(|&t| input.may_share_gpu(t, o))
                        })
                    })
            });
            let ci = match found {
                Some(ci) => ci,
                None => {
                    cliques.push(Vec::new());
                    cliques.len() - 1
                }
            };
            cliques[ci].push(gi);
            clique_of_group[gi] = ci;
        }
        TrustGroups {
            groups,
            group_of,
            clique_of_group,
        }
    }

    /// A unit of whole GPUs for `members`, in the clique of tenant `t`.
    pub(super) fn whole_unit(
        &self,
        input: &PlanInput,
        gpus: u32,
        share: Share,
        members: Vec<Rep>,
        t: usize,
    ) -> Unit {
        let clique = self.clique_of_group[self.group_of[&t]];
        let tenants_set: BTreeSet<usize> = members
            .iter()
            .map(|r| input.workloads[r.w].tenant)
            .collect();
        Unit {
            gpus,
            clique,
            tenants: tenants_set,
            keys: BTreeMap::from([(Res::Gpu, share)]),
            cc: input.tenants[t].confidential,
            kind: UnitKind::Whole { share, members },
        }
    }
}
