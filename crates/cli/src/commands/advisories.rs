//! `gpu-trust advisories`: the advisory data in use, its newest bulletin and what it knows per
//! component, offline; `gpu-trust advisories update`, the one command that reads the network for
//! advisory data: the vendor's new bulletins, into the cache every command reads.

use crate::input;
use crate::output::{self, write_output, Format, OutputArgs};
use gpu_trust_live::feed;
use gpu_trust_policy::Date;
use gpu_trust_report::advisories::{json, table, update};
use gpu_trust_rules::advisories::{csaf, Advisories, Components};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

/// Show the advisory data the audit uses and how old it is.
///
/// Show the advisory data the audit uses: where it comes from (the built-in data, the bulletins
/// `gpu-trust advisories update` kept, the CSAF documents and data files given with --advisories),
/// the date of its newest bulletin and how old that is, and per component (container toolkit, GPU
/// Operator, device plugin, MIG manager, driver, DRA driver, DCGM exporter, KAI Scheduler) which
/// advisories name it and which versions fix them.
///
/// Data whose newest bulletin, and last update, are older than 90 days before --today is stale:
/// every audit report says so. Reading it needs no network; `gpu-trust advisories update` fetches
/// the vendor's new bulletins, and --advisories gives bulletins (CSAF JSON) by hand. A document
/// that cannot be read exits 2 with its file, line and column; what a document says that the audit
/// cannot use (a product that is no known component) is listed, never dropped silently.
#[derive(Debug, clap::Args)]
#[command(
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    mut_arg("format", output::offer(FORMATS))
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Advisory data, as for `gpu-trust audit --advisories`: CSAF 2.0 documents added to the built-in
    /// data, or a data file of the built-in format replacing it; folders are read for their .json,
    /// .yaml and .yml files. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub advisories: Vec<PathBuf>,
    /// The day the data's age counts to (default: today).
    #[arg(long, value_parser = Date::parse, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
    /// Follow symbolic links that lead out of a folder given with --advisories.
    #[arg(long)]
    pub follow_symlinks: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    Update(UpdateArgs),
}

/// Fetch the vendor's new security bulletins into the cache every command reads offline.
///
/// Reads NVIDIA's product-security repository (or a mirror of its layout given with --from): each
/// year's index (YEAR/CVE_index.csv, from the year of the built-in data's newest bulletin to this
/// one), then every bulletin (YEAR/ID/ID.json, CSAF 2.0) that names a component the audit knows and
/// that neither the built-in data nor the cache holds as published (its YEAR/ID/ID.json.sha256).
/// Each answer is bounded in size (16 MiB) and time (60 s; 10 minutes in all). A bulletin is kept
/// only when its digest is the published one and it reads as CSAF; a broken, partial or unreadable
/// download never replaces the last good data, and its error names the bulletin and its address
/// (exit 2). This is the only command that reads the network for advisory data: audit, serve, plan
/// and `gpu-trust advisories` read the cache (--cache-dir) with the built-in data, offline.
#[derive(Debug, clap::Args)]
#[command(after_help = UPDATE_EXAMPLES)]
pub struct UpdateArgs {
    /// The repository, or a mirror of its layout: an https://, http:// or file:// address (an
    /// air-gapped site copies the repository and gives its folder, file:///srv/product-security).
    #[arg(long, value_name = "URL", default_value = feed::DEFAULT_FROM)]
    pub from: String,
    /// The day the update counts as its own (default: today): the last year it reads and the day
    /// it records.
    #[arg(long, hide = true, value_parser = Date::parse, value_name = "YYYY-MM-DD")]
    pub today: Option<Date>,
}

/// Sources, age and a table of the advisories per component, or the same as JSON
/// (`gpu-trust/advisories/v1`).
const FORMATS: &[Format] = &[Format::Table, Format::Json];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(Command::Update(u)) = args.command {
        return run_update(u);
    }
    let targets = args.output.targets(FORMATS)?;
    let loaded = input::advisories(&args.advisories, args.follow_symlinks)?;
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    output::write_targets(&targets, output::CLEAN, |t| {
        Ok(match t.format {
            Format::Json => json::render(&loaded.data, today, &loaded.warnings)?,
            _ => table::render(&loaded.data, today, &loaded.warnings, t.width()),
        })
    })
}

/// Reads the vendor's new bulletins from `from` into the cache, as `gpu-trust advisories update`
/// does (serve's `--update-advisories-every` too). `Err` when it could not run at all.
pub(crate) fn update_cache(from: String, today: Date) -> Result<(feed::Outcome, PathBuf), String> {
    let cache = input::advisory_cache()
        .ok_or("no cache folder: give --cache-dir, or set XDG_CACHE_HOME or HOME")?;
    let builtin = Advisories::builtin();
    let first = builtin
        .newest_bulletin()
        .map_or(today.year(), |d| d.year().min(today.year()));
    let components = Components::builtin();
    let options = feed::Options {
        from,
        cache: cache.clone(),
        years: (first..=today.year()).collect(),
        products: components
            .products
            .iter()
            .filter(|p| !p.name.is_empty())
            .map(|p| p.name.clone())
            .collect(),
        known: builtin
            .bulletin_ids()
            .into_iter()
            .map(str::to_string)
            .collect(),
        today: today.to_string(),
        max_bytes: csaf::MAX_DOCUMENT_BYTES,
        request_timeout: feed::REQUEST_TIMEOUT,
        total_timeout: feed::TOTAL_TIMEOUT,
    };
    let check = |name: &str, text: &str| csaf::read(text, name, components).map(|doc| doc.warnings);
    feed::update(&options, &check)
        .map(|o| (o, cache))
        .map_err(|e| e.to_string())
}

/// `gpu-trust advisories update`.
fn run_update(args: UpdateArgs) -> anyhow::Result<ExitCode> {
    let today = args
        .today
        .unwrap_or_else(|| Date::from_system_time(SystemTime::now()));
    let (outcome, cache) = match update_cache(args.from, today) {
        Ok(done) => done,
        Err(e) => {
            anyhow::bail!("{e}");
        }
    };
    output::eprint_diagnostics(&outcome.warnings);
    output::eprint_diagnostics(&outcome.errors);
    let summary = update::Summary {
        from: outcome.from,
        cache: cache.display().to_string(),
        years: outcome.years,
        added: outcome.added,
        revised: outcome.revised,
        unchanged: outcome.unchanged,
        known: outcome.known,
        kept: outcome.state.bulletins.len(),
        checked: outcome.state.checked.clone(),
        errors: outcome.errors.len(),
    };
    write_output(None, &update::render(&summary))?;
    Ok(output::exit(if outcome.errors.is_empty() {
        output::CLEAN
    } else {
        output::INPUT_ERROR
    }))
}

/// What `--help` shows after the options, as written.
const EXAMPLES: &str = "\
Examples:
  gpu-trust advisories
  gpu-trust advisories --advisories bulletins/ --today 2026-12-01
  gpu-trust advisories --advisories 5850.json --format json | jq '.components[].component'
  gpu-trust audit cluster.yaml --advisories bulletins/
  gpu-trust advisories update";

/// What `gpu-trust advisories update --help` shows after the options, as written.
const UPDATE_EXAMPLES: &str = "\
Examples:
  gpu-trust advisories update
  gpu-trust advisories update --from file:///srv/mirror/product-security
  gpu-trust advisories update --cache-dir /var/cache/gpu-trust";
