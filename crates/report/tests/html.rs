//! The HTML report on the sample report and layout: what a reader relies on (every matrix cell, one
//! slice per MIG instance, every finding with its objects and acceptance, labelled filters, rule
//! documentation), that every input text is escaped, that nothing is fetched from a network, and that
//! the same report gives the same bytes. Snapshots pin the summary band and two GPU drawings.

mod common;
mod html_fixture;

use common::{sample_report, sample_rules};
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_report::html::{self, headline, CONTENT_SECURITY_POLICY};
use gpu_trust_report::json;
use gpu_trust_rules::report::{Finding, FindingObject};
use html_fixture::{gpus, mig_instances, sample_layout};

fn page() -> String {
    html::render(&sample_report(false), &sample_layout(), &sample_rules())
}

/// The text between the first `start` and the `end` after it, both included.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let a = text
        .find(start)
        .unwrap_or_else(|| panic!("{start} missing"));
    let b = text[a..]
        .find(end)
        .unwrap_or_else(|| panic!("{end} missing after {start}"))
        + a;
    &text[a..b + end.len()]
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn same_report_same_bytes() {
    assert_eq!(page(), page());
    let p = page();
    assert!(p.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(p.ends_with("</html>\n"));
}

#[test]
fn summary_band_snapshot() {
    let p = page();
    insta::assert_snapshot!(
        "html_summary_band",
        between(&p, "<header class=\"band\"", "</header>")
    );
}

#[test]
fn mig_gpu_drawing_snapshot() {
    let p = page();
    let node = between(&p, "<details class=\"node\" id=\"node-1\"", "</details>\n");
    insta::assert_snapshot!(
        "html_mig_gpu",
        between(node, "<figure class=\"gpu-fig\">", "</figure>")
    );
}

#[test]
fn time_sliced_gpu_drawing_snapshot() {
    let p = page();
    let node = between(&p, "<details class=\"node\" id=\"node-0\"", "</details>\n");
    insta::assert_snapshot!(
        "html_time_sliced_gpu",
        between(node, "<figure class=\"gpu-fig\">", "</figure>")
    );
}

#[test]
fn headline_counts_pairs_and_broken_contracts() {
    let mut report = sample_report(false);
    assert_eq!(headline(&report), "1 tenant pair shares a memory pool.");
    report.pairs[1].shares.push("memory-pool".into());
    let mut contract = report.findings[4].clone();
    contract.rule = "GT501".into();
    contract.name = "isolation-promised-not-enforced".into();
    contract.severity = Severity::Critical;
    contract.tenants = vec!["acme".into(), "globex".into()];
    report.findings.push(contract);
    assert_eq!(
        headline(&report),
        "2 tenant pairs share a memory pool; contracts not kept: isolation promised not enforced (1 finding)."
    );
    // No memory pool shared: the next closest thing is said instead; partial input is always said.
    let mut report = sample_report(true);
    for p in &mut report.pairs {
        p.shares.retain(|s| s != "memory-pool");
    }
    assert_eq!(
        headline(&report),
        "No tenant pair shares a memory pool, but 2 tenant pairs share a GPU; 1 input document was not \
         audited, so this covers part of the input only."
    );
    let p = html::render(&report, &sample_layout(), &sample_rules());
    assert!(p.contains("<a href=\"#skipped\">1 document skipped</a>: partial input."));
    assert!(p.contains("<section id=\"skipped\""));
    assert!(p.contains("<code>examples/inference/broken.yaml:3:7</code>"));
}

#[test]
fn matrix_has_a_cell_per_tenant_pair_and_incident() {
    let report = sample_report(false);
    let p = page();
    let n = report.tenants.len();
    assert_eq!(count(&p, "<table class=\"matrix\""), 5);
    assert_eq!(count(&p, "<td class=\"cell "), 5 * n * n);
    // One matrix shown, the others behind the incident switch (real radio buttons).
    assert_eq!(
        count(
            &p,
            "<table class=\"matrix\" data-incident=\"memory-exhaustion\">"
        ),
        1
    );
    assert_eq!(count(&p, "data-incident=\"device-fault\" hidden>"), 1);
    assert_eq!(count(&p, "<input type=\"radio\" name=\"incident\""), 5);
    // acme's memory exhaustion reaches globex, possibly; its host escape reaches initech, observed.
    let mem = between(&p, "data-incident=\"memory-exhaustion\"", "</table>");
    assert!(mem.contains(
        "<tr><th scope=\"row\" data-row=\"t0\">acme</th>\
         <td class=\"cell c-self\" title=\"acme: the same tenant\" aria-label=\"same tenant\">–</td>\
         <td class=\"cell c-possible\" title=\"acme → globex: possible\" aria-label=\"possible\">◐</td>\
         <td class=\"cell c-none\" title=\"acme → initech: not reached\" aria-label=\"not reached\">·</td></tr>"
    ));
    let host = between(&p, "data-incident=\"host-escape\"", "</table>");
    assert!(host.contains(
        "<td class=\"cell c-observed\" title=\"acme → initech: observed\" aria-label=\"observed\">●</td>"
    ));
    assert_eq!(count(host, "c-self"), n);
}

#[test]
fn one_slice_element_per_mig_instance_at_its_placement() {
    let layout = sample_layout();
    let p = page();
    assert_eq!(count(&p, "<rect class=\"mig-slice"), mig_instances(&layout));
    assert_eq!(count(&p, "<svg class=\"gpu\""), gpus(&layout));
    // 3g.40gb at slice 0 spans four 46 px slices; 2g.20gb at slice 4 starts at 8 + 4 * 46 + 1.
    assert!(p.contains(
        "<rect class=\"mig-slice\" data-profile=\"3g.40gb\" data-start=\"0\" data-size=\"4\" data-compute=\"3\" \
         x=\"9\" y=\"22\" width=\"182\""
    ));
    assert!(p.contains(
        "data-profile=\"2g.20gb\" data-start=\"4\" data-size=\"2\" data-compute=\"2\" x=\"193\""
    ));
    // An instance of unknown placement is still drawn, dashed, below the placed ones.
    assert_eq!(count(&p, "<rect class=\"mig-slice unknown-start\""), 1);
    // Time-sliced GPUs are one shared block with one pip per replica.
    assert_eq!(
        count(
            &p,
            "<rect class=\"gpu-block\" data-sharing=\"time-slicing\""
        ),
        8
    );
    let shared = between(&p, "<details class=\"node\" id=\"node-0\"", "</details>\n");
    let first_gpu = between(shared, "<svg", "</svg>");
    assert_eq!(count(first_gpu, "<circle class=\"pip\""), 4);
    assert!(first_gpu.contains("time-slicing, 4 replicas"));
}

#[test]
fn findings_are_grouped_by_layer_with_objects_and_acceptance() {
    let report = sample_report(false);
    let p = page();
    assert_eq!(count(&p, "<article class=\"finding"), report.findings.len());
    let layers: Vec<usize> = ["device", "host", "control-plane", "contract"]
        .iter()
        .map(|l| {
            p.find(&format!("<section class=\"layer\" data-layer=\"{l}\""))
                .unwrap()
        })
        .collect();
    assert!(layers.windows(2).all(|w| w[0] < w[1]), "{layers:?}");
    assert!(p.contains("<code class=\"at\">examples/inference/cluster.yaml:120</code>"));
    assert!(p.contains("<code class=\"at\">examples/inference/policy.yaml:14</code>"));
    assert!(p.contains(
        "data-rule=\"GT401\" data-layer=\"control-plane\" data-severity=\"medium\" data-certainty=\"observed\" \
         data-accepted=\"true\""
    ));
    let accepted = between(&p, "data-accepted=\"true\"", "</article>");
    assert!(accepted.contains("<span class=\"badge is-accepted\">accepted</span>"));
    assert!(accepted
        .contains("<dt>Accepted</dt><dd>one cluster per region by design (until 2027-06-30)</dd>"));
    assert_eq!(count(&p, " accepted\" id=\"finding-"), 1);
    let gt104 = between(&p, "data-rule=\"GT104\"", "</article>");
    assert!(gt104.contains("<dt>Evidence</dt>"));
    assert!(gt104.contains("<dt>Remediation</dt><dd>Put tenants that distrust each other on different physical GPUs</dd>"));
}

#[test]
fn filters_are_labelled_form_controls() {
    let report = sample_report(false);
    let p = page();
    for id in [
        "filter-tenant",
        "filter-layer",
        "filter-severity",
        "filter-accepted",
    ] {
        assert!(p.contains(&format!("for=\"{id}\"")), "{id} has no label");
        assert!(p.contains(&format!("id=\"{id}\"")), "{id} missing");
    }
    let tenants = between(&p, "<select id=\"filter-tenant\"", "</select>");
    assert_eq!(count(tenants, "<option"), report.tenants.len() + 1);
    let layers = between(&p, "<select id=\"filter-layer\"", "</select>");
    assert_eq!(count(layers, "<option"), Layer::ALL.len() + 1);
    let severities = between(&p, "<select id=\"filter-severity\"", "</select>");
    assert_eq!(count(severities, "<option"), Severity::ALL.len());
    assert!(p.contains("<button type=\"reset\">Clear filters</button>"));
    assert!(p.contains("role=\"status\" aria-live=\"polite\">Showing 5 of 5 findings</p>"));
}

#[test]
fn rule_documentation_comes_from_the_registry() {
    let p = page();
    let rules = sample_rules();
    let doc = between(
        &p,
        "<details class=\"rule-doc\" id=\"rule-GT101\"",
        "</details>",
    );
    assert!(doc.contains("<h3>What it detects</h3>"));
    assert!(doc.contains(
        "<p>Two tenants with trust below <code>full</code> share a time-sliced GPU.</p>"
    ));
    assert!(doc.contains("<pre><code>resources:\n  limits:\n    nvidia.com/gpu: 1</code></pre>"));
    // Each rule that fired is documented once, and every finding links to it.
    let fired = sample_report(false).findings.len();
    assert_eq!(
        count(&p, "<details class=\"rule-doc\""),
        fired.min(rules.len())
    );
    assert_eq!(count(&p, "<a href=\"#rule-GT101\">About GT101</a>"), 1);
}

#[test]
fn nothing_is_fetched_from_anywhere() {
    let p = page();
    assert!(p.contains(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        CONTENT_SECURITY_POLICY.replace('\'', "&#39;")
    )));
    for banned in [
        "<link",
        "<img",
        "<iframe",
        "@import",
        "url(http",
        "src=\"http",
        "src=\"//",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!p.contains(banned), "page contains {banned}");
    }
    // Every script is inline.
    assert_eq!(count(&p, "<script"), 3);
    assert_eq!(count(&p, "<script src"), 0);
}

