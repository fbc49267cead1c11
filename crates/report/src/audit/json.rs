//! The JSON report: exactly the serde shape of [`AuditReport`] (`gpu-trust/audit/v2`), pretty-printed
//! with a final newline. The report keeps every list sorted and every map ordered, so the same report
//! always renders to the same bytes. The shape is described by `docs/schema/audit-v2.schema.json`.

use crate::AuditReport;

/// The report as pretty-printed JSON, ending in a newline.
pub fn render(report: &AuditReport) -> Result<String, serde_json::Error> {
    let mut bytes = Vec::new();
    write(report, &mut bytes)?;
    // serde_json writes only UTF-8; were it not to, that is an error, not an empty report.
    String::from_utf8(bytes).map_err(<serde_json::Error as serde::ser::Error>::custom)
}

/// Writes the report as pretty-printed JSON, ending in a newline, to `out` as it is serialized (a
/// large fleet's report is never held whole in memory). The bytes are those of [`render`].
pub fn write(report: &AuditReport, out: &mut dyn std::io::Write) -> Result<(), serde_json::Error> {
    use std::io::Write as _;
    // The serializer writes token by token: a buffer of a concrete type here keeps those writes
    // inlined copies, and `out` sees one call per 64 KiB.
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
    serde_json::to_writer_pretty(&mut buffered, report)?;
    buffered.write_all(b"\n").map_err(serde_json::Error::io)?;
    buffered.flush().map_err(serde_json::Error::io)
}
