"""An agent loop over MCP, with a script playing the model.

The "model" reads the inputs with list_inputs, writes a first attempt that asks for a
column by the wrong name, reads the tool error pyward sends back, corrects its code the
way the error says, and calls make_figure again. It ends with the figure in the output
directory. Needs the MCP Python SDK (`pip install mcp`, or `make test`'s .venv-mcp):

    python examples/mcp_agent.py [PYWARD] [OUT]

PYWARD defaults to target/debug/pyward, OUT to mcp-agent-out.
"""

import asyncio
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))

# What a model writes first: a column name as it would guess it.
FIRST_ATTEMPT = """\
df = pd.read_csv(srcpath('sales.csv'))
monthly = df.groupby('month')['Revenue'].sum()
ax = monthly.plot(marker='o', figsize=(8, 4))
ax.set_title('Revenue per month')
ax.set_ylabel('revenue (EUR)')
plt.tight_layout()
plt.savefig(OUT)
"""


def fix(code, feedback):
    """The model's repair: the name the feedback suggests, in place of the wrong one."""
    wrong = re.search(r"No column '([^']+)'", feedback)
    right = re.search(r"Did you mean: '([^']+)'", feedback)
    if not (wrong and right):
        raise SystemExit(f"the model cannot read this feedback:\n{feedback}")
    return code.replace(repr(wrong.group(1)), repr(right.group(1)))


async def agent(pyward, out):
    params = StdioServerParameters(
        command=pyward,
        args=["mcp", "--src", os.path.join(HERE, "data"), "--out", out, "--no-record"],
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            inputs = await session.call_tool("list_inputs", {})
            print("model reads the inputs:\n" + inputs.content[0].text.splitlines()[1])
            code = FIRST_ATTEMPT
            for attempt in (1, 2, 3):
                result = await session.call_tool("make_figure", {"name": "monthly_revenue", "code": code})
                if not result.is_error:
                    text = next(c.text for c in result.content if c.type == "text")
                    link = next(c for c in result.content if c.type == "resource_link")
                    print(f"attempt {attempt}: ok\n{text}\nfile: {link.uri}")
                    return attempt
                feedback = result.content[0].text
                print(f"attempt {attempt}: the tool says:\n{feedback}\n")
                code = fix(code, feedback)
    raise SystemExit("no figure after three attempts")


def main():
    pyward = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "target", "debug", "pyward")
    out = sys.argv[2] if len(sys.argv) > 2 else "mcp-agent-out"
    attempts = asyncio.run(agent(pyward, out))
    figure = os.path.join(out, "monthly_revenue.png")
    assert attempts == 2 and os.path.getsize(figure) > 0, (attempts, figure)
    print(f"the figure is {figure}, after {attempts} attempts")


if __name__ == "__main__":
    main()
