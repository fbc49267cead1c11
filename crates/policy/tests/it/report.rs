//! The `policy check` report of the example policy, as JSON.

use gpu_trust_policy::{parse, AcceptanceState, CheckReport, Date, Policy};

fn valid() -> Policy {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/valid.yaml");
    parse(&std::fs::read_to_string(path).unwrap(), "valid.yaml").unwrap()
}

#[test]
fn example_policy_report() {
    let policy = valid();
    let today = Date::parse("2027-01-15").unwrap();
    let report = CheckReport::new(&policy, &policy.resolve(&[]), today);
    insta::assert_json_snapshot!(report);
}

#[test]
fn relations_name_their_line_and_other_pairs_the_default() {
    let policy = valid();
    let report = CheckReport::new(&policy, &policy.resolve(&[]), Date::MIN);
    let pair = |a: &str, b: &str| {
        report
            .relations
            .iter()
            .find(|p| p.tenants == [a.to_string(), b.to_string()])
    };
    assert_eq!(pair("ads", "search").unwrap().source, "relation");
    assert_eq!(pair("ads", "search").unwrap().line, Some(29));
    assert_eq!(pair("platform-ml", "search").unwrap().source, "relation");
    assert!(
        pair("acme", "ads").is_none(),
        "a default pair is not listed"
    );
    assert_eq!(report.pairs, 6);
    assert_eq!(report.default_trust, gpu_trust_model::Trust::None);
}

/// Nothing in the report grows with the pairs: 10,000 tenants, one relation.
#[test]
fn many_tenants_report_the_relations_only() {
    let mut text = String::from("tenants:\n");
    for t in 0..10_000 {
        text.push_str(&format!("  - {{name: t{t:05}, namespaces: [ns-{t:05}]}}\n"));
    }
    text.push_str("trust:\n  default: none\n  relations:\n    - {tenants: [t00000, t00001], level: limited}\n");
    let policy = parse(&text, "big.yaml").unwrap();
    let report = CheckReport::new(&policy, &policy.resolve(&[]), Date::MIN);
    assert_eq!(report.pairs, 10_000 * 9_999 / 2);
    assert_eq!(report.relations.len(), 1);
    assert_eq!(report.tenants.len(), 10_000);
}

#[test]
fn acceptance_state_follows_the_date() {
    let policy = valid();
    let tenancy = policy.resolve(&[]);
    let on = CheckReport::new(&policy, &tenancy, Date::parse("2027-06-30").unwrap());
    assert_eq!(on.acceptances[0].state, AcceptanceState::Active);
    assert_eq!(on.expired(), 0);
    let after = CheckReport::new(&policy, &tenancy, Date::parse("2027-07-01").unwrap());
    assert_eq!(after.acceptances[0].state, AcceptanceState::Expired);
    assert_eq!(after.expired(), 1);
}

#[test]
fn report_is_deterministic() {
    let today = Date::parse("2027-01-15").unwrap();
    let a =
        serde_json::to_string(&CheckReport::new(&valid(), &valid().resolve(&[]), today)).unwrap();
    let b =
        serde_json::to_string(&CheckReport::new(&valid(), &valid().resolve(&[]), today)).unwrap();
    assert_eq!(a, b);
}
