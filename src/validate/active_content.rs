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

/// Functions that reach past the workbook: fetch a URL (`WEBSERVICE`, `IMAGE`), open
/// one (`HYPERLINK`), ask a COM server (`RTD`), call into a library or run a program
/// (`CALL`, `REGISTER`, `REGISTER.ID`, `EXEC`), or evaluate text as a formula
/// (`EVALUATE`, which Excel allows in defined names).
const CALLING_OUT: [&str; 9] = [
    "WEBSERVICE",
    "IMAGE",
    "HYPERLINK",
    "RTD",
    "CALL",
    "REGISTER",
    "REGISTER.ID",
    "EXEC",
    "EVALUATE",
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

/// Why a formula outside the cells reaches past the workbook; `None` when it does not.
/// Text in double quotes is a string, not a call (`"a|b"` is no DDE).
pub(super) fn calls_out(formula: &str) -> Option<String> {
    let chars: Vec<char> = formula.chars().collect();
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            in_string = c != '"';
            i += 1;
            continue;
        }
        match c {
            '"' => in_string = true,
            '|' => return Some("a DDE call (|)".into()),
            '[' => {
                let inside: String = chars[i + 1..].iter().take_while(|c| **c != ']').collect();
                let external = inside.chars().all(|c| c.is_ascii_digit())
                    || inside.contains(['.', '/', '\\', ':']);
                if external {
                    return Some(format!("a reference into another file ([{inside}])"));
                }
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
        ] {
            let why = calls_out(hostile).unwrap_or_default();
            assert!(why.contains(says), "{hostile}: {why:?}");
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
