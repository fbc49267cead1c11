//! Installing gpu-trust without a Rust toolchain: the release archives `tools/release.sh` makes
//! (reproducible, with completions, man pages, licence and README), their SHA256SUMS and krew
//! manifest; the GitHub Action (`action.yml`) that installs a release by version and checksum and
//! audits; the example workflow that uses it; and the workflows' and the Action's syntax.
//!
//! The archive step runs on the binary the tests built (without its debug information), not on a
//! `dist` build (minutes): what is tested is that the same binary on the same commit always gives
//! the same bytes.

use assert_cmd::Command;
use serde_json::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gpu-trust"))
}

/// The tests' binary without its debug information (a tenth of its size, so that archiving it twice
/// takes seconds, not minutes), written into `dir`; the binary itself where `strip` is missing.
fn archived_binary(dir: &Path) -> PathBuf {
    let stripped = dir.join("gpu-trust");
    let ok = std::process::Command::new("strip")
        .arg("--strip-debug")
        .arg("-o")
        .arg(&stripped)
        .arg(binary())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        stripped
    } else {
        binary()
    }
}

fn run(cmd: &mut std::process::Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn release_sh(args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(repo().join("tools/release.sh")).args(args);
    cmd
}

fn sha256(path: &Path) -> String {
    let out = run(std::process::Command::new("sha256sum").arg(path));
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

fn yaml(path: &Path) -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The archive of the host platform, made twice from the same binary: the same bytes; it holds the
/// binary, completions, man pages, licence and README; SHA256SUMS and the krew manifest carry its
/// real checksum; and the Action's install step installs it by version and checksum (from a
/// `file://` release folder), and refuses it under another checksum.
#[test]
fn release_archives_are_reproducible_and_install_by_checksum() {
    let version = env!("CARGO_PKG_VERSION");
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let built = tempfile::tempdir().unwrap();
    let bin = archived_binary(built.path());
    let mut made = Vec::new();
    for out in [&a, &b] {
        let o = run(&mut release_sh(&[
            "archive",
            "--binary",
            bin.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        made.push(PathBuf::from(String::from_utf8(o.stdout).unwrap().trim()));
    }
    let name = made[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("gpu-trust-v{version}-linux-")) && name.ends_with(".tar.gz"),
        "{name}"
    );
    assert_eq!(
        std::fs::read(&made[0]).unwrap(),
        std::fs::read(&made[1]).unwrap(),
        "two runs on the same commit gave different archives"
    );

    let folder = name.trim_end_matches(".tar.gz");
    let listing = run(std::process::Command::new("tar")
        .args(["-tvzf"])
        .arg(&made[0]));
    let listing = String::from_utf8(listing.stdout).unwrap();
    for file in [
        "gpu-trust",
        "LICENSE",
        "README.md",
        "completions/gpu-trust.bash",
        "completions/_gpu-trust",
        "completions/gpu-trust.fish",
        "man/man1/gpu-trust.1",
        "man/man1/gpu-trust-audit.1",
        "man/man1/gpu-trust-plan.1",
    ] {
        assert!(
            listing.contains(&format!(" {folder}/{file}\n")),
            "{file} missing:\n{listing}"
        );
    }
    // Owners and modes are fixed; no hidden command gets a page.
    assert!(listing.lines().all(|l| l.contains(" 0/0 ")), "{listing}");
    assert!(listing.contains("-rwxr-xr-x 0/0"));
    assert!(!listing.contains("probe-worker") && !listing.contains("manpages"));

    // SHA256SUMS and the krew manifest, twice: the same bytes, with the archive's real checksum.
    for out in [&a, &b] {
        run(&mut release_sh(&[
            "manifest",
            "--out",
            out.to_str().unwrap(),
        ]));
    }
    for file in ["SHA256SUMS", "gpu-trust.yaml"] {
        assert_eq!(
            std::fs::read(a.join(file)).unwrap(),
            std::fs::read(b.join(file)).unwrap(),
            "{file}"
        );
    }
    let sum = sha256(&made[0]);
    assert_eq!(
        std::fs::read_to_string(a.join("SHA256SUMS")).unwrap(),
        format!("{sum}  {name}\n")
    );
    let manifest = yaml(&a.join("gpu-trust.yaml"));
    assert_eq!(manifest["kind"], "Plugin");
    assert_eq!(manifest["metadata"]["name"], "gpu-trust");
    assert_eq!(manifest["spec"]["version"], format!("v{version}"));
    let platforms = manifest["spec"]["platforms"].as_array().unwrap();
    assert_eq!(
        platforms.len(),
        1,
        "only the archive made here: {platforms:?}"
    );
    let p = &platforms[0];
    assert_eq!(p["sha256"], sum.as_str());
    assert_eq!(
        p["uri"],
        format!("https://github.com/gpu-trust/gpu-trust/releases/download/v{version}/{name}")
    );
    assert_eq!(p["bin"], "gpu-trust");
    assert_eq!(p["files"][0]["from"], "gpu-trust-*/gpu-trust");
    // Every platform of the template must be there for a release.
    let out = release_sh(&["manifest", "--out", a.to_str().unwrap(), "--require-all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    // The Action's install step, from the folder as from a release.
    let install = |sha: &str, runner: &Path| {
        std::fs::create_dir_all(runner).unwrap();
        let path_file = runner.join("path");
        let out = std::process::Command::new("bash")
            .arg(repo().join("tools/action/install.sh"))
            .env("INPUT_VERSION", version)
            .env("INPUT_SHA256", sha)
            .env("INPUT_BUILD_FROM_SOURCE", "false")
            .env("RUNNER_TEMP", runner)
            .env("GITHUB_PATH", &path_file)
            .env(
                "GPU_TRUST_RELEASES",
                format!("file://{}", tmp.path().display()),
            )
            .env_remove("ACTION_REF")
            .output()
            .unwrap();
        (out, std::fs::read_to_string(&path_file).unwrap_or_default())
    };
    // Release folder layout: <base>/v<version>/<files>.
    let release = tmp.path().join(format!("v{version}"));
    std::fs::rename(&a, &release).unwrap();
    let (out, path) = install(&sum, &tmp.path().join("runner1"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = Path::new(path.trim()).join("gpu-trust");
    let version_line = run(std::process::Command::new(&installed).arg("--version"));
    assert_eq!(
        String::from_utf8(version_line.stdout).unwrap(),
        format!("gpu-trust {version}\n")
    );
    // Without a checksum, SHA256SUMS of the release decides.
    let (out, _) = install("", &tmp.path().join("runner2"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Another checksum: refused, nothing put on PATH.
    let (out, path) = install(&"0".repeat(64), &tmp.path().join("runner3"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not installed"));
    assert!(path.is_empty());
}

/// Copies a folder tree (files only).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs the Action's audit step as the Action runs it, on a copy of the example repository in
/// `dir`, with the inputs given; returns its output and the step outputs it recorded.
fn audit_step(dir: &Path, args: &str, sarif: &str, summary: &str) -> (Output, String) {
    let repo_root = repo();
    copy_tree(&repo_root.join("examples/ci"), dir);
    std::fs::create_dir(dir.join(".git")).unwrap();
    let outputs = dir.join("outputs");
    let out = Command::new("bash")
        .arg(repo_root.join("tools/action/audit.sh"))
        .current_dir(dir)
        .env("GPU_TRUST", binary())
        .env("NO_COLOR", "1")
        .env("INPUT_ARGS", args)
        .env("INPUT_SARIF", sarif)
        .env("INPUT_SUMMARY", summary)
        .env("GITHUB_WORKSPACE", dir)
        .env("GITHUB_STEP_SUMMARY", dir.join("step-summary.md"))
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "example/platform")
        .env("GITHUB_SHA", "0123abc")
        .output()
        .unwrap();
    let recorded = std::fs::read_to_string(&outputs).unwrap_or_default();
    (out, recorded)
}

/// The example workflow's arguments written one per line (a YAML block scalar, as workflows write
/// long argument lists): every line is read, each split into words, so the audit reads the
/// inventory on the second line (without it the manifests have no nodes: a partial audit, exit 2)
/// and writes the JUnit report the last line asks for.
#[test]
fn the_action_reads_every_line_of_a_block_scalar_of_args() {
    let step: Value = serde_saphyr::from_str(
        "with:\n  args: |\n    deploy/\n    inventory/nodes.yaml\n    --output junit=gpu-trust.junit.xml\n",
    )
    .unwrap();
    let args = step["with"]["args"].as_str().unwrap();
    assert_eq!(args.lines().count(), 3, "{args:?}");
    let dir = tempfile::tempdir().unwrap();
    let (out, recorded) = audit_step(dir.path(), args, "gpu-trust.sarif", "true");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(recorded.contains("exit-code=1\n"), "{recorded}\n{stderr}");
    assert!(dir.path().join("gpu-trust.junit.xml").is_file(), "{stderr}");
}

/// The documented workflow uses the Action at this version's tag, with inputs the Action has; its
/// audit step, run as the Action runs it on the example repository, writes SARIF with URIs relative
/// to the repository, the JUnit report, the Markdown summary with links to the files at the commit,
/// and records exit 1 for the high finding without failing before the upload.
#[test]
fn the_example_workflow_audits_through_the_action() {
    let repo_root = repo();
    let example = repo_root.join("examples/ci");
    let workflow = yaml(&example.join("github-workflow.yml"));
    let action = yaml(&repo_root.join("action.yml"));
    let steps = workflow["jobs"]["audit"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("gpu-trust/gpu-trust@"))
        })
        .expect("a step that uses the gpu-trust Action");
    assert_eq!(
        step["uses"],
        format!("gpu-trust/gpu-trust@v{}", env!("CARGO_PKG_VERSION"))
    );
    let inputs = step["with"].as_object().unwrap();
    for name in inputs.keys() {
        assert!(
            action["inputs"].get(name).is_some(),
            "the workflow gives input {name}, which action.yml does not have"
        );
    }
    let input = |name: &str| -> String {
        inputs
            .get(name)
            .or_else(|| action["inputs"][name].get("default"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    // The Action's steps run the scripts this test runs.
    let runs: Vec<&str> = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(runs.contains(&"\"$GITHUB_ACTION_PATH/tools/action/install.sh\""));
    assert!(runs.contains(&"\"$GITHUB_ACTION_PATH/tools/action/audit.sh\""));

    let dir = tempfile::tempdir().unwrap();
    let (out, recorded) = audit_step(
        dir.path(),
        &input("args"),
        &input("sarif"),
        &input("summary"),
    );
    let summary = dir.path().join("step-summary.md");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the step itself never fails: {stderr}"
    );
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(recorded.contains("exit-code=1\n"), "{recorded}");
    assert!(recorded.contains(&format!("sarif={}\n", input("sarif"))));

    let sarif: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(input("sarif"))).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        // Manifests, the node inventory, or the policy (a contract GT503 finds unmeasured).
        assert!(
            uri.starts_with("deploy/") || uri.starts_with("inventory/") || uri == "policy.yaml",
            "{uri}"
        );
    }
    let junit = std::fs::read_to_string(dir.path().join("gpu-trust.junit.xml")).unwrap();
    assert!(junit.contains("<failure "));
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.starts_with("### gpu-trust audit"));
    assert!(markdown.contains("**Fails** (exit 1)"), "{markdown}");
    assert!(
        markdown.contains("](https://github.com/example/platform/blob/0123abc/deploy/"),
        "{markdown}"
    );
}

/// `python3 -m check_jsonschema` from the environment CI sets up, or `None` (and a note) when it is
/// not installed and CI is not set.
fn check_jsonschema() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("GPU_TRUST_PYTHON").map(PathBuf::from),
        Some(repo().join("target/ci-python/bin/python")),
    ];
    let found = candidates.into_iter().flatten().find(|python| {
        python.is_file()
            && std::process::Command::new(python)
                .args(["-m", "check_jsonschema", "--version"])
                .output()
                .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but check-jsonschema (PyPI) is not installed in GPU_TRUST_PYTHON"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: check-jsonschema (PyPI) is not installed"
        );
    }
    found
}

/// The release workflow, the example workflow and the Action validate against the schemas GitHub
/// Actions files are checked with (SchemaStore's, as vendored by check-jsonschema), and the scripts
/// pass shellcheck. This is as far as they can be checked here: the workflows have not run on
/// GitHub.
#[test]
fn workflows_and_the_action_are_well_formed() {
    let root = repo();
    let workflows = [
        root.join(".github/workflows/release.yml"),
        root.join("examples/ci/github-workflow.yml"),
    ];
    for w in &workflows {
        let doc = yaml(w);
        assert!(doc["jobs"].is_object(), "{}", w.display());
    }
    let action = yaml(&root.join("action.yml"));
    assert_eq!(action["runs"]["using"], "composite");
    for step in action["runs"]["steps"].as_array().unwrap() {
        if step.get("run").is_some() {
            assert_eq!(
                step["shell"], "bash",
                "a composite run step names its shell"
            );
        }
        // The CodeQL Action's v3 is deprecated (action.yml says where): the upload uses v4 or later.
        if let Some(uses) = step["uses"].as_str() {
            if let Some(version) = uses.strip_prefix("github/codeql-action/upload-sarif@v") {
                let major: u32 = version.split('.').next().unwrap().parse().unwrap();
                assert!(major >= 4, "action.yml uses {uses}");
            }
        }
    }

    if let Some(python) = check_jsonschema() {
        for (schema, files) in [
            ("vendor.github-workflows", workflows.to_vec()),
            ("vendor.github-actions", vec![root.join("action.yml")]),
        ] {
            let out = std::process::Command::new(&python)
                .args(["-m", "check_jsonschema", "--builtin-schema", schema])
                .args(&files)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{schema}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    shellcheck(&[
        &root.join("tools/release.sh"),
        &root.join("tools/action/install.sh"),
        &root.join("tools/action/audit.sh"),
    ]);
}

/// Runs Debian's `shellcheck` on `scripts` and fails on any finding; skips when it is not installed,
/// except under `CI`, where its absence fails.
pub(crate) fn shellcheck(scripts: &[&std::path::Path]) {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("shellcheck"))
            .find(|p| p.is_file())
    });
    match found {
        Some(shellcheck) => {
            let out = std::process::Command::new(shellcheck)
                .args(scripts)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but shellcheck (Debian's shellcheck) is not installed"
            );
            let _ = writeln!(std::io::stderr(), "SKIPPED: shellcheck is not installed");
        }
    }
}
