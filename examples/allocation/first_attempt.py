# The model's first attempt at the rule in README.md: it guesses the column 'Revenue'
# (the sheet's column is 'revenue'). Otherwise the same as allocation.py.
# cost by revenue weight within the bounds, round to cents, the remainder to HQ, write
# the result workbook with a styled sheet and a summary sheet.
import pandas as pd
from openpyxl.styles import Font, Alignment, PatternFill
from openpyxl.utils import get_column_letter

TOTAL = 1_000_000.00
df = pd.read_excel('source.xlsx', sheet_name='Departments')

share = df['Revenue'] / df['Revenue'].sum()
rnd = df['dept_name'] == 'R&D'
sales = df['dept_name'] == 'Sales'
share[rnd] = share[rnd].clip(lower=0.10)
share[sales] = share[sales].clip(upper=0.35)
fixed = rnd | sales
share[~fixed] = share[~fixed] / share[~fixed].sum() * (1 - share[fixed].sum())

df['share'] = share.round(6)
df['cost_allocated'] = (share * TOTAL).round(2)
remainder = round(TOTAL - df['cost_allocated'].sum(), 2)
df.loc[df['dept_name'] == 'HQ', 'cost_allocated'] += remainder
df['cost_allocated'] = df['cost_allocated'].round(2)

summary = pd.DataFrame({
    'item': ['total cost', 'departments', 'rounding remainder to HQ'],
    'value': [df['cost_allocated'].sum().round(2), len(df), remainder],
})

with pd.ExcelWriter('result.xlsx', engine='openpyxl') as writer:
    df.to_excel(writer, sheet_name='Allocation', index=False)
    summary.to_excel(writer, sheet_name='Summary', index=False)
    ws = writer.sheets['Allocation']
    for cell in ws[1]:
        cell.font = Font(bold=True)
        cell.alignment = Alignment(horizontal='center')
        cell.fill = PatternFill('solid', start_color='DDEBF7')
    for i, column in enumerate(df.columns, start=1):
        ws.column_dimensions[get_column_letter(i)].width = max(12, len(str(column)) + 4)
    for row in ws.iter_rows(min_row=2, min_col=df.columns.get_loc('cost_allocated') + 1,
                            max_col=df.columns.get_loc('cost_allocated') + 1):
        for cell in row:
            cell.number_format = '#,##0.00'

print(df[['dept_id', '部门', 'share', 'cost_allocated']].to_string(index=False))
