//! The HTML report on the sample report and layout: what a reader relies on (every matrix cell, one
//! slice per MIG instance, every finding with its objects and acceptance, labelled filters, rule
//! documentation), that every input text is escaped, that nothing is fetched from a network, and that
//! the same report gives the same bytes. Snapshots pin the summary band and two GPU drawings.

use crate::common;
use crate::html_fixture;

use common::{sample_report, sample_rules};
use gpu_trust_model::report::{Finding, FindingObject};
use gpu_trust_model::{Certainty, Layer, Severity};
use gpu_trust_report::audit::html::{self, headline, CONTENT_SECURITY_POLICY};
use gpu_trust_report::audit::json;
use html_fixture::{gpus, mig_instances, sample_layout, with_layout};

fn page() -> String {
    html::render(
        &with_layout(sample_report(false), sample_layout()),
        &sample_rules(),
    )
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
fn headline_counts_tenants_and_broken_contracts() {
    let mut report = sample_report(false);
    assert_eq!(
        headline(&report),
        "2 tenants share a memory pool with another tenant."
    );
    report.groups[2].shares.push("memory-pool".into());
    let mut contract = report.findings[4].clone();
    contract.rule = "GT501".into();
    contract.name = "isolation-promised-not-enforced".into();
    contract.severity = Severity::Critical;
    contract.tenants = vec!["acme".into(), "globex".into()];
    report.findings.push(contract);
    assert_eq!(
        headline(&report),
        "3 tenants share a memory pool with another tenant; contracts not kept: isolation promised not \
         enforced (1 finding)."
    );
    // No memory pool shared: the next closest thing is said instead; partial input is always said.
    let mut report = sample_report(true);
    for g in &mut report.groups {
        g.shares.retain(|s| s != "memory-pool");
    }
    assert_eq!(
        headline(&report),
        "No tenant shares a memory pool, but 3 tenants share a GPU with another tenant; 1 input document \
         was not audited, so this covers part of the input only."
    );
    let p = html::render(
        &with_layout(report.clone(), sample_layout()),
        &sample_rules(),
    );
    assert!(p.contains("<a href=\"#skipped\">1 document skipped</a>: partial input."));
    assert!(p.contains("<section id=\"skipped\""));
    assert!(p.contains("<code>examples/inference/broken.yaml:3:7</code>"));
}

#[test]
fn one_matrix_of_the_worst_severity_per_pair() {
    let report = sample_report(false);
    let p = page();
    let n = report.matrix.tenants.len();
    assert_eq!(count(&p, "<table class=\"matrix\""), 1);
    assert_eq!(count(&p, "<td class=\"cell "), n * n);
    // acme and globex: critical (a time-sliced GPU); acme and initech: high; the incidents are the
    // cell's detail.
    let m = between(&p, "<table class=\"matrix\"", "</table>");
    assert!(m.contains(
        "<tr><th scope=\"row\" data-row=\"t0\">acme</th>\
         <td class=\"cell c-self\" title=\"acme: the same tenant\" aria-label=\"same tenant\">–</td>\
         <td class=\"cell sev-critical\" title=\"acme ↔ globex: critical; memory-exhaustion (possible), \
         device-fault (possible), compute-contention (possible), host-escape (observed), control-plane \
         (observed)\" aria-label=\"critical\"><a href=\"#pair-t0-t1\" aria-label=\"acme ↔ globex: critical\">C</a></td>\
         <td class=\"cell sev-high\" title=\"acme ↔ initech: high; host-escape (observed), control-plane \
         (observed)\" aria-label=\"high\"><a href=\"#pair-t0-t2\" aria-label=\"acme ↔ initech: high\">H</a></td></tr>"
    ));
    // Each cell of a pair links to the pair's row.
    assert!(p.contains("<tr class=\"pair\" id=\"pair-t0-t1\" data-tenants=\"t0 t1\">"));
    // A pair that shares something with nothing open, and the diagonal.
    assert!(m.contains("class=\"cell sev-open-none\" title=\"globex ↔ initech: nothing open; control-plane (observed)\""));
    assert_eq!(count(m, "c-self"), n);
    // The matrix comes before the findings, and the findings before the drawings.
    let at = |s: &str| p.find(s).unwrap();
    assert!(at("<section id=\"matrix\"") < at("<section id=\"findings\""));
    assert!(at("<section id=\"findings\"") < at("<section id=\"gpus\""));
}

#[test]
fn pairs_are_listed_riskiest_first_and_groups_with_their_tenants() {
    let p = page();
    let pairs = between(&p, "<section id=\"pairs\"", "</section>");
    let first = pairs.find("acme ↔ globex").unwrap();
    let second = pairs.find("acme ↔ initech").unwrap();
    let third = pairs.find("globex ↔ initech").unwrap();
    assert!(first < second && second < third);
    let groups = between(&p, "<section id=\"groups\"", "</section>");
    assert_eq!(count(groups, "<tr class=\"group\""), 5);
    assert!(groups.contains(
        "<tr class=\"group\" id=\"g1\" data-tenants=\"t0 t1\"><td><code>g1</code></td><td>time-slicing GPU</td><td>gpu-a100-2</td>\
         <td>acme, globex</td><td>1</td><td><span class=\"badge cert-possible\">possible</span></td></tr>"
    ));
    // Findings link to their groups.
    let gt207 = between(&p, "data-rule=\"GT207\"", "</article>");
    assert!(gt207.contains("<dt>Pairs</dt><dd>2 pairs, 1 accepted, 1 open</dd>"));
    assert!(gt207.contains("<dt>Open pairs</dt><dd>globex and initech</dd>"));
    assert!(
        gt207.contains("<a href=\"#g2\"><code>g2</code></a>, <a href=\"#g5\"><code>g5</code></a>")
    );
    assert!(gt207.contains(
        "<dt>Accepted pair</dt><dd>acme and globex: one pool for the pilot (until 2027-01-31)</dd>"
    ));
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
    // The 8 identical time-sliced GPUs are drawn once: one shared block with one pip per replica.
    assert_eq!(
        count(
            &p,
            "<rect class=\"gpu-block\" data-sharing=\"time-slicing\""
        ),
        1
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
    // Owners once, with their pods; a pod standing for an owner the input lacks names it.
    assert!(p.contains("<li>Deployment cust-acme/infer (2 pods) <code"));
    assert!(p.contains(
        "<li>Pod cust-globex/chat-7d9f-x2v8q (of Deployment cust-globex/chat, 3 pods) <code"
    ));
    // Where a finding's pairs meet, place by place, when in more than one.
    assert!(p.contains(
        "<dt>Where</dt><dd><ul class=\"where\"><li>observed, high: acme and globex on gpu-a100-2 (g2)</li>\
         <li>observed, high: acme and initech on gpu-h100-1 (g5)</li></ul></dd>"
    ));
    // An annotation that accepts nothing says so.
    assert!(p.contains("<dt>Accepts nothing</dt><dd>the <code>accept.gpu-trust.io/GT101</code> annotations of acme"));
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
    // Accepted findings are hidden until the reader asks for them.
    assert!(p.contains(
        "data-accepted=\"true\" data-tenants=\"t0 t1 t2\" aria-labelledby=\"finding-4-h\" hidden>"
    ));
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
    assert!(p.contains(
        "role=\"status\" aria-live=\"polite\">Showing 4 of 5 findings (accepted ones hidden)</p>"
    ));
    assert!(p.contains(
        "<input type=\"checkbox\" id=\"filter-accepted\" name=\"accepted\"> Show accepted"
    ));
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
        pods: Some(2),
        owner: Some(format!("Deployment/ns/{evil}")),
    });
    report.blast_radius[0].tenant = evil.into();
    let mut layout = sample_layout();
    layout[0].name = evil.into();
    layout[0].gpus[0].tenants[0].tenant = evil.into();
    let p = html::render(
        &with_layout(report.clone(), layout.clone()),
        &sample_rules(),
    );
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
}

