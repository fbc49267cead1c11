//! The integration tests of `report`, one module per former test binary, linked once.

mod common;
mod html_examples;
mod html_fixture;

mod ci_formats;
mod coverage;
mod decisions;
mod html;
mod html_browser;
mod partial;
mod probe;
mod render;
mod rule_pages;
mod schemas;
