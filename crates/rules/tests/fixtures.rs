//! Every rule against its fixtures, found by enumerating the registry: no list here names a rule.
//!
//! A rule's fixtures are the folder `tests/fixtures/<code>/`: Kubernetes objects as a cluster dump has
//! them, one file per case, `violating.yaml` and `clean.yaml` at least (more cases are
//! `violating-<what>.yaml` and `clean-<what>.yaml`), each with its policy beside it as
//! `<case>.policy.yaml` (none is the default policy). Each case is read by the real ingest and policy
//! and audited on a fixed date. A violating case's findings of the rule are a snapshot
//! (`fixtures__<code>_fixture.snap` for `violating.yaml`, `..._fixture_<what>.snap` for the others); a
//! clean case has none of them.
//!
//! The folder is a rule's one test format: a behaviour of a rule (another mechanism, a certainty, a
//! severity under another trust level) is one more case in it, written as the objects a cluster has, so
//! the real ingest reads it. What no input can produce is tested beside the code, not here.
//!
//! Each case is a test of its own, named `<code>::<case>` in lower case (`gt107::violating`,
//! `gt107::clean-mig`), found when the test binary starts: `cargo test -p gpu-trust-rules --test
//! fixtures gt107` runs one rule's cases, and a new case or a new rule's folder runs without a list
//! or a rebuild. `<code>::cases` fails when a registered rule's folder lacks a violating or a clean
//! case, or holds a file that is no case. (The harness is libtest-mimic's, `harness = false`.)

use gpu_trust_model::isolation::{Key, Mechanism};
use gpu_trust_model::report::{AuditReport, Finding};
use gpu_trust_policy::Date;
use gpu_trust_rules::{audit, registry, AuditInput, AuditOptions};
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn today() -> Date {
    Date::new(2026, 6, 1).unwrap()
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Whether a case's findings of the rule must be there or must not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Violating,
    Clean,
}

/// One fixture case of a rule: `violating`, `clean-mig`, ...
#[derive(Debug, Clone, PartialEq, Eq)]
struct Case {
    code: String,
    /// The file's name without `.yaml`.
    name: String,
    kind: Kind,
}

impl Case {
    /// The snapshot of a violating case: `<code>_fixture`, or `<code>_fixture_<what>`.
    fn snapshot(&self) -> String {
        match self.name.split_once('-') {
            None => format!("{}_fixture", self.code),
            Some((_, what)) => format!("{}_fixture_{}", self.code, what.replace('-', "_")),
        }
    }
}

/// The cases in a rule's folder, in name order. Any file that is neither a case nor the policy of one
/// is an error, so a misnamed fixture is never silently skipped.
fn cases(code: &str, dir: &Path) -> Result<Vec<Case>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("{code}: no fixtures ({}: {e})", dir.display()))?;
    let mut names = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let file = entry.file_name().to_string_lossy().into_owned();
        names.insert(file);
    }
    let mut out = Vec::new();
    for file in &names {
        if let Some(case) = file.strip_suffix(".policy.yaml") {
            if !names.contains(&format!("{case}.yaml")) {
                return Err(format!("{code}: {file} is the policy of no case"));
            }
            continue;
        }
        let Some(name) = file.strip_suffix(".yaml") else {
            return Err(format!("{code}: {file} is not a fixture (<case>.yaml)"));
        };
        let kind = match name.split_once('-').map_or(name, |(k, _)| k) {
            "violating" => Kind::Violating,
            "clean" => Kind::Clean,
            _ => {
                return Err(format!(
                    "{code}: {file} is neither violating[-<what>].yaml nor clean[-<what>].yaml"
                ))
            }
        };
        out.push(Case {
            code: code.to_string(),
            name: name.to_string(),
            kind,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    for (kind, word) in [(Kind::Violating, "violating"), (Kind::Clean, "clean")] {
        if !out.iter().any(|c| c.kind == kind) {
            return Err(format!("{code}: no {word} case ({word}.yaml)"));
        }
    }
    Ok(out)
}

fn load(case: &Case) -> AuditReport {
    let code = &case.code;
    let dir = fixtures_dir().join(code);
    let file = format!("tests/fixtures/{code}/{}.yaml", case.name);
    let text = std::fs::read_to_string(dir.join(format!("{}.yaml", case.name)))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let ingested = gpu_trust_ingest::ingest_text(&text, &file);
    let errors: Vec<String> = ingested
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{file}: {errors:?}");
    let policy_name = format!("tests/fixtures/{code}/{}.policy.yaml", case.name);
    let policy_path = dir.join(format!("{}.policy.yaml", case.name));
    let policy = match std::fs::read_to_string(&policy_path) {
        Ok(text) => gpu_trust_policy::parse(&text, &policy_name)
            .unwrap_or_else(|e| panic!("{policy_name}: {e:?}")),
        Err(_) => gpu_trust_policy::Policy::default(),
    };
    let tenancy = policy.resolve(&ingested.fleet.namespaces);
    let options = AuditOptions::new(today());
    audit(&AuditInput {
        fleet: &ingested.fleet,
        tenancy: &tenancy,
        options: &options,
    })
}

fn of_rule<'a>(r: &'a AuditReport, code: &str) -> Vec<&'a Finding> {
    r.findings.iter().filter(|f| f.rule == code).collect()
}

