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
        fraction_env: None,
        override_flags: &["--kv-cache-memory-bytes", "--kv-cache-memory"],
        default_fraction: 0.9,
        underscores: true,
    },
    Engine {
        engine: InferenceEngine::Sglang,
        images: &["sglang"],
        programs: &["sglang.launch_server", "sglang"],
        fraction_env: None,
        override_flags: &[],
        default_fraction: 0.88,
        underscores: false,
    },
    Engine {
        engine: InferenceEngine::Tgi,
        images: &["text-generation-inference"],
        programs: &["text-generation-launcher"],
        fraction_env: Some("CUDA_MEMORY_FRACTION"),
        override_flags: &[],
        default_fraction: 1.0,
        underscores: false,
    },
];

/// A server that runs one of the engines above with the engine's own arguments and defaults.
struct Wrapper {
    /// What it is called in messages.
    name: &'static str,
    /// Substrings of the image reference (lower-cased) that identify it.
    images: &'static [&'static str],
    engine: InferenceEngine,
    /// The flag that chooses another backend, and the values that keep the engine (the default
    /// among them).
    backend: (&'static str, &'static [&'static str]),
}

/// Sources: kserve/kserve `config/runtimes/kserve-huggingfaceserver.yaml` (the ClusterServingRuntime
/// of `modelFormat: huggingface`, image `kserve/huggingfaceserver`) and
/// `python/huggingfaceserver/huggingfaceserver/__main__.py`: `--backend` defaults to `auto`, which
/// loads the model with vLLM when vLLM is installed and supports the architecture (the README: "If
/// available for a model, vLLM is set as the default backend"; `--backend=huggingface` turns it
/// off), and vLLM's own engine arguments are added to the server's parser (a vLLM
/// `FlexibleArgumentParser`), so `--gpu-memory-utilization` and its default are vLLM's. The
/// vLLM production stack (vllm-project/production-stack) runs `vllm serve` in `lmcache/vllm-openai`
/// images, which the vLLM engine above recognises by name.
const WRAPPERS: &[Wrapper] = &[Wrapper {
    name: "KServe's Hugging Face runtime",
    images: &["huggingfaceserver"],
    engine: InferenceEngine::Vllm,
    backend: ("--backend", &["auto", "vllm"]),
}];

/// The first inference server among the containers (init containers excluded).
pub(crate) fn detect(containers: &[ContainerInfo]) -> Option<InferenceServer> {
    containers.iter().filter(|c| !c.is_init).find_map(|c| {
        if let Some(w) = WRAPPERS.iter().find(|w| image_is(w.images, c)) {
            let (flag, keeps) = w.backend;
            if flag_value(&c.argv, flag, true).is_some_and(|b| !keeps.contains(&b.as_str())) {
                // Another backend than the engine: no up-front reservation of the engine's.
                return None;
            }
            let engine = ENGINES.iter().find(|e| e.engine == w.engine)?;
            let mut server = reservation(engine, c);
            server.via = Some(w.name.to_string());
            return Some(server);
        }
        ENGINES
            .iter()
            .find(|e| is_engine(e, c))
            .map(|e| reservation(e, c))
    })
}

/// Whether the image of `c` is one of `images`: the image name, not the registry path
/// (`.../vllm-openai:v0.6` but not `.../not-vllm-helper`).
fn image_is(images: &[&str], c: &ContainerInfo) -> bool {
    let image = c.image.to_ascii_lowercase();
    let name = image
        .rsplit('/')
        .next()
        .unwrap_or(&image)
        .split([':', '@'])
        .next()
        .unwrap_or("");
    images
        .iter()
        .any(|i| name.contains(i) || image.contains(&format!("/{i}")))
}

fn is_engine(e: &Engine, c: &ContainerInfo) -> bool {
    if image_is(e.images, c) {
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
        via: None,
    };
    if let Some(flag) = e
        .override_flags
        .iter()
        .find(|f| flag_value(&c.argv, f, e.underscores).is_some())
    {
        return server(None, Some((*flag).to_string()));
    }
    // The flag that sets the reserved fraction of device memory (the model's, per engine).
    let fraction_flag = e.engine.fraction_flag();
    if let Some(v) = flag_value(&c.argv, fraction_flag, e.underscores) {
        return server(v.parse::<f64>().ok(), Some(fraction_flag.to_string()));
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

    /// KServe's Hugging Face runtime runs vLLM with vLLM's flags and defaults, unless its backend
    /// is set to another.
    #[test]
    fn kserve_huggingface_runtime_runs_vllm() {
        let args = [
            "--model_name=llama",
            "--model_id=meta-llama/Llama-3.1-8B-Instruct",
        ];
        let s = detect(&[c("kserve/huggingfaceserver:v0.15.2-gpu", &args)]).unwrap();
        assert_eq!(s.engine, InferenceEngine::Vllm);
        assert_eq!((s.reserved_fraction, s.flag), (Some(0.9), None));
        assert_eq!(s.via.as_deref(), Some("KServe's Hugging Face runtime"));
        let s = detect(&[c(
            "kserve/huggingfaceserver:v0.15.2-gpu",
            &["--model_name=llama", "--gpu_memory_utilization=0.3"],
        )])
        .unwrap();
        assert_eq!(s.reserved_fraction, Some(0.3));
        assert!(detect(&[c(
            "kserve/huggingfaceserver:v0.15.2-gpu",
            &["--model_name=llama", "--backend=huggingface"]
        )])
        .is_none());
        assert!(detect(&[c(
            "kserve/huggingfaceserver:v0.15.2-gpu",
            &["--backend", "vllm"]
        )])
        .is_some());
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
