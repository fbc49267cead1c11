//! The GPU catalogue: lookups by the names clusters use, and the consistency of the data.

use gpu_trust_model::catalogue::{
    self, Architecture, CcSupport, MemoryBasis, PciDeviceId, ProfileVariant,
};
use std::collections::BTreeSet;

fn id_of(name: &str) -> Option<&'static str> {
    catalogue::lookup(name).map(|m| m.id)
}

#[test]
fn product_labels_from_gpu_feature_discovery_resolve() {
    assert_eq!(id_of("NVIDIA-H100-80GB-HBM3"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("NVIDIA-A100-SXM4-40GB"), Some("A100-SXM4-40GB"));
    assert_eq!(id_of("Tesla-T4"), Some("T4"));
    assert_eq!(id_of("NVIDIA-L40S"), Some("L40S"));
    assert_eq!(id_of("NVIDIA-L40"), Some("L40"));
    assert_eq!(id_of("NVIDIA-A10G"), Some("A10G"));
    assert_eq!(id_of("NVIDIA-A10"), Some("A10"));
    assert_eq!(id_of("NVIDIA-A100-80GB-PCIe"), Some("A100-PCIE-80GB"));
    assert_eq!(id_of("NVIDIA-H200"), Some("H200-SXM-141GB"));
    assert_eq!(id_of("NVIDIA-H200-NVL"), Some("H200-NVL-141GB"));
    assert_eq!(id_of("NVIDIA-GH200-480GB"), Some("GH200-96GB"));
    assert_eq!(id_of("NVIDIA-B200"), Some("B200"));
}

#[test]
fn lookup_ignores_case_and_accepts_ids_and_product_names() {
    assert_eq!(id_of("nvidia-h100-80gb-hbm3"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("H100-SXM5-80GB"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("h100-sxm5-80gb"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("NVIDIA H100 80GB HBM3"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("  NVIDIA-L4  "), Some("L4"));
}

#[test]
fn sharing_and_single_strategy_suffixes_are_stripped() {
    assert_eq!(id_of("NVIDIA-L40S-SHARED"), Some("L40S"));
    assert_eq!(
        id_of("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
        Some("A100-SXM4-40GB")
    );
    assert_eq!(id_of("A100-SXM4-40GB-MIG-1g.5gb"), Some("A100-SXM4-40GB"));
    assert_eq!(
        id_of("NVIDIA-A100-80GB-PCIe-MIG-1g.10gb"),
        Some("A100-PCIE-80GB")
    );
    assert_eq!(
        id_of("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED"),
        Some("H100-SXM5-80GB")
    );
    assert_eq!(
        id_of("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me"),
        Some("H100-SXM5-80GB")
    );
}

#[test]
fn unknown_or_malformed_names_find_nothing() {
    for name in [
        "",
        "   ",
        "NVIDIA-H100",
        "NVIDIA-H100-80GB-HBM3-MIG-bad",
        "NVIDIA-H100-80GB-HBM3-EXTRA",
        "0x12345678",
        "0x233",
        "0xZZZZ",
        "GeForce-RTX-4090",
    ] {
        assert_eq!(id_of(name), None, "{name:?}");
    }
}

#[test]
fn pci_ids_in_mig_parted_form_resolve() {
    assert_eq!(id_of("0x233010DE"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("0x233010de"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("0x2330"), Some("H100-SXM5-80GB"));
    // H800 is configured with H100 80GB.
    assert_eq!(id_of("0x232410DE"), Some("H100-SXM5-80GB"));
    assert_eq!(id_of("0x20B710DE"), Some("A30"));
    assert_eq!(id_of("0x233510DE"), Some("H200-SXM-141GB"));
    assert_eq!(
        catalogue::lookup_pci(PciDeviceId(0x2901_10DE)).map(|m| m.id),
        Some("B200")
    );
    let h100 = catalogue::lookup("H100-SXM5-80GB").unwrap();
    assert_eq!(h100.pci_device_ids[0].to_string(), "0x233010DE");
    assert_eq!(h100.pci_device_ids[0].device(), 0x2330);
    assert_eq!(h100.pci_device_ids[0].vendor(), 0x10DE);
}

#[test]
fn every_name_of_a_model_finds_that_model_and_no_other() {
    let mut seen = BTreeSet::new();
    for m in catalogue::all() {
        for name in std::iter::once(m.id)
            .chain(std::iter::once(m.display_name))
            .chain(m.product_labels.iter().copied())
        {
            assert_eq!(id_of(name), Some(m.id), "{name}");
        }
        let own: BTreeSet<String> = std::iter::once(m.id)
            .chain(m.product_labels.iter().copied())
            .map(str::to_ascii_lowercase)
            .collect();
        for name in own {
            assert!(seen.insert(name.clone()), "{name} names two models");
        }
        for pci in m.pci_device_ids {
            assert_eq!(catalogue::lookup_pci(*pci).map(|x| x.id), Some(m.id));
            assert_eq!(id_of(&pci.to_string()), Some(m.id));
        }
        assert!(!m.pci_device_ids.is_empty(), "{} has no PCI id", m.id);
        assert!(!m.source.is_empty());
    }
}

#[test]
fn the_catalogue_covers_the_parts_clusters_run() {
    for id in [
        "A100-SXM4-40GB",
        "A100-PCIE-40GB",
        "A100-SXM4-80GB",
        "A100-PCIE-80GB",
        "A30",
        "H100-SXM5-80GB",
        "H100-PCIE-80GB",
        "H100-NVL-94GB",
        "H100-96GB",
        "GH200-96GB",
        "GH200-144GB",
        "H200-SXM-141GB",
        "H200-NVL-141GB",
        "B200",
        "GB200",
        "V100-SXM2-16GB",
        "V100-SXM2-32GB",
        "T4",
        "A10",
        "A10G",
        "A40",
        "L4",
        "L40",
        "L40S",
        "RTX-6000-ADA",
    ] {
        assert!(catalogue::lookup(id).is_some(), "{id} missing");
    }
}

#[test]
fn mig_support_follows_the_generation() {
    for m in catalogue::all() {
        let datacentre_mig_arch = matches!(
            m.architecture,
            Architecture::Ampere | Architecture::Hopper | Architecture::Blackwell
        );
        if m.supports_mig() {
            assert!(datacentre_mig_arch, "{}", m.id);
            assert!(m.compute_capability.major >= 8, "{}", m.id);
        }
    }
    for id in [
        "T4",
        "V100-SXM2-32GB",
        "L4",
        "L40S",
        "A10G",
        "A40",
        "RTX-6000-ADA",
    ] {
        assert!(!catalogue::lookup(id).unwrap().supports_mig(), "{id}");
    }
}

#[test]
fn confidential_computing_only_where_nvidia_lists_it() {
    let cc = |id: &str| catalogue::lookup(id).unwrap().confidential_computing;
    assert_eq!(cc("H100-SXM5-80GB"), CcSupport::SingleGpuOrProtectedPcie);
    assert_eq!(cc("H200-SXM-141GB"), CcSupport::SingleGpuOrProtectedPcie);
    assert_eq!(cc("B200"), CcSupport::SingleAndMultiGpu);
    assert_eq!(cc("B300"), CcSupport::SingleAndMultiGpu);
    for id in ["A100-SXM4-80GB", "A30", "L40S", "T4", "GH200-96GB", "GB200"] {
        assert!(!catalogue::lookup(id).unwrap().cc_capable(), "{id}");
    }
}

#[test]
fn profile_memory_is_what_the_instance_gets() {
    let h100 = catalogue::lookup("H100-SXM5-80GB").unwrap();
    let p = h100.profile("1g.10gb").unwrap();
    assert_eq!(p.memory_mib, 9984); // 9.75 GiB
    assert_eq!(p.memory_basis, MemoryBasis::Measured);
    assert_eq!(p.sms, Some(16));
    assert_eq!(p.profile_id, Some(19));
    assert_eq!(p.placements(), "{0,1,2,3,4,5,6}:1");
    assert_eq!(h100.profile("1g.20gb").unwrap().memory_mib, 20096);
    assert_eq!(h100.profile("3g.40gb").unwrap().placements(), "{0,4}:4");
    assert_eq!(h100.profile("7g.80gb").unwrap().memory_mib, 81152);
    let a100 = catalogue::lookup("A100-SXM4-40GB").unwrap();
    assert_eq!(a100.profile("1g.5gb").unwrap().memory_mib, 4864);
    let h200 = catalogue::lookup("NVIDIA-H200").unwrap();
    let p = h200.profile("1g.18gb").unwrap();
    assert_eq!(p.memory_basis, MemoryBasis::Derived);
    assert!(
        p.memory_mib < 18 * 1024,
        "derived figures stay below the name"
    );
}

#[test]
fn profiles_are_found_in_the_device_plugin_resource_form() {
    let h100 = catalogue::lookup("H100-SXM5-80GB").unwrap();
    let me = h100.profile("1g.10gb+me").unwrap();
    assert_eq!(me.variant, ProfileVariant::MediaExtensions);
    assert_eq!(h100.profile("1g.10gb.me"), Some(me));
    assert_eq!(h100.profile("nvidia.com/mig-1g.10gb.me"), Some(me));
    assert_eq!(me.resource_name(), "nvidia.com/mig-1g.10gb.me");
    assert_eq!(h100.profile("3C.3G.40GB").map(|p| p.name), Some("3g.40gb"));
    assert_eq!(h100.profile("1g.5gb"), None);
    assert_eq!(catalogue::lookup("L40S").unwrap().profile("1g.10gb"), None);
}

#[test]
fn a30_has_four_slices() {
    let a30 = catalogue::lookup("NVIDIA-A30").unwrap();
    let g = a30.mig.unwrap();
    assert_eq!(g.memory_slices, 4);
    assert_eq!(g.compute_slices, 4);
    assert_eq!(g.profile("2g.12gb").unwrap().placements(), "{0,2}:2");
    assert_eq!(g.profile("4g.24gb").unwrap().placements(), "{0}:4");
}

#[test]
fn every_profile_table_is_consistent() {
    for m in catalogue::all() {
        let Some(g) = m.mig else { continue };
        assert!(g.profiles.len() <= 64, "{}", m.id);
        assert!(g.memory_slices <= 8 && g.compute_slices <= g.memory_slices);
        let mut names = BTreeSet::new();
        for p in g.profiles {
            assert!(names.insert(p.name), "{} lists {} twice", m.id, p.name);
            assert_eq!(g.profile(p.name), Some(p));
            let g_count: u8 = p.name.split('g').next().unwrap().parse().unwrap();
            assert_eq!(g_count, p.compute_slices, "{} {}", m.id, p.name);
            assert!(p.compute_slices >= 1 && p.compute_slices <= g.compute_slices);
            assert!(!p.starts.is_empty() && p.max_count >= 1);
            assert!(usize::from(p.max_count) <= p.starts.len());
            for &s in p.starts {
                assert!(
                    s + p.memory_slices <= g.memory_slices,
                    "{} {}",
                    m.id,
                    p.name
                );
            }
            assert!(
                p.memory_mib > 0 && p.memory_mib <= m.memory_mib,
                "{} {}",
                m.id,
                p.name
            );
            if p.media_extensions() {
                assert_eq!(p.max_count, 1, "{} {}", m.id, p.name);
                assert!(p.name.ends_with("+me") || p.name.ends_with("+me.all"));
            }
            // The same memory slices give the same memory.
            for q in g.profiles {
                if q.memory_slices == p.memory_slices {
                    assert_eq!(q.memory_mib, p.memory_mib, "{} {} {}", m.id, p.name, q.name);
                }
                if q.memory_slices > p.memory_slices {
                    assert!(q.memory_mib > p.memory_mib);
                }
            }
        }
        let whole = g
            .profiles
            .iter()
            .find(|p| p.memory_slices == g.memory_slices);
        assert!(whole.is_some(), "{} has no whole-GPU profile", m.id);
        assert!(g.standard_profiles().count() >= 3);
    }
}

/// RTX PRO 6000 Blackwell: mig-parted's default config for 0x2BB510DE, as the catalogue reads it.
#[test]
fn rtx_pro_6000_blackwell_has_the_profiles_of_mig_parted() {
    let m = catalogue::lookup("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition").unwrap();
    assert_eq!(
        catalogue::lookup_pci(catalogue::PciDeviceId::nvidia(0x2BB5)).map(|m| m.id),
        Some(m.id)
    );
    let g = m.mig.unwrap();
    let standard: Vec<(&str, u8)> = g
        .standard_profiles()
        .map(|p| (p.name, p.max_count))
        .collect();
    assert_eq!(standard, [("1g.24gb", 4), ("2g.48gb", 2), ("4g.96gb", 1)]);
    for name in ["1g.24gb+gfx", "1g.24gb-me", "2g.48gb+me.all", "4g.96gb+gfx"] {
        assert!(g.profile(name).is_some(), "{name}");
    }
    // The device plugin's spelling of `+me.all`.
    assert!(g.profile("1g.24gb.me.all").is_some());
}

#[test]
fn close_names_are_suggested() {
    let s = catalogue::suggest("NVIDIA-H100-80GB");
    assert!(s.contains(&"NVIDIA-H100-80GB-HBM3"), "{s:?}");
    let s = catalogue::suggest("L40SX");
    assert!(s.contains(&"L40S"), "{s:?}");
    assert!(catalogue::suggest("quantum-accelerator-9000").len() <= 5);
}

#[test]
fn the_catalogue_serialises_in_camel_case() {
    let h100 = catalogue::lookup("H100-SXM5-80GB").unwrap();
    let v = serde_json::to_value(h100).unwrap();
    assert_eq!(v["id"], "H100-SXM5-80GB");
    assert_eq!(v["memoryMib"], 81559);
    assert_eq!(v["computeCapability"], "9.0");
    assert_eq!(v["pciDeviceIds"][0], "0x233010DE");
    assert_eq!(v["confidentialComputing"], "single-gpu-or-protected-pcie");
    assert_eq!(v["mig"]["memorySlices"], 8);
    assert_eq!(v["mig"]["profiles"][0]["name"], "1g.10gb");
    assert_eq!(v["mig"]["profiles"][0]["memoryMib"], 9984);
    assert_eq!(v["mig"]["profiles"][0]["memoryBasis"], "measured");
    assert!(v["mig"].get("cache").is_none());
}

/// The whole catalogue in one reviewable page: a changed fact shows up as a changed line.
#[test]
fn catalogue_snapshot() {
    let mut out = String::new();
    for m in catalogue::all() {
        let pci: Vec<String> = m.pci_device_ids.iter().map(ToString::to_string).collect();
        out.push_str(&format!(
            "{} | {} | {} MiB | {} {} | cc {} | {} | {}\n",
            m.id,
            m.display_name,
            m.memory_mib,
            m.architecture,
            m.compute_capability,
            m.confidential_computing.as_str(),
            pci.join(","),
            if m.product_labels.is_empty() {
                "-".to_string()
            } else {
                m.product_labels.join(",")
            }
        ));
        if let Some(g) = m.mig {
            out.push_str(&format!(
                "  mig {} memory / {} compute slices\n",
                g.memory_slices, g.compute_slices
            ));
            for p in g.profiles {
                out.push_str(&format!(
                    "  {:<11} id {:<4} {:>6} MiB {:<8} sms {:<4} max {} {}\n",
                    p.name,
                    p.profile_id.map_or("-".to_string(), |i| i.to_string()),
                    p.memory_mib,
                    format!("{:?}", p.memory_basis).to_lowercase(),
                    p.sms.map_or("-".to_string(), |s| s.to_string()),
                    p.max_count,
                    p.placements()
                ));
            }
        }
    }
    insta::assert_snapshot!("catalogue", out);
}

/// Every device id of mig-parted's default config (`deployments/systemd/config-default.yaml`, the
/// copy in the CLI's real-world corpus) names a model of the catalogue.
#[test]
fn every_device_id_of_mig_parted_s_default_config_is_in_the_catalogue() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cli/tests/corpus/real-world/mig-parted/deployments/systemd/config-default.yaml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let ids: std::collections::BTreeSet<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() == 10 && w.starts_with("0x") && w.ends_with("10DE"))
        .collect();
    assert!(ids.len() >= 27, "{ids:?}");
    let missing: Vec<&&str> = ids.iter().filter(|id| id_of(id).is_none()).collect();
    assert!(missing.is_empty(), "not in the catalogue: {missing:?}");
    assert_eq!(id_of("0x20B110DE"), Some("A100-PCIE-40GB"));
    assert_eq!(id_of("0x20B610DE"), Some("PG506-96GB"));
}

/// The MIG products of the MIG User Guide that have no model are known by name, with their
/// instance count where the guide gives it and why they are not modelled.
#[test]
fn the_mig_products_without_a_model_are_known_by_name() {
    for (label, instances) in [
        ("NVIDIA-RTX-PRO-6000-Blackwell-Workstation-Edition", Some(4)),
        (
            "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition",
            Some(4),
        ),
        ("NVIDIA-RTX-PRO-5000-Blackwell", Some(2)),
        ("NVIDIA RTX PRO 4500 Blackwell", Some(2)),
        ("NVIDIA GB300 (DGX Station)", None),
    ] {
        assert!(catalogue::lookup(label).is_none(), "{label} has a model");
        let u = catalogue::unmodelled_mig(label).unwrap_or_else(|| panic!("{label}"));
        assert_eq!(u.max_instances, instances, "{label}");
        assert!(!u.reason.is_empty());
    }
    assert!(catalogue::unmodelled_mig("NVIDIA-H100-80GB-HBM3").is_none());
}
