//! The kernels, checked without a GPU: the CUDA C source defines with C linkage every entry point the
//! loader asks for and no other; the embedded PTX was generated from this very source (its recorded
//! `cksum`), defines the same entry points with the same parameter types, and declares the target and ISA
//! that every GPU of the catalogue can JIT; and (when a C++ compiler is installed) the source compiles as
//! C++ with the CUDA built-ins stubbed, and (when the clang that produced the PTX is installed)
//! regenerating it gives the committed bytes.

use gpu_trust_model::catalogue;
use gpu_trust_probe::kernels::{
    ENTRY_POINTS, PTX, PTX_ISA, PTX_TARGET, PTX_TARGET_CAPABILITY, PTX_TEXT, SOURCE,
};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

fn without_comments(src: &str) -> String {
    src.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_entry_point_is_an_extern_c_kernel() {
    let code = without_comments(SOURCE);
    for name in ENTRY_POINTS {
        let decl = format!("extern \"C\" __global__ void {name}(");
        assert_eq!(
            code.matches(&decl).count(),
            1,
            "{name} must be defined once as `{decl}`"
        );
    }
    let declared = code.matches("extern \"C\" __global__").count();
    assert_eq!(
        declared,
        ENTRY_POINTS.len(),
        "a kernel the loader does not know"
    );
}

#[test]
fn brackets_balance() {
    let code = without_comments(SOURCE);
    for (open, close) in [('{', '}'), ('(', ')'), ('[', ']')] {
        let mut depth: i64 = 0;
        for (i, c) in code.chars().enumerate() {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
            }
            assert!(depth >= 0, "`{close}` without `{open}` at character {i}");
        }
        assert_eq!(depth, 0, "unbalanced `{open}{close}`");
    }
}

/// CUDA's built-ins as host C++, enough for a syntax and type check.
const PRELUDE: &str = r#"
#define __global__
#define __device__
struct gt_dim3 { unsigned int x, y, z; };
static gt_dim3 threadIdx, blockIdx, blockDim, gridDim;
static unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; *p += v; return o; }
"#;

#[test]
fn compiles_as_cpp_with_stubbed_builtins() {
    let Ok(version) = Command::new("c++").arg("--version").output() else {
        eprintln!("no C++ compiler: only the textual checks ran");
        return;
    };
    assert!(version.status.success());
    // Inline PTX is for the device; on the host the timer reads zero.
    let host: String = SOURCE
        .lines()
        .map(|l| {
            if l.contains("asm volatile") {
                "    t = 0;"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("probe.cpp");
    std::fs::write(&file, format!("{PRELUDE}\n{host}\n")).unwrap();
    let out = Command::new("c++")
        .args([
            "-std=c++17",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wno-unused-parameter",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The PTX type a kernel parameter of this CUDA C type is passed as (the types probe.cu uses).
fn ptx_param_type(param: &str) -> &'static str {
    if param.contains('*') {
        return ".u64";
    }
    let mut words: Vec<&str> = param.split_whitespace().filter(|w| *w != "const").collect();
    words.pop(); // the parameter's name
    match words.join(" ").as_str() {
        "u64" | "unsigned long long" => ".u64",
        "unsigned int" => ".u32",
        "float" => ".f32",
        other => panic!("no PTX mapping for the parameter type `{other}` (`{param}`): add it here"),
    }
}

/// `extern "C" __global__` kernels of the source: name to PTX parameter types.
fn source_kernels() -> BTreeMap<String, Vec<&'static str>> {
    let code = without_comments(SOURCE);
    let marker = "extern \"C\" __global__ void ";
    let mut kernels = BTreeMap::new();
    for (at, _) in code.match_indices(marker) {
        let rest = &code[at + marker.len()..];
        let open = rest.find('(').expect("a kernel without `(`");
        let close = rest.find(')').expect("a kernel without `)`");
        let name = rest[..open].trim().to_string();
        let params = rest[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "void")
            .map(ptx_param_type)
            .collect();
        assert!(
            kernels.insert(name.clone(), params).is_none(),
            "{name} defined twice"
        );
    }
    kernels
}

/// The PTX's lines without `//` comments.
fn ptx_code() -> Vec<&'static str> {
    PTX_TEXT
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect()
}

/// `.visible .entry` kernels of the PTX: name to parameter types, in declaration order.
fn ptx_kernels() -> BTreeMap<String, Vec<String>> {
    let lines = ptx_code();
    let mut kernels = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if !line.contains(".entry ") {
            continue;
        }
        assert!(
            line.starts_with(".visible .entry "),
            "a kernel the loader cannot find by name: `{line}`"
        );
        let name = line[".visible .entry ".len()..]
            .trim_end_matches('(')
            .trim()
            .to_string();
        let mut params = Vec::new();
        while i < lines.len() && lines[i] != ")" {
            // `.param .u64 gt_work_param_0,`
            let words: Vec<&str> = lines[i].split_whitespace().collect();
            assert_eq!(words.first(), Some(&".param"), "in {name}: `{}`", lines[i]);
            params.push(words[1].to_string());
            i += 1;
        }
        assert!(
            kernels.insert(name.clone(), params).is_none(),
            "{name} declared twice"
        );
    }
    kernels
}

/// The first value of a PTX directive (`.version 6.0` gives `6.0`).
fn directive(name: &str) -> Vec<&'static str> {
    ptx_code()
        .into_iter()
        .filter_map(|l| l.strip_prefix(name))
        .filter(|rest| rest.starts_with(' '))
        .map(str::trim)
        .collect()
}

/// A line of the header regenerate.sh writes: `// KEY: VALUE`.
fn header(key: &str) -> &'static str {
    let prefix = format!("// {key}: ");
    PTX_TEXT
        .lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("probe.ptx has no `{prefix}` header line"))
}

