//! openpyxl's and XlsxWriter's classes imported where the packages define them, as
//! scripts import them (`from openpyxl.cell.cell import MergedCell` to skip merged cells
//! when sizing columns, `DifferentialStyle` and `Rule` for a conditional format,
//! `PageMargins`, `DefinedName`, rich text, chart axes): values and classes of the job's
//! own workbook, through the real worker, gate on, in the warm template (no worker is
//! retired for a module new to it). Each view holds its reviewed names only: what the
//! defining modules import besides (XlsxWriter's `ZipFile`, openpyxl's writers and
//! readers) stays out of reach, gate on and off.

use crate::common;

use common::{builder, expect_ok, python_error};
use pyward::gate::Policy;
use pyward::{Executor, Job};

fn executor(policy: Policy) -> Executor {
    builder()
        .workers(1)
        .preload_pandas(true)
        .policy(policy)
        .build()
        .expect("pool starts")
}

const DRESSED: &str = r#"
from openpyxl import Workbook
from openpyxl.workbook import Workbook as SameWorkbook
from openpyxl.cell.cell import MergedCell
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.workbook.protection import WorkbookProtection
from openpyxl.worksheet.worksheet import Worksheet
from openpyxl.worksheet.page import PageMargins
from openpyxl.worksheet.properties import PageSetupProperties
from openpyxl.worksheet.cell_range import CellRange
from openpyxl.worksheet.dimensions import ColumnDimension, DimensionHolder
from openpyxl.styles import Font
from openpyxl.styles.differential import DifferentialStyle
from openpyxl.styles.protection import Protection
from openpyxl.formatting.rule import Rule
from openpyxl.chart import LineChart, Reference
from openpyxl.chart.axis import DateAxis
from openpyxl.chart.text import RichText
from openpyxl.drawing.text import Paragraph, ParagraphProperties, CharacterProperties
from openpyxl.utils import get_column_letter
from xlsxwriter.workbook import Workbook as XlsxWorkbook
from xlsxwriter.exceptions import FileCreateError


def autofit(ws: Worksheet) -> None:
    widths = {}
    for row in ws.iter_rows():
        for cell in row:
            if isinstance(cell, MergedCell) or cell.value is None:
                continue
            widths[cell.column_letter] = max(widths.get(cell.column_letter, 0), len(str(cell.value)))
    for letter, width in widths.items():
        ws.column_dimensions[letter].width = width + 2


assert SameWorkbook is Workbook
wb = Workbook()
ws = wb.active
ws.title = "P&L"
ws.append(["Quarterly P&L", None, None])
ws.merge_cells("A1:C1")
ws.append(["month", "revenue", "cost"])
for m in range(1, 7):
    ws.append([m, 100 * m, 60 * m])
autofit(ws)
ws["A1"] = CellRichText([TextBlock(InlineFont(b=True), "Quarterly"), " P&L"])
red = DifferentialStyle(font=Font(color="9C0006"))
rule = Rule(type="cellIs", operator="lessThan", formula=["300"], dxf=red)
ws.conditional_formatting.add("B3:B8", rule)
ws.page_margins = PageMargins(left=0.5, right=0.5)
ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
wb.defined_names["revenue"] = DefinedName("revenue", attr_text="'P&L'!$B$3:$B$8")
wb.security = WorkbookProtection(lockStructure=True)
ws["C3"].protection = Protection(locked=False)
print(CellRange("B3:C8").size, isinstance(ws, Worksheet))
holder = DimensionHolder(worksheet=ws)
holder["D"] = ColumnDimension(ws, index="D", width=14)
ws.column_dimensions = holder
chart = LineChart()
chart.add_data(Reference(ws, min_col=2, min_row=2, max_row=8), titles_from_data=True)
chart.x_axis = DateAxis(crossAx=100)
chart.x_axis.txPr = RichText(p=[Paragraph(pPr=ParagraphProperties(defRPr=CharacterProperties(sz=900)))])
ws.add_chart(chart, "E2")
wb.save("pl.xlsx")

book = XlsxWorkbook("flat.xlsx")
book.add_worksheet("Data").write_row(0, 0, ["a", get_column_letter(3)])
try:
    book.close()
except FileCreateError as exc:
    print("could not write", exc)
"#;

#[test]
fn workbook_classes_are_imported_where_the_packages_define_them() {
    let exec = executor(Policy::default());
    let o = exec.run(Job::new(DRESSED)).expect("infrastructure");
    expect_ok(&o);
    assert_eq!(o.stdout, "{'columns': 2, 'rows': 6} True\n");
    for name in ["pl.xlsx", "flat.xlsx"] {
        assert!(o.artifact(name).is_some(), "no {name}: {:?}", o.artifacts());
    }
    assert!(o.retired.is_none(), "{:?}", o.retired);
}

#[test]
fn what_the_defining_modules_import_besides_stays_out_of_reach() {
    let gate_off = executor(Policy::gate_disabled_for_testing());
    for (code, member) in [
        ("from xlsxwriter.workbook import ZipFile", "ZipFile"),
        ("import xlsxwriter.workbook as w\nw.ZipFile", "ZipFile"),
        ("from openpyxl.workbook import workbook", "workbook"),
        ("from openpyxl.worksheet.worksheet import Cell", "Cell"),
        (
            "from openpyxl.cell.cell import NUMERIC_TYPES",
            "NUMERIC_TYPES",
        ),
        ("from openpyxl.worksheet import _writer", "_writer"),
    ] {
        let verdict = pyward::gate::check(code, &Policy::default()).unwrap();
        assert!(!verdict.is_allowed(), "the gate allowed {code}");
        let o = gate_off.run(Job::new(code)).expect("infrastructure");
        let e = python_error(&o);
        assert!(
            e.type_name.ends_with("Error") && e.message.contains(member),
            "{code}: {e:?}"
        );
    }
}
