//! What schedulers record on a pod about the devices it got (HAMi's and Volcano's allocation
//! annotations, KAI Scheduler's GPU group label, NvFractions device annotation, reservation pods and
//! per-pod ConfigMaps), and annotations that name GPUs under the key of a scheduler gpu-trust does
//! not know. The keys are the isolation model's (`gpu_trust_model::isolation`); the co-location
//! analysis turns the records into sharing.

use gpu_trust_model::fleet::{PhysicalDevice, RecordedDevice};
use gpu_trust_model::isolation::{self as iso, Mechanism};
use std::collections::BTreeMap;

/// The most devices read from one annotation (HAMi's encoding lists a pod's devices, a few each).
const MAX_ENTRIES: usize = 64;

/// What a pod's metadata records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Records {
    /// The devices known schedulers recorded, sorted.
    pub devices: Vec<RecordedDevice>,
    /// Annotations naming GPUs under keys gpu-trust does not know (`key: value`), sorted.
    pub unknown: Vec<String>,
}

/// The records of a pod with these annotations and labels.
pub(crate) fn read(
    annotations: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
) -> Records {
    let mut out = Records::default();
    // The keys every row of the isolation table says its scheduler records devices under.
    for m in Mechanism::ALL {
        let request = &m.row().request;
        if let Some(value) = request.vgpu.and_then(|v| annotations.get(v.allocated)) {
            out.devices
                .extend(encoded(value).map(|(uuid, part)| RecordedDevice {
                    by: m,
                    device: PhysicalDevice::Gpu(uuid),
                    part,
                }));
        }
        for key in request.fraction.iter().flat_map(|f| f.recorded) {
            let values = annotations.iter().filter(|(k, _)| key.matches(k));
            out.devices.extend(
                values
                    .flat_map(|(_, v)| visible(v))
                    .map(|device| RecordedDevice {
                        by: m,
                        device,
                        part: None,
                    }),
            );
        }
    }
    // KAI's group labels: `runai-gpu-group`, and `runai-gpu-group/<group>` per group of a fraction
    // of several GPUs.
    for (key, group) in labels {
        let prefixed = key
            .strip_prefix(iso::KAI_GPU_GROUP)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        if prefixed && !group.is_empty() {
            out.devices
                .push(kai(PhysicalDevice::KaiGroup(group.clone())));
        }
    }
    for (key, value) in annotations {
        if !iso::known_gpu_annotation(key) && names_gpu_device(value) {
            let shown: String = value.chars().take(80).collect();
            out.unknown.push(format!("annotation {key}: {shown}"));
        }
    }
    out.devices.sort();
    out.devices.dedup();
    out
}

/// A record of KAI Scheduler's.
pub(crate) fn kai(device: PhysicalDevice) -> RecordedDevice {
    RecordedDevice {
        by: Mechanism::KaiFraction,
        device,
        part: None,
    }
}

/// The devices of HAMi's encoding (`UUID,type,memory,cores:` per device, `;` between containers),
/// each with the slot it names in brackets (`GPU-…[group2-3]`).
fn encoded(value: &str) -> impl Iterator<Item = (String, Option<String>)> + '_ {
    value
        .split([';', ':'])
        .filter_map(|entry| entry.split(',').next())
        .map(str::trim)
        .filter_map(|id| {
            let (uuid, rest) = match id.split_once('[') {
                Some((u, rest)) => (u, Some(rest)),
                None => (id, None),
            };
            let part = rest
                .and_then(|r| r.strip_suffix(']'))
                .filter(|p| !p.is_empty())
                .map(str::to_string);
            // As the scheduler wrote it: a GPU or MIG device's identifier.
            let named = (uuid.starts_with("GPU-") || uuid.starts_with("MIG-")) && uuid.len() > 4;
            named.then(|| (uuid.to_string(), part))
        })
        .take(MAX_ENTRIES)
}

/// The GPUs a list in `NVIDIA_VISIBLE_DEVICES`'s syntax names: UUIDs, CDI names of them
/// (`nvidia.com/gpu=GPU-…`, as KAI writes them when the device plugin uses CDI) and indices.
pub(crate) fn visible(value: &str) -> impl Iterator<Item = PhysicalDevice> + '_ {
    value
        .split(',')
        .map(|d| {
            let d = d.trim();
            d.rsplit_once('=').map_or(d, |(_, id)| id)
        })
        .filter_map(|d| {
            if is_uuid(d) {
                Some(PhysicalDevice::Gpu(d.to_string()))
            } else {
                d.parse().ok().map(PhysicalDevice::GpuIndex)
            }
        })
        .take(MAX_ENTRIES)
}

