//! The report's JSON Schema as a test assertion (shared with the CLI's tests).

/// Validates `value` against the report's JSON Schema ([`pyward::report::JSON_SCHEMA`]),
/// panicking with every error found.
pub fn assert_valid_report(value: &serde_json::Value) {
    use std::sync::OnceLock;
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let schema: serde_json::Value =
            serde_json::from_str(pyward::report::JSON_SCHEMA).expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
    });
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report does not match the schema: {errors:#?}\n{value:#}"
    );
}
