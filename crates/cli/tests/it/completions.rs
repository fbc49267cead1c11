//! The completion scripts, run in the shells they are for: bash sources the script and asks its
//! completion function what `gpu-trust audit --fo<TAB>` completes to; fish answers `complete -C`;
//! zsh loads the script and checks its syntax. A shell that is not installed skips its test
//! locally and fails under CI (`.ci/run` installs bash, zsh and fish from Debian).

use assert_cmd::Command;
use std::io::Write as _;
use std::path::{Path, PathBuf};

fn script(shell: &str, dir: &Path) -> PathBuf {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(out.status.success(), "completions {shell} failed");
    let path = dir.join(format!("gpu-trust.{shell}"));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// The shell's path, or `None` (and a note) when it is not installed and CI is not set.
fn shell(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but `{name}` is not installed (apt-get install {name})");
        }
        let _ = writeln!(std::io::stderr(), "SKIPPED: `{name}` is not installed");
    }
    found
}

/// What bash's completion for `gpu-trust` offers for the words before the cursor and the word
/// under it (`cur`), one candidate per line.
fn bash_complete(script: &Path, words: &[&str], cur: &str) -> Vec<String> {
    let bash = shell("bash").expect("bash");
    let mut all: Vec<&str> = vec!["gpu-trust"];
    all.extend_from_slice(words);
    all.push(cur);
    let quoted: Vec<String> = all.iter().map(|w| format!("'{w}'")).collect();
    let prev = all[all.len() - 2];
    let program = format!(
        r#"set -e
source '{script}'
spec=$(complete -p gpu-trust)
fn=${{spec#*-F }}
fn=${{fn%% *}}
COMP_WORDS=({words})
COMP_CWORD={cword}
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
"$fn" gpu-trust '{cur}' '{prev}'
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        script = script.display(),
        words = quoted.join(" "),
        cword = all.len() - 1,
    );
    let out = std::process::Command::new(bash)
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_options_below_a_subcommand() {
    if shell("bash").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = script("bash", dir.path());

    let mut got = bash_complete(&script, &["audit"], "--fo");
    got.sort();
    assert_eq!(got, ["--follow-symlinks", "--format"]);

    // The values of an option, below the subcommand.
    let got = bash_complete(&script, &["audit", "--fail-on"], "n");
    assert_eq!(got, ["never"]);
    let got = bash_complete(&script, &["audit", "--format"], "");
    for format in ["table", "json", "sarif", "html"] {
        assert!(got.iter().any(|g| g == format), "{format} not in {got:?}");
    }

    // Subcommands at the top, the hidden worker not among them.
    let got = bash_complete(&script, &[], "");
    for command in ["audit", "plan", "probe", "explain", "completions"] {
        assert!(got.iter().any(|g| g == command), "{command} not in {got:?}");
    }
    assert!(!got.iter().any(|g| g.contains("worker")), "{got:?}");
    let got = bash_complete(&script, &[], "probe");
    assert_eq!(got, ["probe"]);
}

#[test]
fn fish_completes_options_below_a_subcommand() {
    let Some(fish) = shell("fish") else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = script("fish", dir.path());
    let ask = |line: &str| -> Vec<String> {
        let out = std::process::Command::new(&fish)
            .args([
                "--no-config",
                "-c",
                &format!("source '{}'; complete -C '{line}'", script.display()),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "fish failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Each candidate, then a tab and its description.
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect()
    };
    let mut got = ask("gpu-trust audit --fo");
    got.sort();
    assert_eq!(got, ["--follow-symlinks", "--format"]);
    let got = ask("gpu-trust audit --fail-on ");
    assert!(got.iter().any(|g| g == "never"), "{got:?}");
    let got = ask("gpu-trust ");
    assert!(got.iter().any(|g| g == "audit"), "{got:?}");
    assert!(!got.iter().any(|g| g.contains("worker")), "{got:?}");
}

#[test]
fn zsh_loads_the_script() {
    let Some(zsh) = shell("zsh") else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = script("zsh", dir.path());
    // The script is an autoloadable completion function: it must parse, define `_gpu-trust`, and
    // hold the audit command's options in the audit state.
    let out = std::process::Command::new(&zsh)
        .args([
            "-f",
            "-c",
            &format!(
                "autoload -U compinit && compinit -u -D; source '{}' && whence -w _gpu-trust",
                script.display()
            ),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zsh failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("_gpu-trust: function"));
    // The audit state offers audit's options; no state or word offers the hidden worker (the
    // probe's help mentions it in prose: `probe-worker --serve`).
    let text = std::fs::read_to_string(&script).unwrap();
    let audit = text
        .split("(audit)")
        .nth(1)
        .and_then(|rest| rest.split(";;").next())
        .expect("an audit state");
    assert!(audit.contains("--fail-on") && audit.contains("--format"));
    assert!(!text
        .replace("probe-worker --serve", "")
        .contains("probe-worker"));
}
