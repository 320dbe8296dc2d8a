"""Reference implementation of the gate's rules with CPython's ast.parse + NodeVisitor.

Used only by the benchmark (benches/gate.rs) to compare speed with the Rust gate; it
mirrors the Rust rules closely but is not the enforcement point.
"""
import ast
import re
import unicodedata

ALLOWED = {"numpy", "scipy", "matplotlib", "mpl_toolkits", "pandas", "math", "cmath",
           "statistics", "json", "csv", "datetime", "time", "collections", "itertools",
           "functools", "re", "random", "decimal", "fractions", "textwrap", "string",
           "typing", "dataclasses", "enum", "numbers", "bisect", "heapq", "operator",
           "copy", "warnings"}
BANNED_NAMES = {"os", "posix", "nt", "sys", "subprocess", "socket", "ctypes", "importlib",
                "pickle", "marshal", "shelve", "pathlib", "glob", "shutil", "tempfile",
                "builtins", "__builtins__", "bltns", "gc", "inspect", "traceback", "types",
                "threading", "multiprocessing", "asyncio", "resource", "urllib", "http",
                "requests", "codeop", "pty", "fcntl", "mmap", "BaseException", "SystemExit",
                "KeyboardInterrupt", "GeneratorExit", "ExceptionGroup", "BaseExceptionGroup"}
SHADOWABLE = {"io", "signal", "code"}
BANNED_BUILTINS = {"eval", "exec", "compile", "__import__", "open", "getattr", "setattr",
                   "delattr", "hasattr", "globals", "locals", "vars", "dir", "input",
                   "breakpoint", "help", "exit", "quit", "memoryview", "copyright", "credits",
                   "license", "__build_class__", "__loader__", "__spec__"}
RESTRICTED = {"type", "super", "object", "classmethod", "staticmethod", "property"}
BANNED_ATTRS = {"system", "popen", "Popen", "open", "alarm", "interact", "modules", "mro",
                "obj", "with_traceback", "f_back", "f_builtins", "f_code", "f_globals",
                "f_locals", "cell_contents", "Formatter", "get_field", "vformat",
                "attrgetter", "methodcaller", "update_wrapper", "wraps", "get_type_hints",
                "ForwardRef", "make_dataclass", "ctypeslib", "f2py", "distutils", "testing",
                "DataSource", "memmap", "as_strided", "rc_file", "animation", "read_pickle",
                "to_pickle", "read_clipboard", "read_html", "read_xml", "read_hdf",
                "LowLevelCallable"} | BANNED_NAMES
PREFIXES = ("gi_", "cr_", "ag_", "tb_", "co_")
DUNDER_METHODS = {"__init__", "__repr__", "__str__", "__len__", "__iter__", "__getitem__",
                  "__call__", "__eq__", "__hash__", "__enter__", "__exit__", "__post_init__"}
DUNDER_READS = {"__name__", "__qualname__", "__doc__", "__version__"}
DENIED_SETTINGS = ("animation.", "text.usetex", "text.latex.", "pgf.", "ps.usedistiller",
                   "webagg.", "backend", "plotting.backend", "io.")
DENIED_MODULES = ("numpy.f2py", "numpy.ctypeslib", "numpy.testing", "numpy.lib.format",
                  "scipy._lib", "matplotlib.testing", "matplotlib.animation", "pandas.io")
INJECTED = {"np": "numpy", "plt": "matplotlib.pyplot", "pd": "pandas"}
FORMAT_TRAVERSAL = re.compile(r"(?<!\{)\{[^{}!:]*[.\[]")
DUNDER_IN_STRING = re.compile(r"__\w*[A-Za-z0-9]\w*__")


def nfkc(s):
    return s if s.isascii() else unicodedata.normalize("NFKC", s)


def is_dunder(s):
    return len(s) > 4 and s.startswith("__") and s.endswith("__")


