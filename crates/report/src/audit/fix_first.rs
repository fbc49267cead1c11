//! What the table, Markdown and HTML open with after the verdict: what to fix first (the report's
//! `fixFirst` and `actions`), as sentences each format sets in its own way; and the files
//! `gpu-trust audit --emit-fixes DIR` writes.

use crate::AuditReport;
use gpu_trust_model::Severity;
use gpu_trust_rules::report::{Action, FixFirst, Search};
use std::path::{Component, Path, PathBuf};

/// The block in words: a head sentence, each action, what remains, what no change closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub head: String,
    pub actions: Vec<ActionText>,
    /// After all the actions, audited together.
    pub after: Option<String>,
    /// The open findings at or above the threshold no change closes.
    pub unclosed: Option<String>,
}

/// One action in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionText {
    /// `a1`.
    pub id: String,
    pub summary: String,
    /// `closes GT501 (globex, initech), GT301 (initech)`.
    pub closes: String,
    /// Whether the audit read its effect from the changed objects, or assumed it.
    pub proof: String,
    pub commands: Vec<String>,
    pub notes: Vec<String>,
}

/// The block of `report`, when the audit looked for actions.
pub fn block(report: &AuditReport) -> Option<Block> {
    let ff = report.fix_first.as_ref()?;
    let actions = report.actions.as_deref().unwrap_or_default();
    let t = ff.threshold.as_str();
    let open = plural(ff.open, "open finding", "open findings");
    let head = if ff.open == 0 {
        format!("Nothing to fix first: no open finding at or above {t}.")
    } else if let Some(why) = &ff.not_tried {
        format!("{open} at or above {t}; no change was tried: {why}.")
    } else if ff.tried == 0 {
        format!(
            "{open} at or above {t}; gpu-trust found no change it can write out and prove for them: each finding's fix says what to do."
        )
    } else if actions.is_empty() {
        format!(
            "{open} at or above {t}; none of the {} gpu-trust tried closes one without opening another: each finding's fix says what to do.{}",
            plural(ff.tried, "change", "changes"),
            untried(ff)
        )
    } else {
        let closed = ff.open - ff.unclosed.len();
        format!(
            "{} {closed} of the {open} at or above {t}; {}, among {} tried, each by auditing the input again with it.{}",
            plural(actions.len(), "change closes", "changes close"),
            match ff.search {
                Search::Exact => "the fewest that do (every set tried)",
                Search::Greedy => "a greedy choice (each the change that closes the most of what is left; not always the fewest)",
            },
            plural(ff.tried, "change", "changes"),
            untried(ff)
        )
    };
    let after = (!actions.is_empty()).then(|| {
        let left: Vec<String> = Severity::ALL
            .iter()
            .filter(|s| **s >= ff.threshold || ff.remaining.get(**s) > 0)
            .map(|s| format!("{} {}", ff.remaining.get(*s), s.as_str()))
            .collect();
        format!(
            "After {} (audited together): {} left.",
            if actions.len() == 1 {
                "this change".to_string()
            } else {
                format!("these {} changes", actions.len())
            },
            left.join(", ")
        )
    });
    let unclosed =
        (!ff.unclosed.is_empty() && ff.not_tried.is_none() && ff.open > 0 && !actions.is_empty())
            .then(|| {
                format!(
                    "No change tried closes {}: {}.{}",
                    if ff.unclosed.len() == 1 {
                        "this one"
                    } else {
                        "these"
                    },
                    findings(report, &ff.unclosed),
                    blocked(report, ff)
                )
            });
    Some(Block {
        head,
        actions: actions.iter().map(|a| action(report, a)).collect(),
        after,
        unclosed,
    })
}

/// The changes that would close an unclosed finding, and what each opens: ` Move ... would close
/// GT207 (perf-eval, umbrella) but opens GT207 (globex, umbrella).`, the first [`BLOCKED_SHOWN`].
fn blocked(report: &AuditReport, ff: &FixFirst) -> String {
    let mut out = String::new();
    for b in ff.blocked.iter().take(BLOCKED_SHOWN) {
        let opens: Vec<String> = b
            .opens
            .iter()
            .map(|o| match o.tenants.as_slice() {
                [] => o.rule.clone(),
                t => format!("{} ({})", o.rule, t.join(", ")),
            })
            .collect();
        out.push_str(&format!(
            " {} would close {} but opens {}.",
            b.summary.trim_end_matches('.'),
            findings(report, &b.closes),
            opens.join(", ")
        ));
    }
    if ff.blocked.len() > BLOCKED_SHOWN {
        out.push_str(&format!(
            " {} more changes would too, each opening another (the JSON report's fixFirst.blocked).",
            ff.blocked.len() - BLOCKED_SHOWN
        ));
    }
    out
}

/// Changes named in the sentence on what no change closes.
const BLOCKED_SHOWN: usize = 3;

fn untried(ff: &FixFirst) -> String {
    if ff.untried == 0 {
        return String::new();
    }
    format!(
        " {} more {} not tried: each would read the input again.",
        ff.untried,
        if ff.untried == 1 { "was" } else { "were" }
    )
}

fn action(report: &AuditReport, a: &Action) -> ActionText {
    ActionText {
        id: a.id.clone(),
        summary: a.summary.clone(),
        closes: format!("closes {}", findings(report, &a.closes)),
        proof: if a.verified {
            "verified: the input audited again with this change no longer has them".to_string()
        } else {
            "not verified: its effect comes from controllers, assumed by the audit of this change"
                .to_string()
        },
        commands: a.commands.clone(),
        notes: a.notes.clone(),
    }
}

/// Findings by stable key, as their rule and tenants: `GT207 (globex, initech)`; by rule and key
/// where that would name two findings alike (`GT503 measure/speech`).
fn findings(report: &AuditReport, keys: &[String]) -> String {
    let by_key = |k: &String| k.replacen(':', " ", 1);
    let named: Vec<String> = keys
        .iter()
        .map(|k| match report.findings.iter().find(|f| f.id() == *k) {
            Some(f) if !f.tenants.is_empty() => format!("{} ({})", f.rule, f.tenants.join(", ")),
            Some(f) => f.rule.clone(),
            // A finding the rendered report leaves out (below --min-severity): its rule and key.
            None => by_key(k),
        })
        .collect();
    let alike = |n: &String| named.iter().filter(|m| *m == n).count() > 1;
    let named: Vec<String> = named
        .iter()
        .zip(keys)
        .map(|(n, k)| if alike(n) { by_key(k) } else { n.clone() })
        .collect();
    named.join(", ")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    crate::text::plural(n, one, many)
}

/// The files `--emit-fixes` writes, relative to its folder: each action's patch (`a1.json`), and
/// `patched/` with the input files the actions change, at their paths as given (a path's root and
/// `..` left out; standard input as `stdin_name`).
pub fn emitted(
    report: &AuditReport,
    patched: &[(String, String)],
    stdin_name: &str,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for a in report.actions.iter().flatten() {
        if let Some(p) = &a.patch {
            // A JSON value of strings, numbers and maps always serialises.
            let text = crate::text::pretty_json(p).unwrap_or_default();
            out.push((PathBuf::from(format!("{}.json", a.id)), text));
        }
    }
    for (name, text) in patched {
        let name = if name == "-" { stdin_name } else { name };
        let relative: PathBuf = Path::new(name)
            .components()
            .filter_map(|c| match c {
                Component::Normal(p) => Some(p),
                _ => None,
            })
            .collect();
        out.push((Path::new("patched").join(relative), text.clone()));
    }
    out
}
