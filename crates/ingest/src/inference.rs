//! Inference servers found from a container's image and arguments, with how much device memory each
//! reserves up front: the reason a greedy server on a GPU shared without memory partitioning starves
//! its neighbours (rule GT107).

use gpu_trust_model::fleet::{ContainerInfo, InferenceEngine, InferenceServer};

/// One engine: how to recognise it and how it reserves memory.
struct Engine {
    engine: InferenceEngine,
    /// Substrings of the image reference (lower-cased) that identify the engine.
    images: &'static [&'static str],
    /// Programs or Python modules in the command line that identify it.
    programs: &'static [&'static str],
    /// The flag that sets the reserved fraction of device memory.
    fraction_flag: &'static str,
    /// An environment variable that sets the same fraction.
    fraction_env: Option<&'static str>,
    /// Flags that size the reservation in bytes instead (the fraction then does not apply).
    override_flags: &'static [&'static str],
    /// The fraction reserved when nothing is set.
    default_fraction: f64,
    /// Whether the server's parser reads `_` as `-` in flag names (`--gpu_memory_utilization`).
    underscores: bool,
}

/// Sources: vLLM engine arguments (`--gpu-memory-utilization`, default 0.9, "0.92 in newer
/// versions"; startup fails if less than utilization x total is free; `--kv-cache-memory-bytes`
/// overrides); SGLang server arguments (`--mem-fraction-static`, default chosen automatically with a
/// fixed headroom, about 0.88 as the fallback); Hugging Face TGI launcher (`--cuda-memory-fraction`,
/// env `CUDA_MEMORY_FRACTION`, default 1.0). vLLM's `FlexibleArgumentParser`
/// (vllm-project/vllm `vllm/utils/argparse_utils.py`) turns underscores in flag names into dashes.
const ENGINES: &[Engine] = &[
    Engine {
        engine: InferenceEngine::Vllm,
        images: &["vllm"],
        programs: &["vllm", "vllm.entrypoints"],
        fraction_flag: "--gpu-memory-utilization",
        fraction_env: None,
        override_flags: &["--kv-cache-memory-bytes", "--kv-cache-memory"],
        default_fraction: 0.9,
        underscores: true,
    },
    Engine {
        engine: InferenceEngine::Sglang,
        images: &["sglang"],
        programs: &["sglang.launch_server", "sglang"],
        fraction_flag: "--mem-fraction-static",
        fraction_env: None,
        override_flags: &[],
        default_fraction: 0.88,
        underscores: false,
    },
    Engine {
        engine: InferenceEngine::Tgi,
        images: &["text-generation-inference"],
        programs: &["text-generation-launcher"],
        fraction_flag: "--cuda-memory-fraction",
        fraction_env: Some("CUDA_MEMORY_FRACTION"),
        override_flags: &[],
        default_fraction: 1.0,
        underscores: false,
    },
];

/// The first inference server among the containers (init containers excluded).
pub(crate) fn detect(containers: &[ContainerInfo]) -> Option<InferenceServer> {
    containers.iter().filter(|c| !c.is_init).find_map(|c| {
        ENGINES
            .iter()
            .find(|e| is_engine(e, c))
            .map(|e| reservation(e, c))
    })
}

fn is_engine(e: &Engine, c: &ContainerInfo) -> bool {
    let image = c.image.to_ascii_lowercase();
    // The image name, not the registry path: `.../vllm-openai:v0.6` but not `.../not-vllm-helper`.
    let name = image
        .rsplit('/')
        .next()
        .unwrap_or(&image)
        .split([':', '@'])
        .next()
        .unwrap_or("");
    if e.images
        .iter()
        .any(|i| name.contains(i) || image.contains(&format!("/{i}")))
    {
        return true;
    }
    c.argv.iter().take(4).any(|a| {
        let a = a.to_ascii_lowercase();
        let base = a.rsplit('/').next().unwrap_or(&a);
        e.programs
            .iter()
            .any(|p| base == *p || base.starts_with(&format!("{p}.")))
    }) || c.argv.windows(2).any(|w| {
        w[0] == "-m"
            && e.programs
                .iter()
                .any(|p| w[1] == *p || w[1].starts_with(&format!("{p}.")))
    })
}

