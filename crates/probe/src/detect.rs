//! Which sharing mechanism is in force between the two roles, from what NVML and the environment say.
//! Pure: the real backend gathers the facts, this decides.

use gpu_trust_model::evidence::MeasuredMechanism;

/// What is known of one role's device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoleIdentity<'a> {
    /// GPU UUID, or MIG UUID for a MIG device.
    pub uuid: Option<&'a str>,
    /// For a MIG device, the physical GPU's UUID.
    pub parent_uuid: Option<&'a str>,
    pub is_mig: bool,
}

/// Facts about the victim's GPU and host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostFacts<'a> {
    pub mps: bool,
    /// `default`, `exclusive-process`, `prohibited` or `exclusive-thread`.
    pub compute_mode: Option<&'a str>,
    pub mig_mode: Option<bool>,
}

/// A UUID without its `GPU-` / `MIG-` prefix, lower-case, so that NVML's and the driver API's forms compare.
pub fn normalise_uuid(uuid: &str) -> String {
    let t = uuid.trim();
    let t = t
        .strip_prefix("GPU-")
        .or_else(|| t.strip_prefix("MIG-"))
        .unwrap_or(t);
    t.to_ascii_lowercase()
}

/// The driver API's 16 UUID bytes as `8-4-4-4-12` hex, the way NVML prints them after the prefix.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

/// Decides the mechanism; the notes say why, or what is unusual.
pub fn classify(
    victim: RoleIdentity<'_>,
    aggressor: RoleIdentity<'_>,
    host: HostFacts<'_>,
) -> (MeasuredMechanism, Vec<String>) {
    let mut notes = Vec::new();
    let (Some(v_uuid), Some(a_uuid)) = (victim.uuid, aggressor.uuid) else {
        notes.push("the device of a role could not be identified".into());
        return (MeasuredMechanism::Unknown, notes);
    };
    let physical = |r: &RoleIdentity<'_>, uuid: &str| normalise_uuid(r.parent_uuid.unwrap_or(uuid));
    if physical(&victim, v_uuid) != physical(&aggressor, a_uuid) {
        notes.push("victim and aggressor are on different physical GPUs".into());
        return (MeasuredMechanism::SeparateGpus, notes);
    }
    if victim.is_mig != aggressor.is_mig {
        notes.push(
            "one role is on a MIG instance and the other on the whole GPU: CUDA cannot use a GPU in MIG mode without a MIG device"
                .into(),
        );
        return (MeasuredMechanism::Unknown, notes);
    }
    if victim.is_mig {
        if normalise_uuid(v_uuid) == normalise_uuid(a_uuid) {
            if host.mps {
                notes
                    .push("both roles are clients of an MPS server inside one MIG instance".into());
                return (MeasuredMechanism::MigMps, notes);
            }
            notes.push("both roles share one MIG instance, time-sliced".into());
            return (MeasuredMechanism::MigTimeSlicing, notes);
        }
        notes.push("the roles are on different MIG instances of one GPU".into());
        return (MeasuredMechanism::Mig, notes);
    }
    if host.mig_mode == Some(true) {
        notes.push("MIG mode is on: name a MIG device (MIG-...) for each role".into());
        return (MeasuredMechanism::Unknown, notes);
    }
    if host.mps {
        notes.push("an MPS control daemon serves this process: both roles are its clients".into());
        return (MeasuredMechanism::Mps, notes);
    }
    if host.compute_mode == Some("exclusive-process") {
        notes.push(
            "EXCLUSIVE_PROCESS compute mode without MPS: the second process is expected to get no context"
                .into(),
        );
        return (MeasuredMechanism::ExclusiveProcess, notes);
    }
    notes.push("both roles have their own context on one GPU: the driver time-slices them".into());
    (MeasuredMechanism::TimeSlicing, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GPU: &str = "GPU-5c3e7f1a-0b2d-4c1e-9f00-1234567890ab";
    const GPU2: &str = "GPU-11111111-0b2d-4c1e-9f00-1234567890ab";

    fn full(uuid: &str) -> RoleIdentity<'_> {
        RoleIdentity {
            uuid: Some(uuid),
            parent_uuid: None,
            is_mig: false,
        }
    }

    fn mig<'a>(uuid: &'a str, parent: &'a str) -> RoleIdentity<'a> {
        RoleIdentity {
            uuid: Some(uuid),
            parent_uuid: Some(parent),
            is_mig: true,
        }
    }

    #[test]
    fn one_gpu_without_mps_is_time_slicing() {
        let (m, notes) = classify(full(GPU), full(GPU), HostFacts::default());
        assert_eq!(m, MeasuredMechanism::TimeSlicing);
        assert!(!notes.is_empty());
    }

    #[test]
    fn mps_and_exclusive_process() {
        let mps = HostFacts {
            mps: true,
            compute_mode: Some("exclusive-process"),
            mig_mode: Some(false),
        };
        assert_eq!(
            classify(full(GPU), full(GPU), mps).0,
            MeasuredMechanism::Mps
        );
        let excl = HostFacts { mps: false, ..mps };
        assert_eq!(
            classify(full(GPU), full(GPU), excl).0,
            MeasuredMechanism::ExclusiveProcess
        );
    }

    #[test]
    fn mig_instances() {
        let a = "MIG-aaaaaaaa-0000-0000-0000-000000000001";
        let b = "MIG-aaaaaaaa-0000-0000-0000-000000000002";
        let h = HostFacts::default();
        assert_eq!(
            classify(mig(a, GPU), mig(b, GPU), h).0,
            MeasuredMechanism::Mig
        );
        assert_eq!(
            classify(mig(a, GPU), mig(a, GPU), h).0,
            MeasuredMechanism::MigTimeSlicing
        );
        let mps = HostFacts { mps: true, ..h };
        assert_eq!(
            classify(mig(a, GPU), mig(a, GPU), mps).0,
            MeasuredMechanism::MigMps
        );
        assert_eq!(
            classify(mig(a, GPU), mig(b, GPU2), h).0,
            MeasuredMechanism::SeparateGpus
        );
        assert_eq!(
            classify(mig(a, GPU), full(GPU), h).0,
            MeasuredMechanism::Unknown
        );
    }

    #[test]
    fn different_gpus_and_unknowns() {
        let h = HostFacts::default();
        assert_eq!(
            classify(full(GPU), full(GPU2), h).0,
            MeasuredMechanism::SeparateGpus
        );
        assert_eq!(
            classify(RoleIdentity::default(), full(GPU), h).0,
            MeasuredMechanism::Unknown
        );
        let mig_on = HostFacts {
            mig_mode: Some(true),
            ..h
        };
        assert_eq!(
            classify(full(GPU), full(GPU), mig_on).0,
            MeasuredMechanism::Unknown
        );
    }

    #[test]
    fn uuid_forms_compare() {
        assert_eq!(normalise_uuid("GPU-ABC"), "abc");
        assert_eq!(normalise_uuid("MIG-abc"), "abc");
        let bytes = [
            0x5c, 0x3e, 0x7f, 0x1a, 0x0b, 0x2d, 0x4c, 0x1e, 0x9f, 0x00, 0x12, 0x34, 0x56, 0x78,
            0x90, 0xab,
        ];
        assert_eq!(format_uuid(&bytes), normalise_uuid(GPU));
    }
}
