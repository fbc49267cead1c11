//! The CSAF reader on NVIDIA's own bulletins (`tests/data/csaf/nvidia`, see its NOTICE.md) and on
//! hostile documents: what it maps to the components the audit knows, what it reports instead of
//! dropping, and where it refuses a document.

use gpu_trust_model::Version;
use gpu_trust_rules::advisories::{csaf, Advisories, Component, Components, RuntimeSetup, Status};
use std::path::PathBuf;

fn data(name: &str) -> (String, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/csaf/nvidia")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (format!("nvidia/{name}"), text)
}

fn read(name: &str) -> csaf::Document {
    let (file, text) = data(name);
    csaf::read(&text, &file, Components::builtin()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

fn status(doc: &csaf::Document, id: &str, c: Component, installed: &str) -> Status {
    let a = doc.advisories.iter().find(|a| a.id == id).unwrap();
    a.affects
        .iter()
        .find(|r| r.component == c)
        .unwrap()
        .status(&v(installed))
}

fn affected(fix: &str) -> Status {
    Status::Affected { fix: Some(v(fix)) }
}

#[test]
fn the_toolkit_bulletin_maps_toolkit_and_operator() {
    let doc = read("5850.json");
    assert_eq!(
        doc.source.title.as_deref(),
        Some("Security Bulletin: NVIDIA Container Toolkit - June 2026")
    );
    assert_eq!(doc.source.tracking_id.as_deref(), Some("5850"));
    assert_eq!(doc.source.newest.unwrap().to_string(), "2026-06-30");
    assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    let a = &doc.advisories[0];
    assert_eq!(a.id, "CVE-2026-24260");
    assert_eq!(a.cvss, Some(8.5));
    assert_eq!(a.bulletin, "NVIDIA Product Security 5850");
    assert_eq!(
        a.url.as_deref(),
        Some("https://nvd.nist.gov/vuln/detail/CVE-2026-24260"),
        "the document names no address of its own: the vulnerability's first reference"
    );
    let c = Component::ContainerToolkit;
    assert_eq!(status(&doc, &a.id, c, "1.19.0"), affected("1.19.1"));
    assert_eq!(status(&doc, &a.id, c, "1.17.4"), affected("1.19.1"));
    assert_eq!(status(&doc, &a.id, c, "1.19.1"), Status::Fixed);
    let o = Component::GpuOperator;
    assert_eq!(status(&doc, &a.id, o, "26.3.1"), affected("26.3.2"));
    assert_eq!(status(&doc, &a.id, o, "25.10.1"), affected("26.3.2"));
    assert_eq!(status(&doc, &a.id, o, "26.7.0"), Status::Fixed);
}

#[test]
fn nvidiascape_names_the_device_plugin_and_the_mig_manager() {
    let doc = read("5659.json");
    let a = doc
        .advisories
        .iter()
        .find(|a| a.id == "CVE-2025-23266")
        .unwrap();
    let components: Vec<Component> = a.affects.iter().map(|r| r.component).collect();
    for c in [
        Component::ContainerToolkit,
        Component::GpuOperator,
        Component::DevicePlugin,
        Component::MigManager,
    ] {
        assert!(components.contains(&c), "{c:?} in {components:?}");
    }
    assert_eq!(
        status(&doc, "CVE-2025-23266", Component::DevicePlugin, "0.17.2"),
        affected("0.17.3")
    );
    assert_eq!(
        status(&doc, "CVE-2025-23266", Component::MigManager, "0.12.2"),
        Status::Fixed
    );
    assert_eq!(
        status(&doc, "CVE-2025-23266", Component::MigManager, "0.12.1"),
        affected("0.12.2")
    );
    // NVIDIA writes conditions beside the versions ("only when CDI is enabled"): the versions are
    // read, the conditions are said not to be.
    let w: Vec<&str> = doc.warnings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(w.len(), 1, "{w:#?}");
    assert!(
        w[0].starts_with("CSAF: conditions written beside versions are not read")
            && w[0].contains("NVIDIA MIG Manager (Linux): (only when CDI is enabled)"),
        "{}",
        w[0]
    );
}

#[test]
fn the_kai_and_exporter_bulletins() {
    let kai = read("5818.json");
    let ids: Vec<&str> = kai.advisories.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["CVE-2026-24177", "CVE-2026-24176"]);
    assert_eq!(
        status(&kai, "CVE-2026-24177", Component::KaiScheduler, "0.12.6"),
        affected("0.13.0")
    );
    let exporter = read("5857.json");
    assert_eq!(exporter.advisories.len(), 1);
    assert_eq!(
        status(
            &exporter,
            "CVE-2026-47483",
            Component::DcgmExporter,
            "4.8.1"
        ),
        affected("4.8.2")
    );
    assert_eq!(
        status(
            &exporter,
            "CVE-2026-47483",
            Component::DcgmExporter,
            "4.8.2"
        ),
        Status::Fixed
    );
    // DCGM itself (the host engine) is no component of the audit: reported, not dropped.
    let w: Vec<String> = exporter
        .warnings
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(
        w,
        ["CSAF: 1 product is not a component the audit knows, not used: DCGM (All(4.5))"]
    );
}

#[test]
fn the_may_2026_driver_bulletin_per_branch() {
    let doc = read("5821.json");
    let d = Component::Driver;
    // R570 has no row: an older unlisted branch, affected, upgraded to R580's fix.
    assert_eq!(
        status(&doc, "CVE-2026-24187", d, "570.211.01"),
        affected("580.159.03")
    );
    assert_eq!(
        status(&doc, "CVE-2026-24187", d, "535.288.01"),
        affected("535.309.01")
    );
    assert_eq!(
        status(&doc, "CVE-2026-24187", d, "595.71.05"),
        Status::Fixed
    );
    // CVE-2026-24198 names R580 and R595 only: R535 is listed for other CVEs, so not affected.
    assert_eq!(
        status(&doc, "CVE-2026-24198", d, "535.288.01"),
        Status::Fixed
    );
    // CVE-2026-24193 names R535 and R580: R595 is not affected.
    assert_eq!(
        status(&doc, "CVE-2026-24193", d, "595.58.02"),
        Status::Fixed
    );
    // Windows-only CVEs and the Windows, vGPU and GeForce products are reported, not used.
    let w: Vec<&str> = doc.warnings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(
        w[0].starts_with("CSAF: ") && w[0].contains("not a component the audit knows"),
        "{}",
        w[0]
    );
    assert!(w[1].contains("CVE-2026-24191"), "{}", w[1]);
    assert!(!w[1].contains("CVE-2026-24187"), "{}", w[1]);
}

/// The built-in entries of these bulletins say what the vendor's documents say, where the data
/// does not knowingly differ (the exporter's introduced version, read from its code).
#[test]
fn the_built_in_data_agrees_with_the_vendor_documents() {
    let builtin = Advisories::builtin();
    let cases: [(&str, &str, Component, &[&str]); 5] = [
        (
            "5850.json",
            "CVE-2026-24260",
            Component::ContainerToolkit,
            &["1.17.4", "1.19.0", "1.19.1", "1.20.0"],
        ),
        (
            "5850.json",
            "CVE-2026-24260",
            Component::GpuOperator,
            &["25.10.1", "26.3.1", "26.3.2"],
        ),
        (
            "5818.json",
            "CVE-2026-24176",
            Component::KaiScheduler,
            &["0.12.6", "0.13.0", "0.17.0"],
        ),
        (
            "5821.json",
            "CVE-2026-24198",
            Component::Driver,
            &[
                "535.288.01",
                "570.211.01",
                "580.126.20",
                "580.159.03",
                "595.58.03",
            ],
        ),
        (
            "5821.json",
            "CVE-2026-24193",
            Component::Driver,
            &["535.288.01", "570.211.01", "580.159.03", "595.58.03"],
        ),
    ];
    for (file, id, c, versions) in cases {
        let doc = read(file);
        let ours = builtin.advisories.iter().find(|a| a.id == id).unwrap();
        let ours = ours.affects.iter().find(|r| r.component == c).unwrap();
        for installed in versions {
            assert_eq!(
                ours.status(&v(installed)),
                status(&doc, id, c, installed),
                "{id} {c:?} {installed}"
            );
        }
    }
}

#[test]
fn a_csaf_document_adds_to_the_built_in_data() {
    let loaded = Advisories::load(&[data("5850.json"), data("5818.json")]).unwrap();
    let names: Vec<&str> = loaded
        .data
        .sources
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["built-in", "nvidia/5850.json", "nvidia/5818.json"]);
    let hits = loaded.data.hits(
        Component::ContainerToolkit,
        &v("1.19.0"),
        RuntimeSetup::default(),
    );
    let hit = hits
        .iter()
        .find(|h| h.advisory.id == "CVE-2026-24260")
        .unwrap();
    assert_eq!(
        hit.advisory.title.as_deref(),
        Some("Security Bulletin: NVIDIA Container Toolkit - June 2026"),
        "the document's entry replaces the built-in one"
    );
    assert!(loaded.warnings.iter().any(|w| w
        .message
        .contains("CVE-2026-24260: this document's versions replace")));
    assert!(loaded.data.advisories.len() >= Advisories::builtin().advisories.len());
}