/// Control characters and the bidirectional controls that reorder text are written out visibly, as
/// the terminal formats write them: a name cannot hide or reverse what the page shows.
#[test]
fn control_and_bidi_characters_are_visible() {
    let mut report = sample_report(false);
    report.tenants[0].name = "acme\u{202e}evil\u{2066}".into();
    report.findings[0].message = "colour \u{1b}[31mred\u{7} and \u{9b} C1".into();
    report.findings[0].objects[0].name = "pod\u{200f}0".into();
    let p = html::render(&report, &sample_rules());
    for hidden in [
        '\u{202e}', '\u{2066}', '\u{1b}', '\u{7}', '\u{9b}', '\u{200f}',
    ] {
        assert!(!p.contains(hidden), "{hidden:?} is on the page");
    }
    assert!(p.contains("acme\\u{202e}evil\\u{2066}"));
    assert!(p.contains("colour \\x1b[31mred\\x07 and \\x9b C1"));
    assert!(p.contains("pod\\u{200f}0"));
}

#[test]
fn code_spans_are_code_and_no_backtick_is_left() {
    let p = page();
    let gt101 = between(&p, "data-rule=\"GT101\"", "</article>");
    assert!(
        gt101.contains("or set <code>replicas: 1</code> in key <code>a100-ts4</code> of ConfigMap")
    );
    // Outside the scripts, no backtick reaches the page.
    let body = between(&p, "<body>", "<pre id=\"self-check\"");
    assert!(
        !body.contains('`'),
        "{}",
        &body[body.find('`').unwrap()..][..80]
    );
}

