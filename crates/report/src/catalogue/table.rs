//! The catalogue as text: a table of every model, or one model's facts, its MIG profiles and its
//! maximal layouts.

use super::Layouts;
use crate::text::{table, Fit};
use gpu_trust_model::catalogue::{self, CcSupport, GpuModel, MemoryBasis, MigProfile};

/// The reference tables wrap at 160 columns wherever they go.
const WIDTH: Fit = Fit::Width(160);

/// Every model: memory, architecture, compute capability, MIG, confidential computing, product
/// labels.
pub fn catalogue() -> String {
    let mut t = table(
        WIDTH,
        [
            "id",
            "memory",
            "arch",
            "compute",
            "MIG",
            "CC",
            "product labels",
        ],
    );
    for m in catalogue::all() {
        t.add_row(vec![
            m.id.to_string(),
            format!("{} MiB", m.memory_mib),
            m.architecture.to_string(),
            m.compute_capability.to_string(),
            match m.mig {
                Some(g) => format!("yes ({} slices)", g.memory_slices),
                None => "no".to_string(),
            },
            cc_short(m.confidential_computing).to_string(),
            if m.product_labels.is_empty() {
                "(none known; matched by PCI id)".to_string()
            } else {
                m.product_labels.join(", ")
            },
        ]);
    }
    let mut out = t.to_string();
    out.push_str(&format!(
        "\n{} models. `gpu-trust catalogue MODEL` shows one model's MIG profiles and layouts.\n",
        catalogue::all().len()
    ));
    out
}

fn cc_short(cc: CcSupport) -> &'static str {
    match cc {
        CcSupport::Unsupported => "no",
        CcSupport::SingleGpuOrProtectedPcie => "1 GPU (more: ppcie)",
        CcSupport::SingleAndMultiGpu => "1 or more GPUs",
        CcSupport::SingleGpu => "1 GPU",
    }
}

fn cc_long(cc: CcSupport) -> &'static str {
    match cc {
        CcSupport::Unsupported => "not supported",
        CcSupport::SingleGpuOrProtectedPcie => {
            "one GPU per confidential VM; several only in protected PCIe mode (cc.mode=ppcie)"
        }
        CcSupport::SingleAndMultiGpu => "single-GPU and multi-GPU passthrough",
        CcSupport::SingleGpu => "single-GPU passthrough",
    }
}

/// One model: its facts and sources, its MIG profiles and, when given, its maximal layouts.
pub fn model(model: &GpuModel, layouts: Option<&Layouts>) -> String {
    let pci: Vec<String> = model
        .pci_device_ids
        .iter()
        .map(ToString::to_string)
        .collect();
    let mut out = format!("{}: {}\n", model.id, model.display_name);
    out.push_str(&format!(
        "  {}, compute capability {}, {} MiB\n",
        model.architecture, model.compute_capability, model.memory_mib
    ));
    out.push_str(&format!("  PCI ids: {}\n", pci.join(", ")));
    out.push_str(&format!(
        "  product labels: {}\n",
        if model.product_labels.is_empty() {
            "none known".to_string()
        } else {
            model.product_labels.join(", ")
        }
    ));
    out.push_str(&format!(
        "  confidential computing: {}\n",
        cc_long(model.confidential_computing)
    ));
    out.push_str(&format!("  source: {}\n", model.source));
    let Some(g) = model.mig else {
        out.push_str("  MIG: not supported (whole GPUs, time-slicing or MPS only)\n");
        return out;
    };
    out.push_str(&format!(
        "  MIG: {} memory slices, {} compute slices ({})\n\n",
        g.memory_slices, g.compute_slices, g.source
    ));
    let mut t = table(
        WIDTH,
        [
            "profile",
            "id",
            "memory",
            "SMs",
            "max",
            "placements",
            "variant",
        ],
    );
    for p in g.profiles {
        t.add_row(vec![
            p.name.to_string(),
            p.profile_id.map_or("-".to_string(), |i| i.to_string()),
            memory_cell(p),
            p.sms.map_or("-".to_string(), |s| s.to_string()),
            p.max_count.to_string(),
            p.placements(),
            variant_text(p).to_string(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    if g.profiles
        .iter()
        .any(|p| p.memory_basis == MemoryBasis::Derived)
    {
        out.push_str(
            "~ derived from the GPU's total memory (conservative), not read from hardware\n",
        );
    }
    if let Some(l) = layouts {
        out.push_str(&format!(
            "\n{} maximal layouts over {} ({} valid layouts, maximal or not):\n",
            l.maximal_count,
            l.profiles.join(", "),
            l.valid_count
        ));
        let width = l.maximal_count.to_string().len();
        for (n, layout) in l.maximal.iter().enumerate() {
            let free = layout.free_slices();
            let unused = if free.is_empty() {
                String::new()
            } else {
                let s: Vec<String> = free.iter().map(u8::to_string).collect();
                format!("  (unused memory slices: {})", s.join(","))
            };
            out.push_str(&format!("  {:>width$}. {layout}{unused}\n", n + 1));
        }
    }
    out
}

fn memory_cell(p: &MigProfile) -> String {
    let gib = p.memory_mib as f64 / 1024.0;
    match p.memory_basis {
        MemoryBasis::Measured => format!("{} MiB ({gib:.2} GiB)", p.memory_mib),
        MemoryBasis::Derived => format!("~{} MiB ({gib:.2} GiB)", p.memory_mib),
    }
}

fn variant_text(p: &MigProfile) -> &'static str {
    use gpu_trust_model::catalogue::ProfileVariant;
    match p.variant {
        ProfileVariant::Standard => "standard",
        ProfileVariant::MediaExtensions => "+me: media extensions, one per GPU",
        ProfileVariant::ExtraMemory => "1 compute slice on 2 memory slices",
        ProfileVariant::Attribute => "base size with +gfx (graphics) or -me (no media engines)",
    }
}
