//! `gpu-trust plan`: the plan the planner made ([`gpu_trust_planner::plan::Plan`]); one module per
//! format, and the lines that name the replicas it could not place.

pub mod json;
pub mod table;

use crate::text::e;
use gpu_trust_planner::plan::Plan;

/// Unplaced replicas of one workload for one reason, as one line.
struct UnplacedGroup<'p> {
    workload: &'p str,
    first: u32,
    last: u32,
    count: usize,
    reason: &'p str,
}

impl std::fmt::Display for UnplacedGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.count == 1 {
            write!(f, "{}#{}", e(self.workload), self.first)
        } else {
            write!(
                f,
                "{}#{}-#{} ({} replicas)",
                e(self.workload),
                self.first,
                self.last,
                self.count
            )
        }
    }
}

/// Unplaced replicas grouped by workload and reason, in plan order: 100,000 replicas that fail
/// for one reason are one line, not 100,000.
fn unplaced_groups(plan: &Plan) -> Vec<UnplacedGroup<'_>> {
    let mut groups: Vec<UnplacedGroup<'_>> = Vec::new();
    for u in &plan.unplaced {
        match groups.last_mut() {
            Some(g) if g.workload == u.workload && g.reason == u.reason => {
                g.first = g.first.min(u.replica);
                g.last = g.last.max(u.replica);
                g.count += 1;
            }
            _ => groups.push(UnplacedGroup {
                workload: &u.workload,
                first: u.replica,
                last: u.replica,
                count: 1,
                reason: &u.reason,
            }),
        }
    }
    groups
}

/// Lines of unplaced replicas shown at most; JSON lists every replica.
pub const MAX_UNPLACED_LINES: usize = 50;

/// The replicas not placed, one line per workload and reason (at most [`MAX_UNPLACED_LINES`], then
/// how many more), each line after `prefix`. Text from the plan is escaped for the terminal.
pub fn unplaced_lines(plan: &Plan, prefix: &str) -> Vec<String> {
    let groups = unplaced_groups(plan);
    let mut lines: Vec<String> = groups
        .iter()
        .take(MAX_UNPLACED_LINES)
        .map(|g| format!("{prefix}{g} not placed: {}", e(g.reason)))
        .collect();
    if groups.len() > MAX_UNPLACED_LINES {
        lines.push(format!(
            "{prefix}... and {} more (`--format json` lists every replica)",
            groups.len() - MAX_UNPLACED_LINES
        ));
    }
    lines
}