/// Whether a text is a GPU's or a MIG device's UUID as NVML writes them (`GPU-` or `MIG-` and a
/// hexadecimal UUID).
fn is_uuid(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("GPU-").or_else(|| s.strip_prefix("MIG-")) else {
        return false;
    };
    rest.len() >= 8 && rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// Whether an annotation's value names a GPU or MIG device by UUID anywhere in it.
fn names_gpu_device(value: &str) -> bool {
    value
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .take(1024)
        .any(is_uuid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn gpu(by: Mechanism, uuid: &str, part: Option<&str>) -> RecordedDevice {
        RecordedDevice {
            by,
            device: PhysicalDevice::Gpu(uuid.to_string()),
            part: part.map(str::to_string),
        }
    }

    /// HAMi's and Volcano's encodings, with the MIG slot of Volcano's dynamic MIG.
    #[test]
    fn allocation_annotations() {
        let r = read(
            &map(&[
                (
                    iso::HAMI_ALLOCATED,
                    "GPU-0a1b2c3d,NVIDIA,10000,30:;GPU-0a1b2c3e,NVIDIA,0,0:;",
                ),
                (
                    iso::VOLCANO_ALLOCATED,
                    "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448[group2-3],NVIDIA,10240,0:",
                ),
            ]),
            &BTreeMap::new(),
        );
        assert_eq!(
            r.devices,
            [
                gpu(Mechanism::HamiVgpu, "GPU-0a1b2c3d", None),
                gpu(Mechanism::HamiVgpu, "GPU-0a1b2c3e", None),
                gpu(
                    Mechanism::VolcanoVgpu,
                    "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448",
                    Some("group2-3")
                ),
            ]
        );
        assert!(r.unknown.is_empty());
    }

    /// KAI's group labels and NvFractions device annotation (indices or UUIDs, CDI names too).
    #[test]
    fn kai_groups_and_devices() {
        let r = read(
            &map(&[
                ("nvidia.com/container.main.gpus.devices", "1,2"),
                ("nvidia.com/container.main.gpu-memory.request", "10Gi"),
            ]),
            &map(&[
                (iso::KAI_GPU_GROUP, "g-1"),
                ("runai-gpu-group/g-2", "g-2"),
                ("runai-gpu-groupie", "no"),
            ]),
        );
        let devices: Vec<&PhysicalDevice> = r.devices.iter().map(|d| &d.device).collect();
        assert_eq!(
            devices,
            [
                &PhysicalDevice::GpuIndex(1),
                &PhysicalDevice::GpuIndex(2),
                &PhysicalDevice::KaiGroup("g-1".into()),
                &PhysicalDevice::KaiGroup("g-2".into()),
            ]
        );
        let cdi: Vec<PhysicalDevice> = visible("nvidia.com/gpu=GPU-aaaa1111,all,void").collect();
        assert_eq!(cdi, [PhysicalDevice::Gpu("GPU-aaaa1111".into())]);
    }

    /// A GPU named under a key no known scheduler writes is an unknown record; HAMi's GPU choice,
    /// CDI requests and kubectl's applied copy are not records.
    #[test]
    fn unknown_records() {
        let r = read(
            &map(&[
                (
                    "example.com/assigned-mig",
                    "MIG-4f2e9a10-77c1-5b3e-9d20-1a2b3c4d5e6f",
                ),
                (
                    "nvidia.com/use-gpuuuid",
                    "GPU-03f69c50-207a-2038-9b45-23cac89cb67d",
                ),
                ("cdi.k8s.io/gpu", "nvidia.com/gpu=GPU-03f69c50"),
                ("description", "runs on GPU nodes"),
            ]),
            &BTreeMap::new(),
        );
        assert!(r.devices.is_empty());
        assert_eq!(
            r.unknown,
            ["annotation example.com/assigned-mig: MIG-4f2e9a10-77c1-5b3e-9d20-1a2b3c4d5e6f"]
        );
    }
}
