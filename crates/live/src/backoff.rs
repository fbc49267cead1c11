//! How long to wait before trying a failed list or watch again: exponential, with jitter, capped,
//! as client-go's reflector waits (800 ms doubling to 30 s, jitter up to the delay itself, reset
//! after two minutes of health: `NewExponentialBackoffManager(800*time.Millisecond, 30*time.Second,
//! 2*time.Minute, 2.0, 1.0, clock)` in k8s.io/client-go/tools/cache/reflector.go). A server that
//! ends every watch at once then gets a few requests a minute per kind, not thousands a second.

use std::time::{Duration, Instant};

/// The first delay.
pub const INITIAL: Duration = Duration::from_millis(800);
/// The longest delay before jitter.
pub const CAP: Duration = Duration::from_secs(30);
/// How long things must have gone well for the delay to start again from [`INITIAL`].
pub const RESET_AFTER: Duration = Duration::from_secs(120);

/// The delays of one kind's list and watch.
#[derive(Debug, Clone)]
pub struct Backoff {
    delay: Duration,
    last_failure: Option<Instant>,
    state: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    pub fn new() -> Backoff {
        // The jitter needs no cryptographic randomness: the clock and an address spread the kinds.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let local = 0u8;
        let seed = nanos ^ (&local as *const u8 as u64).rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15;
        Backoff {
            delay: INITIAL,
            last_failure: None,
            state: seed | 1,
        }
    }

    fn random(&mut self) -> f64 {
        // xorshift64*
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The delay before the next try after a failure: the current delay plus up to as much again
    /// (jitter), and the delay doubled for the next failure, up to [`CAP`].
    pub fn failed(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last_failure
            .is_some_and(|t| now.duration_since(t) >= RESET_AFTER + self.delay)
        {
            self.delay = INITIAL;
        }
        self.last_failure = Some(now);
        let base = self.delay;
        self.delay = (self.delay * 2).min(CAP);
        base + base.mul_f64(self.random())
    }

    /// Things went well for long enough: the next failure waits [`INITIAL`] again.
    pub fn healthy(&mut self) {
        self.delay = INITIAL;
        self.last_failure = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_with_jitter_up_to_the_cap() {
        let mut b = Backoff::new();
        let mut base = INITIAL;
        for _ in 0..12 {
            let d = b.failed();
            assert!(d >= base && d <= base * 2, "{d:?} for {base:?}");
            base = (base * 2).min(CAP);
        }
        assert!(b.failed() <= CAP * 2);
        b.healthy();
        assert!(b.failed() <= INITIAL * 2);
    }
}
