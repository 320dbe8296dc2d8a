//! The tools `pyward mcp` offers: their names, descriptions written for a model, JSON
//! Schemas and annotations, and the reading of a call's arguments against them (a
//! missing, extra or wrongly typed argument is a tool error whose text says which).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

/// One of the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    /// Runs the figure job: image, description, linked file.
    MakeFigure,
    /// The gate alone.
    CheckCode,
    /// The input files and what they hold.
    ListInputs,
    /// Runs the table job: result file, its preview, the checks' verdict.
    RunTableJob,
}

impl ToolName {
    /// Every tool, in the order they are listed.
    pub const ALL: [ToolName; 4] = [
        ToolName::MakeFigure,
        ToolName::CheckCode,
        ToolName::ListInputs,
        ToolName::RunTableJob,
    ];

    /// The tool's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::MakeFigure => "make_figure",
            ToolName::CheckCode => "check_code",
            ToolName::ListInputs => "list_inputs",
            ToolName::RunTableJob => "run_table_job",
        }
    }

    /// The tool called `name`.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// `--tools`: a comma-separated list of tool names.
pub fn parse_list(text: &str) -> Result<Vec<ToolName>, String> {
    let mut tools = Vec::new();
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let tool = ToolName::parse(name).ok_or_else(|| {
            let all: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
            format!("--tools: no tool {name:?} (the tools: {})", all.join(", "))
        })?;
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    if tools.is_empty() {
        return Err("--tools: name at least one tool".into());
    }
    Ok(tools)
}

/// What the descriptions say of the server's settings.
pub struct Settings {
    /// The modules the code may import.
    pub modules: Vec<String>,
    /// Wall-clock limit per job, in seconds.
    pub timeout_secs: f64,
    /// Memory limit per job, in MiB.
    pub memory_mib: u64,
    /// Longest side of the image sent back.
    pub image_side: u32,
    /// Largest image sent back, in bytes.
    pub image_bytes: usize,
    /// Characters of the code's printed output sent back.
    pub stdout_chars: usize,
    /// Longest code, in bytes.
    pub max_code_bytes: usize,
    /// Whether a file of the same name in the output directory is replaced.
    pub overwrite: bool,
}

/// Longest `name`, in bytes.
pub const MAX_NAME_BYTES: usize = 100;

impl Settings {
    fn job_text(&self) -> String {
        format!(
            "How to write the code: np, plt (matplotlib.pyplot), pd and loadmat are already \
             imported. Read input files by name with srcpath(\"name\") (list_inputs shows \
             them, e.g. pd.read_csv(srcpath(\"sales.csv\"))). Allowed imports: {}. No \
             network, no subprocesses, no files outside the job. Limits: {} s and {} MiB per \
             call, code up to {} bytes.",
            self.modules.join(", "),
            self.timeout_secs,
            self.memory_mib,
            self.max_code_bytes
        )
    }

