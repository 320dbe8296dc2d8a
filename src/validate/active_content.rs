//! What a spreadsheet program runs or fetches on its own, outside the cells: macros, a
//! DDE call, a link to another workbook or a server, a data connection, an embedded
//! object, and formulas outside cells (a defined name, a conditional format's rule, a
//! data validation's list) that call out. `no_formulas` refuses formula cells; these
//! are the same injection by another door, so it refuses them too.
//!
//! A rule outside the cells may still compute (`$B2>2000000`, `MOD(ROW(),2)=0`,
//! `"open,closed"`, `Sheet2!$A$1:$A$9`): formatting and drop-down lists are what model
//! code writes with openpyxl and XlsxWriter. Only what reaches past the workbook is
//! refused: a DDE call (`cmd|' /C calc'!A0`), a reference into another file (`[1]S!A1`,
//! `'C:\x\[b.xlsx]S'!A1`), an add-in function (`_xll.`), and the functions that fetch,
//! call or evaluate (the list below).

/// Functions that reach past the workbook: fetch from the network (`WEBSERVICE`,
/// `IMAGE`, `STOCKHISTORY`, `TRANSLATE`, `DETECTLANGUAGE`, `COPILOT`, `PY`, which runs
/// in a cloud), import a file (`IMPORTTEXT`, `IMPORTCSV`), open a link (`HYPERLINK`),
/// ask a COM server (`RTD`), call into a library or run a program (`CALL`, `REGISTER`,
/// `REGISTER.ID`, `EXEC`), and the Excel 4.0 macro functions that evaluate text, run
/// macros or touch files (`EVALUATE`, `EXECUTE`, `RUN`, `FILES`, `FOPEN`, `FWRITE`,
/// `FWRITELN`, `FREAD`, `FREADLN`, `DIRECTORY`, `GET.WORKSPACE`).
const CALLING_OUT: [&str; 27] = [
    "WEBSERVICE",
    "IMAGE",
    "STOCKHISTORY",
    "TRANSLATE",
    "DETECTLANGUAGE",
    "COPILOT",
    "PY",
    "IMPORTTEXT",
    "IMPORTCSV",
    "HYPERLINK",
    "RTD",
    "CALL",
    "REGISTER",
    "REGISTER.ID",
    "EXEC",
    "EVALUATE",
    "EXECUTE",
    "RUN",
    "FILES",
    "FOPEN",
    "FWRITE",
    "FWRITELN",
    "FREAD",
    "FREADLN",
    "DIRECTORY",
    "GET.WORKSPACE",
    "GET.CELL",
];

/// What a workbook part is, when a spreadsheet program runs or fetches with it; `None`
/// for the parts of values, styles, charts and images. `part` is the zip entry's name.
pub(super) fn active_part(part: &str) -> Option<&'static str> {
    let lower = part.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    if file.starts_with("vbaproject") {
        Some("a macro project")
    } else if lower.starts_with("xl/macrosheets/") || lower.starts_with("xl/dialogsheets/") {
        Some("an Excel 4.0 macro sheet")
    } else if lower.starts_with("xl/externallinks/") {
        Some("a link to another workbook or a DDE server")
    } else if lower == "xl/connections.xml" || lower.starts_with("xl/querytables/") {
        Some("a data connection")
    } else if lower.starts_with("xl/embeddings/") {
        Some("an embedded object")
    } else if lower.starts_with("xl/activex/") || lower.starts_with("xl/ctrlprops/") {
        Some("an ActiveX or form control")
    } else {
        None
    }
}

/// What a relationship brings in, when a spreadsheet program runs or fetches with it:
/// judged by its type (where the part sits does not matter: a DDE link is one in any
/// folder) and, for a target outside the package, by that (a hyperlink is clicked, an
/// image or template linked outside is fetched when the workbook opens).
pub(super) fn active_relationship(kind: &str, external: bool) -> Option<&'static str> {
    let last = kind.rsplit('/').next().unwrap_or(kind).to_ascii_lowercase();
    let what = match last.as_str() {
        "vbaproject" | "vbaprojectsignature" | "wordvbadata" => "a macro project",
        "xlmacrosheet" | "xlintlmacrosheet" | "dialogsheet" => "an Excel 4.0 macro sheet",
        "externallink" | "externallinkpath" | "externallinklong" => {
            "a link to another workbook or a DDE server"
        }
        "connections" | "querytable" => "a data connection",
        "oleobject" | "package" => "an embedded object",
        "control" | "activexcontrol" | "activexcontrolbinary" | "ctrlprop" => {
            "an ActiveX or form control"
        }
        "webextension" | "webextensiontaskpanes" => "an Office add-in",
        "attachedtemplate" => "a template fetched when the workbook opens",
        "hyperlink" => return None,
        _ if external => "a part fetched from outside the workbook",
        _ => return None,
    };
    Some(what)
}

