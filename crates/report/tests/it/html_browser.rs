//! The HTML report in a real browser: headless Chromium opens each page from a `file://` address, and
//! the test reads back the DOM after the page's script ran. It asserts on the rendered DOM (a matrix
//! cell per pair of the matrix's tenants, the pairs listed riskiest first, one slice element per MIG
//! instance drawn (identical GPUs drawn once), finding counts
//! equal to the JSON report, accepted findings hidden until asked for, no Markdown backtick left in the
//! text), that no script error or console message occurred, that the page asked for nothing (its
//! Content-Security-Policy forbids every request, and the page records each one it blocks), and that
//! at a phone's width (390 px) nothing overflows the page sideways and the findings come before the
//! GPU drawings. A screenshot of each page, wide and narrow, is saved next to it, under the target
//! directory's `tmp/html-report/`.
//!
//! Pages: the sample report of `tests/common`, and the audit of every example cluster under
//! `examples/` (a folder with its manifests and, optionally, a `policy.yaml`).
//!
//! Chromium is found as `$GPU_TRUST_CHROMIUM`, else `chromium`, `chromium-browser` or
//! `google-chrome` on `PATH`. Without one the test fails when `CI` is set, and otherwise prints why it
//! skips.

use crate::common;
use crate::html_examples;
use crate::html_fixture;

use common::{sample_report, sample_rules};
use gpu_trust_report::{
    audit::{html, json},
    AuditReport, RuleDoc,
};
use gpu_trust_rules::layout::NodeLayout;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(90);

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GPU_TRUST_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Chromium, or `None` after saying why the browser checks do not run (a failure under CI).
fn browser_or_skip() -> Option<PathBuf> {
    match chromium() {
        Some(c) => Some(c),
        None if std::env::var_os("CI").is_some() => {
            panic!("CI is set but no Chromium was found (install Debian's `chromium` or set GPU_TRUST_CHROMIUM)")
        }
        None => {
            // Written to the stream itself, not through the test harness's captured `eprintln!`, so
            // that the skip shows in a plain `cargo test` run.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"SKIPPED html_browser: no Chromium found (install Debian's `chromium` or set GPU_TRUST_CHROMIUM)\n",
            );
            None
        }
    }
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-report");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Run {
    stdout: String,
    stderr: String,
}

/// Runs Chromium headless on `page` with `extra` arguments, in a profile of its own, killed after
/// [`TIMEOUT`].
fn run_chromium(browser: &Path, page: &Path, extra: &[String]) -> Run {
    let profile = page.with_extension(format!("profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let url = format!("file://{}", page.display());
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--no-first-run",
        "--no-default-browser-check",
        "--mute-audio",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(&url)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", browser.display()));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let start = Instant::now();
    let output = match rx.recv_timeout(TIMEOUT) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            // Ends only the browser this test started, by its process id.
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("Chromium did not finish {url} within {TIMEOUT:?}");
        }
    };
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        output.status.success(),
        "Chromium failed on {url} after {:?}: {}",
        start.elapsed(),
        String::from_utf8_lossy(&output.stderr)
    );
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The self-check the page's script wrote into the DOM.
fn self_check(dom: &str) -> (String, Value) {
    let start = dom.find("<pre id=\"self-check\"").unwrap_or_else(|| {
        panic!(
            "no self-check element in the DOM:\n{}",
            &dom[..dom.len().min(2000)]
        )
    });
    let open_end = dom[start..].find('>').unwrap() + start + 1;
    let close = dom[open_end..].find("</pre>").unwrap() + open_end;
    let tag = dom[start..open_end].to_string();
    let text = unescape(&dom[open_end..close]);
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("self-check is not JSON ({e}): {text}"));
    (tag, value)
}

