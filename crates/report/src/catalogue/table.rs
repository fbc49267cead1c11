//! The catalogue as text: a table of every model, or one model's facts, its MIG profiles and its
//! maximal layouts.

use super::Layouts;
use crate::text::{prose_line, table, wrap};
use gpu_trust_model::catalogue::{self, CcSupport, GpuModel, MemoryBasis, MigProfile};
use std::fmt::Write as _;

/// The widest the reference tables are laid out, however wide the terminal.
const WIDEST: usize = 160;

/// Every model: memory, architecture, compute capability, MIG, confidential computing, product
/// labels.
pub fn catalogue(width: usize) -> String {
    let width = width.min(WIDEST);
    let mut t = table(
        width,
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
    out.push('\n');
    out.push_str(&prose_line(
        &format!(
            "{} models. `gpu-trust catalogue MODEL` shows one model's MIG profiles and layouts.",
            catalogue::all().len()
        ),
        width,
        "",
    ));
    out.push('\n');
    out.push_str(&prose_line(
        "MIG products known by name only, their profiles not modelled:",
        width,
        "",
    ));
    for u in catalogue::UNMODELLED_MIG.iter() {
        let mut facts = Vec::new();
        if let Some(gb) = u.memory_gb {
            facts.push(format!("{gb} GB"));
        }
        if let Some(n) = u.max_instances {
            facts.push(format!("up to {n} instances"));
        }
        facts.push(format!("MIG from {}", u.min_driver));
        out.push_str(&prose_line(
            &format!("- {} ({}): {}", u.name, facts.join(", "), u.reason),
            width,
            "  ",
        ));
    }
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
pub fn model(model: &GpuModel, layouts: Option<&Layouts>, width: usize) -> String {
    let width = width.min(WIDEST);
    let pci: Vec<String> = model
        .pci_device_ids
        .iter()
        .map(ToString::to_string)
        .collect();
    let mut out = format!("{}: {}\n", model.id, model.display_name);
    let labels = if model.product_labels.is_empty() {
        "none known".to_string()
    } else {
        model.product_labels.join(", ")
    };
    for fact in [
        format!(
            "{}, compute capability {}, {} MiB",
            model.architecture, model.compute_capability, model.memory_mib
        ),
        format!("PCI ids: {}", pci.join(", ")),
        format!("product labels: {labels}"),
        format!(
            "confidential computing: {}",
            cc_long(model.confidential_computing)
        ),
        format!("source: {}", model.source),
    ] {
        out.push_str(&prose_line(&fact, width, "  "));
    }
    let Some(g) = model.mig else {
        out.push_str("  MIG: not supported (whole GPUs, time-slicing or MPS only)\n");
        return out;
    };
    out.push_str(&prose_line(
        &format!(
            "MIG: {} memory slices, {} compute slices ({})",
            g.memory_slices, g.compute_slices, g.source
        ),
        width,
        "  ",
    ));
    out.push('\n');
    let mut t = table(
        width,
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
        out.push('\n');
        out.push_str(&prose_line(
            &format!(
                "{} maximal layouts over {} ({} valid layouts, maximal or not):",
                l.maximal_count,
                l.profiles.join(", "),
                l.valid_count
            ),
            width,
            "",
        ));
        let digits = l.maximal_count.to_string().len();
        // Each layout wrapped under its first profile, after its number.
        let under = " ".repeat(2 + digits + 2);
        for (n, layout) in l.maximal.iter().enumerate() {
            let free = layout.free_slices();
            let unused = if free.is_empty() {
                String::new()
            } else {
                let s: Vec<String> = free.iter().map(u8::to_string).collect();
                format!("  (unused memory slices: {})", s.join(","))
            };
            let text = format!("{:>digits$}. {layout}{unused}", n + 1);
            let _ = writeln!(
                out,
                "  {}",
                wrap(&text, width.saturating_sub(under.len()), &under)
            );
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
