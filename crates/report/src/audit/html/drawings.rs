//! The GPU drawings: per node, the physical GPUs as SVG, MIG instances as slices at their placement,
//! time-sliced and MPS GPUs as one shared block with the replica count, tenants coloured and named.

use super::*;

/// What every drawing shares, defined once: the hatch pattern free instances are filled with, and a
/// memory-slice ruler per slice count in use (`<use>` refers to them within the page).
pub(super) fn svg_defs(slice_counts: &BTreeSet<u32>) -> String {
    let mut out = String::from(
        "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\" focusable=\"false\">\
         <defs><pattern id=\"gt-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f3f4f6\"/>\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9ca3af\" stroke-width=\"2\"/></pattern>",
    );
    for slices in slice_counts {
        let _ = write!(out, "<g id=\"gt-ruler-{slices}\">");
        for k in 0..*slices {
            let x = MARGIN + k * SLICE_W;
            let _ = write!(
                out,
                "<rect x=\"{x}\" y=\"4\" width=\"{SLICE_W}\" height=\"14\" fill=\"#e5e7eb\" stroke=\"#9ca3af\"/>\
                 <text x=\"{}\" y=\"14\" text-anchor=\"middle\" font-size=\"9\" fill=\"#4a4a4a\">{k}</text>",
                x + SLICE_W / 2
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</defs></svg>\n");
    out
}

/// Memory slices drawn for a GPU of `node` (8 when the model's geometry is unknown).
pub(super) fn slice_count(node: &NodeLayout) -> u32 {
    u32::from(node.memory_slices.unwrap_or(8).max(1))
}

pub(super) fn gib(mib: u64) -> String {
    let tenths = (mib * 10 + 512) / 1024;
    format!("{}.{} GiB", tenths / 10, tenths % 10)
}

pub(super) fn sharing_text(sharing: Sharing) -> String {
    match sharing {
        Sharing::Exclusive => "exclusive".to_string(),
        Sharing::TimeSlicing { replicas } => format!("time-slicing, {replicas} replicas"),
        Sharing::Mps { replicas } => format!("MPS, {replicas} clients"),
        Sharing::Mig => "MIG".to_string(),
        Sharing::Unknown => "sharing not known".to_string(),
    }
}

pub(super) fn node_summary(node: &NodeLayout) -> String {
    let model = node
        .model_name
        .as_deref()
        .or(node.model.as_deref())
        .or(node.product.as_deref())
        .unwrap_or("unknown GPU model");
    let mut s = format!("{} × {model}", node.gpus.len());
    let mut modes: BTreeSet<String> = BTreeSet::new();
    for g in &node.gpus {
        modes.insert(sharing_text(g.sharing));
    }
    if !modes.is_empty() {
        let _ = write!(s, " · {}", modes.into_iter().collect::<Vec<_>>().join(", "));
    }
    if node.hami {
        s.push_str(" · HAMi");
    }
    let _ = write!(s, " · {}", plural(node.tenants.len(), "tenant", "tenants"));
    s
}

pub(super) fn gpu_layouts(
    out: &mut String,
    layout: &[DrawnNode<'_>],
    listed: &[&NodeLayout],
    tenants: &TenantIndex,
) {
    out.push_str(
        "<section id=\"gpus\" aria-labelledby=\"h-gpus\">\n<h2 id=\"h-gpus\">GPU layouts</h2>\n",
    );
    if layout.is_empty() {
        out.push_str("<p>The input has no GPU node.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<p>Each GPU drawn across its memory slices. MIG instances sit at their placement; a time-sliced \
         or MPS GPU is one shared block. Tenants are coloured and named; a solid outline is observed, \
         dashed possible, dotted permitted.</p>\n",
    );
    if !listed.is_empty() {
        let _ = writeln!(
            out,
            "<p>The {} node layouts with the most tenants are drawn; <a href=\"#listed-nodes\">the other {}</a> \
             nodes are listed after them.</p>",
            layout.len(),
            listed.len()
        );
    }
    out.push_str("<ul class=\"tenants-legend\" aria-label=\"Tenant colours\">\n");
    for name in &tenants.names {
        let _ = writeln!(
            out,
            "<li data-tenant=\"{}\"><span class=\"tenant-key\" style=\"background:{}\" aria-hidden=\"true\"></span>{}</li>",
            tenants.id(name),
            tenants.colour(name),
            escape(name)
        );
    }
    out.push_str("</ul>\n");
    for (n, drawn) in layout.iter().enumerate() {
        let node = drawn.node;
        let ids = tenants.ids_of(node.tenants.iter().map(|t| t.tenant.as_str()));
        let _ = writeln!(
            out,
            "<details class=\"node\" id=\"node-{n}\" data-node=\"{}\" data-tenants=\"{ids}\"{}>",
            escape(&node.name),
            if n < OPEN_NODES { " open" } else { "" }
        );
        let title = if drawn.alike.is_empty() {
            node.name.clone()
        } else {
            format!(
                "{} and {}",
                node.name,
                more(drawn.alike.len(), "node alike", "nodes alike")
            )
        };
        let _ = writeln!(
            out,
            "<summary><h3>{}</h3><span class=\"meta\">{}</span></summary>",
            escape(&title),
            escape(&node_summary(node))
        );
        if !drawn.alike.is_empty() {
            let names: Vec<String> = drawn.alike.iter().map(|n| n.name.clone()).collect();
            let _ = writeln!(
                out,
                "<p class=\"meta alike\">The same GPUs and tenants: {}.</p>",
                escape(&names_text(&names, "node", "nodes"))
            );
        }
        let place = if node.line > 0 {
            format!("{}:{}", node.file, node.line)
        } else {
            node.file.clone()
        };
        let _ = write!(
            out,
            "<p class=\"meta\">Node object <code>{}</code>",
            escape(&place)
        );
        if let Some(mib) = node.memory_mib {
            let _ = write!(out, "; {} per GPU", gib(mib));
        }
        out.push_str(".</p>\n<div class=\"gpus\">\n");
        // Consecutive GPUs shared alike are drawn once.
        for (g, run) in drawn.runs().into_iter().enumerate() {
            gpu_figure(out, node, n, g, run, tenants);
        }
        out.push_str("</div>\n");
        if !node.tenants.is_empty() {
            let _ = writeln!(
                out,
                "<p>On this node (sharing its kernel, driver, toolkit and runtime): {}.</p>",
                escape(&presence_text(node))
            );
        }
        out.push_str("</details>\n");
    }
    if !listed.is_empty() {
        let _ = writeln!(
            out,
            "<h3 id=\"listed-nodes\">{} more, not drawn</h3>\n<div class=\"table-wrap\"><table class=\"grid\"><thead><tr>\
             <th scope=\"col\">Node</th><th scope=\"col\">GPUs</th><th scope=\"col\">Tenants</th></tr></thead>\n<tbody>",
            plural(listed.len(), "GPU node", "GPU nodes")
        );
        for node in listed {
            let ids = tenants.ids_of(node.tenants.iter().map(|t| t.tenant.as_str()));
            let _ = writeln!(
                out,
                "<tr class=\"listed-node\" data-tenants=\"{ids}\"><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&node.name),
                escape(&node_summary(node)),
                escape(&presence_text(node))
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    out.push_str("</section>\n");
}

/// The tenants on a node with their certainty, the first [`MAX_NAMED`] * 3 in the layout's order
/// (those running there first), and how many more at each certainty.
pub(super) fn presence_text(node: &NodeLayout) -> String {
    let limit = MAX_NAMED * 3;
    let mut list: Vec<String> = node
        .tenants
        .iter()
        .take(limit)
        .map(|t| format!("{} ({})", t.tenant, t.certainty))
        .collect();
    if node.tenants.len() > limit {
        list.push(more_by_certainty(
            node.tenants[limit..].iter().map(|t| t.certainty),
        ));
    }
    list.join(", ")
}

/// `and 996 more tenants (996 permitted)`: the tenants a list leaves out, by certainty, so that no
/// reader takes them for tenants running there.
pub(super) fn more_by_certainty(rest: impl Iterator<Item = Certainty>) -> String {
    let mut counts: BTreeMap<Certainty, usize> = BTreeMap::new();
    for c in rest {
        *counts.entry(c).or_default() += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
    format!(
        "and {} ({})",
        more(counts.values().sum(), "tenant", "tenants"),
        parts.join(", ")
    )
}

/// Tenant bands filling a box from `x`, `y`, `w` x `h`: one column per tenant, the first few only
/// (the layout lists those running there first). A device that holds one workload at a time
/// (`one`) with several candidates is one band naming how many may hold it, never several tenants
/// side by side in it.
#[allow(clippy::too_many_arguments)]
pub(super) fn bands(
    out: &mut String,
    occupants: &[Occupant],
    one: bool,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
    tenants: &TenantIndex,
) {
    if one && occupants.len() > 1 {
        let surest = occupants
            .iter()
            .map(|o| o.certainty)
            .min()
            .unwrap_or(Certainty::Permitted);
        let chars = (w.saturating_sub(4) / 6) as usize;
        let mut text = format!("one of {} tenants", occupants.len());
        if text.chars().count() > chars {
            text = format!("1 of {}", occupants.len());
        }
        let _ = write!(
            out,
            "<g class=\"one-of\"><rect class=\"band-rect cert-{surest}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"#e5e7eb\"><title>{}</title></rect>",
            escape(&format!("one workload at a time, of {}", occupants_text(occupants)))
        );
        if chars >= 2 {
            let _ = write!(
                out,
                "<text class=\"band-text\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x + w / 2,
                y + h / 2 + 4,
                escape(&truncate(&text, chars))
            );
        }
        out.push_str("</g>");
        return;
    }
    if occupants.is_empty() {
        let _ = write!(
            out,
            "<rect class=\"empty\" x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{h}\"/>",
            x + 1,
            w.saturating_sub(2)
        );
        if w >= 40 {
            let _ = write!(
                out,
                "<text class=\"band-text\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">free</text>",
                x + w / 2,
                y + h / 2 + 4
            );
        }
        return;
    }
    let shown = occupants.len().min(MAX_BANDS);
    let each = (w / shown as u32).max(1);
    for (k, o) in occupants.iter().take(shown).enumerate() {
        let bx = x + each * k as u32;
        let bw = if k + 1 == shown { x + w - bx } else { each };
        let _ = write!(
            out,
            "<g data-tenant=\"{}\"><rect class=\"band-rect cert-{}\" x=\"{bx}\" y=\"{y}\" width=\"{bw}\" height=\"{h}\" fill=\"{}\"><title>{}</title></rect>",
            tenants.id(&o.tenant),
            o.certainty,
            tenants.colour(&o.tenant),
            escape(&format!("{} ({})", o.tenant, o.certainty))
        );
        let chars = (bw.saturating_sub(4) / 6) as usize;
        if chars >= 2 {
            let _ = write!(
                out,
                "<text class=\"band-text\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                bx + bw / 2,
                y + h / 2 + 4,
                escape(&truncate(&o.tenant, chars))
            );
        }
        out.push_str("</g>");
    }
    if occupants.len() > shown {
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{}\" y=\"{}\" text-anchor=\"end\">+{}</text>",
            x + w - 3,
            y + h - 3,
            occupants.len() - shown
        );
    }
}

pub(super) fn instance_title(i: &MigInstanceLayout, compute_total: Option<u8>) -> String {
    let mut s = instance_text(i, compute_total);
    if i.tenants.is_empty() {
        s.push_str(": no tenant workload");
    } else {
        s.push_str(": ");
        if let Some(head) = one_of(i.sharing, &i.tenants) {
            let _ = write!(s, "{head} ");
        }
        s.push_str(&occupants_text(&i.tenants));
    }
    s
}

/// Whether a scheduler cuts MIG instances of this GPU on demand (Volcano's dynamic MIG): its
/// occupants get MIG mechanisms on a GPU the device plugin hands out whole.
fn cut_on_demand(gpu: &GpuLayout) -> bool {
    gpu.mechanisms.iter().any(|m| m.is_mig())
}

/// What precedes the tenants of a device that holds one workload at a time and has several
/// candidates: they are not there together.
pub(super) fn one_of(sharing: Sharing, occupants: &[Occupant]) -> Option<&'static str> {
    (occupants.len() > 1 && holds_one(sharing, occupants)).then_some("one workload at a time, of:")
}

/// Profile, placement, compute slices, memory and sharing of an instance, in words.
pub(super) fn instance_text(i: &MigInstanceLayout, compute_total: Option<u8>) -> String {
    let mut s = i.profile.clone();
    match (i.start, i.memory_slices) {
        (Some(start), Some(1)) => {
            let _ = write!(s, " at memory slice {start}");
        }
        (Some(start), Some(size)) if size > 1 => {
            let _ = write!(
                s,
                " at memory slices {start}–{}",
                u32::from(start) + u32::from(size) - 1
            );
        }
        (Some(start), _) => {
            let _ = write!(s, " from memory slice {start}");
        }
        (None, _) => s.push_str(", placement unknown"),
    }
    if let Some(c) = i.compute_slices {
        match compute_total {
            Some(t) => {
                let _ = write!(s, ", {c} of {t} compute slices");
            }
            None => {
                let _ = write!(s, ", {c} compute slices");
            }
        }
    }
    if let Some(m) = i.memory_mib {
        let _ = write!(s, ", {}", gib(m));
    }
    if i.sharing != Sharing::Exclusive {
        let _ = write!(s, ", {}", sharing_text(i.sharing));
    }
    s
}

/// The first [`MAX_NAMED`] occupants as `tenant (certainty)`, and how many more there are.
pub(super) fn occupants_text(occupants: &[Occupant]) -> String {
    let mut names: Vec<String> = occupants
        .iter()
        .take(MAX_NAMED)
        .map(|o| format!("{} ({})", o.tenant, o.certainty))
        .collect();
    if occupants.len() > MAX_NAMED {
        names.push(more_by_certainty(
            occupants[MAX_NAMED..].iter().map(|o| o.certainty),
        ));
    }
    names.join("; ")
}

/// One run of GPUs shared alike: the drawing of the first, and a caption with the tenants in words.
pub(super) fn gpu_figure(
    out: &mut String,
    node: &NodeLayout,
    n: usize,
    g: usize,
    run: &[GpuLayout],
    tenants: &TenantIndex,
) {
    let Some(gpu) = run.first() else { return };
    let slices = slice_count(node);
    let width = MARGIN * 2 + slices * SLICE_W;
    let is_mig = gpu.sharing == Sharing::Mig;
    let unplaced: Vec<&MigInstanceLayout> = gpu
        .instances
        .iter()
        .filter(|i| i.start.is_none() || i.memory_slices.is_none())
        .collect();
    let block_y = 22;
    let block_h = 84;
    let mut height = block_y + block_h + 22;
    if !unplaced.is_empty() {
        height += block_h + 10;
    }
    let title_id = format!("gpu-{n}-{g}-t");
    let caption_id = format!("gpu-{n}-{g}-c");
    let mode = if is_mig {
        let used: u32 = gpu
            .instances
            .iter()
            .filter_map(|i| i.compute_slices)
            .map(u32::from)
            .sum();
        match node.compute_slices {
            Some(total) => format!(
                "MIG, {} instances, {used} of {total} compute slices",
                gpu.instances.len()
            ),
            None => format!(
                "MIG, {}",
                plural(gpu.instances.len(), "instance", "instances")
            ),
        }
    } else {
        // A fractional scheduler shares the GPU on top of what the device plugin advertises, and one
        // that cuts MIG instances on demand partitions a GPU the node lists whole.
        let fractions: Vec<&str> = gpu
            .mechanisms
            .iter()
            .filter(|m| m.is_fraction() || m.is_mig())
            .map(|m| m.title())
            .collect();
        match (fractions.is_empty(), gpu.sharing) {
            (true, sharing) => sharing_text(sharing),
            (false, Sharing::Exclusive) => fractions.join(", "),
            (false, sharing) => format!("{} + {}", fractions.join(", "), sharing_text(sharing)),
        }
    };
    let heading = match run {
        [_] => format!("GPU {}: {mode}", gpu.index),
        [first, .., last] => format!(
            "GPUs {}–{} ({} alike): {mode}",
            first.index,
            last.index,
            run.len()
        ),
        [] => mode.clone(),
    };
    out.push_str("<figure class=\"gpu-fig\">\n");
    let _ = write!(
        out,
        "<svg class=\"gpu\" data-gpu=\"{}\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-labelledby=\"{title_id}\" aria-describedby=\"{caption_id}\">",
        gpu.index
    );
    let _ = write!(
        out,
        "<title id=\"{title_id}\">{}</title>",
        escape(&format!("{}, {heading}", node.name))
    );

    if is_mig {
        // Memory slice ruler, and the slices no instance occupies.
        let _ = write!(
            out,
            "<use class=\"ruler\" href=\"#gt-ruler-{slices}\" aria-hidden=\"true\"/>"
        );
        for k in unallocated(gpu, slices) {
            let _ = write!(
                out,
                "<rect class=\"unallocated\" x=\"{}\" y=\"{block_y}\" width=\"{}\" height=\"{block_h}\" rx=\"3\"><title>memory slice {k}: no instance</title></rect>",
                MARGIN + k * SLICE_W + 1,
                SLICE_W - 2
            );
        }
        for i in gpu
            .instances
            .iter()
            .filter(|i| !unplaced.iter().any(|u| std::ptr::eq(*u, *i)))
        {
            let (Some(start), Some(size)) = (i.start, i.memory_slices) else {
                continue;
            };
            let x = MARGIN + u32::from(start) * SLICE_W + 1;
            let w = (u32::from(size) * SLICE_W).saturating_sub(2).max(4);
            instance_box(
                out,
                i,
                x,
                block_y,
                w,
                block_h,
                false,
                node.compute_slices,
                tenants,
            );
        }
        let each = SLICE_W;
        for (k, i) in unplaced.iter().enumerate() {
            let x = MARGIN + (k as u32 % slices) * each + 1;
            let w = (u32::from(i.memory_slices.unwrap_or(1).max(1)) * each)
                .min(width - x - MARGIN)
                .saturating_sub(2)
                .max(4);
            instance_box(
                out,
                i,
                x,
                block_y + block_h + 10,
                w,
                block_h,
                true,
                node.compute_slices,
                tenants,
            );
        }
        let foot = block_y + block_h + if unplaced.is_empty() { 0 } else { block_h + 10 } + 15;
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{MARGIN}\" y=\"{foot}\">memory slices across; compute slices per instance as \"Nc\"</text>"
        );
    } else {
        let w = slices * SLICE_W;
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{MARGIN}\" y=\"15\">the whole GPU: not partitioned</text>"
        );
        let _ = write!(
            out,
            "<rect class=\"gpu-block\" data-sharing=\"{}\" x=\"{MARGIN}\" y=\"{block_y}\" width=\"{w}\" height=\"{block_h}\" rx=\"4\"/>",
            match gpu.sharing {
                Sharing::Exclusive if !fractions_or_mig(gpu) => "exclusive",
                Sharing::Exclusive => "scheduler",
                Sharing::TimeSlicing { .. } => "time-slicing",
                Sharing::Mps { .. } => "mps",
                Sharing::Mig => "mig",
                Sharing::Unknown => "unknown",
            }
        );
        let _ = write!(
            out,
            "<text class=\"label\" x=\"{}\" y=\"{}\">{}</text>",
            MARGIN + 6,
            block_y + 15,
            escape(&truncate(&mode, (w / 7) as usize))
        );
        let replicas = gpu.sharing.replicas();
        if replicas > 1 {
            // One pip per replica the device plugin advertises (up to 32).
            for r in 0..replicas.min(32) {
                let _ = write!(
                    out,
                    "<circle class=\"pip\" cx=\"{}\" cy=\"{}\" r=\"3\"/>",
                    MARGIN + 9 + r * 10,
                    block_y + 26
                );
            }
        }
        // A GPU the device plugin hands out whole on which a scheduler cuts MIG instances on demand
        // holds a separate instance for each workload, not one workload at a time.
        let whole = holds_one(gpu.sharing, &gpu.tenants);
        let one = whole && !cut_on_demand(gpu);
        bands(
            out,
            &gpu.tenants,
            one,
            MARGIN + 3,
            block_y + 34,
            w - 6,
            block_h - 38,
            tenants,
        );
        let foot = if gpu.sharing == Sharing::Unknown {
            "a workload on this node asks for a GPU in a way gpu-trust cannot map: who shares it, and how, is not known"
        } else if one {
            "one workload at a time holds the whole GPU"
        } else if whole {
            "MIG instances a scheduler cuts on demand: one GPU, a separate instance for each workload"
        } else {
            "one memory pool, one fault domain for every tenant on it"
        };
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{MARGIN}\" y=\"{}\">{foot}</text>",
            block_y + block_h + 15
        );
    }
    let _ = write!(out, "</svg>\n<figcaption id=\"{caption_id}\">");
    let _ = write!(out, "<strong>{}</strong>", escape(&heading));
    if let (Some(uuid), [_]) = (&gpu.uuid, run) {
        let _ = write!(out, " <code>{}</code>", escape(uuid));
    }
    out.push_str("<ul>");
    if is_mig {
        for i in &gpu.instances {
            let ids = tenants.ids_of(i.tenants.iter().map(|o| o.tenant.as_str()));
            let _ = write!(
                out,
                "<li data-tenants=\"{ids}\">{}",
                escape(&instance_text(i, node.compute_slices))
            );
            if i.tenants.is_empty() {
                out.push_str(": no tenant workload</li>");
            } else {
                if let Some(head) = one_of(i.sharing, &i.tenants) {
                    let _ = write!(out, ": {head}");
                }
                out.push_str("<ul>");
                occupant_items(out, &i.tenants, tenants);
                out.push_str("</ul></li>");
            }
        }
    } else if gpu.tenants.is_empty() {
        out.push_str("<li>no tenant workload</li>");
    } else {
        if let Some(head) = one_of(gpu.sharing, &gpu.tenants).filter(|_| !cut_on_demand(gpu)) {
            let _ = write!(out, "<li>{head}</li>");
        }
        occupant_items(out, &gpu.tenants, tenants);
    }
    out.push_str("</ul></figcaption>\n</figure>\n");
}

/// One list item per occupant (the first [`MAX_NAMED`]): tenant, certainty and mechanism, with its
/// workloads behind a disclosure (opened for printing).
pub(super) fn occupant_items(out: &mut String, occupants: &[Occupant], tenants: &TenantIndex) {
    for o in occupants.iter().take(MAX_NAMED) {
        let mechanisms: Vec<&str> = o.mechanisms.iter().map(|m| m.title()).collect();
        let mut head = format!("{} ({}", o.tenant, o.certainty);
        if !mechanisms.is_empty() {
            let _ = write!(head, ", {}", mechanisms.join(", "));
        }
        if !o.recorded.is_empty() {
            let _ = write!(head, "; recorded: {}", o.recorded.join(", "));
        }
        head.push(')');
        let _ = write!(
            out,
            "<li data-tenant=\"{}\"><details><summary>{}: {}</summary>{}</details></li>",
            tenants.id(&o.tenant),
            escape(&head),
            plural(o.workload_count, "workload", "workloads"),
            escape(&workloads_text(o))
        );
    }
    if occupants.len() > MAX_NAMED {
        let _ = write!(
            out,
            "<li>{}</li>",
            more_by_certainty(occupants[MAX_NAMED..].iter().map(|o| o.certainty))
        );
    }
}

/// The workloads of an occupant that the layout names, and how many more it holds.
pub(super) fn workloads_text(o: &Occupant) -> String {
    let mut s = o.workloads.join(", ");
    if o.workload_count > o.workloads.len() {
        let _ = write!(s, " and {} more", o.workload_count - o.workloads.len());
    }
    s
}

/// Whether a GPU the node lists whole holds fractions or MIG instances a scheduler makes.
fn fractions_or_mig(gpu: &GpuLayout) -> bool {
    gpu.mechanisms.iter().any(|m| m.is_fraction() || m.is_mig())
}

/// Memory slices of a MIG GPU that no placed instance covers.
pub(super) fn unallocated(gpu: &GpuLayout, slices: u32) -> Vec<u32> {
    (0..slices)
        .filter(|k| {
            !gpu.instances
                .iter()
                .any(|i| match (i.start, i.memory_slices) {
                    (Some(start), Some(size)) => {
                        let start = u32::from(start);
                        (start..start + u32::from(size)).contains(k)
                    }
                    _ => false,
                })
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub(super) fn instance_box(
    out: &mut String,
    i: &MigInstanceLayout,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
    unknown_start: bool,
    compute_total: Option<u8>,
    tenants: &TenantIndex,
) {
    let _ = write!(
        out,
        "<g class=\"instance\"><rect class=\"mig-slice{}\" data-profile=\"{}\" data-start=\"{}\" data-size=\"{}\" data-compute=\"{}\" \
         x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"3\"><title>{}</title></rect>",
        if unknown_start { " unknown-start" } else { "" },
        escape(&i.profile),
        i.start.map_or_else(String::new, |s| s.to_string()),
        i.memory_slices.map_or_else(String::new, |s| s.to_string()),
        i.compute_slices.map_or_else(String::new, |s| s.to_string()),
        escape(&instance_title(i, compute_total))
    );
    let chars = (w.saturating_sub(6) / 6) as usize;
    let mut sub = String::new();
    if let Some(c) = i.compute_slices {
        let _ = write!(sub, "{c}c");
    }
    if let Some(m) = i.memory_mib {
        if !sub.is_empty() {
            sub.push(' ');
        }
        sub.push_str(&gib(m));
    }
    if i.sharing.replicas() > 1 {
        let _ = write!(sub, " ×{}", i.sharing.replicas());
    }
    let (line1, line2) = if i.profile.chars().count() <= chars {
        (i.profile.clone(), sub.trim().to_string())
    } else {
        // A narrow instance: the profile over two lines (`1g` / `10gb`), the rest in its title.
        match i.profile.split_once('.') {
            Some((g, rest)) => (g.to_string(), rest.to_string()),
            None => (i.profile.clone(), String::new()),
        }
    };
    let _ = write!(
        out,
        "<text class=\"label\" x=\"{}\" y=\"{}\">{}</text>",
        x + 4,
        y + 14,
        escape(&truncate(&line1, chars.max(1)))
    );
    if !line2.is_empty() {
        let _ = write!(
            out,
            "<text class=\"sub\" x=\"{}\" y=\"{}\">{}</text>",
            x + 4,
            y + 27,
            escape(&truncate(&line2, chars.max(1)))
        );
    }
    bands(
        out,
        &i.tenants,
        holds_one(i.sharing, &i.tenants),
        x + 2,
        y + 33,
        w.saturating_sub(4),
        h.saturating_sub(36),
        tenants,
    );
    out.push_str("</g>");
}
