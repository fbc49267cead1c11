//! Who can hurt whom (the tenant x tenant matrix), the tenant pairs riskiest first, and what tenants
//! share (the report's groups).

use super::*;

/// The class and one-letter mark of a matrix cell's worst severity.
pub(super) fn severity_mark(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "C",
        Severity::High => "H",
        Severity::Medium => "M",
        Severity::Low => "L",
        Severity::Info => "I",
    }
}

pub(super) fn matrix_legend(out: &mut String) {
    out.push_str("<ul class=\"legend\" aria-label=\"Worst open severity\">\n");
    for s in Severity::ALL {
        let _ = writeln!(
            out,
            "<li><span class=\"swatch sev-{s}\" aria-hidden=\"true\">{}</span>{s}</li>",
            severity_mark(s)
        );
    }
    out.push_str(
        "<li><span class=\"swatch sev-open-none\" aria-hidden=\"true\">○</span>shares, nothing open</li>\n\
         <li><span class=\"swatch c-none\" aria-hidden=\"true\">·</span>shares nothing</li>\n</ul>\n",
    );
}

/// The incidents of a pair in words: `memory-exhaustion (possible), host-escape (observed)`.
pub(super) fn incidents_text(p: &MatrixPair) -> String {
    p.incidents
        .iter()
        .map(|(i, c)| format!("{i} ({c})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The anchor of a pair's row in "Tenant pairs" (`pair-t0-t2`), for the matrix cell that links to it.
fn pair_anchor(tenants: &TenantIndex, a: &str, b: &str) -> String {
    format!("pair-{}-{}", tenants.id(a), tenants.id(b))
}

/// Who can hurt whom: one matrix of the report's matrix tenants, each cell the worst severity of the
/// open findings that cover the pair; the incidents are the cell's detail, and a cell whose pair is
/// listed under "Tenant pairs" is a link to its row (reachable with the keyboard).
pub(super) fn matrix(out: &mut String, m: &Matrix, plan: &Plan<'_>, tenants: &TenantIndex) {
    out.push_str("<section id=\"matrix\" aria-labelledby=\"h-matrix\">\n<h2 id=\"h-matrix\">Who can hurt whom</h2>\n");
    if m.tenants.is_empty() {
        out.push_str("<p>No tenant shares anything with another.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<p>Row and column: two tenants. A cell is coloured by the worst severity of the open findings \
         about the pair; its title lists the incidents either can set off on the other, and how sure \
         the audit is of each.</p>\n",
    );
    matrix_legend(out);
    if m.omitted > 0 {
        let _ = writeln!(
            out,
            "<p>The {} tenants whose incidents reach the most others are shown; {} more are in the \
             groups below and in the JSON report.</p>",
            m.tenants.len(),
            m.omitted
        );
    }
    let mut index: BTreeMap<(&str, &str), &MatrixPair> = BTreeMap::new();
    for p in &m.pairs {
        index.insert((p.tenants[0].as_str(), p.tenants[1].as_str()), p);
    }
    let listed: BTreeSet<(&str, &str)> = plan
        .pairs
        .iter()
        .map(|p| (p.tenants[0].as_str(), p.tenants[1].as_str()))
        .collect();
    out.push_str("<div class=\"matrix-wrap\" tabindex=\"0\" role=\"region\" aria-label=\"Who can hurt whom\">\n<table class=\"matrix\">\n");
    out.push_str(
        "<thead><tr><th scope=\"col\"><span class=\"visually-hidden\">tenant \\ tenant</span></th>",
    );
    for name in &m.tenants {
        let _ = write!(
            out,
            "<th scope=\"col\" data-col=\"{}\">{}</th>",
            tenants.id(name),
            escape(name)
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for from in &m.tenants {
        let _ = write!(
            out,
            "<tr><th scope=\"row\" data-row=\"{}\">{}</th>",
            tenants.id(from),
            escape(from)
        );
        for to in &m.tenants {
            let key = if from <= to {
                (from.as_str(), to.as_str())
            } else {
                (to.as_str(), from.as_str())
            };
            let (class, mark, word, detail) = if from == to {
                (
                    "c-self".to_string(),
                    "–",
                    "same tenant".to_string(),
                    String::new(),
                )
            } else {
                match index.get(&key) {
                    Some(p) => match p.severity {
                        Some(s) => (
                            format!("sev-{s}"),
                            severity_mark(s),
                            s.as_str().to_string(),
                            incidents_text(p),
                        ),
                        None => (
                            "sev-open-none".to_string(),
                            "○",
                            "nothing open".to_string(),
                            incidents_text(p),
                        ),
                    },
                    None => (
                        "c-none".to_string(),
                        "·",
                        "shares nothing".to_string(),
                        String::new(),
                    ),
                }
            };
            let title = if from == to {
                format!("{from}: the same tenant")
            } else if detail.is_empty() {
                format!("{from} ↔ {to}: {word}")
            } else {
                format!("{from} ↔ {to}: {word}; {detail}")
            };
            let mark = if from != to && listed.contains(&key) {
                // Named for a screen reader as the pair and its worst severity, not by its mark.
                format!(
                    "<a href=\"#{}\" aria-label=\"{}\">{mark}</a>",
                    pair_anchor(tenants, key.0, key.1),
                    escape(&format!("{from} ↔ {to}: {word}"))
                )
            } else {
                mark.to_string()
            };
            let _ = write!(
                out,
                "<td class=\"cell {class}\" title=\"{}\" aria-label=\"{}\">{mark}</td>",
                escape(&title),
                escape(&word)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</div>\n</section>\n");
}

pub(super) fn pairs(
    out: &mut String,
    report: &AuditReport,
    plan: &Plan<'_>,
    tenants: &TenantIndex,
) {
    out.push_str("<section id=\"pairs\" aria-labelledby=\"h-pairs\">\n<h2 id=\"h-pairs\">Tenant pairs</h2>\n");
    if report.matrix.pairs.is_empty() {
        out.push_str("<p>No two tenants share anything the audit can see.</p>\n</section>\n");
        return;
    }
    out.push_str("<p>The pairs of the matrix, riskiest first.</p>\n");
    out.push_str(
        "<div class=\"table-wrap\"><table class=\"grid\"><thead><tr><th scope=\"col\">Tenants</th><th scope=\"col\">Trust</th>\
         <th scope=\"col\">Worst open</th><th scope=\"col\">Incidents</th></tr></thead>\n<tbody>\n",
    );
    for p in &plan.pairs {
        let severity = match p.severity {
            Some(s) => format!("<span class=\"badge sev-{s}\">{s}</span>"),
            None => "–".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"pair\" id=\"{}\" data-tenants=\"{}\"><td>{} ↔ {}</td><td><span class=\"badge trust\">{}</span></td>\
             <td>{severity}</td><td>{}</td></tr>",
            pair_anchor(tenants, &p.tenants[0], &p.tenants[1]),
            tenants.ids_of(p.tenants.iter().map(String::as_str)),
            escape(&p.tenants[0]),
            escape(&p.tenants[1]),
            p.trust,
            escape(&incidents_text(p))
        );
    }
    out.push_str("</tbody></table></div>\n");
    if plan.pairs.len() < report.matrix.pairs.len() {
        let _ = writeln!(
            out,
            "<p>{} of {} pairs listed, riskiest first; the JSON report has them all.</p>",
            plan.pairs.len(),
            report.matrix.pairs.len()
        );
    }
    out.push_str("</section>\n");
}

/// A group in a few words: `time-slicing GPU`, `MIG GPU`, `node`, `API server`.
pub(super) fn group_what(g: &GroupEntry) -> String {
    let what = match (g.level, g.mechanism) {
        (GroupLevel::Device, Some(m)) if m.is_mig() => format!("{} MIG instance", m.title()),
        (GroupLevel::Device, Some(m)) => format!("{} GPU", m.title()),
        (GroupLevel::Device, None) => "GPU".to_string(),
        (GroupLevel::MigGpu, _) => "MIG GPU".to_string(),
        (GroupLevel::Node, _) => "node".to_string(),
        (GroupLevel::ControlPlane, _) => "API server".to_string(),
    };
    if g.permitted {
        format!("{what}, permitted")
    } else {
        what
    }
}

pub(super) fn groups(
    out: &mut String,
    report: &AuditReport,
    plan: &Plan<'_>,
    tenants: &TenantIndex,
) {
    out.push_str("<section id=\"groups\" aria-labelledby=\"h-groups\">\n<h2 id=\"h-groups\">What tenants share</h2>\n");
    if report.groups.is_empty() {
        out.push_str("<p>No two tenants share anything the audit can see.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<p>One row per shared thing: a GPU or MIG instance, the instances of a MIG GPU, a node, the \
         nodes that templates may be placed on (permitted), the API server.</p>\n",
    );
    out.push_str(
        "<div class=\"table-wrap\"><table class=\"grid\"><thead><tr><th scope=\"col\">Group</th><th scope=\"col\">Shared</th>\
         <th scope=\"col\">Nodes</th><th scope=\"col\">Tenants</th><th scope=\"col\">Pairs</th>\
         <th scope=\"col\">Certainty</th></tr></thead>\n<tbody>\n",
    );
    for g in &plan.groups {
        let nodes = if g.nodes.is_empty() {
            "–".to_string()
        } else {
            escape(&names_text(&g.nodes, "node", "nodes"))
        };
        let _ = writeln!(
            out,
            "<tr class=\"group\" id=\"{0}\" data-tenants=\"{5}\"><td><code>{0}</code></td><td>{1}</td><td>{nodes}</td><td>{2}</td><td>{3}</td>\
             <td><span class=\"badge cert-{4}\">{4}</span></td></tr>",
            escape(&g.id),
            escape(&group_what(g)),
            escape(&names_text(&g.tenants, "tenant", "tenants")),
            g.pairs,
            g.certainty,
            tenants.ids_of(g.tenants.iter().map(String::as_str))
        );
    }
    out.push_str("</tbody></table></div>\n");
    if plan.groups.len() < report.groups.len() {
        let _ = writeln!(
            out,
            "<p>{} of {} groups listed (devices first, then by pairs); the JSON report has them all.</p>",
            plan.groups.len(),
            report.groups.len()
        );
    }
    out.push_str("</section>\n");
}