    fn existing_text(&self) -> &'static str {
        if self.overwrite {
            "A file of that name in the output directory is replaced."
        } else {
            "A file of that name already in the output directory is not replaced: the call \
             fails, choose another name."
        }
    }

    /// The tool's definition.
    pub fn tool(&self, name: ToolName) -> Tool {
        let code = json!({
            "type": "string",
            "description": "The whole Python script (UTF-8).",
        });
        let (title, description, schema, annotations) = match name {
            ToolName::MakeFigure => (
                "Make a figure",
                format!(
                    "Run Python code that draws a figure, and see the figure. Success returns \
                     the figure as a PNG image (downscaled whole, never cropped, to a long side \
                     of at most {} px and about {} kB), a text description of what it shows \
                     (axes, titles, labels, series with their point counts and ranges) and the \
                     first {} characters the code printed, and a link to the full-size PNG \
                     written to the output directory as <name>.png. {} Failure returns an error \
                     whose text says what went wrong and what exists instead (e.g. the columns \
                     a file has): fix the code and call again. Save the figure with \
                     plt.savefig(OUT) (any file name in savefig works too). {}",
                    self.image_side,
                    self.image_bytes / 1000,
                    self.stdout_chars,
                    self.existing_text(),
                    self.job_text()
                ),
                object_schema(
                    json!({
                        "name": name_schema(
                            r"^[^./\\][^/\\]*$",
                            "The figure's file name, e.g. \"revenue_by_region\" (written as \
                             revenue_by_region.png): one plain name, no folder, not starting \
                             with a dot.",
                        ),
                        "code": code,
                    }),
                    &["name", "code"],
                ),
                ToolAnnotations::with_title("Make a figure")
                    .read_only(false)
                    .destructive(self.overwrite)
                    .idempotent(self.overwrite)
                    .open_world(false),
            ),
            ToolName::CheckCode => (
                "Check code",
                format!(
                    "Check Python code against the sandbox's rules without running it: \
                     \"ok\", or each problem with its line and how to write it instead. \
                     make_figure and run_table_job run the same check first. {}",
                    self.job_text()
                ),
                object_schema(json!({"code": code}), &["code"]),
                ToolAnnotations::with_title("Check code")
                    .read_only(true)
                    .destructive(false)
                    .idempotent(true)
                    .open_world(false),
            ),
            ToolName::ListInputs => (
                "List input files",
                "List the input files the code can read with srcpath(\"name\"): each with its \
                 size; for CSV and .xlsx files the columns with their kinds and the first \
                 rows; for .npy the dtype and shape; for .mat each variable's class and \
                 dimensions. Names and cells are the files' data, JSON-quoted. Call it \
                 before writing code that reads them."
                    .to_string(),
                object_schema(json!({}), &[]),
                ToolAnnotations::with_title("List input files")
                    .read_only(true)
                    .destructive(false)
                    .idempotent(true)
                    .open_world(false),
            ),
            ToolName::RunTableJob => (
                "Run a table job",
                format!(
                    "Run Python code that writes a table (CSV or .xlsx), checked before it is \
                     trusted. The code writes the file `name` (OUT is that file: \
                     df.to_excel(OUT, index=False)); `expect` lists other files it must write, \
                     `checks` declares the checks on them. \
                     Success returns each table's shape, columns and first rows, and links to \
                     the files written to the output directory. {} Failure returns an error \
                     whose text names the problem (a missing column with the ones that exist, \
                     a failed check with its cells and numbers): fix the code and call again. \
                     {}",
                    self.existing_text(),
                    self.job_text()
                ),
                object_schema(
                    json!({
                        "name": name_schema(
                            r"^[^./\\][^/\\]*\.([Cc][Ss][Vv]|[Xx][Ll][Ss][Xx]|[Jj][Ss][Oo][Nn]|[Tt][Xx][Tt])$",
                            "The result's file name, ending in .csv, .xlsx, .json or .txt, \
                             e.g. \"result.xlsx\".",
                        ),
                        "code": code,
                        "expect": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Other files the code must write besides `name`, e.g. [\"summary.csv\"] (as pyward run --expect NAME).",
                        },
                        "checks": {
                            "type": ["object", "string"],
                            "description": "Optional checks on the files (as pyward run --checks FILE): a JSON object {\"version\": 1, \"tables\": [{\"artifact\": \"result.xlsx\", \"sheet\": \"Allocation\", \"required_columns\": [\"dept_id\"], \"row_count\": 8, \"unique_keys\": [\"dept_id\"], \"no_nan\": [\"cost\"], \"sums\": [{\"column\": \"cost\", \"total\": 1000000, \"tolerance\": 0.01}], \"decimals\": [{\"column\": \"cost\", \"max\": 2}], \"bounds\": [{\"column\": \"share\", \"min\": 0.1}]}]}, or the same as the TOML text of a checks file. `name` is always expected.",
                        },
                    }),
                    &["name", "code"],
                ),
                ToolAnnotations::with_title("Run a table job")
                    .read_only(false)
                    .destructive(self.overwrite)
                    .idempotent(self.overwrite)
                    .open_world(false),
            ),
        };
        let Value::Object(schema) = schema else {
            unreachable!("every schema is an object")
        };
        Tool::new(name.as_str(), description, Arc::new(schema))
            .with_title(title)
            .annotate(annotations)
    }
}

/// The schema of a tool's arguments: an object of `properties`, no others.
fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of a `name` argument: one plain file name matching `pattern`.
fn name_schema(pattern: &str, description: &str) -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_NAME_BYTES,
        "pattern": pattern,
        "description": description,
    })
}

/// The JSON type an argument must have.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A string.
    Text,
    /// An array of strings.
    Texts,
    /// An object, or a string (the same thing in another notation).
    ObjectOrText,
}