#[test]
fn every_input_text_is_escaped() {
    let evil = "<script>alert(1)</script><!--";
    let mut report = sample_report(false);
    report.tenants[0].name = evil.into();
    report.findings[0].tenants = vec![evil.into(), "globex".into()];
    report.findings[0].message = format!("message {evil} & more");
    report.findings[0].objects.push(FindingObject {
        kind: "Pod".into(),
        namespace: Some("ns\"onload=\"x".into()),
        name: evil.into(),
        file: "a&b.yaml".into(),
        line: 1,
    });
    report.blast_radius[0].tenant = evil.into();
    let mut layout = sample_layout();
    layout[0].name = evil.into();
    layout[0].gpus[0].tenants[0].tenant = evil.into();
    let p = html::render(&report, &layout, &sample_rules());
    assert!(!p.contains("<script>alert"));
    assert!(!p.contains("\"onload=\""));
    assert!(p.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--"));
    assert!(p.contains("message &lt;script&gt;alert(1)&lt;/script&gt;&lt;!-- &amp; more"));
    assert!(p.contains("a&amp;b.yaml:1"));
    // The embedded data cannot end its script element early, and reads back as the report.
    let data = between(
        &p,
        "<script type=\"application/json\" id=\"gpu-trust-data\">",
        "</script>",
    );
    let inner = &data[data.find('>').unwrap() + 1..data.len() - "</script>".len()];
    assert!(!inner.contains('<'));
    let value: serde_json::Value = serde_json::from_str(inner).unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(&json::render(&report).unwrap()).unwrap();
    assert_eq!(value["summary"], expected["summary"]);
    assert_eq!(value["schema"], expected["schema"]);
    assert_eq!(value["tenants"][0], evil);
    assert_eq!(value["expect"]["findings"], report.findings.len());
    assert_eq!(value["incidents"].as_array().unwrap().len(), 5);
}

#[test]
fn empty_report_still_renders_every_section() {
    let mut report = sample_report(false);
    report.findings.clear();
    report.pairs.clear();
    report.blast_radius.clear();
    report.tenants.clear();
    report.summary.findings = Default::default();
    report.summary.accepted = 0;
    let p = html::render(&report, &[], &[]);
    assert!(p.contains("<p>No findings.</p>"));
    assert!(p.contains("<p>The input has no GPU node.</p>"));
    assert!(p.contains("No two tenants share anything the audit can see."));
    assert!(p.contains("<p>No rule fired.</p>"));
    assert_eq!(count(&p, "<td class=\"cell "), 0);
    assert_eq!(
        headline(&report),
        "No tenant pair shares a memory pool or a node."
    );
}

#[test]
fn certainty_is_shown_in_words_not_only_colour() {
    let p = page();
    let mig = between(&p, "<details class=\"node\" id=\"node-1\"", "</details>\n");
    assert!(mig.contains(
        "<summary>acme (observed, MIG instance): 1 workload</summary>Pod cust-acme/embed-0</details>"
    ));
    assert!(mig.contains("initech (permitted, time-slicing inside a MIG instance)"));
    assert!(mig.contains("<title>acme (observed)</title>"));
    assert!(mig.contains("class=\"band-rect cert-permitted\""));
    for c in [
        Certainty::Observed,
        Certainty::Possible,
        Certainty::Permitted,
    ] {
        assert!(p.contains(&format!("</span>{c}</li>")), "legend lacks {c}");
    }
}

#[test]
fn findings_order_keeps_open_before_accepted() {
    let mut report = sample_report(false);
    let mut extra: Finding = report.findings[3].clone();
    extra.accepted = None;
    extra.severity = Severity::Low;
    report.findings.push(extra);
    let p = html::render(&report, &sample_layout(), &sample_rules());
    let cp = between(
        &p,
        "<section class=\"layer\" data-layer=\"control-plane\"",
        "</section>",
    );
    let open = cp.find("data-accepted=\"false\"").unwrap();
    let accepted = cp.find("data-accepted=\"true\"").unwrap();
    assert!(open < accepted);
    assert!(cp.contains("<span class=\"layer-count\">(2)</span>"));
}

#[test]
fn a_large_fleet_draws_the_busiest_nodes_and_lists_the_rest() {
    let base = sample_layout();
    let mut layout = Vec::new();
    for i in 0..250 {
        let mut node = base[1].clone();
        node.name = format!("node-{i:03}");
        // Every fifth node hosts one tenant fewer: those are the ones left undrawn first.
        if i % 5 == 0 {
            node.tenants.pop();
        }
        layout.push(node);
    }
    let (drawn, listed) = html::drawn_nodes(&layout);
    assert_eq!(drawn.len(), html::MAX_DRAWN_NODES);
    assert_eq!(listed.len(), 50);
    assert!(listed
        .iter()
        .all(|n| n.name.ends_with('0') || n.name.ends_with('5')));
    let p = html::render(&sample_report(false), &layout, &sample_rules());
    assert_eq!(count(&p, "<details class=\"node\""), html::MAX_DRAWN_NODES);
    assert_eq!(count(&p, "<tr class=\"listed-node\""), 50);
    assert!(p.contains("<a href=\"#listed-nodes\">the other 50</a>"));
    // The embedded layout is the one drawn, so the page's self-check counts what it shows.
    let data = between(
        &p,
        "<script type=\"application/json\" id=\"gpu-trust-data\">",
        "</script>",
    );
    let inner = &data[data.find('>').unwrap() + 1..data.len() - "</script>".len()];
    let value: serde_json::Value = serde_json::from_str(inner).unwrap();
    assert_eq!(value["expect"]["nodes"], html::MAX_DRAWN_NODES);
    assert_eq!(value["listedNodes"], 50);
}

#[test]
fn many_findings_of_a_rule_are_shown_up_to_a_cap_and_counted() {
    let mut report = sample_report(false);
    let template = report.findings[0].clone();
    for i in 0..150 {
        let mut f = template.clone();
        f.message = format!("copy {i}");
        report.findings.push(f);
    }
    let many = report.findings[2].clone();
    let mut with_objects = many;
    with_objects.objects = (1..=20)
        .map(|line| FindingObject {
            kind: "Pod".into(),
            namespace: Some("cust-acme".into()),
            name: format!("p-{line}"),
            file: "cluster.yaml".into(),
            line,
        })
        .collect();
    report.findings.push(with_objects);
    let p = html::render(&report, &sample_layout(), &sample_rules());
    let plan = html::Plan::new(&report, &[]);
    assert_eq!(plan.hidden.get("GT101"), Some(&51));
    assert_eq!(
        count(&p, "data-rule=\"GT101\" data-layer"),
        html::MAX_FINDINGS_PER_RULE
    );
    assert!(p.contains("the JSON report lists the other 51: 51 GT101.</p>"));
    assert!(p.contains("<li>and 8 more objects (in the JSON report)</li>"));
    assert_eq!(
        count(&p, "<code class=\"at\">cluster.yaml:"),
        html::MAX_OBJECTS
    );
}

#[test]
fn a_matrix_of_many_tenants_keeps_those_with_the_widest_reach() {
    let mut report = sample_report(false);
    for i in 0..70 {
        report.tenants.push(gpu_trust_rules::report::TenantEntry {
            name: format!("quiet-{i:02}"),
            namespaces: vec![format!("ns-{i:02}")],
            unassigned: true,
        });
    }
    let layout = sample_layout();
    let plan = html::Plan::new(&report, &layout);
    assert_eq!(plan.matrix_tenants.len(), html::MAX_MATRIX_TENANTS);
    // The tenants whose incidents reach someone are kept, in the page's order.
    assert_eq!(plan.matrix_tenants[0], "acme");
    assert!(plan.matrix_tenants.contains(&"initech".to_string()));
    let p = html::render(&report, &sample_layout(), &sample_rules());
    let n = html::MAX_MATRIX_TENANTS;
    assert_eq!(count(&p, "<td class=\"cell "), 5 * n * n);
    assert!(p.contains("the JSON report has the blast radius of all 73.</p>"));
}

#[test]
fn gpus_with_the_same_tenants_share_one_list() {
    let p = page();
    let node = between(&p, "<details class=\"node\" id=\"node-0\"", "</details>\n");
    assert_eq!(count(node, "<p>The same tenants as GPU 0.</p>"), 7);
    assert_eq!(
        count(
            node,
            "<summary>acme (possible, time-slicing): 1 workload</summary>"
        ),
        1
    );
}

#[test]
fn many_pairs_list_those_sharing_a_device_first() {
    let mut report = sample_report(false);
    let template = report.pairs[1].clone();
    for i in 0..600 {
        let mut p = template.clone();
        p.tenants = [format!("a-{i:03}"), format!("b-{i:03}")];
        report.pairs.push(p);
    }
    let plan = html::Plan::new(&report, &[]);
    assert_eq!(plan.pairs.len(), html::MAX_PAIRS);
    // The one pair sharing a memory pool is kept, and listing keeps the report's order.
    assert_eq!(plan.pairs[0].tenants, report.pairs[0].tenants);
    let p = html::render(&report, &[], &sample_rules());
    assert_eq!(count(&p, "<tr class=\"pair\""), html::MAX_PAIRS);
    assert!(p.contains("<p>500 of 602 pairs listed: those that share a device first;"));
}

#[test]
fn long_node_lists_are_counted_not_spelled_out() {
    let mut report = sample_report(false);
    report.findings[0].nodes = (0..45).map(|i| format!("gpu-{i:02}")).collect();
    let p = html::render(&report, &[], &sample_rules());
    assert!(p.contains("gpu-18, gpu-19 and 25 more nodes</dd>"));
    assert!(!p.contains("gpu-20"));
}
