//! `GET /v1/openapi.json`: OpenAPI 3.1 generated from the request types and handler
//! annotations (utoipa), with the report's schema taken from the library's published
//! JSON Schema — the same one every report is tested against — so neither can drift,
//! and `options.expect` described by the schema of the expectations form, tested here
//! against what the server accepts.

use std::sync::{Arc, OnceLock};

use axum::extract::State;
use serde_json::Value;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::problem::Problem;
use super::queued::Pending;
use super::request::{CheckRequest, JobForm};
use super::runs::{RunList, RunSummary};
use super::schemas::{Png, Report};
use super::state::App;
use crate::service::options::{Ceiling, JobOptions, JobRequest};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "pyward",
        description = "Model-written Python plotting code, run in a warm, confined pool. A job's own failure (rejected by the gate, timed out, raised) is a 200 with the report; other statuses describe the request (RFC 9457 problem details).",
    ),
    paths(
        super::jobs::submit,
        super::jobs::check,
        super::queued::result,
        super::runs::list,
        super::runs::show,
        super::runs::artifact,
        super::runs::replay,
        super::pool::pool,
        super::probes::healthz,
        super::probes::readyz,
        super::probes::metrics,
        openapi_json,
    ),
    components(schemas(Report, Problem, JobRequest, JobOptions, CheckRequest, JobForm, Png, Pending, RunList, RunSummary)),
    modifiers(&BearerAuth),
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        if let Some(components) = openapi.components.as_mut() {
            components.add_security_scheme(
                "bearer",
                SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
            );
        }
    }
}

/// This document.
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    responses((status = 200, description = "The OpenAPI 3.1 description of this API", content_type = "application/json")),
)]
pub async fn openapi_json(State(app): State<Arc<App>>) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        document(&app.limits.ceiling()),
    )
        .into_response()
}

/// The document as JSON text, with this server's maxima for a job's own limits.
pub fn document(ceiling: &Ceiling) -> String {
    static DOC: OnceLock<Value> = OnceLock::new();
    let mut doc = DOC
        .get_or_init(|| {
            let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the document serializes");
            splice_schemas(&mut doc);
            describe_form(&mut doc);
            describe_base64(&mut doc);
            doc
        })
        .clone();
    if let Some(options) = doc.pointer_mut("/components/schemas/JobOptions/properties") {
        let max_ms = u64::try_from(ceiling.max_timeout.as_millis()).unwrap_or(u64::MAX);
        options["timeout_ms"]["maximum"] = max_ms.into();
        options["memory_mib"]["maximum"] = ceiling.max_memory_mib.into();
    }
    serde_json::to_string_pretty(&doc).expect("the document serializes")
}

/// Puts the report's JSON Schema in `components.schemas.Report` and that of
/// `options.expect` in `components.schemas.Expectations`, making the option refer to it.
fn splice_schemas(doc: &mut Value) {
    let report: Value =
        serde_json::from_str(pyward::report::JSON_SCHEMA).expect("the report schema is JSON");
    splice_schema(doc, "Report", report);
    splice_schema(doc, "Expectations", super::schemas::expectations());
    if let Some(expect) = doc.pointer_mut("/components/schemas/JobOptions/properties/expect") {
        let description = expect.get("description").cloned().unwrap_or_default();
        *expect = serde_json::json!({
            "anyOf": [{"$ref": "#/components/schemas/Expectations"}, {"type": "null"}],
            "description": description,
        });
    }
}

/// Puts a JSON Schema in `components.schemas.<name>`, its `$defs` beside it as
/// `<name>_<def>` (references rewritten), since a `#/$defs/...` reference inside a
/// component would resolve against the OpenAPI document's root.
fn splice_schema(doc: &mut Value, name: &str, mut schema: Value) {
    let object = schema.as_object_mut().expect("a schema is an object");
    object.remove("$schema");
    object.remove("$id");
    let defs = object.remove("$defs").unwrap_or_default();
    let schemas = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .expect("the document has components.schemas");
    if let Value::Object(defs) = defs {
        for (def_name, mut def) in defs {
            rewrite_refs(&mut def, name);
            schemas.insert(format!("{name}_{def_name}"), def);
        }
    }
    rewrite_refs(&mut schema, name);
    schemas.insert(name.into(), schema);
}

