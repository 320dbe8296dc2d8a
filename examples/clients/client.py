"""Run a file on a pyward server and save its figure (Python standard library only).

usage: python3 client.py http://127.0.0.1:8080 plot.py figure.png
"""
import base64, json, os, sys, urllib.request

url, code_file, out = sys.argv[1:4]
request = urllib.request.Request(
    url + "/v1/jobs",
    data=json.dumps({"code": open(code_file).read()}).encode(),
    headers={"Content-Type": "application/json"},
)
if os.environ.get("PYWARD_TOKEN"):
    request.add_header("Authorization", "Bearer " + os.environ["PYWARD_TOKEN"])
with urllib.request.urlopen(request, timeout=60) as response:
    report = json.load(response)
if report["status"] != "ok":
    sys.exit(f"{report['status']}: {report['feedback']}")
with open(out, "wb") as f:
    f.write(base64.b64decode(report["artifacts"][0]["data_base64"]))
print(f"{out}: {report['artifacts'][0]['bytes']} bytes in {report['timings_ms']['total']} ms")
