"""Regenerates examples/allocation/source.xlsx (deterministic): departments with Chinese
and English names, revenue and headcount, on the sheet 'Departments'."""
import os

import pandas as pd

here = os.path.dirname(os.path.abspath(__file__))
departments = [
    (101, '研发', 'R&D', 4_200_000, 58),
    (102, '销售', 'Sales', 9_800_000, 41),
    (103, '市场', 'Marketing', 2_100_000, 17),
    (104, '运营', 'Operations', 3_300_000, 29),
    (105, '财务', 'Finance', 900_000, 9),
    (106, '人力资源', 'Human Resources', 600_000, 7),
    (107, '客户服务', 'Customer Service', 1_500_000, 23),
    (100, '总部', 'HQ', 400_000, 12),
]
frame = pd.DataFrame(departments, columns=['dept_id', '部门', 'dept_name', 'revenue', 'headcount'])
with pd.ExcelWriter(os.path.join(here, 'source.xlsx'), engine='openpyxl') as writer:
    frame.to_excel(writer, sheet_name='Departments', index=False)
    writer.book.properties.created = pd.Timestamp('2026-01-01').to_pydatetime()
    writer.book.properties.modified = pd.Timestamp('2026-01-01').to_pydatetime()
