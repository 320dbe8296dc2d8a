//! Issue 41: every way model code names a column that does not exist is answered the same
//! way, through the real worker: the name asked for, the closest existing one, and the
//! frame's columns, whichever pandas internal raised (a GroupBy's KeyError, `set_index`'s
//! "None of [...]", the plot accessor, a merge, pyward's checked `query` grammar, seaborn's
//! ValueError and the KeyError of its figure-level plots); an undefined variable the same
//! way, with the names the code defined. Also what must not happen: a group key called a
//! column, a job's string class asked to compare or print itself by the feedback.

use crate::common;

use pyward::gate::Policy;
use pyward::{Executor, Job, JobFailure, Outcome};

/// The frame every script starts from.
const FRAME: &str = "df = pd.DataFrame({'date': ['2024-01', '2024-02', '2024-03'], \
                     'region': ['north', 'south', 'north'], 'revenue': [10.0, 12.5, 9.0], \
                     'units': [3, 4, 2], '部门名称': ['a', 'b', 'c']})\n";

/// What every answer about this frame lists.
const COLUMNS: &str = "The frame's columns: 'date', 'region', 'revenue', 'units', '部门名称'.";

fn exec() -> Executor {
    common::builder().preload_pandas(true).build().unwrap()
}

/// The feedback of a script that must fail with a Python error.
fn feedback(exec: &Executor, body: &str) -> String {
    let code = format!("{FRAME}{body}\nplt.savefig(OUT)\n");
    let outcome: Outcome = exec.run(Job::new(code.as_str())).expect("infrastructure");
    match outcome.failure() {
        Some(f @ JobFailure::PythonError(_)) => f.feedback(),
        other => panic!("{body}: expected a Python error, got {other:?}"),
    }
}

