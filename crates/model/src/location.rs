//! Where things came from: every object in the model keeps the file, line and column it was read at,
//! and every diagnostic names them.

use crate::code::Code;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A position in an input file. Lines and columns are 1-based; `0` means unknown.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl Location {
    pub fn new(file: impl Into<String>, line: u32, column: u32) -> Self {
        Location {
            file: file.into(),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}", self.file),
            (l, 0) => write!(f, "{}:{l}", self.file),
            (l, c) => write!(f, "{}:{l}:{c}", self.file),
        }
    }
}

/// A Kubernetes object (or a policy entry) that a finding points at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ObjectRef {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub location: Location,
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// How bad a problem with the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticLevel {
    /// The document (or the whole input) could not be used: exit 2 unless `--skip-invalid`.
    Error,
    /// Something was read but looks wrong or was ignored; it does not change the exit code.
    Warning,
}

/// A problem with an input document, always with a location and the stable code of its kind
/// ([`Code`], documented in `docs/diagnostics.md`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    pub level: DiagnosticLevel,
    pub location: Location,
    pub message: String,
    /// Last, so that diagnostics sort by level, place and message as they always have.
    pub code: Code,
}

impl Diagnostic {
    pub fn error(code: Code, location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            level: DiagnosticLevel::Error,
            location,
            message: message.into(),
            code,
        }
    }

    pub fn warning(code: Code, location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            level: DiagnosticLevel::Warning,
            location,
            message: message.into(),
            code,
        }
    }

    pub fn is_error(&self) -> bool {
        self.level == DiagnosticLevel::Error
    }
}

impl DiagnosticLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticLevel::Error => "error",
            DiagnosticLevel::Warning => "warning",
        }
    }
}

/// `file:line:column: level[code]: message`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}[{}]: {}",
            self.location,
            self.level.as_str(),
            self.code,
            self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_prints_as_file_line_column() {
        assert_eq!(Location::new("a.yaml", 3, 7).to_string(), "a.yaml:3:7");
        assert_eq!(Location::new("a.yaml", 3, 0).to_string(), "a.yaml:3");
        assert_eq!(Location::new("-", 0, 0).to_string(), "-");
    }

    #[test]
    fn a_diagnostic_prints_its_code_beside_its_level() {
        let d = Diagnostic::warning(
            Code::MissingNamespace,
            Location::new("a.yaml", 3, 7),
            "no namespace",
        );
        assert_eq!(
            d.to_string(),
            "a.yaml:3:7: warning[missing-namespace]: no namespace"
        );
    }
}
