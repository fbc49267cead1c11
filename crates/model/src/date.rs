//! A calendar date (`YYYY-MM-DD`, proleptic Gregorian, UTC), enough for acceptance expiry and patch
//! windows without a date-time dependency.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

/// A calendar date between 0001-01-01 and 9999-12-31.
///
/// Dates order chronologically. They print and serialise as `YYYY-MM-DD`.
///
/// ```
/// use gpu_trust_model::date::Date;
/// let until: Date = "2027-06-30".parse().unwrap();
/// let today = Date::new(2027, 7, 1).unwrap();
/// assert!(until < today);
/// assert_eq!(today.days_since(until), 1);
/// assert!("2027-02-29".parse::<Date>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    // Field order gives chronological ordering for the derived `Ord`.
    year: u16,
    month: u8,
    day: u8,
}

/// Why a text is not a date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateError {
    text: String,
    reason: &'static str,
}

impl fmt::Display for DateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a date: {}", self.text, self.reason)
    }
}

impl std::error::Error for DateError {}

/// Days from 0000-03-01 (the civil calendar shifted to start in March) to 1970-01-01.
const EPOCH_SHIFT_DAYS: i64 = 719_468;
/// Days in a 400-year Gregorian cycle.
const DAYS_PER_ERA: i64 = 146_097;

impl Date {
    /// The date, if `year`/`month`/`day` name a real day between years 1 and 9999.
    pub fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        if !(1..=9999).contains(&year) || !(1..=12).contains(&month) {
            return None;
        }
        if day == 0 || day > days_in_month(year, month) {
            return None;
        }
        Some(Date { year, month, day })
    }

    /// Reads exactly `YYYY-MM-DD` (four-digit year, two-digit month and day).
    pub fn parse(text: &str) -> Result<Date, DateError> {
        let err = |reason| DateError {
            text: text.to_string(),
            reason,
        };
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return Err(err("expected YYYY-MM-DD"));
        }
        let digits = |range: std::ops::Range<usize>| -> Option<u16> {
            let part = &bytes[range];
            if !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(
                part.iter()
                    .fold(0u16, |acc, b| acc * 10 + u16::from(b - b'0')),
            )
        };
        let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10))
        else {
            return Err(err("expected YYYY-MM-DD"));
        };
        // month and day have two digits, so they fit in u8.
        let (month, day) = (month as u8, day as u8);
        if year == 0 {
            return Err(err("there is no year 0000"));
        }
        if !(1..=12).contains(&month) {
            return Err(err("the month must be 01 to 12"));
        }
        Date::new(year, month, day).ok_or_else(|| err("that day does not exist in that month"))
    }

    pub fn year(self) -> u16 {
        self.year
    }

    pub fn month(self) -> u8 {
        self.month
    }

    pub fn day(self) -> u8 {
        self.day
    }

    /// Days since 1970-01-01 (negative before it).
    pub fn days_since_epoch(self) -> i64 {
        // Count years from March so that the leap day is the last day of the year.
        let (y, m, d) = (
            i64::from(self.year),
            i64::from(self.month),
            i64::from(self.day),
        );
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let year_of_era = y - era * 400;
        let month_from_march = (m + 9) % 12;
        let day_of_year = (153 * month_from_march + 2) / 5 + d - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * DAYS_PER_ERA + day_of_era - EPOCH_SHIFT_DAYS
    }

    /// The date `days` after 1970-01-01, if it lies between years 1 and 9999.
    pub fn from_days_since_epoch(days: i64) -> Option<Date> {
        let z = days.checked_add(EPOCH_SHIFT_DAYS)?;
        let era = z.div_euclid(DAYS_PER_ERA);
        let day_of_era = z - era * DAYS_PER_ERA;
        let year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let month_from_march = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
        let month = if month_from_march < 10 {
            month_from_march + 3
        } else {
            month_from_march - 9
        };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        Date::new(
            u16::try_from(year).ok()?,
            u8::try_from(month).ok()?,
            u8::try_from(day).ok()?,
        )
    }

    /// The UTC date of a point in time (the CLI passes `SystemTime::now()`; the library never reads
    /// the clock itself, so results stay reproducible).
    pub fn from_system_time(time: SystemTime) -> Date {
        let seconds = match time.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
        };
        let days = seconds.div_euclid(86_400);
        Date::from_days_since_epoch(days).unwrap_or(if days < 0 { Date::MIN } else { Date::MAX })
    }

    /// Whole days from `earlier` to `self` (negative when `earlier` is later).
    pub fn days_since(self, earlier: Date) -> i64 {
        self.days_since_epoch() - earlier.days_since_epoch()
    }

    /// The date `days` later (earlier when negative), clamped to the supported range.
    pub fn add_days(self, days: i64) -> Date {
        let target = self.days_since_epoch().saturating_add(days);
        Date::from_days_since_epoch(target).unwrap_or(if days < 0 { Date::MIN } else { Date::MAX })
    }

    /// 0001-01-01.
    pub const MIN: Date = Date {
        year: 1,
        month: 1,
        day: 1,
    };
    /// 9999-12-31.
    pub const MAX: Date = Date {
        year: 9999,
        month: 12,
        day: 31,
    };
}