/// The multipart form as the server reads it: parts `code` (text), `options` (JSON),
/// and any number of `input` and `array` file parts; no other part.
fn describe_form(doc: &mut Value) {
    let files = |what: &str| {
        serde_json::json!({
            "type": "array",
            "description": what,
            "items": {"type": "string", "format": "binary"},
        })
    };
    if let Some(form) = doc.pointer_mut("/components/schemas/JobForm") {
        form["additionalProperties"] = Value::Bool(false);
        form["properties"]["input"] =
            files("Input files, one part each; a part's file name is its path for `srcpath`");
        form["properties"]["array"] = files(
            "`.npy` arrays, one part each; a part's file name without `.npy` is the array's name",
        );
    }
    if let Some(multipart) =
        doc.pointer_mut("/paths/~1v1~1jobs/post/requestBody/content/multipart~1form-data")
    {
        multipart["encoding"] = serde_json::json!({
            "code": {"contentType": "text/plain"},
            "options": {"contentType": "application/json"},
            "input": {"contentType": "application/octet-stream"},
            "array": {"contentType": "application/octet-stream"},
        });
    }
}

/// Standard base64, padded, as the server decodes it: the last symbol before padding
/// carries no stray bits.
const BASE64: &str =
    "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=|[A-Za-z0-9+/][AQgw]==)?$";

/// A JSON job's `inputs` and `arrays` values are base64 (the arrays' bytes `.npy` files);
/// their names as the pool takes them.
fn describe_base64(doc: &mut Value) {
    if let Some(job) = doc.pointer_mut("/components/schemas/JobRequest/properties") {
        for (field, media) in [("inputs", None), ("arrays", Some("application/x-npy"))] {
            let mut value = serde_json::json!({
                "type": "string",
                "contentEncoding": "base64",
                "pattern": BASE64,
            });
            if let Some(media) = media {
                value["contentMediaType"] = media.into();
            }
            job[field]["additionalProperties"] = value;
        }
        // An array's name is a Python identifier (ASCII); the gate's own names and
        // keywords, refused too, are no pattern.
        job["arrays"]["propertyNames"] = serde_json::json!({"pattern": "^[A-Za-z][A-Za-z0-9_]*$"});
        job["inputs"]["propertyNames"] = super::schemas::input_name();
    }
}

