//! Stand-ins for what the OpenAPI document describes but no Rust request type carries:
//! the report (whose schema is the library's published one), a PNG's bytes, and the
//! schema of a job's `options.expect`. The handlers' annotations name them; `openapi`
//! builds the document.

use std::borrow::Cow;

use pyward::output_dir::OUT_SUFFIXES;
use pyward::FIGURE_SUFFIXES;
use serde_json::{json, Value};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::{RefOr, Schema};

/// Stands for [`pyward::report::Report`] in the generated document; replaced there by
/// [`pyward::report::JSON_SCHEMA`].
pub struct Report;

impl utoipa::PartialSchema for Report {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().into()
    }
}

impl utoipa::ToSchema for Report {
    fn name() -> Cow<'static, str> {
        "Report".into()
    }
}

/// A PNG's bytes.
pub struct Png;

impl utoipa::PartialSchema for Png {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl utoipa::ToSchema for Png {}

/// `png` as `[Pp][Nn][Gg]`, each of `suffixes` so, as alternatives: a pattern that
/// matches a suffix in any case, as the library compares them.
fn any_case(suffixes: &[&str]) -> String {
    suffixes
        .iter()
        .map(|s| {
            s.chars()
                .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase()))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// A character of a plain file name: no `/`, `\` or control character.
const NAME_CHAR: &str = r"[^/\\\u0000-\u001f\u007f-\u009f]";
/// A character of a plain file name other than a dot.
const NAME_NO_DOT: &str = r"[^./\\\u0000-\u001f\u007f-\u009f]";

/// A JSON job's input name as the pool takes it
/// ([`check_relative_path`](pyward::output_dir::check_relative_path)): `/`-separated
/// plain file names of at most 255 characters (bytes, for the pool), none `.` or `..`.
pub fn input_name() -> Value {
    let (c, no_dot) = (NAME_CHAR, NAME_NO_DOT);
    let part = format!(r"(?:{no_dot}{c}{{0,254}}|\.{no_dot}{c}{{0,253}}|\.\.{c}{{1,253}})");
    json!({
        "type": "string",
        "maxLength": 4096,
        "pattern": format!("^{part}(?:/{part})*$"),
    })
}

/// The JSON Schema of `options.expect`, [`pyward::validate::Expectations`] as
/// [`Expectations::from_json`](pyward::validate::Expectations::from_json) reads it: the
/// serde form (every struct `deny_unknown_fields`; `#[serde(default)]` fields optional,
/// `Option` ones also `null`) and the checks after it (version 1, plain file names,
/// inputs as relative paths, a table's `header_row` from 1, and `OUT` — the figure
/// listed, else the first artifact, else the first table's — a name with an output
/// suffix). One narrowing: every figure listed must be a usable `OUT` (a name with a
/// stem), where the library looks at the first only. `openapi`'s test holds it to the
/// library on examples of each field.
pub fn expectations() -> Value {
    let (c, no_dot) = (NAME_CHAR, NAME_NO_DOT);
    // Not `.` or `..`: the first character no dot, or a dot and then no dot, or two dots
    // and more.
    let file_name = json!({
        "type": "string",
        "minLength": 1,
        "maxLength": 255,
        "pattern": format!(r"^(?:{no_dot}|\.{no_dot}|\.\.{c}){c}*$"),
        "description": "One plain file name: at most 255 bytes, not `.` or `..`, no `/`, `\\` or control character",
    });
    let out_name = json!({
        "type": "string",
        "minLength": 1,
        "maxLength": 255,
        "pattern": format!(r"^{c}+\.(?:{})$", any_case(&OUT_SUFFIXES)),
    });
    let figure_suffix = any_case(&FIGURE_SUFFIXES);
    let figure = json!({"pattern": format!(r"\.(?:{figure_suffix})$")});
    let segment = r"(?:[^/.][^/]*|\.[^/.][^/]*|\.\.[^/]+)";
    let input = json!({
        "type": "string",
        "pattern": format!("^{segment}(?:/{segment})*$"),
        "description": "An input table by its relative path (no empty, `.` or `..` component)",
    });
    let strings = json!({"type": "array", "items": {"type": "string"}});
    let or_null = |schema: Value| json!({"anyOf": [schema, {"type": "null"}]});
    let u32_from = |min: u32| json!({"type": "integer", "minimum": min, "maximum": u32::MAX});
    let tolerance = json!({"type": "number", "default": 1e-6});
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Expectations",
        "description": "What a job must write and the checks on its tables (version 1).",
        "type": "object",
        "additionalProperties": false,
        "required": ["version"],
        "properties": {
            "version": {"type": "integer", "const": 1},
            "artifacts": {
                "type": "array",
                "description": format!(
                    "Files the job must write. `OUT` is the figure listed, else the first artifact: a name ending in .{}",
                    OUT_SUFFIXES.join(", .")
                ),
                "items": {
                    "allOf": [file_name],
                    // A figure that cannot be `OUT`: no stem.
                    "not": {"pattern": format!(r"^\.(?:{figure_suffix})$")},
                },
                "anyOf": [{"contains": figure}, {"prefixItems": [out_name]}],
            },
            "tables": {"type": "array", "items": {"$ref": "#/$defs/TableCheck"}},
        },
        // Without artifacts, the first table's artifact is `OUT`.
        "anyOf": [
            {"required": ["artifacts"], "properties": {"artifacts": {"minItems": 1}}},
            {"properties": {"tables": {"prefixItems": [{"properties": {"artifact": out_name}}]}}},
        ],
        "$defs": {
            "TableCheck": {
                "type": "object",
                "additionalProperties": false,
                "required": ["artifact"],
                "properties": {
                    "artifact": file_name,
                    "sheet": or_null(json!({"type": "string"})),
                    "header_row": or_null(u32_from(1)),
                    "required_columns": strings,
                    "row_count": or_null(json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})),
                    "keys_from_input": or_null(json!({"$ref": "#/$defs/KeysFromInput"})),
                    "unique_keys": strings,
                    "no_nan": strings,
                    "sums": {"type": "array", "items": {"$ref": "#/$defs/SumCheck"}},
                    "bounds": {"type": "array", "items": {"$ref": "#/$defs/BoundCheck"}},
                    "columns_unchanged": or_null(json!({"$ref": "#/$defs/ColumnsUnchanged"})),
                    "decimals": {"type": "array", "items": {"$ref": "#/$defs/Decimals"}},
                    "no_formulas": {"type": "boolean", "default": true},
                },
            },
            "KeysFromInput": {
                "type": "object",
                "additionalProperties": false,
                "required": ["input", "columns"],
                "properties": {
                    "input": input,
                    "sheet": or_null(json!({"type": "string"})),
                    "header_row": or_null(u32_from(0)),
                    "columns": strings,
                },
            },
            "ColumnsUnchanged": {
                "type": "object",
                "additionalProperties": false,
                "required": ["input", "key", "columns"],
                "properties": {
                    "input": input,
                    "sheet": or_null(json!({"type": "string"})),
                    "header_row": or_null(u32_from(0)),
                    "key": strings,
                    "columns": strings,
                    "tolerance": tolerance,
                },
            },
            "SumCheck": {
                "type": "object",
                "additionalProperties": false,
                "required": ["column", "total"],
                "properties": {
                    "column": {"type": "string"},
                    "total": {"type": "number"},
                    "tolerance": tolerance,
                },
            },
            "BoundCheck": {
                "type": "object",
                "additionalProperties": false,
                "required": ["column"],
                "properties": {
                    "column": {"type": "string"},
                    "min": or_null(json!({"type": "number"})),
                    "max": or_null(json!({"type": "number"})),
                    "where_column": or_null(json!({"type": "string"})),
                    "equals": or_null(json!({"type": "string"})),
                },
            },
            "Decimals": {
                "type": "object",
                "additionalProperties": false,
                "required": ["column", "max"],
                "properties": {
                    "column": {"type": "string"},
                    "max": u32_from(0),
                },
            },
        },
    })
}
