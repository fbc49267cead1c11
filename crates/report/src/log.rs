//! `gpu-trust serve`'s log lines: text (`time level msg key=value...`, values quoted when they
//! hold spaces or quotes, control characters escaped) or JSON lines (one object per line, `time`,
//! `level`, `msg` and the fields). The caller never passes a secret (a token): this only formats.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// How lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// `seconds` since the Unix epoch as RFC 3339 UTC with milliseconds.
pub fn rfc3339(seconds: f64) -> String {
    let total_ms = (seconds.max(0.0) * 1000.0) as u64;
    let (secs, ms) = (total_ms / 1000, total_ms % 1000);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Days to a civil date (Howard Hinnant's algorithm, http://howardhinnant.github.io/date_algorithms.html).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

fn text_value(v: &Value) -> String {
    let raw = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let plain = !raw.is_empty()
        && raw
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '=');
    if plain {
        raw
    } else {
        // A JSON string is a quoted, escaped text.
        Value::from(raw).to_string()
    }
}

/// One log line, without its line end.
pub fn line(
    format: Format,
    now_seconds: f64,
    level: &str,
    message: &str,
    fields: &[(&str, Value)],
) -> String {
    match format {
        Format::Json => {
            let mut m = Map::new();
            m.insert("time".to_string(), Value::from(rfc3339(now_seconds)));
            m.insert("level".to_string(), Value::from(level));
            m.insert("msg".to_string(), Value::from(message));
            for (k, v) in fields {
                m.insert((*k).to_string(), v.clone());
            }
            Value::Object(m).to_string()
        }
        Format::Text => {
            let mut out = format!(
                "{} level={level} msg={}",
                rfc3339(now_seconds),
                text_value(&Value::from(message))
            );
            for (k, v) in fields {
                let _ = write!(out, " {k}={}", text_value(v));
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_quoting() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_796_212_800.5), "2026-12-02T12:00:00.500Z");
        let l = line(
            Format::Text,
            0.0,
            "info",
            "audit done",
            &[("findings", Value::from(3)), ("path", Value::from("a b\n"))],
        );
        assert_eq!(
            l,
            "1970-01-01T00:00:00.000Z level=info msg=\"audit done\" findings=3 path=\"a b\\n\""
        );
        let j: Value = serde_json::from_str(&line(
            Format::Json,
            0.0,
            "warn",
            "x",
            &[("n", Value::from(1))],
        ))
        .expect("json");
        assert_eq!(j["level"], "warn");
        assert_eq!(j["n"], 1);
    }
}
