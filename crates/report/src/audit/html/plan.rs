//! What the page shows of a report and its layout: the findings up to the caps, the pairs riskiest
//! first, the groups, the nodes drawn (nodes alike and identical GPUs drawn once) and listed; and the
//! index of the tenants the page names, with their ids and colours.

use super::*;

/// Nodes drawn as one: the first, and the others with the same layout and tenants.
pub struct DrawnNode<'a> {
    pub node: &'a NodeLayout,
    pub alike: Vec<&'a NodeLayout>,
}

impl DrawnNode<'_> {
    /// The runs of identical consecutive GPUs of the node: each is drawn once.
    pub fn runs(&self) -> Vec<&[GpuLayout]> {
        gpu_runs(&self.node.gpus)
    }
}

/// Consecutive GPUs shared the same way by the same tenants, as runs.
pub fn gpu_runs(gpus: &[GpuLayout]) -> Vec<&[GpuLayout]> {
    let mut runs: Vec<&[GpuLayout]> = Vec::new();
    let mut start = 0;
    for i in 1..=gpus.len() {
        if i == gpus.len() || !same_occupancy(&gpus[start], &gpus[i]) {
            runs.push(&gpus[start..i]);
            start = i;
        }
    }
    runs
}

/// What the page shows of a report and its layout.
pub struct Plan<'a> {
    /// Findings shown, in the report's order.
    pub findings: Vec<&'a Finding>,
    /// Findings not shown, per rule.
    pub hidden: BTreeMap<&'a str, usize>,
    /// Findings not shown, per tenant they name.
    pub hidden_of_tenant: BTreeMap<&'a str, usize>,
    /// Tenants on the matrix axes (names), in the report's order.
    pub matrix_tenants: Vec<String>,
    pub drawn: Vec<DrawnNode<'a>>,
    pub listed: Vec<&'a NodeLayout>,
    /// Pairs listed (at most [`MAX_PAIRS`]), riskiest first.
    pub pairs: Vec<&'a MatrixPair>,
    /// Groups listed (at most [`MAX_GROUPS`]), in the report's order.
    pub groups: Vec<&'a GroupEntry>,
}

/// How risky a pair is, for sorting (smaller first): worst open severity, then how surely it
/// meets, then how many incidents reach across.
pub(super) fn pair_risk(
    p: &MatrixPair,
) -> (
    std::cmp::Reverse<Option<Severity>>,
    Certainty,
    std::cmp::Reverse<usize>,
) {
    let surest = p
        .incidents
        .values()
        .min()
        .copied()
        .unwrap_or(Certainty::Permitted);
    (
        std::cmp::Reverse(p.severity),
        surest,
        std::cmp::Reverse(p.incidents.len()),
    )
}

impl<'a> Plan<'a> {
    pub fn new(report: &'a AuditReport) -> Plan<'a> {
        // Per rule: open findings first, then accepted ones, up to the cap; shown in report order.
        let mut per_rule: BTreeMap<&str, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
        for (i, f) in report.findings.iter().enumerate() {
            let e = per_rule.entry(f.rule.as_str()).or_default();
            if f.accepted.is_none() {
                e.0.push(i);
            } else {
                e.1.push(i);
            }
        }
        let mut shown: BTreeSet<usize> = BTreeSet::new();
        let mut hidden: BTreeMap<&str, usize> = BTreeMap::new();
        for (rule, (open, accepted)) in per_rule {
            let all: Vec<usize> = open.into_iter().chain(accepted).collect();
            if all.len() > MAX_FINDINGS_PER_RULE {
                hidden.insert(rule, all.len() - MAX_FINDINGS_PER_RULE);
            }
            shown.extend(all.into_iter().take(MAX_FINDINGS_PER_RULE));
        }
        let mut hidden_of_tenant: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, f) in report
            .findings
            .iter()
            .enumerate()
            .filter(|(i, _)| !shown.contains(i))
        {
            for t in &f.tenants {
                *hidden_of_tenant.entry(t.as_str()).or_default() += 1;
            }
        }
        let findings = shown.into_iter().map(|i| &report.findings[i]).collect();
        let mut pairs: Vec<&MatrixPair> = report.matrix.pairs.iter().collect();
        pairs.sort_by(|a, b| {
            pair_risk(a)
                .cmp(&pair_risk(b))
                .then_with(|| a.tenants.cmp(&b.tenants))
        });
        pairs.truncate(MAX_PAIRS);
        let mut groups: Vec<&GroupEntry> = report.groups.iter().collect();
        if groups.len() > MAX_GROUPS {
            groups.sort_by_key(|g| (g.level, std::cmp::Reverse(g.pairs)));
            groups.truncate(MAX_GROUPS);
            groups.sort_by_key(|g| report.groups.iter().position(|x| x.id == g.id));
        }
        let (drawn, listed) = drawn_nodes(&report.layout);
        Plan {
            findings,
            hidden,
            hidden_of_tenant,
            matrix_tenants: report.matrix.tenants.clone(),
            drawn,
            listed,
            pairs,
            groups,
        }
    }