#[test]
fn empty_report_still_renders_every_section() {
    let mut report = sample_report(false);
    report.findings.clear();
    report.groups.clear();
    report.matrix = Default::default();
    report.blast_radius.clear();
    report.tenants.clear();
    report.summary.findings = Default::default();
    report.summary.accepted = 0;
    let p = html::render(&report, &[]);
    assert!(p.contains("<p>No findings.</p>"));
    assert!(p.contains("<p>The input has no GPU node.</p>"));
    assert!(p.contains("No two tenants share anything the audit can see."));
    assert!(p.contains("No tenant shares anything with another."));
    assert!(p.contains("<p>No rule fired.</p>"));
    assert_eq!(count(&p, "<td class=\"cell "), 0);
    assert_eq!(
        headline(&report),
        "No tenant shares a memory pool or a node with another."
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
    assert!(p.contains("a solid outline is observed, dashed possible, dotted permitted"));
    for c in [Certainty::Observed, Certainty::Possible] {
        assert!(
            p.contains(&format!("<span class=\"badge cert-{c}\">{c}</span>")),
            "no badge for {c}"
        );
    }
}

#[test]
fn findings_order_keeps_open_before_accepted() {
    let mut report = sample_report(false);
    let mut extra: Finding = report.findings[3].clone();
    extra.accepted = None;
    extra.severity = Severity::Low;
    report.findings.push(extra);
    let p = html::render(
        &with_layout(report.clone(), sample_layout()),
        &sample_rules(),
    );
    let cp = between(
        &p,
        "<section class=\"layer\" data-layer=\"control-plane\"",
        "</section>",
    );
    let open = cp.find("data-accepted=\"false\"").unwrap();
    let accepted = cp.find("data-accepted=\"true\"").unwrap();
    assert!(open < accepted);
    // The count is of what is shown: the accepted one is hidden.
    assert!(cp.contains("<span class=\"layer-count\">(1)</span>"));
}

#[test]
fn nodes_alike_are_drawn_once() {
    let base = sample_layout();
    let mut layout = Vec::new();
    for i in 0..40 {
        let mut node = base[1].clone();
        node.name = format!("node-{i:03}");
        layout.push(node);
    }
    let (drawn, listed) = html::drawn_nodes(&layout);
    assert_eq!(drawn.len(), 1);
    assert_eq!(drawn[0].alike.len(), 39);
    assert!(listed.is_empty());
    let p = html::render(
        &with_layout(sample_report(false), layout.clone()),
        &sample_rules(),
    );
    assert_eq!(count(&p, "<details class=\"node\""), 1);
    assert!(p.contains("<h3>node-000 and 39 more nodes alike</h3>"));
    assert!(p.contains("The same GPUs and tenants: node-001, node-002,"));
}

#[test]
fn a_large_fleet_draws_the_busiest_nodes_and_lists_the_rest() {
    let base = sample_layout();
    let mut layout = Vec::new();
    for i in 0..250 {
        let mut node = base[1].clone();
        node.name = format!("node-{i:03}");
        // Each node has a tenant of its own; every fifth one tenant fewer: those are left undrawn.
        node.tenants[1].tenant = format!("solo-{i:03}");
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
    let p = html::render(
        &with_layout(sample_report(false), layout.clone()),
        &sample_rules(),
    );
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
            pods: None,
            owner: None,
        })
        .collect();
    report.findings.push(with_objects);
    let p = html::render(
        &with_layout(report.clone(), sample_layout()),
        &sample_rules(),
    );
    let plan = html::Plan::new(&report);
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
fn the_matrix_says_how_many_tenants_it_leaves_out() {
    let mut report = sample_report(false);
    report.matrix.omitted = 70;
    let plan = html::Plan::new(&report);
    assert_eq!(plan.matrix_tenants, report.matrix.tenants);
    let p = html::render(
        &with_layout(report.clone(), sample_layout()),
        &sample_rules(),
    );
    assert!(p.contains(
        "<p>The 3 tenants whose incidents reach the most others are shown; 70 more are in the groups \
         below and in the JSON report.</p>"
    ));
}

#[test]
fn identical_gpus_of_a_node_are_drawn_once() {
    let p = page();
    let node = between(&p, "<details class=\"node\" id=\"node-0\"", "</details>\n");
    assert_eq!(count(node, "<svg class=\"gpu\""), 1);
    assert!(node.contains("<strong>GPUs 0–7 (8 alike): time-slicing, 4 replicas</strong>"));
    assert_eq!(
        count(
            node,
            "<summary>acme (possible, time-slicing): 1 workload</summary>"
        ),
        1
    );
    let mig = between(&p, "<details class=\"node\" id=\"node-1\"", "</details>\n");
    assert!(mig.contains("GPUs 3–7 (5 alike): MIG"));
}

#[test]
fn many_pairs_are_listed_riskiest_first_up_to_a_cap() {
    let mut report = sample_report(false);
    let template = report.matrix.pairs[2].clone();
    for i in 0..600 {
        let mut p = template.clone();
        p.tenants = [format!("a-{i:03}"), format!("b-{i:03}")];
        report.matrix.pairs.push(p);
    }
    let plan = html::Plan::new(&report);
    assert_eq!(plan.pairs.len(), html::MAX_PAIRS);
    assert_eq!(plan.pairs[0].severity, Some(Severity::Critical));
    assert_eq!(plan.pairs[1].severity, Some(Severity::High));
    let p = html::render(&report, &sample_rules());
    assert_eq!(count(&p, "<tr class=\"pair\""), html::MAX_PAIRS);
    assert!(p.contains("<p>500 of 603 pairs listed, riskiest first;"));
}

#[test]
fn long_node_lists_are_counted_not_spelled_out() {
    let mut report = sample_report(false);
    report.findings[0].nodes = (0..45).map(|i| format!("gpu-{i:02}")).collect();
    let p = html::render(&report, &sample_rules());
    assert!(p.contains("gpu-18, gpu-19 and 25 more nodes</dd>"));
    assert!(!p.contains("gpu-20"));
}

/// A GPU shared in a way gpu-trust cannot map is drawn as such, never as exclusive, and the devices a
/// scheduler recorded for a tenant are shown with it.
#[test]
fn an_unknown_sharing_is_never_drawn_exclusive_and_records_are_shown() {
    let mut layout = sample_layout();
    for g in &mut layout[0].gpus {
        g.sharing = gpu_trust_model::report::layout::Sharing::Unknown;
        g.mechanisms.clear();
        for o in &mut g.tenants {
            o.mechanisms.clear();
            o.recorded = vec!["GPU-a100-0 (HAMi)".into()];
        }
    }
    let p = html::render(&with_layout(sample_report(false), layout), &sample_rules());
    let node = between(&p, "<details class=\"node\" id=\"node-0\"", "</details>\n");
    let figure = between(node, "<figure class=\"gpu-fig\">", "</figure>");
    assert!(figure.contains("data-sharing=\"unknown\""), "{figure}");
    assert!(figure.contains("sharing not known"), "{figure}");
    assert!(
        figure.contains("who shares it, and how, is not known"),
        "{figure}"
    );
    assert!(figure.contains("recorded: GPU-a100-0 (HAMi)"), "{figure}");
    assert!(!node.contains("exclusive"), "{node}");
}

/// The example clusters' pages, by folder name.
fn example_pages() -> std::collections::BTreeMap<String, String> {
    let docs = crate::html_examples::registry_docs();
    crate::html_examples::audit_examples()
        .into_iter()
        .map(|(name, report)| {
            let page = html::render(&report, &docs);
            (name, page)
        })
        .collect()
}

/// A MIG instance the device plugin hands out whole holds one workload at a time: where the input
/// does not say which of two tenants' pods holds which instance of a profile (the GKE example: one
/// 3g.20gb each for acme and search on one A100), each instance is drawn as held by one of them,
/// never with both inside it. A workload is counted once with its pods (the inference-platform
/// example: initech's Deployment with its two pods is one workload, not three).
#[test]
fn gpu_drawings_hold_what_the_device_plugin_hands_out() {
    let pages = example_pages();
    let gke = &pages["gke"];
    let mig = between(gke, "MIG, 2 instances", "</figure>");
    for instance in mig.split("<g class=\"instance\">").skip(1) {
        let instance = &instance[..instance.find("</g></g>").unwrap_or(instance.len())];
        assert_eq!(count(instance, "<g data-tenant="), 0, "{instance}");
        assert!(instance.contains("one of 2 tenants"), "{instance}");
    }
    let caption = between(mig, "<figcaption", "</figcaption>");
    assert_eq!(
        count(caption, ": one workload at a time, of:<ul>"),
        2,
        "{caption}"
    );
    let inference = &pages["inference-platform"];
    assert!(
        inference.contains("initech (possible, exclusive GPU): 1 workload</summary>Deployment cust-initech/secure-llm (2 pods)</details>"),
        "{}",
        between(inference, "GPUs 0–7 (8 alike): exclusive", "</figure>")
    );
    // In every example, no occupant lists an owner beside one of its pods.
    for (name, page) in &pages {
        for item in page.split("<li data-tenant=").skip(1) {
            let Some(item) = item.split("</details></li>").next() else {
                continue;
            };
            let Some((_, listed)) = item.split_once("</summary>") else {
                continue;
            };
            let names: Vec<&str> = listed.split(", ").collect();
            for owner in names.iter().filter(|n| !n.starts_with("Pod ")) {
                let Some((_, object)) = owner.split(" (").next().and_then(|o| o.split_once(' '))
                else {
                    continue;
                };
                let pod = format!("Pod {object}-");
                assert!(
                    !names.iter().any(|n| n.starts_with(&pod)),
                    "{name}: {listed}"
                );
            }
        }
    }
}

/// One time-sliced GPU that two tenants run on (observed: the node has one GPU) and 998 more may be
/// placed on (a Deployment each, permitted anywhere): the drawing, its caption and "On this node"
/// name the two running there first, whatever their names, and count the rest as permitted.
#[test]
fn running_tenants_are_drawn_and_named_before_permitted_ones() {
    let mut yaml = String::from(
        "# A GPU Operator cluster as `kubectl get -o yaml` lists it: the ClusterPolicy's device plugin
# config names a ConfigMap whose `ts-4` key time-slices each GPU four ways (GPU Operator docs,
# time-slicing), selected by the node's `nvidia.com/device-plugin.config` label.
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin:
    enabled: true
    config: {name: device-plugin-config, default: ts-4}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-config, namespace: gpu-operator}
data:
  ts-4: |
    version: v1
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: 4
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels:
    nvidia.com/gpu.present: \"true\"
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    nvidia.com/gpu.count: \"1\"
    nvidia.com/device-plugin.config: ts-4
status:
  allocatable: {nvidia.com/gpu: \"4\"}
",
    );
    for ns in ["zz-run-a", "zz-run-b"] {
        yaml.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: infer-0, namespace: {ns}}}\n\
             spec:\n  nodeName: gpu-1\n  containers:\n    - name: main\n      image: vllm/vllm-openai:v0.11.0\n      \
             resources: {{limits: {{nvidia.com/gpu: 1}}}}\nstatus: {{phase: Running}}\n"
        ));
    }
    for i in 0..998 {
        yaml.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: notebook, namespace: t-{i:03}}}\n\
             spec:\n  replicas: 0\n  selector: {{matchLabels: {{app: notebook}}}}\n  template:\n    metadata: {{labels: {{app: notebook}}}}\n    \
             spec:\n      containers:\n        - name: main\n          image: jupyter/base-notebook\n          \
             resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
        ));
    }
    let ingested = gpu_trust_ingest::ingest_text(&yaml, "pool.yaml");
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let tenancy = gpu_trust_policy::Policy::default().resolve(&ingested.fleet.namespaces);
    let mut options =
        gpu_trust_rules::AuditOptions::new(gpu_trust_policy::Date::new(2026, 6, 1).unwrap());
    options.layout = true;
    let report = gpu_trust_rules::audit(&gpu_trust_rules::AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    });
    assert_eq!(report.tenants.len(), 1000);
    let p = html::render(&report, &crate::html_examples::registry_docs());
    let figure = between(&p, "<figure class=\"gpu-fig\">", "</figure>");
    let bands: Vec<&str> = figure
        .split("<g data-tenant=")
        .skip(1)
        .map(|b| between(b, "<title>", "</title>"))
        .collect();
    assert_eq!(
        bands[..2],
        [
            "<title>zz-run-a (observed)</title>",
            "<title>zz-run-b (observed)</title>"
        ]
    );
    let caption = between(figure, "<figcaption", "</figcaption>");
    let named: Vec<&str> = caption
        .split("<summary>")
        .skip(1)
        .map(|s| &s[..s.find(" (").unwrap()])
        .collect();
    assert_eq!(named[..3], ["zz-run-a", "zz-run-b", "t-000"]);
    assert!(
        caption.contains("<li>and 992 more tenants (992 permitted)</li>"),
        "{caption}"
    );
    let on_node = between(&p, "<p>On this node", "</p>");
    assert!(
        on_node.contains(": zz-run-a (observed), zz-run-b (observed), t-000 (permitted)"),
        "{on_node}"
    );
    assert!(
        on_node.ends_with("and 976 more tenants (976 permitted).</p>"),
        "{on_node}"
    );
}

