"""schemathesis hooks for benches/fuzz_api.sh.

A schema cannot say that a binary part must be an .npy file, so a schema-valid job form
carries arrays the server rightly refuses (400, a problem naming the array). In the
requests generated as valid, each array (a form's `array` part, a JSON job's `arrays`
value) becomes an .npy file, so that positive_data_acceptance holds the server to
everything else as generated; the requests generated as invalid go as they are.
"""

import base64

import schemathesis


def _npy() -> bytes:
    """np.save(np.zeros(1)): the magic, version 1.0, a header padded to 64 bytes, data."""
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(8)


NPY = _npy()
NPY_BASE64 = base64.b64encode(NPY).decode()


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if case.operation.method.upper() != "POST" or case.operation.path != "/v1/jobs":
        return
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    body = case.body
    if not isinstance(body, dict):
        return
    if isinstance(body.get("arrays"), dict):
        # A JSON job: each array a base64 .npy file.
        body["arrays"] = {name: NPY_BASE64 for name in body["arrays"]}
    if "array" in body:
        # A form: each `array` part an .npy file.
        parts = body["array"]
        body["array"] = [NPY for _ in parts] if isinstance(parts, list) else NPY