#[test]
fn every_lookup_form_names_the_closest_column_and_lists_them_all() {
    let exec = exec();
    // (the lookup, the name asked for, the closest existing column)
    let forms = [
        ("df['Revenue']", "Revenue", "revenue"),
        (
            "df.groupby('region')['Revenue'].sum()",
            "Revenue",
            "revenue",
        ),
        (
            "df.groupby('region')[['Revenue', 'units']].sum()",
            "Revenue",
            "revenue",
        ),
        ("df.groupby('Region')['revenue'].sum()", "Region", "region"),
        (
            "df.groupby(['region', 'Date'])['revenue'].sum()",
            "Date",
            "date",
        ),
        ("df[['region', 'Revenue']]", "Revenue", "revenue"),
        ("df.loc[:, 'Revenue']", "Revenue", "revenue"),
        ("df.loc[:, ['date', 'Units']]", "Units", "units"),
        ("df.sort_values('Revenue')", "Revenue", "revenue"),
        (
            "df.sort_values(by=['region', 'revenu'])",
            "revenu",
            "revenue",
        ),
        (
            "df.pivot_table(values='Revenue', index='region', columns='date')",
            "Revenue",
            "revenue",
        ),
        (
            "df.pivot_table(values='revenue', index='Region', columns='date')",
            "Region",
            "region",
        ),
        ("df.plot(x='Date', y='revenue')", "Date", "date"),
        ("df.plot(x='date', y='Revenue')", "Revenue", "revenue"),
        (
            "df.plot.scatter(x='units', y='Revenue')",
            "Revenue",
            "revenue",
        ),
        ("df.set_index('Date')", "Date", "date"),
        ("df.drop(columns=['Units'])", "Units", "units"),
        ("df.dropna(subset=['Revenue'])", "Revenue", "revenue"),
        (
            "df.groupby('region').agg(total=('Revenue', 'sum'))",
            "Revenue",
            "revenue",
        ),
        ("df.melt(id_vars=['Date'])", "Date", "date"),
        ("df.query('Revenue > 3')", "Revenue", "revenue"),
        ("df.eval('Revenue * 2')", "Revenue", "revenue"),
        (
            "df = df.assign(margin=df['revenue'] / df['units'])\ndf['margins'].plot()",
            "margins",
            "margin",
        ),
        ("df['部门'].value_counts()", "部门", "部门名称"),
        ("df.groupby('部门')['revenue'].sum()", "部门", "部门名称"),
        ("df[' revenue ']", " revenue ", "revenue"),
        (
            "import seaborn as sns\nsns.lineplot(data=df, x='Revnue', y='units')",
            "Revnue",
            "revenue",
        ),
        (
            "import seaborn as sns\nsns.barplot(data=df, x='region', y='Units')",
            "Units",
            "units",
        ),
        (
            "import seaborn as sns\nsns.scatterplot(data=df, x='units', y='revenue', hue='Region')",
            "Region",
            "region",
        ),
        (
            "import seaborn as sns\nsns.lmplot(data=df, x='units', y='Revnue')",
            "Revnue",
            "revenue",
        ),
    ];
    let mut wrong = Vec::new();
    for (lookup, asked, closest) in forms {
        let text = feedback(&exec, lookup);
        let columns = if lookup.starts_with("df = df.assign") {
            "The frame's columns: 'date', 'region', 'revenue', 'units', '部门名称', 'margin'."
        } else {
            COLUMNS
        };
        for want in [
            format!("No column '{asked}'."),
            format!("Did you mean: '{closest}'?"),
            columns.to_string(),
        ] {
            if !text.contains(&want) {
                wrong.push(format!("{lookup}: missing {want:?} in\n{text}\n"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn merges_list_both_frames_and_a_rename_names_the_new_name() {
    let exec = exec();
    let merge = feedback(
        &exec,
        "targets = pd.DataFrame({'region': ['north'], 'target': [11.0]})\n\
         df.merge(targets, on='Region')",
    );
    for want in [
        "No column 'Region'. Did you mean: 'region'?",
        "The left frame's columns: 'date', 'region', 'revenue', 'units', '部门名称'.",
        "The right frame's columns: 'region', 'target'.",
    ] {
        assert!(merge.contains(want), "{want:?} in\n{merge}");
    }
    let function = feedback(
        &exec,
        "targets = pd.DataFrame({'region': ['north'], 'target': [11.0]})\n\
         pd.merge(df, targets, left_on='Region', right_on='region')",
    );
    assert!(
        function.contains("Did you mean: 'region'?") && function.contains("right frame's"),
        "{function}"
    );

    let renamed = feedback(
        &exec,
        "df = df.rename(columns={'revenue': 'sales'})\ndf.groupby('region')['revenue'].sum()",
    );
    for want in [
        "'revenue' was renamed to 'sales' at line 2: use the new name.",
        "The frame's columns: 'date', 'region', 'sales', 'units', '部门名称'.",
    ] {
        assert!(renamed.contains(want), "{want:?} in\n{renamed}");
    }
}

#[test]
fn rows_groups_and_variables_are_not_called_columns() {
    let exec = exec();
    let row = feedback(&exec, "df.set_index('region').loc['North']");
    assert!(
        row.contains("No row label 'North'. Did you mean: 'north'? The index's labels: 'north', 'south', 'north'."),
        "{row}"
    );
    let group = feedback(&exec, "df.groupby('region').get_group('east')");
    assert!(
        group.contains("No group 'east'. The groups: 'north', 'south'."),
        "{group}"
    );
    let local = feedback(&exec, "limit = 10\ndf.query('revenue > @limt')");
    assert!(
        local.contains("No variable 'limt'. Did you mean: 'limit'?"),
        "{local}"
    );
    assert!(!local.contains("No column"), "{local}");
    let position = feedback(&exec, "df[0]");
    assert!(
        position.contains("rows by position are df.iloc[0]"),
        "{position}"
    );
    // A long frame lists its first columns and says how many there are.
    let wide = feedback(
        &exec,
        "wide = pd.DataFrame(np.zeros((2, 500)), columns=[f'sensor_{i}' for i in range(500)])\n\
         wide['Sensor_7']",
    );
    assert!(
        wide.contains("Did you mean: 'sensor_7'?") && wide.contains("... (500 in all)."),
        "{wide}"
    );
}

/// An undefined variable is answered like a missing column: the closest name, then the
/// names the code defined that the failing line sees (its function's own first), not the
/// builtins nor the names every job is given (`np`, `plt`, `pd`, `OUT`, ...).
#[test]
fn an_undefined_variable_names_the_closest_and_lists_the_code_s_names() {
    let exec = exec();
    let global = feedback(
        &exec,
        "totals = df.groupby('region')['revenue'].sum()\nplt.bar(totals.index, total)",
    );
    assert!(
        global.contains(
            "No variable 'total'. Did you mean: 'totals'? \
             The names the code defined: 'df', 'totals'."
        ),
        "{global}"
    );
    let local = feedback(
        &exec,
        "def scale(values, factor):\n    return np.asarray(values) * factr\n\
         plt.plot(scale([1, 2], 3))",
    );
    assert!(
        local.contains(
            "No variable 'factr'. Did you mean: 'factor'? \
             The names the code defined: 'values', 'factor', 'df', 'scale'."
        ),
        "{local}"
    );
    // A comprehension in a function sees the function's names.
    let comprehension = feedback(
        &exec,
        "def scale(values, factor):\n    return [v * factr for v in values]\n\
         plt.plot(scale([1, 2], 3))",
    );
    assert!(
        comprehension.contains("No variable 'factr'. Did you mean: 'factor'?")
            && comprehension.contains("'values', 'factor', 'df', 'scale'."),
        "{comprehension}"
    );
    for text in [&global, &local, &comprehension] {
        let listed = text.split("The names the code defined:").nth(1).unwrap();
        for given in ["'plt'", "'np'", "'pd'", "'OUT'", "'print'", "'len'"] {
            assert!(!listed.contains(given), "{given} listed in\n{text}");
        }
    }
}

/// The feedback runs after the job's code and never runs it again: a job's str subclass
/// used as a column or a dict key is never printed by it (nor compared: only exact
/// strings are matched). The gate refuses such classes; with it off, the feedback holds
/// alone.
#[test]
fn the_feedback_never_asks_a_job_object_to_describe_itself() {
    let exec = common::builder()
        .preload_pandas(true)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let loud = "class Loud(str):\n\
                \x20   def __repr__(self):\n\
                \x20       print('CANARY repr')\n\
                \x20       return 'x'\n";
    for (setup, lookup, want) in [
        (
            "df[Loud('profit')] = 1.0",
            "df['Profit']",
            "No column 'Profit'.",
        ),
        (
            "totals = {Loud('north'): 1, 'south': 2}",
            "totals['North']",
            "No key 'North'. Its keys: 'south'.",
        ),
    ] {
        let code = format!("{FRAME}{loud}{setup}\nprint('LOOKUP')\n{lookup}\n");
        let outcome = exec.run(Job::new(code.as_str())).unwrap();
        let text = outcome.feedback().unwrap_or_default();
        assert!(text.contains(want), "{want:?} in\n{text}");
        assert!(
            !text.contains("profit") && !text.contains("'north'"),
            "{text}"
        );
        let after = outcome.stdout.split("LOOKUP").nth(1).unwrap_or_default();
        assert!(!after.contains("CANARY"), "{:?}", outcome.stdout);
    }
}