fn refused(text: &str) -> Vec<String> {
    csaf::read(text, "hostile.json", Components::builtin())
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect()
}

const MINIMAL_DOCUMENT: &str = r#"{
  "document": {
    "category": "csaf_security_advisory",
    "csaf_version": "2.0",
    "publisher": {"category": "vendor", "name": "Example", "namespace": "https://example.com"},
    "title": "Example",
    "tracking": {
      "current_release_date": "2026-01-01T00:00:00Z",
      "id": "EX-1",
      "initial_release_date": "2026-01-01T00:00:00Z",
      "revision_history": [{"date": "2026-01-01T00:00:00Z", "number": "1", "summary": "first"}],
      "status": "final",
      "version": "1"
    }
  },
  "product_tree": {"branches": BRANCHES},
  "vulnerabilities": VULNERABILITIES
}"#;

fn document(branches: &str, vulnerabilities: &str) -> String {
    MINIMAL_DOCUMENT
        .replace("BRANCHES", branches)
        .replace("VULNERABILITIES", vulnerabilities)
}

#[test]
fn hostile_documents_are_refused_at_their_location() {
    // Wrong type: csaf_version is a string.
    let e = refused(
        &MINIMAL_DOCUMENT
            .replace("\"2.0\"", "2.0")
            .replace("BRANCHES", "[]")
            .replace("VULNERABILITIES", "[]"),
    );
    assert_eq!(
        e,
        ["hostile.json:4:21: error[invalid-value]: `2.0` is not a string, and CSAF requires one here"]
    );
    // A status names a product the tree does not define.
    let e = refused(&document(
        "[]",
        r#"[{"cve": "CVE-2099-0001", "product_status": {"fixed": ["nope"]}}]"#,
    ));
    assert_eq!(
        e,
        ["hostile.json:17:77: error[invalid-advisory-data]: CSAF: CVE-2099-0001 names product `nope`, which the product tree does not define"]
    );
    // Scores out of range, and a list where a string belongs.
    let e = refused(&document(
        "[]",
        r#"[{"cve": "CVE-2099-0002", "scores": [{"cvss_v3": {"baseScore": 11}}]}]"#,
    ));
    assert!(e[0].contains("baseScore 11 is outside 0 to 10"), "{e:?}");
    let e = refused(&document(r#"[{"category": ["x"], "name": "n"}]"#, "[]"));
    assert_eq!(
        e,
        ["hostile.json:16:46: error[invalid-value]: expected string scalar"]
    );
    // Required fields missing.
    let e = refused(r#"{"document": {"title": "t"}}"#);
    assert!(
        e.iter()
            .any(|m| m.contains("`document.tracking` is missing")),
        "{e:?}"
    );
    assert!(
        e.iter()
            .any(|m| m.contains("`document.csaf_version` is missing")),
        "{e:?}"
    );
    // Deep nesting stops at the reader's depth bound, with its location.
    let mut deep = String::from("[]");
    for i in 0..200 {
        deep = format!(r#"[{{"category": "vendor", "name": "n{i}", "branches": {deep}}}]"#);
    }
    let e = refused(&document(&deep, "[]"));
    assert!(e[0].starts_with("hostile.json:16:"), "{e:?}");
    // A document over the size bound is refused before it is parsed.
    let huge = document("[]", &format!("[{}]", vec!["{}"; 6_000_000].join(",")));
    assert!(huge.len() > csaf::MAX_DOCUMENT_BYTES);
    let e = refused(&huge);
    assert!(e[0].contains("over the limit"), "{e:?}");
}

#[test]
fn vers_ranges_and_unmapped_products_of_another_vendor() {
    let doc = csaf::read(
        &document(
            r#"[{"category": "vendor", "name": "NVIDIA", "branches": [
                 {"category": "product_name", "name": "NVIDIA Container Toolkit", "branches": [
                   {"category": "product_version_range", "name": "vers:generic/>=1.18.0|<1.19.1",
                    "product": {"name": "NVIDIA Container Toolkit 1.18.0 to 1.19.0", "product_id": "CTK-R"}},
                   {"category": "product_version", "name": "1.19.1",
                    "product": {"name": "NVIDIA Container Toolkit 1.19.1", "product_id": "CTK-F"}}]},
                 {"category": "product_name", "name": "Other Tool", "branches": [
                   {"category": "product_version", "name": "2.0",
                    "product": {"name": "Other Tool 2.0", "product_id": "OT"}}]}]}]"#,
            r#"[{"cve": "CVE-2099-0003", "notes": [{"category": "summary", "text": "A flaw. More words."}],
                 "product_status": {"known_affected": ["CTK-R", "OT"], "fixed": ["CTK-F"]}}]"#,
        ),
        "vendor.json",
        Components::builtin(),
    )
    .unwrap();
    let a = &doc.advisories[0];
    assert_eq!(a.summary, "A flaw.");
    let r = &a.affects[0];
    assert_eq!(r.introduced, Some(v("1.18.0")));
    assert_eq!(r.status(&v("1.17.9")), Status::Fixed, "before the range");
    assert_eq!(r.status(&v("1.18.1")), affected("1.19.1"));
    let w: Vec<&str> = doc.warnings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        w,
        ["CSAF: 1 product is not a component the audit knows, not used: Other Tool"]
    );
}

