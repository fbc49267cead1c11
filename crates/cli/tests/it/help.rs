//! Help text is wrapped by clap at the terminal's width (COLUMNS here), never by hand: every line
//! fits the width it is given, the words are the same at every width, and a paragraph of a command's
//! description fills its lines instead of breaking where its source comment did. `gpu-trust --help`
//! gives each command one line, and every example of every `--help` runs.

use crate::apiserver::{self, ApiServer, Behaviour};
use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Every command with help of its own.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["audit"],
    &["inventory"],
    &["serve"],
    &["plan"],
    &["probe"],
    &["mechanisms"],
    &["catalogue"],
    &["advisories"],
    &["policy"],
    &["policy", "check"],
    &["rules"],
    &["explain"],
    &["completions"],
];

fn help(command: &[&str], columns: usize) -> String {
    let out = Command::cargo_bin("gpu-trust")
        .unwrap()
        .env("COLUMNS", columns.to_string())
        .env("NO_COLOR", "1")
        .args(command)
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{command:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

#[test]
fn help_fits_the_width_and_says_the_same_at_every_width() {
    for command in COMMANDS {
        let wide = help(command, 100);
        for columns in [60, 80, 100] {
            let text = help(command, columns);
            for line in text.lines() {
                // An example command line is kept as written; a single long word cannot be broken.
                let example = line.starts_with("  gpu-trust ")
                    || line.starts_with("  kubectl ")
                    || line.starts_with("  helm ");
                assert!(
                    line.chars().count() <= columns || example || !line.trim().contains(' '),
                    "{command:?} at {columns} columns: {line:?}"
                );
            }
            assert_eq!(
                words(&text),
                words(&wide),
                "{command:?} at {columns} columns"
            );
        }
    }
}

#[test]
fn description_paragraphs_fill_their_lines() {
    for command in COMMANDS {
        let text = help(command, 100);
        // The description: the paragraphs before `Usage:`.
        let description = &text[..text.find("Usage:").unwrap_or(0)];
        for paragraph in description.split("\n\n") {
            let lines: Vec<&str> = paragraph.lines().collect();
            // Every line but a paragraph's last is filled close to the width: the next word
            // would not have fitted.
            for pair in lines.windows(2) {
                let next = pair[1].split_whitespace().next().unwrap_or("");
                assert!(
                    pair[0].chars().count() + 1 + next.chars().count() > 100,
                    "{command:?}: a line broken early: {:?} / {:?}",
                    pair[0],
                    pair[1]
                );
            }
        }
    }
}

#[test]
fn the_command_list_gives_each_command_one_line() {
    for columns in [80, 100] {
        let text = help(&[], columns);
        let list = &text[text.find("Commands:\n").expect("Commands:") + 10..];
        let list = &list[..list.find("\n\n").unwrap_or(list.len())];
        for line in list.lines() {
            assert!(
                !line.starts_with("    "),
                "at {columns} columns a command's summary takes more than a line: {line:?}"
            );
        }
        assert!(list.lines().count() >= 12, "{list}");
    }
}

/// The example lines of a command's help (after `Examples:`, continuation lines joined).
fn example_lines(help: &str) -> Vec<String> {
    let Some(at) = help.find("Examples:\n") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in help[at + 10..].lines() {
        let Some(line) = line.strip_prefix("  ") else {
            break;
        };
        match line.trim().strip_suffix('\\') {
            Some(start) => pending.push_str(start),
            None => {
                pending.push_str(line.trim());
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    out
}

/// A shell command line as the shell reads it, for the examples' simple lines: words (quotes
/// removed), `|`, `&&`, `>` and a comment.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Pipe,
    And,
    Redirect,
}

fn shell_tokens(line: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    w.push(q);
                }
            }
            '#' if word.is_none() => break,
            ' ' | '|' | '&' | '>' => {
                out.extend(word.take().map(Token::Word));
                match c {
                    '|' => out.push(Token::Pipe),
                    '>' => out.push(Token::Redirect),
                    '&' if chars.peek() == Some(&'&') => {
                        chars.next();
                        out.push(Token::And);
                    }
                    _ => {}
                }
            }
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word.map(Token::Word));
    out
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn copy(from: &str, to: &Path) {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::copy(repo().join(from), to).unwrap_or_else(|e| panic!("{from}: {e}"));
}

/// A folder holding the files the examples of `command` name, and the live cluster they read
/// (served under the kubeconfig's current context and `prod`): for `plan`, the example plan and
/// the cluster it migrates from; for the others, the inference-platform example (whose tenants
/// are the examples' acme and globex), the CI example's manifests and node inventory, and CSAF
/// bulletins.
struct Sandbox {
    dir: tempfile::TempDir,
    _server: ApiServer,
    /// What a `kubectl get` or `helm template` before a pipe writes.
    cluster: PathBuf,
    manifests: PathBuf,
}

fn sandbox(command: &str) -> Sandbox {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cluster = if command == "plan" {
        copy("examples/plan/plan.yaml", &d.join("plan.yaml"));
        copy("examples/plan/policy.yaml", &d.join("policy.yaml"));
        "examples/plan/migration/cluster.yaml"
    } else {
        for name in ["policy.yaml", "tenancy.yaml", "t.yaml"] {
            copy("examples/inference-platform/policy.yaml", &d.join(name));
        }
        for name in ["batch.yaml", "notebooks.yaml"] {
            copy(
                &format!("examples/ci/deploy/{name}"),
                &d.join("manifests").join(name),
            );
            copy(
                &format!("examples/ci/deploy/{name}"),
                &d.join("deploy").join(name),
            );
        }
        copy("examples/ci/inventory/nodes.yaml", &d.join("nodes.yaml"));
        copy(
            "examples/ci/inventory/nodes.yaml",
            &d.join("dumps/nodes.yaml"),
        );
        for n in ["5850", "5821"] {
            let csaf = format!("crates/rules/tests/data/csaf/nvidia/{n}.json");
            copy(&csaf, &d.join("bulletins").join(format!("{n}.json")));
        }
        copy(
            "crates/rules/tests/data/csaf/nvidia/5850.json",
            &d.join("5850.json"),
        );
        // The vendor's repository as a folder (`advisories update --from file://...`): the index of
        // the year the update counts as its own, with no bulletin listed.
        let index = d.join("product-security/2026/CVE_index.csv");
        std::fs::create_dir_all(index.parent().unwrap()).unwrap();
        std::fs::write(
            index,
            "CVE;CVSS;Severity;Vector;CWE;Bulletin;Affected Product;Affected Version;Fixed In\n",
        )
        .unwrap();
        "examples/inference-platform/cluster.yaml"
    };
    copy(cluster, &d.join("cluster.yaml"));
    std::os::unix::fs::symlink(repo().join("examples"), d.join("examples")).unwrap();
    let server = ApiServer::start(apiserver::load(&repo().join(cluster)), Behaviour::default());
    let kubeconfig = apiserver::kubeconfig_for(&server.url()).replace(
        "contexts:\n",
        "contexts:\n- name: prod\n  context:\n    cluster: recorded\n    user: auditor\n",
    );
    std::fs::write(d.join("kubeconfig"), kubeconfig).unwrap();
    if command == "audit" {
        // An earlier JSON report of the CI example's manifests, for `--baseline main.json`.
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"))
            .args(["audit", "deploy/", "--policy", "tenancy.yaml", "-o", "json"])
            .args(["--output", "main.json", "--fail-on", "never"])
            .current_dir(d)
            .env("XDG_CACHE_HOME", d.join("cache"))
            .output()
            .unwrap();
        assert!(d.join("main.json").exists(), "{out:?}");
    }
    let manifests = d.join("manifests/batch.yaml");
    Sandbox {
        cluster: d.join("cluster.yaml"),
        manifests,
        dir,
        _server: server,
    }
}

/// Runs one `gpu-trust` command of an example in `sandbox`, with `stdin`; `serve` for a moment on
/// a free loopback port. Its exit status, standard error and output.
fn run_example(sandbox: &Sandbox, args: &[String], stdin: Option<&Path>) -> (i32, String) {
    let mut args = args.to_vec();
    if args.first().map(String::as_str) == Some("probe") && !args.contains(&"--emit-job".into()) {
        // A simulated GPU: the hidden test switch; the example's options are kept.
        args.extend(["--fake".into(), "time-slicing".into(), "--fake-dir".into()]);
        args.push(sandbox.dir.path().join("fake").display().to_string());
    }
    if args.starts_with(&["advisories".into(), "update".into()]) && !args.contains(&"--from".into())
    {
        // The vendor's repository as the sandbox's folder, and the day its index is of (hidden).
        let mirror = sandbox.dir.path().join("product-security");
        args.extend(["--from".into(), format!("file://{}", mirror.display())]);
        args.extend(["--today".into(), "2026-12-01".into()]);
    }
    let serve = args.first().map(String::as_str) == Some("serve");
    if serve {
        match args.iter().position(|a| a == "--listen") {
            Some(i) => args[i + 1] = "127.0.0.1:0".into(),
            None => args.extend(["--listen".into(), "127.0.0.1:0".into()]),
        }
    }
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpu-trust"));
    cmd.args(&args)
        .current_dir(sandbox.dir.path())
        .env("KUBECONFIG", sandbox.dir.path().join("kubeconfig"))
        // Advisory updates (`advisories update`, `serve --update-advisories-every`) keep their
        // bulletins in the sandbox, not in the user's cache.
        .env("XDG_CACHE_HOME", sandbox.dir.path().join("cache"))
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .stdin(match stdin {
            Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
            None => Stdio::null(),
        });
    let mut child = cmd.spawn().unwrap();
    if serve {
        // Serving: still running after a few seconds is the example working.
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            child.wait().unwrap();
            return (0, String::new());
        }
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every example of every `--help` runs, as written: each `gpu-trust` command of an example line
/// (also after a pipe or `&&`) in a folder that holds the files it names, with the live cluster it
/// reads served by the tests' API server, the input of a pipe (`kubectl get`, `helm template`,
/// `cat FILE`) on standard input, the probe on a simulated GPU, `advisories update` from a folder
/// of the vendor's layout and `serve` for a few seconds on a free port. None may be refused: exit
/// 0, 1 (findings), or 2 only for what the example shows, a partial audit of manifests without
/// nodes.
#[test]
fn every_example_in_every_help_runs() {
    let mut ran = 0;
    let mut problems = Vec::new();
    for command in COMMANDS {
        // Wide enough that clap wraps no example line.
        for line in example_lines(&help(command, 1000)) {
            let tokens = shell_tokens(&line);
            let mut stages: Vec<(Vec<String>, bool)> = vec![(Vec::new(), false)];
            let mut redirect = false;
            for t in tokens {
                match t {
                    Token::Word(_) if redirect => redirect = false,
                    Token::Word(w) => stages.last_mut().unwrap().0.push(w),
                    Token::Redirect => redirect = true,
                    Token::Pipe => stages.push((Vec::new(), true)),
                    Token::And => stages.push((Vec::new(), false)),
                }
            }
            let sub = stages
                .iter()
                .find(|(s, _)| s.first().map(String::as_str) == Some("gpu-trust"))
                .and_then(|(s, _)| s.get(1))
                .cloned()
                .unwrap_or_default();
            let sandbox = sandbox(&sub);
            for (i, (words, piped)) in stages.iter().enumerate() {
                if words.first().map(String::as_str) != Some("gpu-trust") {
                    continue;
                }
                let stdin = match (piped, i.checked_sub(1).map(|j| &stages[j].0)) {
                    (true, Some(before)) => match before.first().map(String::as_str) {
                        Some("cat") => Some(sandbox.dir.path().join(&before[1])),
                        Some("helm") => Some(sandbox.manifests.clone()),
                        _ => Some(sandbox.cluster.clone()),
                    },
                    _ => None,
                };
                let (code, stderr) = run_example(&sandbox, &words[1..], stdin.as_deref());
                ran += 1;
                let partial = stderr.contains("error: the audit is partial");
                if !(code == 0 || code == 1 || (code == 2 && partial)) {
                    problems.push(format!("{line}\n  exit {code}: {stderr}"));
                }
            }
        }
    }
    assert!(ran >= 30, "only {ran} example commands found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
