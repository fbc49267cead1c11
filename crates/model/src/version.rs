//! Dotted numeric versions (drivers `550.127.05`, toolkit `v1.17.4`, GPU Operator `v24.9.2`).
//!
//! Comparison is numeric per component, missing components count as zero, and a driver's branch is its
//! first component (R550, R570...), which is how NVIDIA publishes fixed versions per branch.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// A version as numeric components, plus the text it was read from.
#[derive(Debug, Clone, Eq, Serialize, Deserialize)]
pub struct Version {
    pub parts: Vec<u64>,
    pub text: String,
}

impl Version {
    /// Parses `1.17.4`, `v1.17.4`, `550.127.05`, `24.9.2-ubi8` (the suffix after `-` or `+` is ignored).
    /// Returns `None` when the text has no leading numeric component.
    pub fn parse(text: &str) -> Option<Version> {
        let trimmed = text.trim();
        let core = trimmed.strip_prefix(['v', 'V']).unwrap_or(trimmed);
        let core = core.split(['-', '+', ' ']).next().unwrap_or("");
        let mut parts = Vec::new();
        for piece in core.split('.') {
            if piece.is_empty() || piece.len() > 18 || !piece.bytes().all(|b| b.is_ascii_digit()) {
                break;
            }
            parts.push(piece.parse().ok()?);
        }
        if parts.is_empty() {
            return None;
        }
        Some(Version {
            parts,
            text: trimmed.to_string(),
        })
    }

    /// The first component: the driver branch (`550` for `550.127.05`).
    pub fn major(&self) -> u64 {
        self.parts.first().copied().unwrap_or(0)
    }

    fn part(&self, i: usize) -> u64 {
        self.parts.get(i).copied().unwrap_or(0)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.parts.len().max(other.parts.len());
        for i in 0..n {
            match self.part(i).cmp(&other.part(i)) {
                Ordering::Equal => continue,
                o => return o,
            }
        }
        Ordering::Equal
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).expect(s)
    }

    #[test]
    fn compares_numerically_per_component() {
        assert!(v("550.127.05") < v("550.127.8"));
        assert!(v("1.17.10") > v("1.17.4"));
        assert_eq!(v("v1.17.4"), v("1.17.4"));
        assert_eq!(v("24.9"), v("24.9.0"));
        assert_eq!(v("v24.9.2-ubi8").parts, vec![24, 9, 2]);
        assert_eq!(v("535.216.01").major(), 535);
    }

    #[test]
    fn rejects_non_versions() {
        assert!(Version::parse("latest").is_none());
        assert!(Version::parse("").is_none());
    }
}