fn is_leap(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl FromStr for Date {
    type Err = DateError;

    fn from_str(s: &str) -> Result<Date, DateError> {
        Date::parse(s)
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Date, D::Error> {
        let text = String::deserialize(deserializer)?;
        Date::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    #[test]
    fn parses_real_dates_only() {
        assert_eq!(
            Date::parse("2027-06-30"),
            Ok(Date::new(2027, 6, 30).unwrap())
        );
        assert!(Date::parse("2028-02-29").is_ok(), "2028 is a leap year");
        assert!(Date::parse("2000-02-29").is_ok(), "2000 is a leap year");
        for bad in [
            "2027-02-29",
            "1900-02-29",
            "2027-13-01",
            "2027-00-10",
            "2027-04-31",
            "2027-06-00",
            "0000-01-01",
            "2027-6-30",
            "27-06-30",
            "2027/06/30",
            "2027-06-30T00:00:00Z",
            "２０２７-06-30",
            "",
        ] {
            assert!(Date::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn error_says_why() {
        let e = Date::parse("2027-02-30").unwrap_err().to_string();
        assert!(
            e.contains("2027-02-30") && e.contains("does not exist"),
            "{e}"
        );
        let e = Date::parse("2027-14-01").unwrap_err().to_string();
        assert!(e.contains("month"), "{e}");
    }

    #[test]
    fn orders_chronologically() {
        let a = Date::parse("2026-12-31").unwrap();
        let b = Date::parse("2027-01-01").unwrap();
        let c = Date::parse("2027-01-02").unwrap();
        assert!(a < b && b < c);
        assert_eq!(b.days_since(a), 1);
        assert_eq!(a.days_since(c), -2);
    }

    #[test]
    fn epoch_days_known_values() {
        assert_eq!(Date::new(1970, 1, 1).unwrap().days_since_epoch(), 0);
        assert_eq!(Date::new(2000, 3, 1).unwrap().days_since_epoch(), 11_017);
        assert_eq!(Date::new(1969, 12, 31).unwrap().days_since_epoch(), -1);
        assert_eq!(Date::MIN.days_since_epoch(), -719_162);
        assert_eq!(Date::from_days_since_epoch(19_723), Date::new(2024, 1, 1));
    }

    #[test]
    fn system_time_is_utc_date() {
        // 2024-02-29T23:59:59Z
        let t = UNIX_EPOCH + Duration::from_secs(1_709_251_199);
        assert_eq!(Date::from_system_time(t), Date::new(2024, 2, 29).unwrap());
        let t = UNIX_EPOCH + Duration::from_secs(1_709_251_200);
        assert_eq!(Date::from_system_time(t), Date::new(2024, 3, 1).unwrap());
        let before = UNIX_EPOCH - Duration::from_secs(1);
        assert_eq!(
            Date::from_system_time(before),
            Date::new(1969, 12, 31).unwrap()
        );
    }

    #[test]
    fn add_days_clamps() {
        assert_eq!(Date::MAX.add_days(1), Date::MAX);
        assert_eq!(Date::MIN.add_days(-1), Date::MIN);
        assert_eq!(
            Date::new(2027, 6, 30).unwrap().add_days(30),
            Date::new(2027, 7, 30).unwrap()
        );
    }

    proptest! {
        #[test]
        fn days_round_trip(days in -719_162i64..2_932_896) {
            let d = Date::from_days_since_epoch(days).unwrap();
            prop_assert_eq!(d.days_since_epoch(), days);
            prop_assert_eq!(Date::parse(&d.to_string()), Ok(d));
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,12}") {
            let _ = Date::parse(&s);
        }
    }
}