fn check(case: &Case) {
    let code = &case.code;
    let report = load(case);
    let found = of_rule(&report, code);
    match case.kind {
        Kind::Violating => {
            assert!(
                !found.is_empty(),
                "{code}: {}.yaml has no finding of the rule",
                case.name
            );
            insta::assert_snapshot!(
                case.snapshot(),
                serde_json::to_string_pretty(&found).unwrap()
            );
        }
        Kind::Clean => assert!(
            found.is_empty(),
            "{code}: {}.yaml has findings of the rule: {}",
            case.name,
            serde_json::to_string_pretty(&found).unwrap()
        ),
    }
}

/// The trials: for every registered rule, the check of its folder and one trial per case; then the
/// checks of the harness itself.
fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for rule in registry() {
        let code = rule.code;
        let prefix = code.to_ascii_lowercase();
        let found = cases(code, &fixtures_dir().join(code));
        let complete = match &found {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        };
        trials.push(Trial::test(format!("{prefix}::cases"), move || {
            complete.map_err(Failed::from)
        }));
        for case in found.unwrap_or_default() {
            trials.push(Trial::test(format!("{prefix}::{}", case.name), move || {
                check(&case);
                Ok(())
            }));
        }
    }
    trials.push(Trial::test("every_rule_folder_belongs_to_a_rule", || {
        every_rule_folder_belongs_to_a_rule();
        Ok(())
    }));
    trials.push(Trial::test("every_mechanism_has_a_fixture", || {
        every_mechanism_has_a_fixture().map_err(Failed::from)
    }));
    trials.push(Trial::test(
        "every_fractional_row_has_a_gt105_case_a_readme_line_and_a_doc_mention",
        || every_fractional_row_is_documented_and_tested().map_err(Failed::from),
    ));
    trials.push(Trial::test("cases_are_found_by_their_file_names", || {
        cases_are_found_by_their_file_names();
        Ok(())
    }));
    trials
}

fn main() {
    let args = Arguments::from_args();
    libtest_mimic::run(&args, trials()).exit();
}

/// A folder named like a rule code belongs to a registered rule: fixtures of a rule that was renamed
/// or never registered would otherwise never run.
fn every_rule_folder_belongs_to_a_rule() {
    let codes: BTreeSet<&str> = registry().iter().map(|r| r.code).collect();
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let code_like = name.len() == 5
            && name.to_ascii_uppercase().starts_with("GT")
            && name[2..].bytes().all(|b| b.is_ascii_digit());
        if code_like {
            assert!(
                codes.contains(name.as_str()),
                "tests/fixtures/{name}: no rule has this code"
            );
        }
    }
}

/// Every mechanism of the isolation table that the audit can infer is the mechanism of a workload in
/// some fixture (a rule's case, or a platform's fixture): the mechanism its request names, or the one
/// it gets on a GPU node of the file. A new mechanism fails here until a fixture puts a workload under
/// it. A mechanism that needs what Kubernetes does not show (`Mechanism::requires`) is never inferred,
/// only listed by `gpu-trust mechanisms`.
fn every_mechanism_has_a_fixture() -> Result<(), String> {
    let mut files: Vec<PathBuf> = Vec::new();
    for rule in registry() {
        let dir = fixtures_dir().join(rule.code);
        for case in cases(rule.code, &dir).unwrap_or_default() {
            files.push(dir.join(format!("{}.yaml", case.name)));
        }
    }
    let platforms = fixtures_dir().join("platforms");
    for entry in std::fs::read_dir(&platforms).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "yaml") {
            files.push(path);
        }
    }
    let mut found: BTreeSet<Mechanism> = BTreeSet::new();
    for path in &files {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let fleet = gpu_trust_ingest::ingest_text(&text, &path.to_string_lossy()).fleet;
        for w in fleet.workloads.iter().filter(|w| w.requests_gpu()) {
            found.extend(Mechanism::named_by(w).into_iter().map(|(m, _)| m));
            for (_, node) in fleet.gpu_nodes() {
                found.extend(node.gpu.iter().filter_map(|g| Mechanism::of_workload(w, g)));
            }
        }
    }
    let missing: Vec<&str> = Mechanism::ALL
        .iter()
        .filter(|m| m.requires().is_none() && !found.contains(m))
        .map(|m| m.as_str())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "no fixture under tests/fixtures/ puts a workload under: {}",
            missing.join(", ")
        ))
    }
}