fn reservation(e: &Engine, c: &ContainerInfo) -> InferenceServer {
    let server = |fraction: Option<f64>, flag: Option<String>| InferenceServer {
        engine: e.engine,
        container: c.name.clone(),
        reserved_fraction: fraction,
        flag,
    };
    if let Some(flag) = e
        .override_flags
        .iter()
        .find(|f| flag_value(&c.argv, f, e.underscores).is_some())
    {
        return server(None, Some((*flag).to_string()));
    }
    if let Some(v) = flag_value(&c.argv, e.fraction_flag, e.underscores) {
        return server(v.parse::<f64>().ok(), Some(e.fraction_flag.to_string()));
    }
    if let Some(name) = e.fraction_env {
        if let Some(v) = c.env.get(name) {
            return server(v.parse::<f64>().ok(), Some(name.to_string()));
        }
    }
    server(Some(e.default_fraction), None)
}

/// The value of `--flag value` or `--flag=value`; the argument may also be one shell string
/// (`sh -c "vllm serve ... --flag 0.5"`).
fn flag_value(argv: &[String], flag: &str, underscores: bool) -> Option<String> {
    let words: Vec<&str> = argv.iter().flat_map(|a| a.split_whitespace()).collect();
    for (i, w) in words.iter().enumerate() {
        let (name, value) = match w.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (*w, None),
        };
        let name = if underscores && name.starts_with("--") {
            std::borrow::Cow::Owned(name.replace('_', "-"))
        } else {
            std::borrow::Cow::Borrowed(name)
        };
        let normalized = match value {
            Some(v) => format!("{name}={v}"),
            None => name.to_string(),
        };
        if let Some(rest) = normalized.strip_prefix(flag) {
            if let Some(v) = rest.strip_prefix('=') {
                return Some(v.trim_matches(['"', '\'']).to_string());
            }
            if rest.is_empty() {
                return words
                    .get(i + 1)
                    .map(|v| v.trim_matches(['"', '\'']).to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(image: &str, argv: &[&str]) -> ContainerInfo {
        ContainerInfo {
            name: "srv".into(),
            image: image.into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            ..ContainerInfo::default()
        }
    }

    #[test]
    fn vllm_flag_and_default() {
        let s = detect(&[c(
            "vllm/vllm-openai:v0.6.3",
            &["--model", "m", "--gpu-memory-utilization=0.45"],
        )])
        .unwrap();
        assert_eq!(s.engine, InferenceEngine::Vllm);
        assert_eq!(s.reserved_fraction, Some(0.45));
        assert_eq!(s.flag.as_deref(), Some("--gpu-memory-utilization"));
        let d = detect(&[c("registry.local/ml/serve:1", &["vllm", "serve", "m"])]).unwrap();
        assert_eq!(d.reserved_fraction, Some(0.9));
        assert_eq!(d.flag, None);
        let o = detect(&[c("vllm/vllm-openai", &["--kv-cache-memory-bytes", "8G"])]).unwrap();
        assert_eq!(o.reserved_fraction, None);
    }

    #[test]
    fn sglang_and_tgi() {
        let s = detect(&[c(
            "python:3.11",
            &[
                "python3",
                "-m",
                "sglang.launch_server",
                "--mem-fraction-static",
                "0.7",
            ],
        )])
        .unwrap();
        assert_eq!(
            (s.engine, s.reserved_fraction),
            (InferenceEngine::Sglang, Some(0.7))
        );
        let mut tgi = c("ghcr.io/huggingface/text-generation-inference:2.4", &[]);
        tgi.env.insert("CUDA_MEMORY_FRACTION".into(), "0.5".into());
        let t = detect(&[tgi]).unwrap();
        assert_eq!(
            (t.engine, t.reserved_fraction),
            (InferenceEngine::Tgi, Some(0.5))
        );
        assert!(detect(&[c("nginx:1.27", &["nginx"])]).is_none());
    }

    #[test]
    fn vllm_reads_underscores_as_dashes() {
        let s = detect(&[c(
            "lmcache/vllm-openai:2025-05-27-v1",
            &["m", "--gpu_memory_utilization", "0.8"],
        )])
        .unwrap();
        assert_eq!(s.reserved_fraction, Some(0.8));
        assert_eq!(s.flag.as_deref(), Some("--gpu-memory-utilization"));
        // SGLang's parser does not: its flag must be written as documented.
        let g = detect(&[c("lmsysorg/sglang", &["--mem_fraction_static", "0.5"])]).unwrap();
        assert_eq!(g.reserved_fraction, Some(0.88));
    }

    #[test]
    fn shell_wrapped_command_lines() {
        let s = detect(&[c(
            "vllm/vllm-openai",
            &["sh", "-c", "vllm serve m --gpu-memory-utilization 0.3"],
        )])
        .unwrap();
        assert_eq!(s.reserved_fraction, Some(0.3));
    }
}
