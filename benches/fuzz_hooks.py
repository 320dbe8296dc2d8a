"""schemathesis hooks for benches/fuzz_api.sh.

A schema cannot say that a binary part must be an .npy file, so a schema-valid job form
carries arrays the server rightly refuses (400, a problem naming the array). Each
generated array that is well-formed for the schema (a form's `array` part, a JSON job's
base64 `arrays` value) becomes an .npy file, so that positive_data_acceptance holds the
server to everything else as generated; what makes a request invalid stays.
"""

import base64
import re

import schemathesis


def _npy() -> bytes:
    """np.save(np.zeros(1)): the magic, version 1.0, a header padded to 64 bytes, data."""
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(8)


NPY = _npy()
NPY_BASE64 = base64.b64encode(NPY).decode()
# The pattern /v1/openapi.json gives a JSON job's `arrays` values.
BASE64 = re.compile(
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=|[A-Za-z0-9+/][AQgw]==)?"
)


def _json_array(value):
    """A JSON job's array: base64 stays base64, of an .npy file; anything else stays."""
    return NPY_BASE64 if isinstance(value, str) and BASE64.fullmatch(value) else value


def _form_array(value):
    """A form's `array` part: its bytes (or text) become an .npy file."""
    return NPY if isinstance(value, (bytes, bytearray, str)) else value


@schemathesis.hook
def map_body(ctx, body):
    operation = ctx.operation
    if operation is None or operation.method.upper() != "POST" or operation.path != "/v1/jobs":
        return body
    if not isinstance(body, dict):
        return body
    if isinstance(body.get("arrays"), dict):
        # A JSON job: each array a base64 .npy file.
        body = {**body, "arrays": {k: _json_array(v) for k, v in body["arrays"].items()}}
    if "array" in body:
        # A form: each `array` part an .npy file.
        parts = body["array"]
        parts = [_form_array(p) for p in parts] if isinstance(parts, list) else _form_array(parts)
        body = {**body, "array": parts}
    return body
