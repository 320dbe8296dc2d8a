//! The table checks on small CSV and xlsx tables made here, each rule passing and
//! failing on purpose.

use super::*;
use crate::outcome::Artifact;
use crate::validate::sheet::tests::{row, workbook};

fn ctx_check(check: &TableCheck, csv: &str, input: Option<&str>) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    if let Some(i) = input {
        std::fs::write(dir.path().join("depts.csv"), i).unwrap();
    }
    let arts = [Artifact {
        name: "alloc.csv".into(),
        media_type: "text/csv".into(),
        bytes: csv.as_bytes().to_vec(),
        figure: None,
        obtained: None,
        requested: None,
    }];
    check.check(&ValidationContext {
        artifacts: &arts,
        inputs: dir.path(),
    })
}

fn allocation_check() -> TableCheck {
    serde_json::from_str(
        r#"{"artifact": "alloc.csv",
            "required_columns": ["dept", "share", "amount"],
            "row_count": 3,
            "keys_from_input": {"input": "depts.csv", "columns": ["dept"]},
            "unique_keys": ["dept"],
            "no_nan": ["amount"],
            "sums": [{"column": "amount", "total": 1000, "tolerance": 0.01}],
            "bounds": [{"column": "share", "min": 0.10, "where_column": "dept", "equals": "rnd"},
                       {"column": "share", "max": 0.35, "where_column": "dept", "equals": "sales"}]}"#,
    )
    .unwrap()
}

const INPUT: &str = "dept,revenue\nrnd,100\nsales,300\nops,600\n";

#[test]
fn cost_allocation_passes_when_right() {
    let ok = "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\nops,0.5,500\n";
    ctx_check(&allocation_check(), ok, Some(INPUT)).unwrap();
}

#[test]
fn each_table_rule_fails_with_a_specific_message() {
    let c = allocation_check();
    let cases = [
        (
            "dept,share\nrnd,0.1\nsales,0.3\nops,0.6\n",
            "no column \"amount\"",
        ),
        (
            "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\n",
            "has 2 rows",
        ),
        (
            "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\nhr,0.5,500\n",
            "does not keep the keys",
        ),
        (
            "dept,share,amount\nrnd,0.15,150\nrnd,0.35,350\nops,0.5,500\n",
            "duplicate key",
        ),
        (
            "dept,share,amount\nrnd,0.15,150\nsales,0.35,NaN\nops,0.5,500\n",
            "NaN in 1 rows: alloc.csv!C3",
        ),
        (
            "dept,share,amount\nrnd,0.15,150\nsales,0.35,350\nops,0.5,400\n",
            "sum of amount is 900.00, expected 1,000.00 ± 0.01 (alloc.csv!C2:C4)",
        ),
        (
            "dept,share,amount\nrnd,0.05,50\nsales,0.35,350\nops,0.6,600\n",
            "at least 0.1",
        ),
        (
            "dept,share,amount\nrnd,0.15,150\nsales,0.45,450\nops,0.4,400\n",
            "at most 0.35",
        ),
    ];
    for (csv, want) in cases {
        let err = ctx_check(&c, csv, Some(INPUT)).unwrap_err();
        assert!(err.contains(want), "{want:?} not in {err:?}");
    }
}

fn check_with(
    check: &TableCheck,
    name: &str,
    output: &[u8],
    inputs: &[(&str, &[u8])],
) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    for (n, b) in inputs {
        std::fs::write(dir.path().join(n), b).unwrap();
    }
    let arts = [Artifact {
        name: name.into(),
        media_type: String::new(),
        bytes: output.to_vec(),
        figure: None,
        obtained: None,
        requested: None,
    }];
    check.check(&ValidationContext {
        artifacts: &arts,
        inputs: dir.path(),
    })
}

