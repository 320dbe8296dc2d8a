"""Drives `pyward mcp` with the official MCP Python SDK (and, for what no SDK sends,
with raw JSON-RPC lines on its stdin), and `/mcp` of a `pyward serve` over streamable
HTTP. Run by cli/tests/mcp.rs:

    client.py tools  PYWARD SRC OUT   # every tool through the SDK; prints a JSON summary
    client.py raw    PYWARD SRC OUT   # malformed frames, stdin closed mid-call
    client.py http   URL OUT [TOKEN]  # /mcp of `pyward serve --mcp-out OUT` at URL
    client.py drain  URL PID          # SIGTERM to that server while a call runs

Each check raises AssertionError with what it saw; the exit code is non-zero then.
"""

import asyncio
import http.client
import json
import os
import select
import struct
import subprocess
import sys
import time
import urllib.parse
import zlib

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

FIGURE = """
df = pd.read_csv(srcpath('sales.csv'))
totals = df.groupby('region')['revenue'].sum()
ax = totals.plot(kind='bar', figsize=(16, 9), rot=0)
ax.set_title('Revenue by region')
plt.tight_layout()
plt.savefig(OUT, dpi=150)
print('regions:', len(totals))
import logging
logging.basicConfig(level=logging.INFO)
logging.info('plotted %d regions', len(totals))
"""

WRONG_COLUMN = FIGURE.replace("['revenue']", "['Revenue']")

TABLE = """
df = pd.read_csv(srcpath('sales.csv'))
out = df.groupby('region', as_index=False)['revenue'].sum()
out.to_csv(OUT, index=False)
"""


def server(pyward, src, out, *extra):
    """`pyward mcp` on `src` and `out`; no records unless `extra` names --runs."""
    record = [] if "--runs" in extra else ["--no-record"]
    return StdioServerParameters(
        command=pyward,
        args=["mcp", "--src", src, "--out", out, *record, *extra],
        env=dict(os.environ),
    )


def png_size(data):
    """Width and height of a PNG, after checking every chunk's CRC and that its pixel
    data inflates to exactly the rows its header describes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    at, idat, header = 8, b"", None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        body = data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
        if kind == b"IEND":
            break
    width, height, depth, color, *_ = header
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    rows = zlib.decompress(idat)
    assert len(rows) == height * (1 + (width * channels * depth + 7) // 8), "short pixel data"
    return width, height


def texts(result):
    return [c.text for c in result.content if c.type == "text"]


def linked_path(result):
    links = [c for c in result.content if c.type == "resource_link"]
    assert len(links) == 1, result
    uri = str(links[0].uri)
    assert uri.startswith("file://"), uri
    return urllib.parse.unquote(uri[len("file://") :]), links[0]


async def first_calls(session, out, summary):
    """What every transport answers alike: the handshake, the tools with their
    annotations, the inputs, a figure within the bound and a failure's feedback."""
    init = await session.initialize()
    assert init.server_info.name == "pyward", init
    assert init.capabilities.tools is not None, init

    listed = {t.name: t for t in (await session.list_tools()).tools}
    assert sorted(listed) == ["check_code", "list_inputs", "make_figure", "run_table_job"], listed
    for name in ("check_code", "list_inputs"):
        assert listed[name].annotations.read_only_hint is True, listed[name]
    figure_tool = listed["make_figure"]
    assert figure_tool.annotations.destructive_hint is False, figure_tool
    assert figure_tool.annotations.read_only_hint is False, figure_tool
    schema = figure_tool.input_schema
    assert schema["required"] == ["name", "code"] and schema["additionalProperties"] is False, schema
    for word in ("srcpath", "np, plt (matplotlib.pyplot), pd", "Allowed imports", "px"):
        assert word in figure_tool.description, (word, figure_tool.description)

    inputs = texts(await session.call_tool("list_inputs", {}))[0]
    assert '"sales.csv"' in inputs and '"revenue" (number)' in inputs, inputs

    # With progress asked for (the job is quick: none need come).
    async def on_progress(done, total, message):
        pass

    made = await session.call_tool("make_figure", {"name": "revenue", "code": FIGURE}, progress_callback=on_progress)
    check_figure(made, out)
    summary["figure_file"] = linked_path(made)[0]
    # What the code printed and logged reaches the model beside the figure.
    said = "\n".join(texts(made))
    assert "regions: 4" in said and "INFO:root:plotted 4 regions" in said, said

    wrong = await session.call_tool("make_figure", {"name": "wrong", "code": WRONG_COLUMN})
    assert wrong.is_error and len(wrong.content) == 1, wrong
    summary["failure_text"] = texts(wrong)[0]
    assert "'revenue'" in summary["failure_text"], summary
    assert not os.path.exists(os.path.join(out, "wrong.png"))


