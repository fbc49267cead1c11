//! Memory quantities (`60GiB`, `80Gi`, `500Mi`, `2G`, `1.5Gi`) read into MiB.

use thiserror::Error;

/// Memory unit suffixes and their size in bytes.
///
/// Sources: the Kubernetes resource quantity format (`k8s.io/apimachinery/pkg/api/resource`, binary
/// suffixes Ki Mi Gi Ti Pi Ei and decimal suffixes k M G T P E), and the IEC 80000-13 binary prefixes
/// written with a byte sign (KiB, MiB, GiB...) as `nvidia-smi` and vendor data sheets print them.
/// `KB`/`MB`/`GB`/`TB` are SI decimal units (a "80GB" GPU has 80 * 10^9 bytes, not 80 GiB).
const UNITS: &[(&str, u128)] = &[
    ("Ki", 1 << 10),
    ("Mi", 1 << 20),
    ("Gi", 1 << 30),
    ("Ti", 1 << 40),
    ("Pi", 1 << 50),
    ("Ei", 1 << 60),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("PiB", 1 << 50),
    ("k", 1_000),
    ("K", 1_000),
    ("M", 1_000_000),
    ("G", 1_000_000_000),
    ("T", 1_000_000_000_000),
    ("P", 1_000_000_000_000_000),
    ("E", 1_000_000_000_000_000_000),
    ("kB", 1_000),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("PB", 1_000_000_000_000_000),
];

/// Why a text is not a memory quantity. Each variant holds the text as written (trimmed).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MemoryError {
    #[error(
        "`{0}` is not a memory size: expected a number and a unit, e.g. 60GiB, 80Gi, 500Mi or 2G"
    )]
    NoNumber(String),
    #[error("`{0}` has no unit: write e.g. {0}Mi or {0}Gi (a bare number is ambiguous)")]
    NoUnit(String),
    #[error("`{text}`: unknown unit `{unit}` (known: {})", known_units())]
    UnknownUnit { text: String, unit: String },
    #[error("`{0}` is not a number with a unit")]
    NotANumber(String),
    #[error("`{0}` is too large")]
    TooLarge(String),
    #[error("`{0}` is zero: a memory size must be positive")]
    Zero(String),
}

/// The unit suffixes [`parse_memory_mib`] accepts, in the order of [`UNITS`].
fn known_units() -> String {
    let known: Vec<&str> = UNITS.iter().map(|(u, _)| *u).collect();
    known.join(", ")
}

const MIB: u128 = 1 << 20;
/// More digits than this cannot be a memory size anyone means, and would overflow the arithmetic.
const MAX_DIGITS: usize = 24;

/// Reads a memory quantity into MiB, rounding up (a peak of `2G` needs 1908 MiB, not 1907).
///
/// A unit is required: a bare number is refused rather than guessed (Kubernetes reads it as bytes,
/// people often mean MiB or GiB). Zero is refused too.
///
/// ```
/// use gpu_trust_policy::parse_memory_mib;
/// assert_eq!(parse_memory_mib("60GiB"), Ok(61_440));
/// assert_eq!(parse_memory_mib("80Gi"), Ok(81_920));
/// assert_eq!(parse_memory_mib("500Mi"), Ok(500));
/// assert_eq!(parse_memory_mib("2G"), Ok(1_908));
/// assert!(parse_memory_mib("4096").is_err());
/// ```
pub fn parse_memory_mib(text: &str) -> Result<u64, MemoryError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim_start();
    if number.is_empty() {
        return Err(MemoryError::NoNumber(text.to_string()));
    }
    if unit.is_empty() {
        return Err(MemoryError::NoUnit(text.to_string()));
    }
    let Some(&(_, multiplier)) = UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(MemoryError::UnknownUnit {
            text: text.to_string(),
            unit: unit.to_string(),
        });
    };
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(MemoryError::NotANumber(text.to_string()));
    }
    if whole.len() + fraction.len() > MAX_DIGITS {
        return Err(MemoryError::TooLarge(text.to_string()));
    }
    // number = mantissa / 10^scale, all in integers so that no rounding happens before the end.
    let mantissa = format!("{whole}{fraction}")
        .bytes()
        .fold(0u128, |acc, b| acc * 10 + u128::from(b - b'0'));
    let scale = 10u128.pow(u32::try_from(fraction.len()).unwrap_or(0));
    let bytes_times_scale = mantissa
        .checked_mul(multiplier)
        .ok_or_else(|| MemoryError::TooLarge(text.to_string()))?;
    let mib = bytes_times_scale.div_ceil(scale * MIB);
    if mib == 0 {
        return Err(MemoryError::Zero(text.to_string()));
    }
    u64::try_from(mib).map_err(|_| MemoryError::TooLarge(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn binary_and_decimal_units() {
        assert_eq!(parse_memory_mib("60GiB"), Ok(61_440));
        assert_eq!(parse_memory_mib("80Gi"), Ok(81_920));
        assert_eq!(parse_memory_mib("500Mi"), Ok(500));
        assert_eq!(parse_memory_mib("500MiB"), Ok(500));
        assert_eq!(parse_memory_mib("1Ti"), Ok(1_048_576));
        assert_eq!(parse_memory_mib("2048Ki"), Ok(2));
        // 2 * 10^9 bytes = 1907.35 MiB, rounded up.
        assert_eq!(parse_memory_mib("2G"), Ok(1_908));
        assert_eq!(parse_memory_mib("80GB"), Ok(76_294));
        assert_eq!(parse_memory_mib("1500M"), Ok(1_431));
    }

    #[test]
    fn fractions_and_spaces() {
        assert_eq!(parse_memory_mib("1.5Gi"), Ok(1_536));
        assert_eq!(parse_memory_mib("0.5GiB"), Ok(512));
        assert_eq!(parse_memory_mib(".5Gi"), Ok(512));
        assert_eq!(parse_memory_mib(" 10 GiB "), Ok(10_240));
        // One byte more than 1 MiB rounds up.
        assert_eq!(parse_memory_mib("1025Ki"), Ok(2));
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for (bad, why) in [
            ("4096", "no unit"),
            ("60", "no unit"),
            ("GiB", "not a memory size"),
            ("", "not a memory size"),
            ("60Gb", "unknown unit"),
            ("60 gigabytes", "unknown unit"),
            ("-1Gi", "not a memory size"),
            ("1.2.3Gi", "not a number"),
            (".Gi", "not a number"),
            ("0Gi", "zero"),
            ("0.0Mi", "zero"),
            ("99999999999999999999999Ei", "too large"),
            ("9999999999999Ei", "too large"),
        ] {
            let err = parse_memory_mib(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = parse_memory_mib(&s);
        }

        #[test]
        fn gib_is_1024_mib(n in 1u64..1_000_000) {
            prop_assert_eq!(parse_memory_mib(&format!("{n}Gi")), Ok(n * 1024));
            prop_assert_eq!(parse_memory_mib(&format!("{n}GiB")), Ok(n * 1024));
        }
    }
}