/// Lines of Chromium's log that carry a message of the page's console.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// What the page must show, from the JSON report and the layout (not from the HTML): the findings,
/// matrix, pairs and groups of the report; drawings of the layouts, nodes alike and identical GPUs of a
/// node drawn once.
fn expected(report: &AuditReport, layout: &[NodeLayout]) -> Value {
    let (drawn, listed) = html::drawn_nodes(layout);
    assert!(listed.is_empty(), "these pages draw every node");
    let doc: Value = serde_json::from_str(&json::render(report).unwrap()).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    let n = doc["matrix"]["tenants"].as_array().unwrap().len();
    // These pages are small enough to show everything: the counts are the JSON report's own.
    let plan = html::Plan::new(report);
    assert!(plan.hidden.is_empty());
    let runs: Vec<&[gpu_trust_rules::layout::GpuLayout]> = drawn
        .iter()
        .flat_map(|d| html::gpu_runs(&d.node.gpus))
        .collect();
    // Every GPU of the layout is drawn, or is one of a run drawn once.
    let all: usize = layout.iter().map(|n| n.gpus.len()).sum();
    let covered: usize = drawn
        .iter()
        .map(|d| d.node.gpus.len() * (1 + d.alike.len()))
        .sum();
    assert_eq!(all, covered);
    serde_json::json!({
        "findings": findings.len(),
        "accepted": findings.iter().filter(|f| !f["accepted"].is_null()).count(),
        "bySeverity": doc["summary"]["findings"],
        "matrixCells": n * n,
        "nodes": drawn.len(),
        "gpus": runs.len(),
        "migSlices": runs.iter().map(|r| r[0].instances.len()).sum::<usize>(),
        "pairs": doc["matrix"]["pairs"].as_array().unwrap().len(),
        "groups": doc["groups"].as_array().unwrap().len(),
    })
}

