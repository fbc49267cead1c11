//! The verdict and what to fix first, right after the summary band.

use super::*;

pub(super) fn fix_first(out: &mut String, report: &AuditReport) {
    if let Some(v) = &report.verdict {
        let _ = writeln!(
            out,
            "<p class=\"verdict {}\" id=\"verdict\"><strong>exit {}</strong>: {}.</p>",
            escape(v.outcome),
            v.exit_code,
            escape(&v.reason)
        );
    }
    let Some(b) = crate::audit::fix_first::block(report) else {
        return;
    };
    out.push_str("<section id=\"fix-first\">\n<h2>Fix first</h2>\n");
    let _ = writeln!(out, "<p>{}</p>", escape(&b.head));
    if !b.actions.is_empty() {
        out.push_str("<ol class=\"actions\">\n");
        for a in &b.actions {
            let _ = writeln!(
                out,
                "<li id=\"action-{}\"><strong>{}</strong> {}<br>{}; {}.",
                escape(&a.id),
                escape(&a.id),
                escape(&a.summary),
                escape(&a.closes),
                escape(&a.proof)
            );
            for c in &a.commands {
                let _ = writeln!(out, "<pre><code>{}</code></pre>", escape(c));
            }
            for n in &a.notes {
                let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(n));
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ol>\n");
    }
    for line in b.after.iter().chain(&b.unclosed) {
        let _ = writeln!(out, "<p>{}</p>", escape(line));
    }
    out.push_str("</section>\n");
}