def check_figure(made, out):
    """A figure answer: the image within the default bound, its description and the
    link to the full-size file in `out`."""
    assert not made.is_error, made
    kinds = [c.type for c in made.content]
    assert kinds == ["image", "text", "resource_link"], kinds
    image = made.content[0]
    assert image.mime_type == "image/png", image.mime_type
    png = __import__("base64").b64decode(image.data)
    width, height = png_size(png)
    assert max(width, height) <= 1500 and len(png) <= 64_000, (width, height, len(png))
    path, link = linked_path(made)
    assert os.path.basename(path) == "revenue.png" and os.path.dirname(path) == os.path.realpath(out), path
    full = open(path, "rb").read()
    assert link.size == len(full) and link.mime_type == "image/png", link
    # 16 x 9 inches at 150 dpi: larger than the bound, so the image is scaled whole.
    assert png_size(full) == (2400, 1350), png_size(full)
    assert abs(width / height - 2400 / 1350) < 0.01, (width, height)
    text = texts(made)[0]
    assert "Shows:" in text and "Revenue by region" in text and "regions: 4" in text, text


async def cancel_spin(session, summary):
    # A job that spins, with progress asked for; the client gives up after 3 s and
    # sends notifications/cancelled: the job is cancelled (its worker killed and
    # replaced), so the next call does not wait for the 60 s deadline.
    progress = []

    async def on_progress(done, total, message):
        progress.append((done, message))

    try:
        await session.call_tool(
            "make_figure", {"name": "spin", "code": "while True:\n    pass\n"},
            read_timeout_seconds=3, progress_callback=on_progress,
        )
        raise AssertionError("the spinning job was answered")
    except MCPError as e:
        assert "timed out" in e.error.message, e.error
    assert progress and progress[0][0] >= 1 and "running for" in progress[0][1], progress
    started = time.monotonic()
    after = await session.call_tool("make_figure", {"name": "after_cancel", "code": FIGURE})
    assert not after.is_error, after
    summary["after_cancel_seconds"] = round(time.monotonic() - started, 2)