/// What a declared content type is, when a spreadsheet program runs or fetches with
/// it (`[Content_Types].xml` declares the kinds of the package's parts).
pub(super) fn active_content_type(content_type: &str) -> Option<&'static str> {
    let lower = content_type.to_ascii_lowercase();
    [
        ("vbaproject", "a macro project"),
        ("macroenabled", "a macro workbook"),
        ("macrosheet", "an Excel 4.0 macro sheet"),
        ("dialogsheet", "an Excel 4.0 macro sheet"),
        ("externallink", "a link to another workbook or a DDE server"),
        ("connections", "a data connection"),
        ("querytable", "a data connection"),
        ("oleobject", "an embedded object"),
        ("activex", "an ActiveX control"),
        ("webextension", "an Office add-in"),
    ]
    .into_iter()
    .find(|(mark, _)| lower.contains(mark))
    .map(|(_, what)| what)
}

/// Why a formula outside the cells reaches past the workbook; `None` when it does not.
/// Text in double quotes is a string, not a call (`"a|b"` is no DDE); a name in single
/// quotes is a sheet's (`'a"b'!A1`: its `"` opens no string), and no sheet's name holds
/// a `[`, so one inside is a reference into another file.
pub(super) fn calls_out(formula: &str) -> Option<String> {
    let chars: Vec<char> = formula.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '"' => i = closing(&chars, i, '"'),
            '\'' => {
                let end = closing(&chars, i, '\'');
                if chars[i..end.min(chars.len())].contains(&'[') {
                    let name: String = chars[i..end.min(chars.len())].iter().collect();
                    return Some(format!("a reference into another file ({name})"));
                }
                i = end;
            }
            '|' => return Some("a DDE call (|)".into()),
            '[' if names_another_file(&chars, i) => {
                let inside: String = chars[i + 1..].iter().take_while(|c| **c != ']').collect();
                return Some(format!("a reference into another file ([{inside}])"));
            }
            '(' => {
                let name: String = chars[..i]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                let upper = name.to_uppercase();
                if upper.starts_with("_XLL.") {
                    return Some(format!("the add-in function {name}"));
                }
                let bare = upper
                    .trim_start_matches("_XLFN.")
                    .trim_start_matches("_XLWS.");
                if CALLING_OUT.contains(&bare) {
                    return Some(format!("the function {bare}, which calls out"));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing the quoted run opened at `open` (a doubled quote is
/// one quote inside it); past the end when it is never closed.
fn closing(chars: &[char], open: usize, quote: char) -> usize {
    let mut i = open + 1;
    while i < chars.len() {
        if chars[i] == quote {
            if chars.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i;
        }
        i += 1;
    }
    chars.len()
}

/// Whether the `[` at `at` opens a reference into another file rather than a table's
/// column (`Revenue[Amount]`, `[@Amount]`): a workbook by number (`[1]`), by file name
/// or path (`[b.xlsx]`, `[C:\x\b.xlsx]`), or any name followed by a sheet and `!`
/// (`[Book2]Rates!A1`).
fn names_another_file(chars: &[char], at: usize) -> bool {
    let inside: Vec<char> = chars[at + 1..]
        .iter()
        .take_while(|c| **c != ']')
        .copied()
        .collect();
    if inside.iter().all(char::is_ascii_digit)
        || inside.iter().any(|c| matches!(c, '.' | '/' | '\\' | ':'))
    {
        return true;
    }
    let after = at + 1 + inside.len() + 1;
    chars
        .get(after..)
        .unwrap_or_default()
        .iter()
        .take_while(|c| {
            !matches!(
                c,
                '(' | ')'
                    | ','
                    | ';'
                    | '+'
                    | '-'
                    | '*'
                    | '/'
                    | '&'
                    | '='
                    | '<'
                    | '>'
                    | '^'
                    | ' '
                    | '['
                    | ']'
            )
        })
        .any(|c| *c == '!')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_that_compute_pass_and_calls_out_are_named() {
        for fine in [
            "$B2>2000000",
            "MOD(ROW(),2)=0",
            "AND($D2<0,$E2>0)",
            "ISBLANK($A2)",
            "\"open,closed\"",
            "Sheet2!$A$1:$A$9",
            "'Q1 Sales'!$B$1",
            "0.96",
            "\"a|b\"&$A1",
            "\"WEBSERVICE(x)\"",
            "Revenue[Amount]",
            "Revenue[[#This Row],[Amount]]",
            "_xlfn.IFS($A1>1,1,TRUE,0)",
            "'Sheet1'!$1:$1",
            "'it''s'!$A$1>0",
            "'a\"b'!$A$1>0",
            "SUM(Revenue[Amount])>0",
            "[@Amount]>0",
            "",
        ] {
            assert_eq!(calls_out(fine), None, "{fine}");
        }
        for (hostile, says) in [
            ("cmd|' /C calc'!A0", "DDE"),
            ("'cmd'|'x'!A0", "DDE"),
            ("WEBSERVICE(\"http://127.0.0.1:9/\")", "WEBSERVICE"),
            ("_xlfn.WEBSERVICE(\"http://x\")<>\"\"", "WEBSERVICE"),
            ("webservice(\"http://x\")", "WEBSERVICE"),
            ("LEN(_xlfn.IMAGE(\"http://x/a.png\"))>0", "IMAGE"),
            ("HYPERLINK(\"http://x\",\"a\")", "HYPERLINK"),
            ("RTD(\"srv\",,\"t\")", "RTD"),
            ("CALL(\"kernel32\",\"WinExec\",\"JCJ\",\"calc\",0)", "CALL"),
            ("REGISTER.ID(\"x\",\"y\")", "REGISTER.ID"),
            ("EXEC(\"calc\")", "EXEC"),
            ("EVALUATE(\"1+1\")", "EVALUATE"),
            ("_xll.Evil(1)", "add-in"),
            ("[1]Sheet1!$A$1", "another file"),
            ("'C:\\x\\[b.xlsx]S'!A1", "another file"),
            ("SUM('https://h/[b.xlsx]S'!A1:A2)", "another file"),
            ("'a\"b'!$A$1&LEN(WEBSERVICE(\"http://x\"))>0", "WEBSERVICE"),
            ("'a\"b'!$A$1+cmd|' /C calc'!A0", "DDE"),
            ("'it''s'!A1+cmd|' /C calc'!A0", "DDE"),
            ("[Book2]Rates!$A$1", "another file"),
            ("SUM([Book2]Rates!A1:A2)", "another file"),
            ("STOCKHISTORY(\"MSFT\",TODAY())", "STOCKHISTORY"),
            ("_xlfn.IMPORTCSV(\"http://x/a.csv\")", "IMPORTCSV"),
            ("FOPEN(\"c:\\x.txt\")", "FOPEN"),
            ("GET.WORKSPACE(1)", "GET.WORKSPACE"),
        ] {
            let why = calls_out(hostile).unwrap_or_default();
            assert!(why.contains(says), "{hostile}: {why:?}");
        }
    }

    #[test]
    fn relationships_and_content_types_that_run_or_fetch_are_named() {
        let rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/";
        for (kind, external, says) in [
            ("externalLink", false, "DDE"),
            ("oleObject", false, "embedded"),
            ("connections", false, "connection"),
            ("xlMacrosheet", false, "macro sheet"),
            ("attachedTemplate", true, "template"),
            ("image", true, "fetched from outside"),
        ] {
            let why = active_relationship(&format!("{rel}{kind}"), external).unwrap_or_default();
            assert!(why.contains(says), "{kind}: {why:?}");
        }
        let vba = "http://schemas.microsoft.com/office/2006/relationships/vbaProject";
        assert_eq!(active_relationship(vba, false), Some("a macro project"));
        for (kind, external) in [
            ("hyperlink", true),
            ("image", false),
            ("worksheet", false),
            ("chart", false),
            ("sharedStrings", false),
        ] {
            assert_eq!(
                active_relationship(&format!("{rel}{kind}"), external),
                None,
                "{kind}"
            );
        }
        assert!(active_content_type("application/vnd.ms-office.vbaProject").is_some());
        assert!(
            active_content_type("application/vnd.ms-excel.sheet.macroEnabled.main+xml").is_some()
        );
        assert!(active_content_type(
            "application/vnd.openxmlformats-officedocument.spreadsheetml.externalLink+xml"
        )
        .is_some());
        for fine in [
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml",
            "image/png",
            "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
        ] {
            assert_eq!(active_content_type(fine), None, "{fine}");
        }
    }

    #[test]
    fn parts_that_run_or_fetch_are_named() {
        for (part, says) in [
            ("xl/vbaProject.bin", "macro"),
            ("xl/vbaProjectSignature.bin", "macro"),
            ("xl/macrosheets/sheet1.xml", "macro sheet"),
            ("xl/externalLinks/externalLink1.xml", "DDE"),
            ("xl/connections.xml", "connection"),
            ("xl/queryTables/queryTable1.xml", "connection"),
            ("xl/embeddings/oleObject1.bin", "embedded"),
            ("xl/activeX/activeX1.xml", "ActiveX"),
        ] {
            assert!(
                active_part(part).unwrap_or_default().contains(says),
                "{part}"
            );
        }
        for part in [
            "xl/worksheets/sheet1.xml",
            "xl/charts/chart1.xml",
            "xl/media/image1.png",
            "xl/styles.xml",
            "xl/tables/table1.xml",
            "docProps/app.xml",
        ] {
            assert_eq!(active_part(part), None, "{part}");
        }
    }
}
