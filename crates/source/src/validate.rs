//! The one way a configuration file is read and checked: the policy file, the plan file and the
//! advisory data all go through it.
//!
//! Reading ([`ValidationContext::read`]) types the document with serde: unknown keys
//! (`#[serde(deny_unknown_fields)]`), values of the wrong type and broken [`Limits`] stop there, with
//! the one located diagnostic the reader gives. After that, the file's own checks report into the
//! context, each error at the value it is about, and the context hands back either the checked value
//! or every error ([`ValidationContext::finish`]).

use crate::{parse_document, spanned_location, Limits};
use gpu_trust_model::{Code, Diagnostic, Location, Version};
use serde::de::DeserializeOwned;
use serde_saphyr::Spanned;

/// The diagnostics of one file being checked, and the helpers that locate them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationContext {
    file: String,
    /// The code of the file's own checks (`invalid-policy`, `invalid-plan-file`...).
    code: Code,
    diagnostics: Vec<Diagnostic>,
}

impl ValidationContext {
    /// A context for checking `file` (the name diagnostics give), whose checks report `code`.
    pub fn new(file: &str, code: Code) -> ValidationContext {
        ValidationContext {
            file: file.to_string(),
            code,
            diagnostics: Vec::new(),
        }
    }

    /// Reads `text` (from `file`) into `T`, and a context to check it with, whose checks report
    /// `code`. Syntax errors, unknown keys, values of the wrong type and input over `limits` are the
    /// `Err`, located, with the reader's own codes.
    pub fn read<T: DeserializeOwned>(
        text: &str,
        file: &str,
        limits: &Limits,
        code: Code,
    ) -> Result<(T, ValidationContext), Diagnostic> {
        let value = parse_document(text, file, limits)?;
        Ok((value, ValidationContext::new(file, code)))
    }

    /// The file's name, as diagnostics give it.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Where a value read as `Spanned` stands in the file.
    pub fn loc<T>(&self, value: &Spanned<T>) -> Location {
        spanned_location(&self.file, value)
    }

    /// The file as a whole (line and column 0), for an error about no one value.
    pub fn whole_file(&self) -> Location {
        Location::new(self.file.clone(), 0, 0)
    }

    /// Reports an error.
    pub fn error(&mut self, location: Location, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::error(self.code, location, message));
    }

    /// Reports an error at a value.
    pub fn error_at<T>(&mut self, value: &Spanned<T>, message: impl Into<String>) {
        let location = self.loc(value);
        self.error(location, message);
    }

    /// Checks that a field holding a fixed word (`apiVersion`, `kind`) holds `expected` when given:
    /// "`field` must be `expected`, not `value`".
    pub fn expect_word(&mut self, value: Option<&Spanned<String>>, field: &str, expected: &str) {
        if let Some(v) = value {
            if v.value != expected {
                self.error_at(
                    v,
                    format!("{field} must be `{expected}`, not `{}`", v.value),
                );
            }
        }
    }

    /// A dotted version, or an error at the value naming `field`; `None` when absent or not a version.
    pub fn version(&mut self, value: Option<&Spanned<String>>, field: &str) -> Option<Version> {
        let value = value?;
        let version = Version::parse(&value.value);
        if version.is_none() {
            self.error_at(
                value,
                format!("{field} `{}` is not a version (e.g. 1.17.8)", value.value),
            );
        }
        version
    }

    /// How many errors were reported so far (to tell whether one part of a document added any).
    pub fn error_count(&self) -> usize {
        self.diagnostics.len()
    }

    /// Whether an error has been reported.
    pub fn has_errors(&self) -> bool {
        !self.diagnostics.is_empty()
    }

    /// The checked value, or every error sorted by position (file, line, column, message), each once.
    pub fn finish<T>(self, value: T) -> Result<T, Vec<Diagnostic>> {
        let mut errors = self.diagnostics;
        if errors.is_empty() {
            return Ok(value);
        }
        errors.sort();
        errors.dedup();
        Err(errors)
    }

    /// The checked value, or every error in the order the checks reported them.
    pub fn finish_in_order<T>(self, value: T) -> Result<T, Vec<Diagnostic>> {
        if self.diagnostics.is_empty() {
            Ok(value)
        } else {
            Err(self.diagnostics)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Raw {
        api_version: Option<Spanned<String>>,
        version: Option<Spanned<String>>,
        #[serde(default)]
        count: u32,
    }

    fn read(text: &str) -> Result<(Raw, ValidationContext), Diagnostic> {
        ValidationContext::read(text, "f.yaml", &Limits::default(), Code::InvalidPolicy)
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_located_read_errors() {
        let e = read("apiVersion: v1\ncolour: red\n").unwrap_err();
        assert_eq!((e.location.line, e.location.column), (2, 1), "{e}");
        assert!(e.message.contains("colour"), "{e}");
        let e = read("count: many\n").unwrap_err();
        assert_eq!(e.location.file, "f.yaml");
        assert_eq!(e.location.line, 1, "{e}");
    }

    #[test]
    fn checks_report_at_the_value_and_finish_sorts() {
        let (raw, mut cx) = read("apiVersion: v0\nversion: next\n").unwrap();
        assert_eq!(raw.count, 0);
        assert_eq!(cx.version(raw.version.as_ref(), "version"), None);
        cx.expect_word(raw.api_version.as_ref(), "apiVersion", "v1");
        cx.expect_word(raw.api_version.as_ref(), "apiVersion", "v1");
        cx.error(cx.whole_file(), "too many");
        assert!(cx.has_errors());
        let in_order: Vec<String> = cx
            .clone()
            .finish_in_order(())
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(in_order.len(), 4);
        assert!(in_order[0].starts_with("f.yaml:2:10:"), "{in_order:?}");
        let sorted: Vec<String> = cx
            .finish(())
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            sorted,
            [
                "f.yaml: error[invalid-policy]: too many",
                "f.yaml:1:13: error[invalid-policy]: apiVersion must be `v1`, not `v0`",
                "f.yaml:2:10: error[invalid-policy]: version `next` is not a version (e.g. 1.17.8)",
            ]
        );
    }

    #[test]
    fn no_error_gives_the_value() {
        let (raw, mut cx) = read("version: 1.17.8\n").unwrap();
        assert_eq!(
            cx.version(raw.version.as_ref(), "version"),
            Version::parse("1.17.8")
        );
        assert_eq!(cx.finish(7), Ok(7));
    }
}
