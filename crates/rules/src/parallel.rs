//! Running the audit's independent parts on every core, with results in a fixed order: what the
//! audit reports never depends on the number of cores or on which thread finished first.
//!
//! Only the standard library's scoped threads: the parts borrow the context, and a panic in one is
//! carried to the caller as it would be without threads.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many threads to use: the cores the process may run on.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` applied to every item, on up to [`threads`] threads that take the next item as they finish
/// one; the results in the items' order.
pub fn each<'i, T: Sync, R: Send>(items: &'i [T], f: impl Fn(&'i T) -> R + Sync) -> Vec<R> {
    let workers = threads().min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    // Each worker keeps its results with their items' indices; they are put in order at the end.
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return mine;
                        };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        let mut all = Vec::with_capacity(items.len());
        for h in handles {
            match h.join() {
                Ok(mine) => all.extend(mine),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Runs `a` on this thread while `b` and `c` run on another (when there is more than one core).
pub fn run<A: Send, B: Send, C: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
    c: impl FnOnce() -> C + Send,
) -> (A, B, C) {
    if threads() <= 1 {
        return (a(), b(), c());
    }
    std::thread::scope(|scope| {
        let side = scope.spawn(|| (b(), c()));
        let ra = a();
        match side.join() {
            Ok((rb, rc)) => (ra, rb, rc),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items() {
        let items: Vec<u64> = (0..1000).collect();
        // Uneven work, so that threads finish out of order.
        let out = each(&items, |i| {
            let mut x = *i;
            for _ in 0..(i % 7) * 1000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            (*i, x)
        });
        assert_eq!(out.len(), 1000);
        assert!(out.iter().enumerate().all(|(k, (i, _))| k as u64 == *i));
    }

    #[test]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items = [1, 2, 3];
        let result = std::panic::catch_unwind(|| {
            each(&items, |i| {
                assert!(*i != 2, "boom");
                *i
            })
        });
        assert!(result.is_err());
    }
}