/// The DOM without its scripts and styles: what a reader can see.
fn visible_text(dom: &str) -> String {
    let mut out = String::new();
    let mut rest = dom;
    loop {
        let next = [("<script", "</script>"), ("<style", "</style>")]
            .into_iter()
            .filter_map(|(open, close)| rest.find(open).map(|at| (at, close)))
            .min_by_key(|(at, _)| *at);
        let Some((start, close)) = next else { break };
        out.push_str(&rest[..start]);
        rest = match rest[start..].find(close) {
            Some(end) => &rest[start + end + close.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// At a phone's width: the page must not scroll sideways, and the findings must come before the GPU
/// drawings. Headless Chromium keeps its window at least 500 px wide, so the page is opened in a
/// 390 px frame of a wrapper page; a script in the page measures it and posts the result to the
/// wrapper, which writes it into its DOM.
fn check_narrow(browser: &Path, name: &str, text: &str) {
    let probe = r#"<script>
(function () {
  var findings = document.getElementById('findings');
  var gpus = document.getElementById('gpus');
  var out = {
    width: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    findingsBeforeGpus: !!(findings && gpus && findings.getBoundingClientRect().top < gpus.getBoundingClientRect().top),
    matrixBeforeFindings: !!(findings && document.getElementById('matrix').getBoundingClientRect().top < findings.getBoundingClientRect().top)
  };
  window.parent.postMessage(JSON.stringify(out), '*');
})();
</script>"#;
    let dir = out_dir();
    let page = dir.join(format!("{name}-narrow.html"));
    std::fs::write(
        &page,
        text.replacen("</body>", &format!("{probe}</body>"), 1),
    )
    .unwrap();
    let wrapper = dir.join(format!("{name}-390.html"));
    std::fs::write(
        &wrapper,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"{name}-narrow.html\" width=\"390\" \
             height=\"2400\" style=\"border:0\"></iframe><script>window.addEventListener('message', function (e) {{ \
             var pre = document.createElement('pre'); pre.id = 'narrow'; pre.textContent = e.data; \
             document.body.appendChild(pre); }});</script></body></html>\n"
        ),
    )
    .unwrap();
    let run = run_chromium(browser, &wrapper, &["--dump-dom".to_string()]);
    let start = run
        .stdout
        .find("<pre id=\"narrow\">")
        .expect("the probe ran")
        + "<pre id=\"narrow\">".len();
    let end = run.stdout[start..].find("</pre>").unwrap() + start;
    let got: Value = serde_json::from_str(&unescape(&run.stdout[start..end])).unwrap();
    assert_eq!(got["width"], 390, "{name}: {got}");
    assert!(
        got["scrollWidth"].as_u64().unwrap() <= 390,
        "{name}: the page is wider than the phone: {got}"
    );
    assert_eq!(got["findingsBeforeGpus"], true, "{name}: {got}");
    assert_eq!(got["matrixBeforeFindings"], true, "{name}: {got}");
    let shot = dir.join(format!("{name}-390.png"));
    let _ = std::fs::remove_file(&shot);
    run_chromium(
        browser,
        &wrapper,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=500,2400".to_string(),
            "--hide-scrollbars".to_string(),
        ],
    );
    assert!(std::fs::read(&shot).is_ok_and(|png| png.starts_with(b"\x89PNG")));
}

/// Writes the page, opens it, checks the DOM and saves a screenshot; returns the dumped DOM.
fn text_of_page(page: &Path) -> String {
    std::fs::read_to_string(page).unwrap()
}

fn check_page(browser: &Path, name: &str, report: &AuditReport, rules: &[RuleDoc<'_>]) -> String {
    let dir = out_dir();
    let page = dir.join(format!("{name}.html"));
    let text = html::render(report, rules);
    let layout = &report.layout;
    std::fs::write(&page, &text).unwrap();

    let run = run_chromium(browser, &page, &["--dump-dom".to_string()]);
    let (tag, check) = self_check(&run.stdout);
    let want = expected(report, layout);
    assert_eq!(
        check["counts"], want,
        "{name}: drawn counts differ from the JSON report: {check}"
    );
    assert_eq!(
        check["expected"], want,
        "{name}: the page's own expectation differs: {check}"
    );
    assert_eq!(
        check["errors"],
        serde_json::json!([]),
        "{name}: script errors: {check}"
    );
    assert_eq!(
        check["violations"],
        serde_json::json!([]),
        "{name}: the page tried to fetch: {check}"
    );
    assert_eq!(check["ok"], true, "{name}: {check}");
    assert!(tag.contains("data-ok=\"true\""), "{name}: {tag}");
    let console = console_lines(&run.stderr);
    assert!(console.is_empty(), "{name}: console messages: {console:#?}");

    // The rendered DOM itself: cells, slices and findings as the counts say, filters in place.
    let cells = run.stdout.matches("<td class=\"cell ").count();
    assert_eq!(Value::from(cells), want["matrixCells"], "{name}");
    let slices = run.stdout.matches("<rect class=\"mig-slice").count();
    assert_eq!(Value::from(slices), want["migSlices"], "{name}");
    // Pairs riskiest first: down the table, the worst open severity of a pair never rises.
    let rank = |row: &str| {
        ["critical", "high", "medium", "low", "info"]
            .iter()
            .position(|s| row.contains(&format!("badge sev-{s}\"")))
            .unwrap_or(5)
    };
    let ranks: Vec<usize> = run
        .stdout
        .split("<tr class=\"pair\"")
        .skip(1)
        .map(|row| rank(&row[..row.find("</tr>").unwrap()]))
        .collect();
    assert_eq!(Value::from(ranks.len()), want["pairs"], "{name}");
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "{name}: pairs not riskiest first: {ranks:?}"
    );
    let articles = run.stdout.matches("<article class=\"finding").count();
    assert_eq!(Value::from(articles), want["findings"], "{name}");
    let total = want["findings"].as_u64().unwrap();
    let accepted = want["accepted"].as_u64().unwrap();
    let status = if accepted > 0 {
        format!(
            "Showing {} of {total} findings (accepted ones hidden)",
            total - accepted
        )
    } else {
        format!("Showing {total} of {total} findings")
    };
    assert!(
        run.stdout.contains(&status),
        "{name}: filter status not written by the script: {status}"
    );
    // Accepted findings are in the page, hidden until asked for.
    let mut hidden_accepted = 0;
    for article in run.stdout.split("<article ").skip(1) {
        let head = &article[..article.find('>').unwrap()];
        let is_accepted = head.contains("data-accepted=\"true\"");
        assert_eq!(is_accepted, head.contains(" hidden"), "{name}: {head}");
        hidden_accepted += usize::from(is_accepted);
    }
    assert_eq!(hidden_accepted as u64, accepted, "{name}");
    // No Markdown backtick reaches the reader: code spans are set as code.
    let text = visible_text(&run.stdout);
    if let Some(at) = text.find('`') {
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(80)
            .map_or(0, |(i, _)| i);
        panic!(
            "{name}: a literal backtick: {}",
            &text[from..(at + 1).min(text.len())]
        );
    }
    check_narrow(browser, name, &text_of_page(&page));

    let shot = dir.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let run = run_chromium(
        browser,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,2000".to_string(),
            "--hide-scrollbars".to_string(),
        ],
    );
    let console = console_lines(&run.stderr);
    assert!(console.is_empty(), "{name}: console messages: {console:#?}");
    let png = std::fs::read(&shot)
        .unwrap_or_else(|e| panic!("{name}: no screenshot at {}: {e}", shot.display()));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{name}: screenshot is not a real PNG"
    );
    eprintln!("{name}: screenshot {}", shot.display());
    run.stdout
}

