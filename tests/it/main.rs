//! The integration tests, one program: one link of the library and libpython instead
//! of one per area. Each module is an area; `cargo test --test it <module>::` runs one.
//! The sandbox test (its own harness: it re-executes itself confined) and the soak run
//! apart.

#[path = "../common/mod.rs"]
mod common;

mod answer_fuzz;
mod architecture;
mod arrays;
mod async_api;
mod axum_example;
mod cancel_storm;
mod containment;
mod corpus;
mod cross_job_state;
mod descriptors;
mod disk;
mod downstream;
mod embedding;
mod executor;
mod feedback;
mod figure_summary;
mod figures_in_memory;
mod fonts;
mod fuzz;
mod gallery;
mod gate;
mod hostile_worker;
mod isolation;
mod lookups;
mod lying_names;
mod model_imports;
mod model_style;
mod ordinary_python;
mod png_encoding;
mod pool;
mod record;
mod render_once;
mod report;
mod reset;
mod script_habits;
mod settings;
mod shown_figures;
mod state_guard;
mod string_engines;
mod tables;
mod tenants;
mod text_metrics;
mod workbook_classes;
mod zygote;