fn rewrite_refs(value: &mut Value, prefix: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix("#/$defs/") {
                            *r = format!("#/components/schemas/{prefix}_{name}");
                        }
                    }
                    (_, v) => rewrite_refs(v, prefix),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, prefix)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use base64::Engine as _;

    use crate::service::options::Ceiling;

    #[test]
    fn the_document_carries_the_report_schema_with_resolvable_references() {
        let ceiling = Ceiling {
            max_timeout: Duration::from_millis(7500),
            max_memory_mib: 900,
        };
        let text = super::document(&ceiling);
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["openapi"].as_str().unwrap().get(..3), Some("3.1"));
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["Report"]["properties"]["schema_version"]["const"],
            1
        );
        assert!(
            !text.contains("#/$defs/"),
            "a reference was left unrewritten"
        );
        for r in text.split("\"$ref\": \"#/components/schemas/").skip(1) {
            let name = &r[..r.find('"').unwrap()];
            assert!(schemas.get(name).is_some(), "dangling reference to {name}");
        }
        // Issue 36: what the server checks, the document says.
        let form =
            &doc["paths"]["/v1/jobs"]["post"]["requestBody"]["content"]["multipart/form-data"];
        assert_eq!(
            form["encoding"]["options"]["contentType"],
            "application/json"
        );
        assert_eq!(schemas["JobForm"]["additionalProperties"], false);
        assert_eq!(schemas["JobForm"]["properties"]["input"]["type"], "array");
        // A job's own limits, as high as this server allows.
        let options = &schemas["JobOptions"]["properties"];
        assert_eq!(options["timeout_ms"]["maximum"], 7500, "{options}");
        assert_eq!(options["memory_mib"]["maximum"], 900, "{options}");
        let inputs = &schemas["JobRequest"]["properties"]["inputs"]["additionalProperties"];
        let base64 = jsonschema::validator_for(inputs).unwrap();
        for text in ["", "QQ==", "QUI=", "QUJD", "/+8="] {
            assert!(base64.is_valid(&text.into()), "{text}");
            assert!(
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .is_ok(),
                "{text}"
            );
        }
        // What the server's decoder refuses, the pattern does too.
        for text in [
            "QR==", "QUJ=", "QQ", "QQ=", "Q", "QUJD\n", "QU JD", "QQ==QQ==",
        ] {
            assert!(!base64.is_valid(&text.into()), "{text}");
            assert!(
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .is_err(),
                "{text}"
            );
        }
        let names = &schemas["JobRequest"]["properties"]["inputs"]["propertyNames"];
        let names = jsonschema::validator_for(names).unwrap();
        let long = |n: usize| "a".repeat(n);
        for name in [
            String::from("a"),
            "sub/dir/x.csv".into(),
            "...".into(),
            ".a/..b".into(),
            long(255),
            format!(".{}", long(254)),
            format!("..{}/x", long(253)),
            "".into(),
            "/abs".into(),
            "a/".into(),
            "a//b".into(),
            "./a".into(),
            "a/..".into(),
            "a\\b".into(),
            "a\u{1}b".into(),
            "a\u{9f}".into(),
            long(256),
            format!("x/.{}", long(255)),
            format!("..{}", long(254)),
        ] {
            assert_eq!(
                names.is_valid(&name.as_str().into()),
                pyward::output_dir::check_relative_path(&name).is_ok(),
                "{name:?}"
            );
        }
        let out_name = &schemas["JobOptions"]["properties"]["out_name"];
        assert!(out_name["pattern"].is_string(), "{out_name}");
        let limit = &doc["paths"]["/v1/runs"]["get"]["parameters"][1];
        assert_eq!(
            (&limit["name"], &limit["schema"]["maximum"]),
            (&"limit".into(), &500.into())
        );
        for path in [
            "/v1/jobs",
            "/v1/jobs/{id}",
            "/v1/check",
            "/healthz",
            "/readyz",
            "/metrics",
            "/v1/runs",
            "/v1/runs/{name}",
            "/v1/runs/{name}/attempts/{attempt}/{artifact}",
            "/v1/runs/{name}/replay",
            "/v1/pool",
        ] {
            assert!(doc["paths"].get(path).is_some(), "{path} is not described");
        }
    }

    /// Whether the server takes `expect` as a job's `options.expect`.
    fn server_accepts(expect: &serde_json::Value) -> bool {
        let ceiling = Ceiling {
            max_timeout: Duration::from_secs(1),
            max_memory_mib: 64,
        };
        serde_json::from_value::<crate::service::options::JobOptions>(
            serde_json::json!({ "expect": expect }),
        )
        .is_ok_and(|options| {
            options
                .apply(pyward::Job::new(Vec::new()), &ceiling)
                .is_ok()
        })
    }

    /// Every value inside `value` with its JSON pointer.
    fn parts(value: &serde_json::Value, at: String, all: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => map
                .iter()
                .for_each(|(k, v)| parts(v, format!("{at}/{k}"), all)),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, v)| parts(v, format!("{at}/{i}"), all)),
            _ => {}
        }
        all.push(at);
    }

    #[test]
    fn the_schema_of_expect_takes_what_the_server_takes() {
        use pyward::validate::{
            BoundCheck, ColumnsUnchanged, Decimals, Expectations, KeysFromInput, SumCheck,
            TableCheck,
        };
        use serde_json::{json, Value};

        let doc: Value = serde_json::from_str(&super::document(&Ceiling {
            max_timeout: Duration::from_secs(1),
            max_memory_mib: 64,
        }))
        .unwrap();
        // The published schema, references resolved within the document.
        let published = json!({
            "$ref": "#/components/schemas/JobOptions/properties/expect",
            "components": doc["components"],
        });
        let schema = jsonschema::validator_for(&published).unwrap();
        let agree = |expect: &Value| {
            let (valid, accepted) = (schema.is_valid(expect), server_accepts(expect));
            assert_eq!(
                valid, accepted,
                "schema valid {valid}, server accepts {accepted}: {expect}"
            );
            valid
        };
        // Every field of the form, set (a struct literal: a new field fails to compile
        // until it is here, and then until the schema has it).
        let full = Expectations {
            version: 1,
            artifacts: vec!["result.xlsx".into(), "summary.csv".into()],
            tables: vec![TableCheck {
                artifact: "result.xlsx".into(),
                sheet: Some("Allocation".into()),
                header_row: Some(2),
                required_columns: vec!["dept".into(), "cost".into()],
                row_count: Some(8),
                keys_from_input: Some(KeysFromInput {
                    input: "in/source.xlsx".into(),
                    sheet: Some("Depts".into()),
                    header_row: Some(1),
                    columns: vec!["dept".into()],
                }),
                unique_keys: vec!["dept".into()],
                no_nan: vec!["cost".into()],
                sums: vec![SumCheck {
                    column: "cost".into(),
                    total: 1e6,
                    tolerance: 0.01,
                }],
                bounds: vec![BoundCheck {
                    column: "share".into(),
                    min: Some(0.1),
                    max: Some(0.35),
                    where_column: Some("dept".into()),
                    equals: Some("R&D".into()),
                }],
                columns_unchanged: Some(ColumnsUnchanged {
                    input: "source.csv".into(),
                    sheet: None,
                    header_row: None,
                    key: vec!["dept".into()],
                    columns: vec!["revenue".into()],
                    tolerance: 1e-9,
                }),
                decimals: vec![Decimals {
                    column: "cost".into(),
                    max: 2,
                }],
                no_formulas: false,
            }],
        };
        let full = serde_json::to_value(&full).unwrap();
        assert!(agree(&full));
        // Every object, field and value of it: left out, another field beside it, or
        // replaced by a value of each JSON type.
        let mut all = Vec::new();
        parts(&full, String::new(), &mut all);
        let others = [
            json!(null),
            json!(true),
            json!("x"),
            json!("x.csv"),
            json!(0),
            json!(-1),
            json!(1.5),
            json!(u64::MAX),
            json!([]),
            json!(["x"]),
            json!({}),
        ];
        let (mut valid, mut invalid) = (0, 0);
        for at in &all {
            let mut tried = Vec::new();
            for other in &others {
                let mut changed = full.clone();
                *changed.pointer_mut(at).unwrap() = other.clone();
                tried.push(changed);
            }
            if let Some(object) = full.pointer(at).and_then(Value::as_object) {
                let mut wider = object.clone();
                wider.insert(String::new(), json!(1));
                let mut changed = full.clone();
                *changed.pointer_mut(at).unwrap() = Value::Object(wider);
                tried.push(changed);
            }
            if let Some((parent, key)) = at.rsplit_once('/') {
                let mut changed = full.clone();
                match changed.pointer_mut(parent).unwrap() {
                    Value::Object(map) => drop(map.remove(key)),
                    Value::Array(items) => drop(items.remove(key.parse::<usize>().unwrap())),
                    _ => unreachable!(),
                }
                tried.push(changed);
            }
            for changed in &tried {
                if agree(changed) {
                    valid += 1;
                } else {
                    invalid += 1;
                }
            }
        }
        assert!(
            valid > 100 && invalid > 400,
            "{valid} valid, {invalid} invalid"
        );
        // The checks after serde: names, paths, `OUT`, the version, a header row.
        let table = |check: Value| json!({"version": 1, "tables": [check]});
        let keys = |input: &str| {
            table(json!({"artifact": "r.csv", "keys_from_input": {"input": input, "columns": []}}))
        };
        for ok in [
            json!(null),
            json!({"version": 1}),
            json!({"version": 1, "artifacts": []}),
            json!({"version": 1, "artifacts": ["t.csv", "plot.svg"]}),
            json!({"version": 1, "artifacts": ["data.parquet", "Plot.PNG"]}),
            json!({"version": 1, "artifacts": ["..png", "...", ".a", "a b\u{e9}.TXT"]}),
            json!({"version": 1, "artifacts": [format!("{}.csv", "a".repeat(251))]}),
            json!({"version": 1, "artifacts": ["r.json"], "tables": [{"artifact": "b.xlsm"}]}),
            table(json!({"artifact": "r.xlsx", "header_row": u32::MAX})),
            table(
                json!({"artifact": "r.csv", "sheet": null, "row_count": null, "no_formulas": true}),
            ),
            keys("a/b\\c/..d/.e/..."),
            keys("x"),
            // Every output suffix may be `OUT`, in any case; every figure may be listed.
            json!({"version": 1, "artifacts": ["photo.jpg"]}),
            json!({"version": 1, "artifacts": ["t.csv", "b.WEBP", "c.jpeg"]}),
            json!({"version": 1, "artifacts": ["wave.gif"]}),
            json!({"version": 1, "artifacts": ["notes.MD", "run.log", "r.html", "t.tsv"]}),
        ] {
            assert!(agree(&ok), "{ok}");
        }
        for bad in [
            json!({"": 1}),
            json!({}),
            json!([1]),
            json!({"version": 2}),
            json!({"version": 1, "": []}),
            json!({"version": 1, "artifacts": null}),
            json!({"version": 1, "artifacts": ["x.parquet", "t.csv"]}),
            json!({"version": 1, "artifacts": [".png"]}),
            json!({"version": 1, "artifacts": ["t.csv", ".JPG"]}),
            json!({"version": 1, "artifacts": ["."]}),
            json!({"version": 1, "artifacts": ["t.csv", ".."]}),
            json!({"version": 1, "artifacts": ["t.csv", "a/b"]}),
            json!({"version": 1, "artifacts": ["t.csv", "a\\b"]}),
            json!({"version": 1, "artifacts": ["t.csv", "a\u{7}b"]}),
            json!({"version": 1, "artifacts": ["t.csv", "a\u{85}b"]}),
            json!({"version": 1, "artifacts": [format!("{}.csv", "a".repeat(252))]}),
            json!({"version": 1, "tables": [{"artifact": "b.xlsm"}]}),
            json!({"version": 1, "tables": [["r.csv"]]}),
            json!({"version": 1, "artifacts": ["r.csv"], "tables": [{"artifact": "r.csv", "bounds": [["x"]]}]}),
            table(json!({"artifact": "r.csv", "header_row": 0})),
            table(json!({"artifact": "r.csv", "row_count": -1})),
            table(json!({"artifact": "r.csv", "decimals": [{"column": "c", "max": 1.5}]})),
            table(json!({"artifact": "r.csv", "sums": [{"column": "c"}]})),
            keys(""),
            keys("/etc/passwd"),
            keys("../x.csv"),
            keys("a/../x.csv"),
            keys("a/./x.csv"),
            keys("a//x.csv"),
            keys("a/"),
            keys("."),
        ] {
            assert!(!agree(&bad), "{bad}");
        }
    }
}