#[test]
fn sample_report_renders_cleanly_in_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let layout = html_fixture::sample_layout();
    check_page(
        &browser,
        "sample",
        &html_fixture::with_layout(sample_report(false), layout.clone()),
        &sample_rules(),
    );
    check_page(
        &browser,
        "sample-partial",
        &html_fixture::with_layout(sample_report(true), layout),
        &sample_rules(),
    );
}

#[test]
fn every_example_cluster_renders_cleanly_in_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let examples = html_examples::audit_examples();
    assert!(!examples.is_empty(), "no example cluster under examples/");
    for (name, report) in &examples {
        check_page(
            &browser,
            &format!("example-{name}"),
            report,
            &html_examples::registry_docs(),
        );
    }
    eprintln!("checked {} example clusters", examples.len());
}

/// The harness catches what it must: a request the policy blocks, and a script error.
#[test]
fn the_browser_check_catches_requests_and_errors() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let text = html::render(
        &html_fixture::with_layout(sample_report(false), html_fixture::sample_layout()),
        &sample_rules(),
    );
    let bad = text.replacen(
        "</main>",
        "<img src=\"http://127.0.0.1:9/pixel.png\" alt=\"\"><script>window.undefinedFunction();</script></main>",
        1,
    );
    let page = out_dir().join("negative.html");
    std::fs::write(&page, bad).unwrap();
    let run = run_chromium(&browser, &page, &["--dump-dom".to_string()]);
    let (tag, check) = self_check(&run.stdout);
    assert!(tag.contains("data-ok=\"false\""), "{tag}");
    let violations = check["violations"].as_array().unwrap();
    assert!(
        violations
            .iter()
            .any(|v| v.as_str().unwrap().contains("http://127.0.0.1:9/pixel.png")),
        "{check}"
    );
    assert!(!check["errors"].as_array().unwrap().is_empty(), "{check}");
    assert!(!console_lines(&run.stderr).is_empty());
}

/// The filters and the incident switch change what is shown, in the browser, through their controls.
#[test]
fn filters_and_incident_switch_work_in_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let text = html::render(
        &html_fixture::with_layout(sample_report(false), html_fixture::sample_layout()),
        &sample_rules(),
    );
    // Drives the page's controls as a reader would (set a value, the control fires `change`), and
    // writes what is then shown into the DOM.
    let driver = r#"<script>