/// A tenant filter cannot show findings the page leaves out past the per-rule cap: the tenant's
/// option carries how many of its findings are left out, which the filter's status says.
#[test]
fn a_tenant_whose_findings_the_cap_leaves_out_is_told_how_many() {
    let mut report = sample_report(false);
    let template = report.findings[0].clone();
    for i in 0..150 {
        let mut f = template.clone();
        f.message = format!("copy {i}");
        report.findings.push(f);
    }
    let plan = html::Plan::new(&report);
    assert_eq!(plan.hidden.get("GT101"), Some(&51));
    for t in &template.tenants {
        assert_eq!(plan.hidden_of_tenant.get(t.as_str()), Some(&51), "{t}");
    }
    let p = html::render(&with_layout(report, sample_layout()), &sample_rules());
    let select = between(&p, "<select id=\"filter-tenant\"", "</select>");
    for t in &template.tenants {
        assert!(
            select.contains(&format!("data-beyond=\"51\">{t}</option>")),
            "{select}"
        );
    }
    assert!(
        !select.contains("data-beyond=\"51\">initech</option>"),
        "{select}"
    );
}

/// What the cluster recorded as allocated is listed under its node, with the tenant, the pod, the
/// GPU a MIG device is part of and the claim that records it.
#[test]
fn recorded_allocations_are_listed_under_their_node() {
    let p = page();
    let node = between(&p, "data-node=\"gpu-h100-1\"", "On this node");
    let list = between(node, "<ul class=\"allocations\">", "</ul>");
    assert_eq!(count(list, "<li"), 1, "{list}");
    for text in [
        "<code>gpu.nvidia.com/gpu-h100-1/gpu-0-mig-3g40gb-9-0</code>",
        "on GPU <code>GPU-1c7e3b52-8d4a-4f69-a2b1-5e0c9d8f7a63</code>",
        "acme (cust-acme/embed-0)",
        "recorded in ResourceClaim cust-acme/embed-0-mig-h2k7d",
    ] {
        assert!(list.contains(text), "{text} in {list}");
    }
    let other = between(&p, "data-node=\"gpu-a100-2\"", "data-node=\"gpu-h100-1\"");
    assert!(!other.contains("class=\"allocations\""), "{other}");
}
