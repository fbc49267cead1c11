//! The allocator's settings for a short-lived command.
//!
//! Two of mimalloc's defaults suit long-running servers and cost a command that reads a large
//! cluster, audits it and exits within seconds (both measured in docs/benchmarks.md):
//!
//! - It hands freed memory back to the operating system after a delay (its "purge"), and the next
//!   allocation faults the pages in again: on a 60,000-pod audit the purges cost more system time
//!   than the whole JSON parse. The process ends soon, and its memory with it.
//! - On Linux it commits each arena eagerly, so the kernel may back it with transparent huge pages
//!   that it must zero whole, used or not: a second of system time on the same audit. Committed on
//!   demand, only the pages the audit uses are touched.

use libmimalloc_sys::mi_option_t;

/// `mi_option_arena_eager_commit` and `mi_option_purge_delay` in mimalloc's `mi_option_e`
/// (include/mimalloc.h of the v3 sources that `libmimalloc-sys` 0.1.49 builds by default: "eager
/// commit arenas? Use 2 to enable just on overcommit systems (=2)"; "memory purging is delayed by N
/// milli seconds; use 0 for immediate purging or -1 for no purging at all"; their defaults in
/// src/options.c are 2 and 1000). The crate exports no constants for them; the test below checks
/// each index against its default.
const MI_OPTION_ARENA_EAGER_COMMIT: mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: mi_option_t = 15;

/// Commit memory as it is used, and never purge it.
pub fn configure() {
    // SAFETY: sets entries of mimalloc's option table; called first thing in `main`, before any
    // other thread exists (mimalloc documents these functions as not thread-safe).
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_indices_are_the_ones_meant() {
        // The defaults in src/options.c, unless the environment overrides them. The test binary
        // does not call `configure`.
        // SAFETY: reads mimalloc's option table.
        let get = |option| unsafe { libmimalloc_sys::mi_option_get(option) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(get(MI_OPTION_PURGE_DELAY), 1000);
        }
        if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
            assert_eq!(get(MI_OPTION_ARENA_EAGER_COMMIT), 2);
        }
        // Neighbours that the crate does export are where the header puts them.
        assert_eq!(libmimalloc_sys::mi_option_large_os_pages, 6);
        assert_eq!(libmimalloc_sys::mi_option_use_numa_nodes, 16);
    }
}