/// The recipe of a fractional scheduler or vGPU (CONTRIBUTING.md, "Adding a sharing mechanism") is
/// its row: every row that inherits a device mechanism puts a workload of some violating case of
/// GT105 under it, GT105's doc names it, and a line of README.md names what ingest reads of it (each
/// annotation key, scheduler and label of its fraction; its vGPU's count, mode and record).
fn every_fractional_row_is_documented_and_tested() -> Result<(), String> {
    let dir = fixtures_dir().join("GT105");
    let mut found: BTreeSet<Mechanism> = BTreeSet::new();
    for case in cases("GT105", &dir)?
        .iter()
        .filter(|c| c.kind == Kind::Violating)
    {
        let path = dir.join(format!("{}.yaml", case.name));
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let fleet = gpu_trust_ingest::ingest_text(&text, &path.to_string_lossy()).fleet;
        for w in &fleet.workloads {
            found.extend(Mechanism::named_by(w).into_iter().map(|(m, _)| m));
        }
    }
    let doc = registry()
        .iter()
        .find(|r| r.code == "GT105")
        .map_or("", |r| r.raw_doc);
    let readme = std::fs::read_to_string(fixtures_dir().join("../../../../README.md"))
        .map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    for m in Mechanism::ALL.into_iter().filter(|m| m.is_fraction()) {
        if !found.contains(&m) {
            problems.push(format!(
                "{m}: no violating case of GT105 puts a workload under it"
            ));
        }
        if !doc.contains(m.as_str()) {
            problems.push(format!("{m}: GT105's doc does not name it"));
        }
        let r = m.row().request;
        let mut names: Vec<String> = r
            .schedulers
            .iter()
            .chain(r.labels)
            .map(|n| n.to_string())
            .collect();
        if let Some(f) = r.fraction {
            let keys = [f.fraction, f.devices].into_iter();
            let keys = keys.chain(f.memory.iter().map(|(k, _)| *k));
            let keys = keys
                .chain(f.mps.iter().map(|(k, _)| *k))
                .chain(f.recorded.iter().copied());
            names.extend(keys.map(|k| match k {
                Key::Pod(k) => k.to_string(),
                Key::Container(prefix, suffix) => format!("{prefix}<c>{suffix}"),
            }));
        }
        if let Some(v) = r.vgpu {
            names.extend([v.count, v.mode, v.allocated].map(str::to_string));
        }
        let line = |n: &String| format!("`{n}`");
        if !names.is_empty()
            && !readme
                .lines()
                .any(|l| names.iter().all(|n| l.contains(&line(n))))
        {
            problems.push(format!("{m}: no line of README.md names all of {names:?}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The harness finds a rule's cases by reading its folder: a case is found by its file name, extra
/// cases and their snapshots included, and a folder that lacks a clean or a violating case, or holds
/// a file that is no case, is refused.
fn cases_are_found_by_their_file_names() {
    let tmp = std::env::temp_dir().join(format!("gpu-trust-fixtures-{}", std::process::id()));
    let dir = tmp.join("GT999");
    std::fs::create_dir_all(&dir).unwrap();
    let touch = |name: &str| std::fs::write(dir.join(name), "").unwrap();
    touch("violating.yaml");
    touch("violating.policy.yaml");
    touch("violating-mig-gpu.yaml");
    assert_eq!(
        cases("GT999", &dir).unwrap_err(),
        "GT999: no clean case (clean.yaml)"
    );
    touch("clean.yaml");
    let found = cases("GT999", &dir).unwrap();
    let names: Vec<(&str, Kind, String)> = found
        .iter()
        .map(|c| (c.name.as_str(), c.kind, c.snapshot()))
        .collect();
    assert_eq!(
        names,
        [
            ("clean", Kind::Clean, "GT999_fixture".to_string()),
            ("violating", Kind::Violating, "GT999_fixture".to_string()),
            (
                "violating-mig-gpu",
                Kind::Violating,
                "GT999_fixture_mig_gpu".to_string()
            ),
        ]
    );
    touch("clean.json");
    assert!(cases("GT999", &dir).unwrap_err().contains("clean.json"));
    std::fs::remove_file(dir.join("clean.json")).unwrap();
    touch("other.policy.yaml");
    assert!(cases("GT999", &dir)
        .unwrap_err()
        .contains("other.policy.yaml"));
    std::fs::remove_dir_all(&tmp).unwrap();
}
