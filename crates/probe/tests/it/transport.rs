//! Worker links: children are always reaped, and receives are bounded in time.

use gpu_trust_probe::fake::FakeBackend;
use gpu_trust_probe::protocol::{Reply, Request};
use gpu_trust_probe::transport::{ChildGuard, Launcher, LinkError, ThreadLauncher};
use gpu_trust_probe::{DeviceSpec, Role};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn alive(pid: u32) -> bool {
    // A reaped child has no /proc entry; a zombie would still have one.
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn dropping_the_guard_kills_and_reaps_the_child() {
    let child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id();
    let guard = ChildGuard::new(child);
    assert!(alive(pid));
    drop(guard);
    assert!(!alive(pid), "the child outlived its guard");
}

#[test]
fn waiting_past_the_deadline_kills() {
    let child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id();
    let mut guard = ChildGuard::new(child);
    let t = Instant::now();
    guard.wait_until(Instant::now() + Duration::from_millis(100));
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(!alive(pid));
}

#[test]
fn a_thread_worker_says_hello_and_times_out_politely() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(FakeBackend::with_dir("time-slicing", dir.path()).unwrap());
    let launcher = ThreadLauncher { backend };
    let mut link = launcher
        .launch(Role::Victim, &DeviceSpec::Index(0))
        .unwrap();
    let hello = link.recv(Instant::now() + Duration::from_secs(5)).unwrap();
    assert!(matches!(hello, Reply::Hello { .. }), "{hello:?}");
    // Nothing asked, nothing answered: the receive ends at its deadline.
    let t = Instant::now();
    let waited = link.recv(Instant::now() + Duration::from_millis(50));
    assert!(matches!(waited, Err(LinkError::Timeout)), "{waited:?}");
    assert!(t.elapsed() < Duration::from_secs(2));
    link.send(&Request::Stop).unwrap();
    let r = link.recv(Instant::now() + Duration::from_secs(5)).unwrap();
    assert!(
        matches!(r, Reply::Failed { ref message } if message.contains("stop without start")),
        "{r:?}"
    );
    link.finish(Instant::now() + Duration::from_secs(5));
}

#[test]
fn the_real_backend_reports_a_missing_driver_instead_of_panicking() {
    match gpu_trust_probe::real::RealBackend::new() {
        Ok(_) => assert!(gpu_trust_probe::real::driver_present().is_ok()),
        Err(e) => {
            assert!(e.is_environment(), "{e}");
            let msg = e.to_string();
            assert!(msg.starts_with("no NVIDIA driver found: "), "{msg}");
        }
    }
}
