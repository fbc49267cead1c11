//! The summary band and the one-sentence headline of what matters most.

use super::*;

pub(super) fn findings_phrase(report: &AuditReport) -> String {
    let open = report
        .findings
        .iter()
        .filter(|f| f.accepted.is_none())
        .count();
    let mut s = plural(open, "finding", "findings");
    if report.summary.accepted > 0 {
        let _ = write!(s, ", {} accepted", report.summary.accepted);
    }
    s
}

/// How a pair's `shares` word reads in a sentence (`memory-pool` -> `a memory pool`).
pub(super) fn share_phrase(share: &str) -> String {
    match share {
        "gpu" => "a GPU".to_string(),
        "host" => "a node".to_string(),
        "control-plane" => "the API server".to_string(),
        "mig-gpu" => "a MIG-partitioned GPU".to_string(),
        other => {
            let words = other.replace('-', " ");
            let article = if words.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {words}")
        }
    }
}

/// The sentence that matters: how many tenants share a memory pool with another (or, when none does,
/// the closest thing they share), and which contracts the findings say are not kept.
pub fn headline(report: &AuditReport) -> String {
    let mut parts: Vec<String> = Vec::new();
    let count = |share: &str| {
        report
            .groups
            .iter()
            .filter(|g| g.shares.iter().any(|s| s == share))
            .flat_map(|g| g.tenants.iter().map(String::as_str))
            .collect::<BTreeSet<&str>>()
            .len()
    };
    let pool = count("memory-pool");
    if pool > 0 {
        parts.push(tenants_share(pool, "memory-pool"));
    } else {
        let mut said = false;
        for share in ["gpu", "host"] {
            let n = count(share);
            if n > 0 {
                parts.push(format!(
                    "no tenant shares a memory pool, but {}",
                    tenants_share(n, share)
                ));
                said = true;
                break;
            }
        }
        if !said {
            parts.push("no tenant shares a memory pool or a node with another".to_string());
        }
    }
    // Broken contracts: open findings of the contract layer at high or above, per rule (a finding
    // names the tenants involved, not which of them holds the contract, so findings are counted).
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for f in report.findings.iter().filter(|f| {
        f.layer == Layer::Contract && f.severity >= Severity::High && f.accepted.is_none()
    }) {
        *by_rule.entry(f.name.as_str()).or_default() += 1;
    }
    if !by_rule.is_empty() {
        let rules: Vec<String> = by_rule
            .iter()
            .map(|(name, n)| {
                format!(
                    "{} ({})",
                    name.replace('-', " "),
                    plural(*n, "finding", "findings")
                )
            })
            .collect();
        parts.push(format!("contracts not kept: {}", rules.join(", ")));
    }
    if !report.skipped.is_empty() {
        parts.push(format!(
            "{} not audited, so this covers part of the input only",
            plural(
                report.skipped.len(),
                "input document was",
                "input documents were"
            )
        ));
    }
    let mut s = parts.join("; ");
    if let Some(first) = s.get(..1) {
        let upper = first.to_ascii_uppercase();
        s.replace_range(..1, &upper);
    }
    s.push('.');
    s
}

pub(super) fn tenants_share(n: usize, share: &str) -> String {
    format!(
        "{} {} with another tenant",
        plural(n, "tenant", "tenants"),
        if n == 1 {
            format!("shares {}", share_phrase(share))
        } else {
            format!("share {}", share_phrase(share))
        }
    )
}

pub(super) fn summary_band(out: &mut String, report: &AuditReport) {
    let s = &report.summary;
    out.push_str("<header class=\"band\" id=\"summary\">\n<h1>GPU tenant isolation audit</h1>\n");
    let _ = writeln!(
        out,
        "<p class=\"sentence\" id=\"headline\">{}</p>",
        escape(&headline(report))
    );
    if !report.skipped.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"partial\"><a href=\"#skipped\">{} skipped</a>: partial input.</p>",
            plural(report.skipped.len(), "document", "documents")
        );
    }
    out.push_str("<dl class=\"stats\">\n");
    let stat = |out: &mut String, class: &str, label: &str, value: usize| {
        let _ = writeln!(
            out,
            "<div class=\"{}\" data-stat=\"{}\"><dt>{}</dt><dd>{value}</dd></div>",
            format!("stat {class}").trim_end(),
            escape(label),
            escape(label)
        );
    };
    stat(out, "", "Tenants", s.tenants);
    stat(out, "", "Nodes", s.nodes);
    stat(out, "", "GPUs", s.gpus);
    for sev in Severity::ALL {
        stat(
            out,
            &format!("sev-{sev}"),
            sev.as_str(),
            s.findings.get(sev),
        );
    }
    stat(out, "accepted", "accepted", s.accepted);
    out.push_str("</dl>\n</header>\n");
}

/// "Tenants and node pools": `--summary`'s rows (a row per tenant: the worst of its open findings,
/// how many, the first action that closes one, what it shares; a row per GPU node pool), which the
/// page always has, after what to fix first; the tenant filter keeps a tenant's rows.
pub(super) fn glance(out: &mut String, report: &AuditReport, tenants: &TenantIndex) {
    let worst = |s: Option<Severity>| {
        s.map_or("<td>–</td>".to_string(), |s| {
            format!(
                "<td><span class=\"badge sev-{0}\">{0}</span></td>",
                s.as_str()
            )
        })
    };
    out.push_str(
        "<section id=\"glance\" aria-labelledby=\"h-glance\">\n<h2 id=\"h-glance\">Tenants and node pools</h2>\n\
         <div class=\"table-wrap\"><table class=\"grid\"><thead><tr><th scope=\"col\">Tenant</th>\
         <th scope=\"col\">Worst</th><th scope=\"col\">Open</th><th scope=\"col\">Fix first</th>\
         <th scope=\"col\">Shares</th></tr></thead>\n<tbody>\n",
    );
    for r in crate::audit::summary::tenants(report) {
        let action = r.action.as_deref().map_or("–".to_string(), |a| {
            format!("<a href=\"#action-{0}\">{0}</a>", escape(a))
        });
        let _ = writeln!(
            out,
            "<tr class=\"glance\" data-tenants=\"{}\"><th scope=\"row\">{}</th>{}<td>{}</td><td>{action}</td><td>{}</td></tr>",
            tenants.ids_of([r.tenant.as_str()]),
            escape(&r.tenant),
            worst(r.worst),
            r.open,
            escape(&r.shares.join(", "))
        );
    }
    out.push_str("</tbody></table></div>\n");
    let pools = crate::audit::summary::pools(report);
    if !pools.is_empty() {
        out.push_str(
            "<div class=\"table-wrap\"><table class=\"grid\"><thead><tr><th scope=\"col\">Node pool</th>\
             <th scope=\"col\">GPUs</th><th scope=\"col\">Sharing</th><th scope=\"col\">Worst</th>\
             <th scope=\"col\">Open</th><th scope=\"col\">Tenants</th></tr></thead>\n<tbody>\n",
        );
        for r in pools {
            let _ = writeln!(
                out,
                "<tr class=\"glance\" data-tenants=\"{}\"><th scope=\"row\">{}</th><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td></tr>",
                tenants.ids_of(r.tenants.iter().map(String::as_str)),
                escape(&r.nodes),
                escape(&r.gpus),
                escape(&r.sharing),
                worst(r.worst),
                r.open,
                escape(&r.tenants.join(", "))
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    out.push_str("</section>\n");
}