class Checker(ast.NodeVisitor):
    def __init__(self):
        self.violations = []
        self.aliases = {}
        self.bound = set()
        self.shadow_uses = []
        self.flags = {}

    def report(self, rule, node, msg):
        self.violations.append((rule, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), msg))

    def mark(self, node, flag):
        self.flags[id(node)] = flag

    # imports
    def check_path(self, path, node):
        comps = [nfkc(c) for c in path.split(".")]
        if comps[0] not in ALLOWED:
            self.report("import-not-allowed", node, comps[0])
            return
        for c in comps[1:]:
            self.check_attr(c, node, ast.Load())
        full = ".".join(comps)
        if any(full == d or full.startswith(d + ".") for d in DENIED_MODULES):
            self.report("submodule-denied", node, full)

    def visit_Import(self, node):
        for a in node.names:
            self.check_path(a.name, node)
            bound = a.asname or a.name.split(".")[0]
            self.bind(bound, node)
            self.aliases[bound] = a.name if a.asname else bound

    def visit_ImportFrom(self, node):
        if node.level or not node.module:
            self.report("import-form", node, "relative")
            return
        self.check_path(node.module, node)
        for a in node.names:
            if a.name == "*":
                self.report("import-form", node, "*")
                continue
            self.check_attr(nfkc(a.name), node, ast.Load())
            self.bind(a.asname or a.name, node)

    # names
    def bind(self, name, node):
        n = nfkc(name)
        self.bound.add(n)
        if is_dunder(n):
            self.report("dunder-name", node, n)
        elif n in BANNED_NAMES:
            self.report("banned-name", node, n)
        elif n in BANNED_BUILTINS:
            self.report("banned-builtin", node, n)

    def visit_Name(self, node):
        n = nfkc(node.id)
        if not isinstance(node.ctx, ast.Load):
            self.bind(n, node)
            return
        if n in BANNED_BUILTINS:
            self.report("banned-builtin", node, n)
        elif is_dunder(n):
            if n != "__name__":
                self.report("dunder-name", node, n)
        elif n in BANNED_NAMES:
            self.report("banned-name", node, n)
        elif n in RESTRICTED and not self.flags.get(id(node)) == n:
            self.report("restricted-builtin", node, n)
        elif n in SHADOWABLE:
            self.shadow_uses.append((n, node))

    def check_attr(self, a, node, ctx):
        if is_dunder(a):
            if not (isinstance(ctx, ast.Load) and a in DUNDER_READS):
                self.report("dunder-attribute", node, a)
        elif a in BANNED_ATTRS:
            self.report("banned-attribute", node, a)
        elif a.startswith(PREFIXES):
            self.report("introspection-attribute", node, a)
        elif a.startswith("_"):
            base = node.value if isinstance(node, ast.Attribute) else None
            if not (isinstance(base, ast.Name) and base.id in ("self", "cls")):
                self.report("private-attribute", node, a)

    def visit_Attribute(self, node):
        a = nfkc(node.attr)
        if not (a in DUNDER_METHODS and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "super"):
            self.check_attr(a, node, node.ctx)
        if a in ("format", "format_map") and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str) and FORMAT_TRAVERSAL.search(node.value.value):
            self.report("format-traversal", node, a)
        if not isinstance(node.ctx, ast.Load):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (root.id in self.aliases or root.id in INJECTED):
                self.report("module-mutation", node, a)
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id == "type" and len(node.args) == 1 and not node.keywords:
                self.mark(f, "type")
            if f.id == "super" and not node.args and not node.keywords:
                self.mark(f, "super")
        for k in node.keywords:
            if k.arg and is_dunder(nfkc(k.arg)):
                self.report("dunder-name", node, k.arg)
            if k.arg in ("allow_pickle", "usetex") and not (
                    isinstance(k.value, ast.Constant) and not k.value.value):
                self.report("banned-keyword", node, k.arg)
        if isinstance(f, ast.Attribute) and f.attr in ("query", "eval"):
            arg = node.args[0] if node.args else None
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                    and "@" not in arg.value and "__" not in arg.value):
                self.report("string-evaluation", node, f.attr)
        if isinstance(f, ast.Attribute) and f.attr == "use":
            arg = node.args[0] if node.args else None
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                    and re.fullmatch(r"[A-Za-z0-9_\-]{1,64}", arg.value)):
                if not isinstance(arg, (ast.List, ast.Tuple, ast.Dict)):
                    self.report("dangerous-setting", node, "use")
        self.generic_visit(node)

    def visit_Subscript(self, node):
        v = node.value
        if (isinstance(v, ast.Attribute) and v.attr == "rcParams") or (
                isinstance(v, ast.Name) and v.id == "rcParams"):
            if not isinstance(node.ctx, ast.Load):
                s = node.slice
                if not (isinstance(s, ast.Constant) and isinstance(s.value, str)
                        and not s.value.lower().startswith(DENIED_SETTINGS)):
                    self.report("dangerous-setting", node, "rcParams")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            s = nfkc(node.value)
            if s != "__main__" and DUNDER_IN_STRING.search(s):
                self.report("dunder-string", node, s[:80])
            if "." in s and s.lower().startswith(DENIED_SETTINGS):
                self.report("dangerous-setting", node, s[:80])

    def visit_FunctionDef(self, node):
        n = nfkc(node.name)
        if is_dunder(n) and n not in DUNDER_METHODS:
            self.report("dunder-name", node, n)
        elif not is_dunder(n):
            self.bind(n, node)
        for d in node.decorator_list:
            if isinstance(d, ast.Name):
                self.mark(d, d.id)
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            self.bound.add(nfkc(a.arg))
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        self.bind(node.name, node)
        for b in node.bases:
            if isinstance(b, ast.Name) and b.id == "object":
                self.mark(b, "object")
        for d in node.decorator_list:
            if isinstance(d, ast.Name):
                self.mark(d, d.id)
        if node.keywords:
            self.report("banned-keyword", node, "class keyword")
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node):
        self.report("unsupported-syntax", node, "async")
        self.generic_visit(node)

    def visit_TryStar(self, node):
        self.report("unsupported-syntax", node, "except*")
        self.generic_visit(node)

    def visit_ExceptHandler(self, node):
        if node.name:
            self.bind(node.name, node)
        self.generic_visit(node)

    def finish(self):
        for n, node in self.shadow_uses:
            if n not in self.bound:
                self.report("banned-name", node, n)


def check(source):
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [("syntax", e.lineno or 0, e.offset or 0, str(e.msg))]
    c = Checker()
    c.visit(tree)
    c.finish()
    return c.violations
