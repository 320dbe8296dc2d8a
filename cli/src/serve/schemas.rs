//! Stand-ins for what the OpenAPI document describes but no Rust request type carries:
//! the report (whose schema is the library's published one) and a PNG's bytes. The
//! handlers' annotations name them; `openapi` builds the document.

use std::borrow::Cow;

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
