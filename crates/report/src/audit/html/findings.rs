//! The findings grouped by layer with their filters, the documentation of the rules that fired, and
//! the input documents that were skipped.

use super::*;
use gpu_trust_model::report::MAX_ACCEPTED_PAIRS;

pub(super) fn findings(
    out: &mut String,
    report: &AuditReport,
    plan: &Plan<'_>,
    tenants: &TenantIndex,
    rules: &[RuleDoc<'_>],
) {
    out.push_str("<section id=\"findings\" aria-labelledby=\"h-findings\">\n<h2 id=\"h-findings\">Findings</h2>\n");
    // Filters: real form controls with labels, usable from the keyboard.
    out.push_str("<form id=\"filters\" class=\"filters\" role=\"search\" aria-label=\"Filter the findings\">\n");
    out.push_str("<label for=\"filter-tenant\">Tenant<select id=\"filter-tenant\" name=\"tenant\">\n<option value=\"\">All tenants</option>\n");
    // A tenant whose findings the per-rule cap leaves out says how many (the script tells the reader).
    for name in &tenants.names {
        let beyond = match plan.hidden_of_tenant.get(name.as_str()) {
            Some(n) => format!(" data-beyond=\"{n}\""),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "<option value=\"{}\"{beyond}>{}</option>",
            tenants.id(name),
            escape(name)
        );
    }
    out.push_str("</select></label>\n");
    out.push_str("<label for=\"filter-layer\">Layer<select id=\"filter-layer\" name=\"layer\">\n<option value=\"\">All layers</option>\n");
    for layer in Layer::ALL {
        let _ = writeln!(out, "<option value=\"{layer}\">{layer}</option>");
    }
    out.push_str("</select></label>\n");
    out.push_str("<label for=\"filter-severity\">Severity at least<select id=\"filter-severity\" name=\"severity\">\n");
    for sev in Severity::ALL.iter().rev() {
        let _ = writeln!(out, "<option value=\"{sev}\">{sev}</option>");
    }
    out.push_str("</select></label>\n");
    out.push_str(
        "<label class=\"inline\" for=\"filter-accepted\"><input type=\"checkbox\" id=\"filter-accepted\" \
         name=\"accepted\"> Show accepted</label>\n<button type=\"reset\">Clear filters</button>\n",
    );
    let open = plan
        .findings
        .iter()
        .filter(|f| f.accepted.is_none())
        .count();
    let _ = writeln!(
        out,
        "<p id=\"filter-status\" role=\"status\" aria-live=\"polite\">Showing {open} of {} findings{}</p>",
        plan.findings.len(),
        if open < plan.findings.len() {
            " (accepted ones hidden)"
        } else {
            ""
        }
    );
    out.push_str("</form>\n");
    if !plan.hidden.is_empty() {
        let parts: Vec<String> = plan
            .hidden
            .iter()
            .map(|(rule, n)| format!("{n} {}", escape(rule)))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"hidden-findings\">At most {MAX_FINDINGS_PER_RULE} findings of a rule are shown here \
             (open ones first); the JSON report lists the other {}: {}.</p>",
            plan.hidden.values().sum::<usize>(),
            parts.join(", ")
        );
    }
    if report.findings.is_empty() {
        out.push_str("<p>No findings.</p>\n</section>\n");
        return;
    }
    let documented: BTreeSet<&str> = rules.iter().map(|r| r.code).collect();
    let mut n = 0usize;
    for layer in Layer::ALL {
        let mut in_layer: Vec<&Finding> = plan
            .findings
            .iter()
            .copied()
            .filter(|f| f.layer == layer)
            .collect();
        if in_layer.is_empty() {
            continue;
        }
        // The report is sorted most severe first; keep that order, open findings before accepted ones.
        in_layer.sort_by_key(|f| (f.accepted.is_some(), std::cmp::Reverse(f.severity)));
        let visible = in_layer.iter().filter(|f| f.accepted.is_none()).count();
        let _ = writeln!(
            out,
            "<section class=\"layer\" data-layer=\"{layer}\" aria-labelledby=\"h-layer-{layer}\"{}>\n\
             <h3 id=\"h-layer-{layer}\">{} <span class=\"layer-count\">({visible})</span></h3>",
            if visible == 0 { " hidden" } else { "" },
            layer_title(layer)
        );
        for f in in_layer {
            n += 1;
            finding(out, f, n, tenants, documented.contains(f.rule.as_str()));
        }
        out.push_str("</section>\n");
    }
    out.push_str("</section>\n");
}