/// One product of the Container Toolkit whose versions are `vers`, known affected.
fn toolkit_affected(vers: &str) -> csaf::Document {
    let branches = format!(
        r#"[{{"category": "vendor", "name": "NVIDIA", "branches": [
             {{"category": "product_name", "name": "NVIDIA Container Toolkit", "branches": [
               {{"category": "product_version_range", "name": "{vers}",
                 "product": {{"name": "NVIDIA Container Toolkit", "product_id": "CTK"}}}}]}}]}}]"#
    );
    csaf::read(
        &document(
            &branches,
            r#"[{"cve": "CVE-2099-0004", "product_status": {"known_affected": ["CTK"]}}]"#,
        ),
        "vendor.json",
        Components::builtin(),
    )
    .unwrap()
}

/// A `vers` range of several intervals, and a list of versions, count whole (the vers
/// specification, package-url/vers-spec VERSION-RANGE-SPEC: constraints sorted by version, `>`/`>=`
/// followed by `<`/`<=` is one interval, a leading `<` and a trailing `>=` are open, a bare version
/// is one version).
#[test]
fn several_intervals_and_lists_of_versions_count_whole() {
    let doc = toolkit_affected("vers:generic/>=1.10.0|<1.12.0|>=1.19.0|<1.19.5");
    assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    let r = &doc.advisories[0].affects[0];
    assert_eq!(
        r.status(&v("1.9.9")),
        Status::Fixed,
        "before the first interval"
    );
    assert_eq!(r.status(&v("1.10.0")), affected("1.12.0"));
    assert_eq!(r.status(&v("1.11.4")), affected("1.12.0"));
    assert_eq!(
        r.status(&v("1.12.0")),
        Status::Fixed,
        "between the intervals"
    );
    assert_eq!(
        r.status(&v("1.18.9")),
        Status::Fixed,
        "between the intervals"
    );
    assert_eq!(r.status(&v("1.19.0")), affected("1.19.5"));
    assert_eq!(r.status(&v("1.19.5")), Status::Fixed);
    assert_eq!(r.status(&v("2.0.0")), Status::Fixed);

    let doc = toolkit_affected("vers:generic/1.17.2|1.17.4|>=1.18.0|<1.18.2");
    let r = &doc.advisories[0].affects[0];
    for affected_version in ["1.17.2", "1.17.4", "1.18.1"] {
        assert!(
            matches!(r.status(&v(affected_version)), Status::Affected { .. }),
            "{affected_version}"
        );
    }
    for fixed in ["1.17.3", "1.17.5", "1.18.2"] {
        assert_eq!(r.status(&v(fixed)), Status::Fixed, "{fixed}");
    }
}