/// POSIX `cksum`: CRC-32 (polynomial 0x04C11DB7, most significant bit first) over the bytes and then the
/// length, least significant byte first, complemented.
fn posix_cksum(data: &[u8]) -> u32 {
    fn feed(crc: u32, byte: u8) -> u32 {
        let mut crc = crc ^ (u32::from(byte) << 24);
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
        }
        crc
    }
    let mut crc = data.iter().fold(0, |crc, &b| feed(crc, b));
    let mut len = data.len();
    while len > 0 {
        crc = feed(crc, (len & 0xff) as u8);
        len >>= 8;
    }
    !crc
}

#[test]
fn posix_cksum_matches_the_standard_check_value() {
    // `printf 123456789 | cksum` prints `930766865 9`.
    assert_eq!(posix_cksum(b"123456789"), 930_766_865);
    // `printf '' | cksum` prints `4294967295 0`.
    assert_eq!(posix_cksum(b""), 4_294_967_295);
}

#[test]
fn the_ptx_was_generated_from_this_source() {
    let recorded = header("source cksum");
    let actual = format!("{} {}", posix_cksum(SOURCE.as_bytes()), SOURCE.len());
    assert_eq!(
        recorded, actual,
        "kernels/probe.ptx is stale: probe.cu changed since it was generated; run \
         crates/probe/kernels/regenerate.sh and commit probe.ptx"
    );
}

#[test]
fn the_ptx_defines_the_source_kernels_with_the_same_parameters() {
    let source = source_kernels();
    let ptx = ptx_kernels();
    let mut wanted: Vec<&str> = ENTRY_POINTS.to_vec();
    wanted.sort_unstable();
    assert_eq!(
        source.keys().map(String::as_str).collect::<Vec<_>>(),
        wanted,
        "probe.cu's kernels against ENTRY_POINTS"
    );
    assert_eq!(
        ptx.keys().map(String::as_str).collect::<Vec<_>>(),
        wanted,
        "probe.ptx's entry points against ENTRY_POINTS"
    );
    for (name, params) in &source {
        assert_eq!(
            &ptx[name], params,
            "{name}: parameter types of probe.ptx against probe.cu"
        );
    }
}

#[test]
fn the_ptx_declares_the_documented_target_and_isa() {
    assert_eq!(directive(".version"), vec![PTX_ISA]);
    assert_eq!(directive(".target"), vec![PTX_TARGET]);
    assert_eq!(directive(".address_size"), vec!["64"]);
    let (major, minor) = PTX_TARGET_CAPABILITY;
    assert_eq!(PTX_TARGET, format!("sm_{major}{minor}"));
}

#[test]
fn every_catalogue_gpu_can_jit_the_ptx() {
    let (major, minor) = PTX_TARGET_CAPABILITY;
    let oldest = catalogue::all()
        .iter()
        .map(|m| (m.compute_capability.major, m.compute_capability.minor))
        .min()
        .expect("an empty catalogue");
    for model in catalogue::all() {
        let cc = (
            model.compute_capability.major,
            model.compute_capability.minor,
        );
        assert!(
            cc >= (major, minor),
            "{} (compute capability {}) is older than the PTX target {PTX_TARGET}",
            model.id,
            model.compute_capability
        );
    }
    // No higher than needed either: the target is the oldest GPU of the catalogue.
    assert_eq!(
        oldest,
        (major, minor),
        "the PTX target is not the oldest GPU of the catalogue"
    );
}

#[test]
fn the_embedded_image_is_the_ptx_text() {
    assert_eq!(PTX.to_bytes(), PTX_TEXT.as_bytes());
    assert!(PTX_TEXT.is_ascii());
}

#[test]
fn regenerating_with_the_recorded_clang_gives_the_committed_ptx() {
    let generator = header("generator");
    let installed = Command::new("clang")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        });
    if installed.as_deref() != Some(generator) {
        let _ = writeln!(std::io::stderr(),
            "clang `{generator}` is not installed (found {installed:?}): only the textual PTX checks ran"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("probe.ptx");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/regenerate.sh");
    let run = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let regenerated = std::fs::read_to_string(&out).unwrap();
    assert!(
        regenerated == PTX_TEXT,
        "kernels/probe.ptx differs from what regenerate.sh writes: run it and commit the result"
    );
}