pub(super) fn layer_title(layer: Layer) -> &'static str {
    match layer {
        Layer::Device => "Device",
        Layer::Host => "Host",
        Layer::Confidentiality => "Confidentiality",
        Layer::ControlPlane => "Control plane",
        Layer::Contract => "Contract",
    }
}

pub(super) fn finding(
    out: &mut String,
    f: &Finding,
    n: usize,
    tenants: &TenantIndex,
    documented: bool,
) {
    let accepted = f.accepted.is_some();
    let _ = writeln!(
        out,
        "<article class=\"finding sev-{}{}\" id=\"finding-{n}\" data-rule=\"{}\" data-layer=\"{}\" data-severity=\"{}\" \
         data-certainty=\"{}\" data-accepted=\"{accepted}\" data-tenants=\"{}\" aria-labelledby=\"finding-{n}-h\"{}>",
        f.severity,
        if accepted { " accepted" } else { "" },
        escape(&f.rule),
        f.layer,
        f.severity,
        f.certainty,
        tenants.ids_of(f.tenants.iter().map(String::as_str)),
        if accepted { " hidden" } else { "" }
    );
    let _ = write!(
        out,
        "<h4 id=\"finding-{n}-h\"><span class=\"badge sev-{0}\">{0}</span><span class=\"badge cert-{1}\">{1}</span>\
         <code>{2}</code> {3}",
        f.severity,
        f.certainty,
        escape(&f.rule),
        escape(&f.name)
    );
    if accepted {
        out.push_str(" <span class=\"badge is-accepted\">accepted</span>");
    }
    out.push_str("</h4>\n");
    let _ = writeln!(out, "<p class=\"message\">{}</p>", code_spans(&f.message));
    out.push_str("<dl>\n");
    if !f.tenants.is_empty() {
        let _ = writeln!(
            out,
            "<dt>Tenants</dt><dd>{}</dd>",
            escape(&names_text(&f.tenants, "tenant", "tenants"))
        );
    }
    if let Some(pairs) = f.pairs.filter(|n| *n > 1 || !f.accepted_pairs.is_empty()) {
        let mut text = plural(pairs, "pair", "pairs");
        if !f.accepted_pairs.is_empty() {
            let _ = write!(
                text,
                ", {} accepted, {} open",
                f.accepted_pair_count(),
                pairs.saturating_sub(f.accepted_pair_count())
            );
        }
        let _ = writeln!(out, "<dt>Pairs</dt><dd>{}</dd>", escape(&text));
        if !f.open_pairs.is_empty() {
            let _ = writeln!(
                out,
                "<dt>Open pairs</dt><dd>{}</dd>",
                escape(&crate::audit::table::open_pairs_text(f, |s| s.to_string()))
            );
        }
    }
    if !f.nodes.is_empty() {
        let _ = writeln!(
            out,
            "<dt>Nodes</dt><dd>{}</dd>",
            escape(&names_text(&f.nodes, "node", "nodes"))
        );
    }
    if f.by_group.len() > 1 {
        out.push_str("<dt>Where</dt><dd><ul class=\"where\">");
        for line in crate::audit::table::where_lines(f, |s| s.to_string()) {
            let _ = write!(out, "<li>{}</li>", escape(&line));
        }
        out.push_str("</ul></dd>\n");
    }
    if !f.groups.is_empty() {
        let links: Vec<String> = f
            .groups
            .iter()
            .take(MAX_NAMES)
            .map(|g| format!("<a href=\"#{0}\"><code>{0}</code></a>", escape(g)))
            .collect();
        let more_groups = if f.groups.len() > MAX_NAMES {
            format!(
                " and {}",
                more(f.groups.len() - MAX_NAMES, "group", "groups")
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<dt>Shared</dt><dd>{}{more_groups}</dd>",
            links.join(", ")
        );
    }
    if !f.objects.is_empty() {
        out.push_str("<dt>Objects</dt><dd><ul class=\"objects\">");
        for o in f.objects.iter().take(MAX_OBJECTS) {
            let name = crate::audit::table::object_text(o, |s| s.to_string());
            let place = if o.line > 0 {
                format!("{}:{}", o.file, o.line)
            } else {
                o.file.clone()
            };
            let _ = write!(
                out,
                "<li>{} <code class=\"at\">{}</code></li>",
                escape(&name),
                escape(&place)
            );
        }
        if f.objects.len() > MAX_OBJECTS {
            let _ = write!(
                out,
                "<li>and {} (in the JSON report)</li>",
                more(f.objects.len() - MAX_OBJECTS, "object", "objects")
            );
        }
        out.push_str("</ul></dd>\n");
    }
    let _ = writeln!(
        out,
        "<dt>Remediation</dt><dd>{}</dd>",
        code_spans(&f.remediation)
    );
    for e in &f.evidence {
        let _ = writeln!(out, "<dt>Evidence</dt><dd>{}</dd>", escape(e));
    }
    if let Some(a) = &f.accepted {
        let _ = writeln!(
            out,
            "<dt>Accepted</dt><dd>{}</dd>",
            acceptance(&a.reason, a.until.as_deref())
        );
    }
    for o in &f.one_sided_acceptances {
        let _ = writeln!(
            out,
            "<dt>Accepts nothing</dt><dd>{}</dd>",
            code_spans(&o.message)
        );
    }
    for a in f.accepted_pairs.iter().take(MAX_NAMES) {
        let _ = writeln!(
            out,
            "<dt>Accepted pair</dt><dd>{} and {}: {}</dd>",
            escape(&a.tenants[0]),
            escape(&a.tenants[1]),
            acceptance(&a.reason, a.until.as_deref())
        );
    }
    let shown = f.accepted_pairs.len().min(MAX_NAMES);
    if f.accepted_pair_count() > shown {
        let listed = if f.accepted_pair_count() > MAX_ACCEPTED_PAIRS {
            format!("the JSON report lists the first {MAX_ACCEPTED_PAIRS}")
        } else {
            "in the JSON report".to_string()
        };
        let _ = writeln!(
            out,
            "<dt>Accepted pairs</dt><dd>and {} ({listed})</dd>",
            more(f.accepted_pair_count() - shown, "pair", "pairs")
        );
    }
    out.push_str("</dl>\n");
    if documented {
        let _ = writeln!(
            out,
            "<p><a href=\"#rule-{0}\">About {0}</a></p>",
            escape(&f.rule)
        );
    }
    out.push_str("</article>\n");
}

pub(super) fn rule_docs(out: &mut String, report: &AuditReport, rules: &[RuleDoc<'_>]) {
    out.push_str(
        "<section id=\"rules\" aria-labelledby=\"h-rules\">\n<h2 id=\"h-rules\">Rules</h2>\n",
    );
    let fired: BTreeSet<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    let mut docs: Vec<&RuleDoc<'_>> = rules.iter().filter(|r| fired.contains(r.code)).collect();
    docs.sort_by(|a, b| a.code.cmp(b.code));
    docs.dedup_by(|a, b| a.code == b.code);
    if docs.is_empty() {
        out.push_str("<p>No rule fired.</p>\n</section>\n");
        return;
    }
    out.push_str("<p>The documentation of every rule with a finding above, as <code>gpu-trust explain</code> prints it.</p>\n");
    for r in docs {
        let _ = writeln!(
            out,
            "<details class=\"rule-doc\" id=\"rule-{}\" data-rule=\"{}\">\n<summary><h3><code>{}</code> {}: {}</h3> \
             <span class=\"badge sev-{}\">{}</span> <span class=\"meta\">({})</span></summary>",
            escape(r.code),
            escape(r.code),
            escape(r.code),
            escape(r.name),
            code_spans(r.summary),
            r.severity,
            r.severity,
            r.layer
        );
        out.push_str(&markdown::to_html(r.documentation, 3));
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

pub(super) fn skipped(out: &mut String, report: &AuditReport) {
    if report.skipped.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"skipped\" aria-labelledby=\"h-skipped\">\n<h2 id=\"h-skipped\">Skipped input</h2>\n\
         <p>These documents could not be read and were not audited: the findings above cover part of the \
         input only.</p>\n<ul>\n",
    );
    for s in &report.skipped {
        let _ = writeln!(
            out,
            "<li><code>{}</code>: <code>{}</code> {}</li>",
            escape(&format!("{}:{}:{}", s.file, s.line, s.column)),
            s.code,
            escape(&s.error)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

/// An acceptance's reason and, when it has one, its last day.
fn acceptance(reason: &str, until: Option<&str>) -> String {
    match until {
        Some(until) => format!("{} (until {})", code_spans(reason), escape(until)),
        None => code_spans(reason),
    }
}