(function () {
  function shown(selector, attr) {
    return Array.prototype.filter.call(document.querySelectorAll(selector), function (e) { return !e.hidden; })
      .map(function (e) { return e.getAttribute(attr); });
  }
  function set(id, value) {
    var el = document.getElementById(id);
    if (el.type === 'checkbox') { el.checked = value; } else { el.value = value; }
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }
  var out = {};
  out.initially = shown('article.finding', 'data-rule');
  set('filter-tenant', 't2');
  out.tenant = shown('article.finding', 'data-rule');
  out.tenantNodes = shown('.node', 'data-node');
  out.highlighted = document.querySelectorAll('table.matrix td.hl').length;
  set('filter-tenant', '');
  set('filter-severity', 'high');
  out.severity = shown('article.finding', 'data-rule');
  set('filter-severity', 'info');
  set('filter-accepted', true);
  out.withAccepted = shown('article.finding', 'data-rule');
  set('filter-layer', 'host');
  out.layer = shown('article.finding', 'data-rule');
  out.layers = shown('section.layer', 'data-layer');
  document.getElementById('filters').reset();
  window.setTimeout(function () {
    out.afterReset = shown('article.finding', 'data-rule').length;
    out.status = document.getElementById('filter-status').textContent;
    var pre = document.createElement('pre');
    pre.id = 'driver';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 20);
})();
</script>"#;
    let (got, dom) = driven(&browser, "driven", &text, driver);
    assert_eq!(
        got,
        serde_json::json!({
            // Accepted findings (GT401) hidden until asked for.
            "initially": ["GT101", "GT104", "GT207", "GT502"],
            "tenant": ["GT104", "GT207"],
            "tenantNodes": ["gpu-h100-1"],
            // initech's row and column: three cells each, one shared.
            "highlighted": 5,
            "severity": ["GT101", "GT104", "GT207"],
            "withAccepted": ["GT101", "GT104", "GT207", "GT401", "GT502"],
            "layer": ["GT207"],
            "layers": ["host"],
            "afterReset": 4,
            "status": "Showing 4 of 5 findings (accepted ones hidden)",
        })
    );
    let (_, check) = self_check(&dom);
    assert_eq!(check["ok"], true, "{check}");
}

/// Opens `text` with `driver` (a script that drives the page and writes what it saw as JSON into a
/// `<pre id="driver">`) added at the end of its body: that JSON, and the DOM.
fn driven(browser: &Path, name: &str, text: &str, driver: &str) -> (Value, String) {
    driven_with(browser, name, text, driver, &[])
}

