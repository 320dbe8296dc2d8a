# Describes this interpreter for pyward: run by build.rs (the Python pyward is built
# against) and by PythonEnv::probe (a run-time override), both with `-I`.
import importlib.util, json, os, sys, sysconfig
# What every worker imports during warm-up (pandas and seaborn on demand); build.rs warns
# when one is missing.
REQUIRED = ['numpy', 'matplotlib', 'scipy', 'pandas', 'PIL', 'seaborn']
# The interpreter's own sys.path under -I: stdlib, lib-dynload and, because `site` ran,
# the virtualenv's site-packages; the worker sets exactly these.
seen = []
for p in sys.path:
    if p and p not in seen and os.path.isdir(p):
        seen.append(p)
print(json.dumps({
    'executable': sys.executable,
    'libdir': sysconfig.get_config_var('LIBDIR'),
    'home': sys.base_prefix,
    'prefix': sys.prefix,
    'paths': seen,
    'version': '%d.%d.%d' % sys.version_info[:3],
    'shared': bool(sysconfig.get_config_var('Py_ENABLE_SHARED')),
    'missing': [m for m in REQUIRED if importlib.util.find_spec(m) is None],
}))
