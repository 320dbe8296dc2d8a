//! `GET /v1/openapi.json`: OpenAPI 3.1 generated from the request types and handler
//! annotations (utoipa), with the report's schema taken from the library's published
//! JSON Schema — the same one every report is tested against — so neither can drift.

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
            splice_report_schema(&mut doc);
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

/// Puts the report's JSON Schema in `components.schemas.Report`, its `$defs` beside it
/// as `Report_<name>` (references rewritten), since a `#/$defs/...` reference inside a
/// component would resolve against the OpenAPI document's root.
fn splice_report_schema(doc: &mut Value) {
    let mut report: Value =
        serde_json::from_str(pyward::report::JSON_SCHEMA).expect("the report schema is JSON");
    let object = report
        .as_object_mut()
        .expect("the report schema is an object");
    object.remove("$schema");
    object.remove("$id");
    let defs = object.remove("$defs").unwrap_or_default();
    let schemas = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .expect("the document has components.schemas");
    if let Value::Object(defs) = defs {
        for (name, mut def) in defs {
            rewrite_refs(&mut def);
            schemas.insert(format!("Report_{name}"), def);
        }
    }
    rewrite_refs(&mut report);
    schemas.insert("Report".into(), report);
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

/// A JSON job's `inputs` and `arrays` values are base64 (the arrays' bytes `.npy` files).
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
    }
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix("#/$defs/") {
                            *r = format!("#/components/schemas/Report_{name}");
                        }
                    }
                    (_, v) => rewrite_refs(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
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
}