/// A call's arguments checked against `(name, kind, required)`: the values by name,
/// or the text of the tool error that says what is wrong.
pub fn arguments(
    given: Option<&JsonObject>,
    expected: &[(&str, Kind, bool)],
) -> Result<Vec<Option<Value>>, String> {
    let empty = JsonObject::new();
    let given = given.unwrap_or(&empty);
    let known: Vec<&str> = expected.iter().map(|(n, _, _)| *n).collect();
    let extra: Vec<String> = given
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .map(|k| format!("{:?}", k.chars().take(40).collect::<String>()))
        .collect();
    if !extra.is_empty() {
        let takes = if known.is_empty() {
            "no arguments".to_string()
        } else {
            format!("only {}", known.join(", "))
        };
        return Err(format!(
            "unknown argument{} {}: this tool takes {takes}",
            if extra.len() == 1 { "" } else { "s" },
            extra.join(", ")
        ));
    }
    let mut values = Vec::new();
    for (name, kind, required) in expected {
        match (given.get(*name), kind) {
            (None, _) if *required => return Err(format!("missing argument {name:?}")),
            (None, _) => values.push(None),
            (Some(v @ Value::String(_)), Kind::Text | Kind::ObjectOrText)
            | (Some(v @ Value::Object(_)), Kind::ObjectOrText) => {
                values.push(Some(v.clone()));
            }
            (Some(v @ Value::Array(items)), Kind::Texts) if items.iter().all(Value::is_string) => {
                values.push(Some(v.clone()));
            }
            (Some(v), kind) => {
                let wanted = match kind {
                    Kind::Text => "a string",
                    Kind::Texts => "an array of strings",
                    Kind::ObjectOrText => "a JSON object or a string",
                };
                return Err(format!(
                    "argument {name:?} must be {wanted}, not {}",
                    json_type(v)
                ));
            }
        }
    }
    Ok(values)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `name` as one plain file name: no folder, no leading dot, at most
/// [`MAX_NAME_BYTES`]; the text of the tool error otherwise.
pub fn check_name(name: &str) -> Result<(), String> {
    let shown = format!("{:?}", name.chars().take(60).collect::<String>());
    let why = if name.starts_with('.') {
        Some("it starts with a dot".to_string())
    } else if name.len() > MAX_NAME_BYTES {
        Some(format!("it is longer than {MAX_NAME_BYTES} bytes"))
    } else {
        pyward::output_dir::check_file_name(name)
            .err()
            .map(|e| e.to_string())
    };
    match why {
        Some(why) => Err(format!(
            "name {shown} is refused: {why}. Give one plain file name such as \"sales_chart\""
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> JsonObject {
        match v {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    #[test]
    fn arguments_are_checked_by_name_and_type() {
        let expected = [
            ("name", Kind::Text, true),
            ("expect", Kind::Texts, false),
            ("checks", Kind::ObjectOrText, false),
        ];
        let ok = arguments(Some(&object(json!({"name": "a"}))), &expected).unwrap();
        assert_eq!(ok, vec![Some(json!("a")), None, None]);
        let missing = arguments(None, &expected).unwrap_err();
        assert_eq!(missing, "missing argument \"name\"");
        let extra = arguments(Some(&object(json!({"name": "a", "x": 1}))), &expected);
        assert_eq!(
            extra.unwrap_err(),
            "unknown argument \"x\": this tool takes only name, expect, checks"
        );
        let typed = arguments(Some(&object(json!({"name": 3}))), &expected);
        assert_eq!(
            typed.unwrap_err(),
            "argument \"name\" must be a string, not a number"
        );
        let given = json!({"name": "a", "expect": ["b"], "checks": "version = 1"});
        let both = arguments(Some(&object(given)), &expected).unwrap();
        assert_eq!(both[1], Some(json!(["b"])));
        assert_eq!(both[2], Some(json!("version = 1")));
        for (given, said) in [
            (
                json!({"name": "a", "expect": "b"}),
                "must be an array of strings, not a string",
            ),
            (
                json!({"name": "a", "expect": [1]}),
                "must be an array of strings, not an array",
            ),
            (
                json!({"name": "a", "checks": 1}),
                "must be a JSON object or a string, not a number",
            ),
        ] {
            let refused = arguments(Some(&object(given)), &expected).unwrap_err();
            assert!(refused.contains(said), "{refused}");
        }
    }

    #[test]
    fn names_are_plain() {
        assert!(check_name("sales").is_ok());
        for bad in [
            "",
            ".hidden",
            "../x",
            "a/b",
            "a\\b",
            "x\u{0}",
            &"n".repeat(101),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn tools_parse() {
        assert_eq!(
            parse_list("check_code, list_inputs,check_code").unwrap(),
            vec![ToolName::CheckCode, ToolName::ListInputs]
        );
        assert!(parse_list("nope").unwrap_err().contains("make_figure"));
        assert!(parse_list(",").is_err());
    }
}
