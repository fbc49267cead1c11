//! The advisory data as JSON (`gpu-trust/advisories/v1`).

use gpu_trust_model::Diagnostic;
use gpu_trust_policy::Date;
use gpu_trust_rules::advisories::Advisories;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AdvisoriesJson<'a> {
    schema: &'static str,
    today: String,
    newest_bulletin: Option<String>,
    age_days: Option<i64>,
    stale: bool,
    /// The last `gpu-trust advisories update` whose bulletins the data holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    update: Option<UpdateJson<'a>>,
    sources: Vec<SourceJson<'a>>,
    components: Vec<ComponentJson<'a>>,
    cdi_defaults: Vec<CdiJson<'a>>,
    /// What the given documents say that the audit cannot use, `file:line:column: message`.
    warnings: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UpdateJson<'a> {
    from: &'a str,
    /// Absent until an update read every bulletin its indexes listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    checked: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SourceJson<'a> {
    name: &'a str,
    kind: &'static str,
    title: Option<&'a str>,
    tracking_id: Option<&'a str>,
    newest: Option<String>,
    advisories: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ComponentJson<'a> {
    component: &'static str,
    title: &'static str,
    advisories: Vec<EntryJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntryJson<'a> {
    id: &'a str,
    summary: &'a str,
    bulletin: &'a str,
    title: Option<&'a str>,
    url: Option<&'a str>,
    published: Option<&'a str>,
    cvss: Option<f64>,
    fixed: Vec<&'a str>,
    introduced: Option<&'a str>,
    last_affected: Vec<&'a str>,
    affected_branches: &'a [u64],
    unaffected_branches: &'a [u64],
    /// Exact intervals of affected versions, in the `vers` notation (`>=1.10.0|<1.12.0`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    affected_intervals: Vec<String>,
    preconditions: Vec<&'static str>,
    effects: Vec<&'static str>,
    mitigation: Option<&'a str>,
    source: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CdiJson<'a> {
    component: &'static str,
    since: &'a str,
    source: &'a str,
}

/// The data in use on `today`, with the warnings of reading it, as pretty JSON ending in a newline.
pub fn render(
    data: &Advisories,
    today: Date,
    warnings: &[Diagnostic],
) -> Result<String, serde_json::Error> {
    let f = data.freshness(today);
    let doc = AdvisoriesJson {
        schema: "gpu-trust/advisories/v1",
        today: today.to_string(),
        newest_bulletin: f.newest.map(|d| d.to_string()),
        age_days: f.age_days,
        stale: f.stale,
        update: data.update.as_ref().map(|u| UpdateJson {
            from: &u.from,
            checked: u.checked.map(|d| d.to_string()),
        }),
        sources: data
            .sources
            .iter()
            .map(|s| SourceJson {
                name: &s.name,
                kind: s.kind.as_str(),
                title: s.title.as_deref(),
                tracking_id: s.tracking_id.as_deref(),
                newest: s.newest.map(|d| d.to_string()),
                advisories: s.advisories,
            })
            .collect(),
        components: super::per_component(data)
            .into_iter()
            .map(|(c, entries)| ComponentJson {
                component: c.as_str(),
                title: c.title(),
                advisories: entries
                    .into_iter()
                    .map(|(a, r)| EntryJson {
                        id: &a.id,
                        summary: &a.summary,
                        bulletin: &a.bulletin,
                        title: a.title.as_deref(),
                        url: a.url.as_deref(),
                        published: a.published_text.as_deref(),
                        cvss: a.cvss,
                        fixed: r.fixed.iter().map(|v| v.text.as_str()).collect(),
                        introduced: r.introduced.as_ref().map(|v| v.text.as_str()),
                        last_affected: r.last_affected.iter().map(|v| v.text.as_str()).collect(),
                        affected_branches: &r.affected_branches,
                        unaffected_branches: &r.unaffected_branches,
                        affected_intervals: r.intervals.iter().map(ToString::to_string).collect(),
                        preconditions: a
                            .preconditions
                            .iter()
                            .chain(&r.preconditions)
                            .map(|p| p.as_str())
                            .collect(),
                        effects: a.effects.iter().map(|e| e.as_str()).collect(),
                        mitigation: a.mitigation.as_deref(),
                        source: &a.source,
                    })
                    .collect(),
            })
            .collect(),
        cdi_defaults: data
            .components
            .cdi_defaults
            .iter()
            .map(|d| CdiJson {
                component: d.component.as_str(),
                since: &d.since.text,
                source: &d.source,
            })
            .collect(),
        warnings: warnings.iter().map(ToString::to_string).collect(),
    };
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}