async def tools(pyward, src, out):
    summary = {}
    async with stdio_client(server(pyward, src, out)) as (read, write):
        async with ClientSession(read, write) as session:
            await first_calls(session, out, summary)
            path = summary["figure_file"]
            full = open(path, "rb").read()

            inputs = texts(await session.call_tool("list_inputs", {}))[0]
            assert '["2026-01","north","widgets"' in inputs, inputs
            assert '"scan.mat"' in inputs and "MATLAB variables" in inputs, inputs

            ok = await session.call_tool("check_code", {"code": FIGURE})
            assert not ok.is_error and texts(ok)[0].startswith("ok"), ok
            refused = await session.call_tool("check_code", {"code": "import socket\n"})
            assert not refused.is_error and texts(refused)[0].startswith("rejected"), refused
            assert "socket" in texts(refused)[0], refused

            # The same name again: the file is kept.
            again = await session.call_tool("make_figure", {"name": "revenue", "code": FIGURE})
            assert again.is_error and "already in the output directory" in texts(again)[0], again
            assert open(path, "rb").read() == full

            # Names that are not one plain file name.
            for bad in ["../escape", ".hidden", "a/b", "x" * 300, ""]:
                refused = await session.call_tool("make_figure", {"name": bad, "code": FIGURE})
                assert refused.is_error and "refused" in texts(refused)[0], (bad, refused)
            assert sorted(os.listdir(out)) == ["revenue.png"], os.listdir(out)

            # The table job, with a check.
            table = await session.call_tool(
                "run_table_job",
                {
                    "name": "totals.csv",
                    "code": TABLE,
                    "checks": {"tables": [{"artifact": "totals.csv", "row_count": 4}]},
                },
            )
            assert not table.is_error, table
            text = texts(table)[0]
            assert "4 rows x 2 columns" in text and '"region" (text)' in text, text
            assert "Every declared check passed" in text, text
            path, _ = linked_path(table)
            assert open(path).read().startswith("region,revenue"), path
            failing = await session.call_tool(
                "run_table_job",
                {
                    "name": "totals2.csv",
                    "code": TABLE,
                    "checks": {"tables": [{"artifact": "totals2.csv", "row_count": 3}]},
                },
            )
            assert failing.is_error and "has 4 rows, expected 3" in texts(failing)[0], failing
            # Another file the code must write (`expect`), checked by a checks file's TOML.
            both = await session.call_tool(
                "run_table_job",
                {
                    "name": "totals3.csv",
                    "code": TABLE + "out.head(2).to_csv('top3.csv', index=False)\n",
                    "expect": ["top3.csv"],
                    "checks": 'version = 1\n[[tables]]\nartifact = "top3.csv"\nrow_count = 2\n',
                },
            )
            assert not both.is_error, both
            assert "Every declared check passed (1 table)" in texts(both)[0], both
            missing = await session.call_tool(
                "run_table_job",
                {"name": "totals4.csv", "code": TABLE, "expect": ["never.csv"]},
            )
            assert missing.is_error and "never.csv" in texts(missing)[0], missing

            # Bad arguments: tool errors that say which.
            cases = [
                ({"code": FIGURE}, 'missing argument "name"'),
                ({"name": "a", "code": FIGURE, "dpi": 300}, 'unknown argument "dpi"'),
                ({"name": 7, "code": FIGURE}, 'argument "name" must be a string, not a number'),
                ({"name": "a", "code": ["x"]}, 'argument "code" must be a string, not an array'),
            ]
            for arguments, said in cases:
                answer = await session.call_tool("make_figure", arguments)
                assert answer.is_error and said in texts(answer)[0], (arguments, answer)
            extra = await session.call_tool("list_inputs", {"path": "/"})
            assert extra.is_error and "takes no arguments" in texts(extra)[0], extra

            # Ten megabytes of code: refused by the gate, a clear error.
            huge = await session.call_tool("make_figure", {"name": "huge", "code": "x = 1\n" * ((10 << 20) // 6)})
            assert huge.is_error and "bytes" in texts(huge)[0], huge
            summary["huge_code_text"] = texts(huge)[0]

            # An unknown tool: a JSON-RPC error.
            try:
                await session.call_tool("rm_rf", {})
                raise AssertionError("an unknown tool was answered")
            except MCPError as e:
                assert e.code == -32602 and "unknown tool" in e.error.message, e.error

            # The server still works.
            again = await session.call_tool("make_figure", {"name": "after", "code": FIGURE})
            assert not again.is_error, again

    # A tighter bound, only some tools, records, a long deadline.
    small_out = os.path.join(out, "small")
    runs = os.path.join(out, "runs")
    params = server(
        pyward, src, small_out, "--image-max-side", "300", "--image-max-bytes", "8000",
        "--tools", "make_figure,check_code", "--runs", runs, "--timeout", "60",
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = sorted(t.name for t in (await session.list_tools()).tools)
            assert names == ["check_code", "make_figure"], names
            made = await session.call_tool("make_figure", {"name": "small", "code": FIGURE})
            assert not made.is_error, made
            png = __import__("base64").b64decode(made.content[0].data)
            width, height = png_size(png)
            assert max(width, height) <= 300 and len(png) <= 8000, (width, height, len(png))
            assert png_size(open(linked_path(made)[0], "rb").read()) == (2400, 1350)
            try:
                await session.call_tool("list_inputs", {})
                raise AssertionError("a tool left out by --tools was answered")
            except MCPError as e:
                assert "unknown tool" in e.error.message, e.error

            await cancel_spin(session, summary)
    summary["runs"] = runs

    print(json.dumps(summary))


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def post(url, message, headers):
    """A plain POST of one JSON-RPC message to `url` with `headers` (a Host of its own
    replaces the real one); the connection and its response, headers read."""
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    body = json.dumps(message).encode()
    conn.putrequest("POST", parsed.path, skip_host="Host" in headers)
    for name, value in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Content-Length": str(len(body)),
        **headers,
    }.items():
        conn.putheader(name, value)
    conn.endheaders(body)
    return conn, conn.getresponse()


def http_status(url, headers):
    """The status of an initialize POSTed with `headers`."""
    conn, response = post(url, INITIALIZE, headers)
    conn.close()
    return response.status


def start_call(url, auth, name, code):
    """A session of plain requests and a make_figure call in it; the call's connection
    and response, its headers read."""
    conn, response = post(url, INITIALIZE, auth)
    assert response.status == 200, response.status
    session = {**auth, "Mcp-Session-Id": response.getheader("mcp-session-id"), "MCP-Protocol-Version": "2025-06-18"}
    response.read()
    conn.close()
    conn, response = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert response.status == 202, response.status
    conn.close()
    call = {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "make_figure", "arguments": {"name": name, "code": code}},
    }
    conn, response = post(url, call, session)
    assert response.status == 200, response.status
    return conn, response


def spin_and_go_away(url, auth):
    """Starts a spinning make_figure and closes the connection while it runs."""
    conn, _ = start_call(url, auth, "gone", "while True:\n    pass\n")
    time.sleep(2)
    conn.sock.shutdown(__import__("socket").SHUT_RDWR)
    conn.close()


async def over_http(url, out, token=""):
    """`/mcp` through the SDK's streamable HTTP client; the Host, Origin and token
    checks with plain requests."""
    summary = {}
    url = url + "/mcp"
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=auth) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await first_calls(session, out, summary)
                await cancel_spin(session, summary)
                # A client that goes away mid-call: its job is cancelled, so the next
                # call (one worker) does not wait for the spin's deadline.
                spin_and_go_away(url, auth)
                started = time.monotonic()
                after = await session.call_tool("make_figure", {"name": "after_gone", "code": FIGURE})
                assert not after.is_error, after
                summary["after_disconnect_seconds"] = round(time.monotonic() - started, 2)
    port = urllib.parse.urlsplit(url).port
    summary["status"] = {
        "loopback": http_status(url, {**auth, "Host": f"localhost:{port}"}),
        "foreign_host": http_status(url, {**auth, "Host": "evil.example"}),
        "rebound_host": http_status(url, {**auth, "Host": f"evil.example:{port}"}),
        "foreign_origin": http_status(url, {**auth, "Origin": "https://evil.example"}),
        "loopback_origin": http_status(url, {**auth, "Origin": f"http://127.0.0.1:{port}"}),
        "no_token": http_status(url, {}),
        "wrong_token": http_status(url, {"Authorization": "Bearer " + "x" * 32}),
    }
    print(json.dumps(summary))


def drain(url, server_pid):
    """SIGTERM while a call runs: its answer still comes, whole."""
    slow = "t = 0\nfor i in range(20_000_000):\n    t += i\nplt.plot([1, 2])\nplt.savefig(OUT)\n"
    conn, response = start_call(url + "/mcp", {}, "slow", slow)
    time.sleep(0.5)
    os.kill(int(server_pid), 15)
    conn.sock.settimeout(30)
    lines = response.read().decode().splitlines()
    answers = [json.loads(line[len("data: "):]) for line in lines if line.startswith("data: {")]
    assert len(answers) == 1 and answers[0]["id"] == 2, answers
    result = answers[0]["result"]
    assert not result.get("isError") and result["content"][0]["type"] == "image", result
    print(json.dumps({"answered": True}))


def descendants(pid):
    """Every process below `pid`."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in os.listdir(f"/proc/{parent}/task"):
            try:
                children = open(f"/proc/{parent}/task/{task}/children").read().split()
            except OSError:
                continue
            for child in map(int, children):
                found.append(child)
                todo.append(child)
    return found


def alive(pid):
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False


def raw(pyward, src, out):
    proc = subprocess.Popen(
        [pyward, "mcp", "--src", src, "--out", out, "--no-record", "--timeout", "30"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )

    def send(message):
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        proc.stdin.write(data + b"\n")
        proc.stdin.flush()

    def answer(id):
        while True:
            line = proc.stdout.readline()
            assert line, "the server closed stdout"
            message = json.loads(line)
            if message.get("id") == id:
                return message

    send({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    })
    assert answer(1)["result"]["serverInfo"]["name"] == "pyward"
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    # Not JSON, not UTF-8, not JSON-RPC: none kills the server.
    send(b"{this is not json")
    send(b"\xff\xfe\x00garbage")
    # JSON of the wrong shape: an Invalid Request error (without an id: it was not read).
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "not an object"})
    bad = json.loads(proc.stdout.readline())
    assert bad["error"]["code"] == -32600, bad
    send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
    assert answer(3)["error"]["code"] == -32601, "unknown method"
    send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "check_code", "arguments": {"code": 5}}})
    typed = answer(4)["result"]
    assert typed["isError"] is True and "must be a string" in typed["content"][0]["text"], typed
    send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert len(answer(5)["result"]["tools"]) == 4

    # A job that spins; stdin closes while it runs: the server ends, its workers too.
    send({
        "jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "make_figure", "arguments": {"name": "spin", "code": "while True:\n    pass\n"}},
    })
    deadline = time.monotonic() + 30
    workers = []
    while time.monotonic() < deadline and not workers:
        workers = descendants(proc.pid)
        time.sleep(0.2)
    assert workers, "no worker process appeared"
    time.sleep(1)
    workers = sorted(set(workers) | set(descendants(proc.pid)))
    # Still spinning: no answer yet.
    assert not select.select([proc.stdout], [], [], 0)[0], proc.stdout.readline()
    closed = time.monotonic()
    proc.stdin.close()
    code = proc.wait(timeout=20)
    took = time.monotonic() - closed
    assert code == 0, code
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in workers):
        time.sleep(0.1)
    left = [p for p in workers if alive(p)]
    assert not left, f"workers still running after the server ended: {left}"
    print(json.dumps({"exit_seconds": round(took, 2), "workers": len(workers)}))


def main():
    scenario, *args = sys.argv[1:]
    if scenario == "http":
        asyncio.run(over_http(*args))
    elif scenario == "drain":
        drain(*args)
    elif scenario == "tools":
        asyncio.run(tools(*args))
    elif scenario == "raw":
        raw(*args)
    else:
        sys.exit(f"unknown scenario {scenario!r}")


if __name__ == "__main__":
    main()