    /// The counts the page's self-check expects.
    pub fn expect(&self) -> Expect {
        let mut by_severity = SeverityCounts::default();
        for f in self.findings.iter().filter(|f| f.accepted.is_none()) {
            by_severity.add(f.severity);
        }
        let n = self.matrix_tenants.len();
        let runs: Vec<&[GpuLayout]> = self.drawn.iter().flat_map(|d| d.runs()).collect();
        Expect {
            findings: self.findings.len(),
            accepted: self
                .findings
                .iter()
                .filter(|f| f.accepted.is_some())
                .count(),
            by_severity,
            matrix_cells: n * n,
            nodes: self.drawn.len(),
            gpus: runs.len(),
            mig_slices: runs.iter().map(|r| r[0].instances.len()).sum(),
            pairs: self.pairs.len(),
            groups: self.groups.len(),
        }
    }
}

/// Whether two nodes would be drawn alike: the same GPUs, shared the same way by the same tenants.
pub(super) fn same_node(a: &NodeLayout, b: &NodeLayout) -> bool {
    a.model == b.model
        && a.product == b.product
        && a.hami == b.hami
        && a.sharing_strategy == b.sharing_strategy
        && a.tenants == b.tenants
        && a.gpus.len() == b.gpus.len()
        && a.gpus
            .iter()
            .zip(&b.gpus)
            .all(|(x, y)| same_occupancy(x, y))
}

/// The node layouts to draw (nodes alike drawn once; at most [`MAX_DRAWN_NODES`] layouts: those with
/// the most tenants, ties by node order) and the nodes listed without a drawing, both in node order.
pub fn drawn_nodes(layout: &[NodeLayout]) -> (Vec<DrawnNode<'_>>, Vec<&NodeLayout>) {
    let mut drawn: Vec<DrawnNode<'_>> = Vec::new();
    for node in layout {
        // Nodes alike are mostly neighbours (a pool); compare with the last few layouts first.
        match drawn
            .iter_mut()
            .rev()
            .take(16)
            .find(|d| same_node(d.node, node))
        {
            Some(d) => d.alike.push(node),
            None => drawn.push(DrawnNode {
                node,
                alike: Vec::new(),
            }),
        }
    }
    if drawn.len() <= MAX_DRAWN_NODES {
        return (drawn, Vec::new());
    }
    let mut order: Vec<usize> = (0..drawn.len()).collect();
    order.sort_by_key(|i| (std::cmp::Reverse(drawn[*i].node.tenants.len()), *i));
    let chosen: BTreeSet<usize> = order.into_iter().take(MAX_DRAWN_NODES).collect();
    let mut kept = Vec::with_capacity(MAX_DRAWN_NODES);
    let mut listed = Vec::new();
    for (i, d) in drawn.into_iter().enumerate() {
        if chosen.contains(&i) {
            kept.push(d);
        } else {
            listed.push(d.node);
            listed.extend(d.alike);
        }
    }
    (kept, listed)
}

/// Every tenant the page names, in the report's order, then any other name in sorted order; each gets
/// an id (`t0`, `t1`...) for the filters and a colour.
pub(super) struct TenantIndex {
    pub(super) names: Vec<String>,
    ids: BTreeMap<String, usize>,
}

impl TenantIndex {
    pub(super) fn new(report: &AuditReport, layout: &[NodeLayout]) -> TenantIndex {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut names: Vec<String> = Vec::new();
        for t in &report.tenants {
            if seen.insert(&t.name) {
                names.push(t.name.clone());
            }
        }
        let mut extra: BTreeSet<&str> = BTreeSet::new();
        for b in &report.blast_radius {
            extra.insert(&b.tenant);
        }
        for g in &report.groups {
            extra.extend(g.tenants.iter().map(String::as_str));
        }
        extra.extend(report.matrix.tenants.iter().map(String::as_str));
        for f in &report.findings {
            extra.extend(f.tenants.iter().map(String::as_str));
        }
        for node in layout {
            extra.extend(node.tenants.iter().map(|t| t.tenant.as_str()));
            for g in &node.gpus {
                extra.extend(g.tenants.iter().map(|o| o.tenant.as_str()));
                for i in &g.instances {
                    extra.extend(i.tenants.iter().map(|o| o.tenant.as_str()));
                }
            }
        }
        for n in extra {
            if seen.insert(n) {
                names.push(n.to_string());
            }
        }
        let ids = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        TenantIndex { names, ids }
    }

    pub(super) fn id(&self, name: &str) -> String {
        match self.ids.get(name) {
            Some(i) => format!("t{i}"),
            None => String::new(),
        }
    }

    pub(super) fn colour(&self, name: &str) -> &'static str {
        let i = self.ids.get(name).copied().unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    }

    pub(super) fn ids_of<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> String {
        let set: BTreeSet<usize> = names
            .into_iter()
            .filter_map(|n| self.ids.get(n).copied())
            .collect();
        set.iter()
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Whether two GPUs are shared the same way by the same tenants (their captions would read alike).
pub(super) fn same_occupancy(a: &GpuLayout, b: &GpuLayout) -> bool {
    a.sharing == b.sharing
        && a.mechanisms == b.mechanisms
        && a.tenants == b.tenants
        && a.instances == b.instances
}