/// What the reader cannot understand is a warning that names the product and its versions: the
/// vulnerability is not silently read as affecting nothing.
#[test]
fn versions_not_understood_are_warnings_naming_the_product() {
    for vers in [
        "vers:generic/!=1.5.0",
        "vers:generic/<1.12.0|<1.19.5",
        "vers:generic/>=1.19.0|<1.19.5|>=1.10.0|<1.12.0",
    ] {
        let doc = toolkit_affected(vers);
        let w: Vec<&str> = doc.warnings.iter().map(|d| d.message.as_str()).collect();
        assert!(
            w.iter().any(|m| m.contains("not understood")
                && m.contains("NVIDIA Container Toolkit")
                && m.contains(vers)),
            "{vers}: {w:#?}"
        );
    }
}

/// The shapes of NVIDIA's bulletin 5861 (September 2026; NVIDIA/product-security
/// `2026/5861/5861.json`, commit 08d1a287) that a strict reader would refuse or misread, written
/// here with 5861's own branch names, product names and ids: the vGPU 19 Virtual GPU Manager's
/// product id defined twice, its name written two ways; Windows rows whose versions are Windows
/// driver numbers outside their branch (`Windows(R580)`: "All driver versions prior to 596.86");
/// and Tesla Linux rows for R580, R595, R610 and R615 only (no R535 or R570).
#[test]
fn the_shapes_of_the_september_2026_driver_bulletin_read() {
    let tesla = |arch: &str, prefix: &str, fix: &str| {
        let id = fix.replace('.', "_");
        format!(
            r#"{{"category": "architecture", "name": "{arch}", "branches": [
                 {{"category": "product_version", "name": "Tesla", "product": {{"name": "{fix}", "product_id": "{prefix}_tesla_{id}"}}}},
                 {{"category": "product_version", "name": "Tesla", "product": {{"name": "All driver versions prior to {fix}", "product_id": "{prefix}_tesla_all_driver_versions_prior_to_{id}"}}}}]}}"#
        )
    };
    let manager = "xenserver_vmware_vsphere_red_hat_enterprise_linux_kvm_ubuntuvgpu_19_virtual_gpu_manager_580_159_01all_versions_prior_to_and_including_vgpu_19_5";
    let branches = format!(
        r#"[{{"category": "vendor", "name": "NVIDIA", "branches": [
             {{"category": "product_family", "name": "NVIDIA Product Family", "branches": [
               {{"category": "product_name", "name": "Tesla", "product": {{"name": "Tesla", "product_id": "linuxr580_tesla"}}}}]}},
             {r580}, {r595}, {r610}, {r615}, {win},
             {{"category": "architecture", "name": "XenServer, VMware vSphere, Red Hat Enterprise Linux KVM, Ubuntu(vGPU 19)", "branches": [
               {{"category": "product_version", "name": "Virtual GPU Manager", "product": {{"name": "580.159.01All versions prior to and including vGPU 19.5)", "product_id": "{manager}"}}}},
               {{"category": "product_version", "name": "Virtual GPU Manager", "product": {{"name": "580.159.01(All versions prior to and including vGPU 19.5)", "product_id": "{manager}"}}}}]}}]}}]"#,
        r580 = tesla("Linux(R580)", "linuxr580", "580.178.04"),
        r595 = tesla("Linux(R595)", "linuxr595", "595.91.07"),
        r610 = tesla("Linux(R610)", "linuxr610", "610.57.04"),
        r615 = tesla("Linux(R615)", "linuxr615", "615.71.09"),
        win = tesla("Windows(R580)", "windowsr580", "596.86"),
    );
    let ids = |which: &str| {
        [
            "linuxr580",
            "linuxr595",
            "linuxr610",
            "linuxr615",
            "windowsr580",
        ]
        .iter()
        .zip([
            "580.178.04",
            "595.91.07",
            "610.57.04",
            "615.71.09",
            "596.86",
        ])
        .map(|(p, f)| {
            let id = f.replace('.', "_");
            if which == "fixed" {
                format!(r#""{p}_tesla_{id}""#)
            } else {
                format!(r#""{p}_tesla_all_driver_versions_prior_to_{id}""#)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
    };
    let vulnerabilities = format!(
        r#"[{{"cve": "CVE-2026-47559", "product_status": {{"fixed": [{fixed}], "known_affected": [{affected}, "{manager}"]}}}}]"#,
        fixed = ids("fixed"),
        affected = ids("affected"),
    );
    let doc = csaf::read(
        &document(&branches, &vulnerabilities),
        "5861-shapes.json",
        Components::builtin(),
    )
    .unwrap_or_else(|e| panic!("{e:#?}"));
    let d = Component::Driver;
    assert_eq!(
        status(&doc, "CVE-2026-47559", d, "580.159.03"),
        affected("580.178.04")
    );
    assert_eq!(
        status(&doc, "CVE-2026-47559", d, "595.71.05"),
        affected("595.91.07")
    );
    for fixed in ["580.178.04", "595.91.07", "610.57.04", "615.71.09"] {
        assert_eq!(
            status(&doc, "CVE-2026-47559", d, fixed),
            Status::Fixed,
            "{fixed}"
        );
    }
    // No row for R535 or R570: affected, and the fix to move to is R580's.
    for old in ["535.309.01", "570.211.01"] {
        assert_eq!(
            status(&doc, "CVE-2026-47559", d, old),
            affected("580.178.04"),
            "{old}"
        );
    }
    // The Windows row's 596.86 is no Linux branch: a 596 Linux driver is not made affected by it.
    let a = doc
        .advisories
        .iter()
        .find(|a| a.id == "CVE-2026-47559")
        .unwrap();
    let r = a.affects.iter().find(|r| r.component == d).unwrap();
    assert!(!r.fixed.iter().any(|f| f.major() == 596), "{:?}", r.fixed);
    let w: Vec<String> = doc.warnings.iter().map(ToString::to_string).collect();
    assert!(
        w.iter().any(|m| m.contains("warning[csaf-defined-twice]")
            && m.contains(manager)
            && m.contains("580.159.01All versions")
            && m.contains("580.159.01(All versions")),
        "{w:#?}"
    );
}

/// A product id defined twice with different meanings is still refused.
#[test]
fn a_product_id_defined_twice_with_two_meanings_is_refused() {
    let e = refused(&document(
        r#"[{"category": "vendor", "name": "NVIDIA", "branches": [
             {"category": "product_name", "name": "NVIDIA Container Toolkit", "branches": [
               {"category": "product_version", "name": "1.19.0", "product": {"name": "1.19.0", "product_id": "CTK"}},
               {"category": "product_version", "name": "1.19.1", "product": {"name": "1.19.1", "product_id": "CTK"}}]}]}]"#,
        "[]",
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("product id `CTK` is defined twice")),
        "{e:?}"
    );
}