fn source_xlsx() -> Vec<u8> {
    let body = [
        row(1, &["dept_id", "部门", "revenue"]),
        row(2, &["101", "研发", "100"]),
        row(3, &["102", "销售", "300"]),
        row(4, &["103", "HQ", "600"]),
    ]
    .concat();
    workbook(&[("Departments", &body)], &[])
}

fn finance_check(artifact: &str) -> TableCheck {
    TableCheck {
        artifact: artifact.into(),
        keys_from_input: Some(KeysFromInput {
            input: "source.xlsx".into(),
            sheet: Some("Departments".into()),
            header_row: None,
            columns: vec!["dept_id".into()],
        }),
        columns_unchanged: Some(ColumnsUnchanged {
            input: "source.xlsx".into(),
            sheet: None,
            header_row: None,
            key: vec!["dept_id".into()],
            columns: vec!["部门".into(), "revenue".into()],
            tolerance: 1e-9,
        }),
        sums: vec![SumCheck {
            column: "cost".into(),
            total: 1_000_000.0,
            tolerance: 0.01,
        }],
        decimals: vec![Decimals {
            column: "cost".into(),
            max: 2,
        }],
        ..TableCheck::default()
    }
}

#[test]
fn keys_and_copied_columns_cross_formats() {
    let src = source_xlsx();
    let inputs: &[(&str, &[u8])] = &[("source.xlsx", &src)];
    let ok = "dept_id,部门,revenue,cost\n101,研发,100.0,100000.00\n102,销售,300,300000\n103,HQ,600,600000\n";
    check_with(
        &finance_check("result.csv"),
        "result.csv",
        ok.as_bytes(),
        inputs,
    )
    .unwrap();
    let out = [
        row(1, &["dept_id", "部门", "revenue", "cost"]),
        row(2, &["101", "研发", "100", "100000"]),
        row(3, &["102", "Sales", "300", "300000.004"]),
        row(4, &["104", "HQ", "600", "599998.73"]),
    ]
    .concat();
    let err = check_with(
        &finance_check("result.xlsx"),
        "result.xlsx",
        &workbook(&[("Sheet1", &out)], &[]),
        inputs,
    )
    .unwrap_err();
    for want in [
        r#"result.xlsx!Sheet1 does not keep the keys ["dept_id"] of source.xlsx!Departments: 1 missing [["103"]], 1 unexpected [["104"]]"#,
        r#"1 rows differ from input on 部门: result.xlsx!Sheet1!B3 is "Sales", source.xlsx!Departments!B3 is "销售""#,
        "sum of cost is 999,998.73, expected 1,000,000.00 ± 0.01 (result.xlsx!Sheet1!D2:D4)",
        "cost must have at most 2 decimals; 1 rows have more: result.xlsx!Sheet1!D3 is 300000.004",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
}

#[test]
fn formulas_are_refused_by_default_and_named() {
    let check = TableCheck {
        artifact: "r.xlsx".into(),
        ..TableCheck::default()
    };
    let out = [
        row(1, &["dept", "cost"]),
        row(2, &["hq", "-5"]),
        row(3, &["'@SUM(1)", "f:B2*2"]),
    ]
    .concat();
    let err = check_with(&check, "r.xlsx", &workbook(&[("Sheet1", &out)], &[]), &[]).unwrap_err();
    assert!(
        err.contains("2 cells of r.xlsx are run as formulas"),
        "{err}"
    );
    assert!(
        err.contains("r.xlsx!Sheet1!B3 holds the formula =B2*2"),
        "{err}"
    );
    assert!(
        err.contains(r#"r.xlsx!Sheet1!A3 is the text "@SUM(1)""#),
        "{err}"
    );
    let off = TableCheck {
        no_formulas: false,
        ..check
    };
    check_with(&off, "r.xlsx", &workbook(&[("Sheet1", &out)], &[]), &[]).unwrap();
}

#[test]
fn an_input_outside_the_inputs_is_not_read() {
    let mut check = finance_check("result.csv");
    check.keys_from_input.as_mut().unwrap().input = "../etc/passwd".into();
    let err = check_with(&check, "result.csv", b"dept_id,cost\n1,2\n", &[]).unwrap_err();
    assert!(
        err.contains("input ../etc/passwd cannot be opened"),
        "{err}"
    );
}

#[test]
fn five_thousand_rows_check_quickly() {
    let mut body = vec![row(1, &["dept_id", "部门", "revenue", "cost"])];
    let mut csv = String::from("dept_id,部门,revenue\n");
    for i in 0..5000u32 {
        let cost = 200.0;
        body.push(row(
            i + 2,
            &[
                &(1000 + i).to_string(),
                &format!("部门{i}"),
                &(i * 7).to_string(),
                &format!("{cost:.2}"),
            ],
        ));
        csv.push_str(&format!("{},部门{i},{}\n", 1000 + i, i * 7));
    }
    let out = workbook(&[("Sheet1", &body.concat())], &[]);
    let mut check = finance_check("result.xlsx");
    for k in [
        &mut check.keys_from_input.as_mut().unwrap().input,
        &mut check.columns_unchanged.as_mut().unwrap().input,
    ] {
        *k = "source.csv".into();
    }
    check.keys_from_input.as_mut().unwrap().sheet = None;
    check.unique_keys = vec!["dept_id".into()];
    check.no_nan = vec!["cost".into()];
    check.row_count = Some(5000);
    let started = std::time::Instant::now();
    check_with(
        &check,
        "result.xlsx",
        &out,
        &[("source.csv", csv.as_bytes())],
    )
    .unwrap();
    eprintln!("5,000-row table check: {:?}", started.elapsed());
}

#[test]
fn unknown_fields_are_refused_when_loading() {
    assert!(serde_json::from_str::<TableCheck>(r#"{"artifact": "a.csv", "colums": []}"#).is_err());
}

/// Keys and copied-through values are compared by [`Canon`], not by the text of
/// [`Value::canonical`]: the two must agree on every pair of values.
#[test]
fn keys_compare_as_their_canonical_text() {
    use proptest::prelude::*;
    let spellings = [
        "101",
        "101.0",
        " 101 ",
        "1e2",
        "100",
        "1.0e2",
        "abc",
        "",
        " ",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "+inf",
        "Infinity",
        "-0",
        "0",
        "0.0",
        "-0.0",
        "1.5",
        "1.50",
        "True",
        "False",
        "1000000000000000",
        "999999999999999",
        "1e15",
        "1e400",
        "-1e400",
        "0.1",
        "0.30000000000000004",
        "#N/A",
        "1e-7",
        "0.0000001",
    ];
    let value = prop_oneof![
        any::<f64>().prop_map(Value::Number),
        (-1e16f64..1e16).prop_map(|x| Value::Number(x.trunc())),
        prop::sample::select(spellings.to_vec()).prop_map(|s| Value::Text(s.into())),
        any::<f64>().prop_map(|x| Value::Text(format!("{x}"))),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Error("#N/A".into())),
        Just(Value::Empty),
        Just(Value::Number(f64::NAN)),
        Just(Value::Number(f64::INFINITY)),
        Just(Value::Number(-0.0)),
    ];
    let config = ProptestConfig {
        cases: 4000,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(a in value.clone(), b in value)| {
        let (ca, cb) = (Canon::of(&a), Canon::of(&b));
        prop_assert_eq!(ca.text(), a.canonical().into_owned());
        prop_assert_eq!(ca == cb, a.canonical() == b.canonical(), "{:?} {:?}", a, b);
        let (la, lb) = (Look::at(&a), Look::at(&b));
        prop_assert_eq!(la.canon, ca);
        prop_assert_eq!(la.missing, a.is_missing());
        prop_assert_eq!(la.number.map(f64::to_bits), a.number().map(f64::to_bits));
        prop_assert_eq!(lb.canon, cb);
    });
}
