//! Small helpers: quantities, image tags, UUID lists.

use gpu_trust_model::Version;

/// A Kubernetes quantity as a whole number (extended resources are integers): `4`, `2k`, `1Ki`,
/// `1e3`. A fraction rounds up; a negative or unreadable quantity is `None`.
pub(crate) fn quantity_u64(q: &str) -> Option<u64> {
    let q = q.trim();
    if q.is_empty() || q.starts_with('-') {
        return None;
    }
    const SUFFIXES: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("m", 0.001),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let (number, factor) = SUFFIXES
        .iter()
        .find_map(|(s, f)| q.strip_suffix(s).map(|n| (n, *f)))
        .unwrap_or((q, 1.0));
    if let Ok(n) = number.parse::<u64>() {
        if factor == 1.0 {
            return Some(n);
        }
    }
    let value: f64 = number.parse().ok()?;
    let v = (value * factor).ceil();
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return None;
    }
    Some(v as u64)
}

/// The version in an image tag: `nvcr.io/nvidia/k8s/container-toolkit:v1.17.4-ubuntu20.04` is
/// `v1.17.4`; digests and tags without a leading number give `None`.
pub(crate) fn image_version(image: &str) -> Option<Version> {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    let (_, tag) = last.split_once(':')?;
    Version::parse(tag)
}

/// The image's repository name without registry and tag (`container-toolkit`).
pub(crate) fn image_name(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split(':').next().unwrap_or(last)
}

/// GPU and MIG UUIDs found in a text (HAMi annotations list them with counts and memory between
/// separators: `GPU-3c7d...,NVIDIA,20000,30:;`).
pub(crate) fn uuids(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .split([',', ':', ';', '"', ' ', '[', ']', '{', '}'])
        .filter(|t| (t.starts_with("GPU-") || t.starts_with("MIG-")) && t.len() > 4)
        .map(str::to_string)
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(quantity_u64("4"), Some(4));
        assert_eq!(quantity_u64("2k"), Some(2000));
        assert_eq!(quantity_u64("1Ki"), Some(1024));
        assert_eq!(quantity_u64("500m"), Some(1));
        assert_eq!(quantity_u64("1e3"), Some(1000));
        assert_eq!(quantity_u64("-1"), None);
        assert_eq!(quantity_u64("lots"), None);
    }

    #[test]
    fn image_tags() {
        assert_eq!(
            image_version("nvcr.io/nvidia/k8s/container-toolkit:v1.17.4-ubuntu20.04")
                .map(|v| v.parts),
            Some(vec![1, 17, 4])
        );
        assert_eq!(image_version("localhost:5000/driver"), None);
        assert_eq!(
            image_name("nvcr.io/nvidia/driver:550.127.05-ubuntu22.04"),
            "driver"
        );
    }

    #[test]
    fn hami_uuid_lists() {
        assert_eq!(
            uuids("GPU-aaaa,NVIDIA,20000,30:GPU-bbbb,NVIDIA,20000,30:;"),
            ["GPU-aaaa", "GPU-bbbb"]
        );
    }
}
