//! The allocator's settings for a short-lived command.
//!
//! mimalloc hands freed memory back to the operating system after a short delay (its "purge"),
//! and the next allocation faults the pages in again. A command that reads a large cluster, audits
//! it and exits gains nothing from returning memory it is about to need again: on a 60,000-pod
//! audit the purges cost more system time than the whole JSON parse (docs/benchmarks.md). The
//! process ends within seconds, and the memory with it.

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (include/mimalloc.h of the v3 sources that
/// `libmimalloc-sys` 0.1.49 builds by default: "memory purging is delayed by N milli seconds; use 0
/// for immediate purging or -1 for no purging at all"; its default, in src/options.c, is 1000). The
/// crate exports no constant for it; the test below checks the index against that default.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never purge: freed memory stays with the process until it exits.
pub fn keep_freed_memory() {
    // SAFETY: sets one entry of mimalloc's option table; called first thing in `main`, before any
    // other thread exists (the function is documented as not thread-safe).
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_index_is_the_purge_delay() {
        // Its default is 1000 ms (src/options.c), unless the environment overrides it.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: reads mimalloc's option table.
            let delay = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
            assert_eq!(delay, 1000);
        }
        // Its neighbour, which the crate does export, is where the header puts it.
        assert_eq!(libmimalloc_sys::mi_option_use_numa_nodes, 16);
    }
}