/// [`driven`], with more Chromium arguments (a window size).
fn driven_with(
    browser: &Path,
    name: &str,
    text: &str,
    driver: &str,
    extra: &[&str],
) -> (Value, String) {
    let page = out_dir().join(format!("{name}.html"));
    std::fs::write(
        &page,
        text.replacen("</body>", &format!("{driver}</body>"), 1),
    )
    .unwrap();
    let mut args = vec!["--dump-dom".to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    let run = run_chromium(browser, &page, &args);
    let start = run
        .stdout
        .find("<pre id=\"driver\">")
        .expect("the driver ran")
        + "<pre id=\"driver\">".len();
    let end = run.stdout[start..].find("</pre>").unwrap() + start;
    let got: Value = serde_json::from_str(&unescape(&run.stdout[start..end])).unwrap();
    (got, run.stdout)
}

/// The page as people use it: headings in order (no level skipped), every section in the navigation
/// (Coverage too), matrix cells that are keyboard-reachable links to their pair's row, a tenant
/// filter that keeps that tenant's rows of "What tenants share", group links of the findings shown
/// that land on rows shown, and "About GTxxx" that opens the rule it scrolls to.
#[test]
fn links_headings_and_the_shared_rows_work_in_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let text = html::render(
        &html_fixture::with_layout(sample_report(false), html_fixture::sample_layout()),
        &sample_rules(),
    );
    let driver = r##"<script>
(function () {
  function list(selector) { return Array.prototype.slice.call(document.querySelectorAll(selector)); }
  function target(a) { return document.getElementById(a.getAttribute('href').slice(1)); }
  var out = {};
  var levels = list('h1, h2, h3, h4, h5, h6').map(function (h) { return Number(h.tagName[1]); });
  out.first = levels[0];
  out.skipped = levels.filter(function (l, i) { return i > 0 && l > levels[i - 1] + 1; }).length;
  out.nav = list('nav.toc a').map(function (a) { return target(a) ? a.textContent : 'missing ' + a.textContent; });
  var cells = list('table.matrix td.cell');
  var links = list('table.matrix td.cell a[href]');
  out.cells = cells.filter(function (c) { return !c.classList.contains('c-self') && !c.classList.contains('c-none'); }).length;
  out.cellLinks = links.filter(function (a) { var t = target(a); return t && t.classList.contains('pair'); }).length;
  out.cellLinksFocusable = links.every(function (a) { return a.tabIndex >= 0; });
  var tenant = document.getElementById('filter-tenant');
  tenant.value = 't2';
  tenant.dispatchEvent(new Event('change', { bubbles: true }));
  out.groupsShown = list('tr.group').filter(function (r) { return !r.hidden; }).map(function (r) { return r.id; });
  out.groupsOfTenant = list('tr.group').filter(function (r) {
    return (r.getAttribute('data-tenants') || '').split(' ').indexOf('t2') >= 0;
  }).map(function (r) { return r.id; });
  out.groupLinksToHidden = list('article.finding a[href]').filter(function (a) {
    var t = target(a);
    return !a.closest('article').hidden && t && t.classList.contains('group') && t.hidden;
  }).length;
  var about = list('a[href^="#rule-"]')[0];
  var rule = target(about);
  out.ruleClosedBefore = !rule.open;
  about.click();
  out.ruleOpenAfter = rule.open;
  var pre = document.createElement('pre');
  pre.id = 'driver';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"##;
    let (got, _) = driven(&browser, "links", &text, driver);
    assert_eq!(got["first"], 1, "{got}");
    assert_eq!(got["skipped"], 0, "{got}");
    let nav: Vec<&str> = got["nav"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        nav.contains(&"Coverage") && nav.contains(&"What tenants share"),
        "{nav:?}"
    );
    assert!(!nav.iter().any(|n| n.starts_with("missing")), "{nav:?}");
    assert!(got["cells"].as_u64() > Some(0), "{got}");
    assert_eq!(got["cellLinks"], got["cells"], "{got}");
    assert_eq!(got["cellLinksFocusable"], true);
    let ids = |k: &str| -> Vec<String> {
        got[k]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let (own, shown) = (ids("groupsOfTenant"), ids("groupsShown"));
    assert!(!own.is_empty(), "{got}");
    assert!(own.iter().all(|g| shown.contains(g)), "{got}");
    assert_eq!(got["groupLinksToHidden"], 0, "{got}");
    assert_eq!(got["ruleClosedBefore"], true, "{got}");
    assert_eq!(got["ruleOpenAfter"], true, "{got}");
}

/// A tenant filter that meets the per-rule cap says, in the browser, how many of that tenant's
/// findings the page does not hold; without a tenant it says nothing of the kind.
#[test]
fn a_tenant_filter_says_what_the_cap_leaves_out_in_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let mut report = sample_report(false);
    let template = report.findings[0].clone();
    for i in 0..150 {
        let mut f = template.clone();
        f.message = format!("copy {i}");
        report.findings.push(f);
    }
    let text = html::render(
        &html_fixture::with_layout(report, html_fixture::sample_layout()),
        &sample_rules(),
    );
    let driver = r#"<script>
(function () {
  var select = document.getElementById('filter-tenant');
  function pick(name) {
    Array.prototype.forEach.call(select.options, function (o) {
      if (o.textContent === name) { select.value = o.value; }
    });
    select.dispatchEvent(new Event('change', { bubbles: true }));
    return document.getElementById('filter-status').textContent;
  }
  var out = { acme: pick('acme'), initech: pick('initech') };
  select.value = '';
  select.dispatchEvent(new Event('change', { bubbles: true }));
  out.all = document.getElementById('filter-status').textContent;
  var pre = document.createElement('pre');
  pre.id = 'driver';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;
    let page = out_dir().join("capped.html");
    std::fs::write(
        &page,
        text.replacen("</body>", &format!("{driver}</body>"), 1),
    )
    .unwrap();
    let run = run_chromium(&browser, &page, &["--dump-dom".to_string()]);
    let start = run
        .stdout
        .find("<pre id=\"driver\">")
        .expect("the driver ran")
        + "<pre id=\"driver\">".len();
    let end = run.stdout[start..].find("</pre>").unwrap() + start;
    let got: Value = serde_json::from_str(&unescape(&run.stdout[start..end])).unwrap();
    let acme = got["acme"].as_str().unwrap();
    assert!(
        acme.ends_with("; this page does not hold 51 more findings of this tenant (past the limit per rule): the JSON report lists them"),
        "{got}"
    );
    assert!(
        !got["initech"].as_str().unwrap().contains("does not hold"),
        "{got}"
    );
    assert!(
        !got["all"].as_str().unwrap().contains("does not hold"),
        "{got}"
    );
}

/// Printing: the page's print rules, applied on the screen at the printable width of an A4 page
/// (210 mm less the 12 mm margins each side: 186 mm, 703 CSS pixels), fit a matrix of 60 tenants
/// in the page (every column header inside it), and what the tenant filter hides is not displayed in
/// any section.
#[test]
fn printing_fits_a_large_matrix_and_hides_what_the_filters_hide_in_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let mut report = sample_report(false);
    let first_tenant = report.tenants[0].clone();
    let first_pair = report.matrix.pairs[0].clone();
    for i in 0..57 {
        let name = format!("tenant-{i:02}");
        let mut t = first_tenant.clone();
        t.name = name.clone();
        t.namespaces = vec![format!("ns-{i:02}")];
        report.tenants.push(t);
        report.matrix.tenants.push(name.clone());
        let mut p = first_pair.clone();
        p.tenants = ["acme".to_string(), name];
        report.matrix.pairs.push(p);
    }
    report
        .matrix
        .pairs
        .sort_by(|a, b| a.tenants.cmp(&b.tenants));
    report.summary.tenants = report.tenants.len();
    assert_eq!(report.matrix.tenants.len(), 60);
    let text = html::render(
        &html_fixture::with_layout(report, html_fixture::sample_layout()),
        &sample_rules(),
    );
    let driver = r#"<script>
(function () {
  function list(selector) { return Array.prototype.slice.call(document.querySelectorAll(selector)); }
  // The print rules, on the screen.
  Array.prototype.forEach.call(document.styleSheets, function (sheet) {
    Array.prototype.forEach.call(sheet.cssRules, function (rule) {
      if (rule.media && rule.media.mediaText === 'print') { rule.media.appendMedium('screen'); }
    });
  });
  var out = {};
  var width = document.documentElement.clientWidth;
  out.width = width;
  var heads = list('table.matrix thead th');
  out.columns = heads.length;
  out.columnsOutside = heads.filter(function (h) { return h.getBoundingClientRect().right > width + 1; }).length;
  out.navShown = list('nav.toc').filter(function (n) { return getComputedStyle(n).display !== 'none'; }).length;
  var select = document.getElementById('filter-tenant');
  Array.prototype.forEach.call(select.options, function (o) { if (o.textContent === 'globex') { select.value = o.value; } });
  select.dispatchEvent(new Event('change', { bubbles: true }));
  var hidden = list('main [hidden]');
  out.hidden = hidden.length > 0;
  out.hiddenButDisplayed = hidden.filter(function (e) { return getComputedStyle(e).display !== 'none'; })
    .map(function (e) { return e.tagName + '.' + e.className; });
  out.glanceRows = list('tr.glance').filter(function (r) { return getComputedStyle(r).display !== 'none'; })
    .map(function (r) { return r.querySelector('th').textContent; });
  var pre = document.createElement('pre');
  pre.id = 'driver';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;
    let (got, _) = driven_with(
        &browser,
        "print",
        &text,
        driver,
        &["--window-size=703,1200"],
    );
    // The page's width less the scroll bar.
    assert!(got["width"].as_u64().unwrap() <= 703, "{got}");
    // The matrix's column headers: one per tenant, and the corner.
    assert_eq!(got["columns"], 61, "{got}");
    assert_eq!(got["columnsOutside"], 0, "{got}");
    assert_eq!(got["navShown"], 0, "{got}");
    assert_eq!(got["hidden"], true, "{got}");
    assert_eq!(got["hiddenButDisplayed"], serde_json::json!([]), "{got}");
    // globex's row of the tenants, and the node pools it is on.
    let rows = got["glanceRows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r == "globex"), "{got}");
    assert!(!rows.iter().any(|r| r == "acme"), "{got}");
}
