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
fn pairs_name_their_source() {
    let policy = valid();
    let report = CheckReport::new(&policy, &policy.resolve(&[]), Date::MIN);
    let pair = |a: &str, b: &str| {
        report
            .pairs
            .iter()
            .find(|p| p.tenants == [a.to_string(), b.to_string()])
            .unwrap()
    };
    assert_eq!(pair("ads", "search").source, "relation");
    assert_eq!(pair("ads", "search").line, Some(29));
    assert_eq!(pair("platform-ml", "search").source, "relation");
    assert_eq!(pair("acme", "ads").source, "default");
    assert_eq!(pair("acme", "ads").line, None);
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
