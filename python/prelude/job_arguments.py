"""`argparse` for scripts written to be run from a shell (`args = parser.parse_args()`):
the job's command line is its script's name and no arguments (`sys.argv`), so every
option takes its default and the script runs as `python job.py` would run it. The
parser is argparse's own, reviewed behind the module's view (src/gate/policy/modules.rs,
MODULE_MEMBERS) with these changes: no argument files (`@file` would be read by
argparse's own `open`, not the job's); usage and help name the job's script and are
80 columns wide (not the worker's name, not its terminal's width); `--help` and
`parser.exit()` end the job as `sys.exit` does, and a parse error is the job's failure
with argparse's message and what to change; a file argument
(`type=argparse.FileType('r')`) is opened by the job's `open`.

One namespace with the other files of the prelude, which the worker runs in the order
of src/worker/modules.rs.
"""

import argparse

_HELP_WIDTH = 80


class _JobArgumentParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` for a job (see the module's docs)."""

    def __init__(self, prog=None, *args, **kwargs):
        super().__init__(posixpath.basename(_JOB_FILE) if prog is None else prog, *args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        return super().parse_known_args(_JOB_ARGV[1:] if args is None else args, namespace)

    def exit(self, status=0, message=None):
        # `--help`, `parser.exit()`: the job ends as at `sys.exit(status)`.
        if message:
            sys.stderr.write(str(message))
        _sys_exit(status)

    def error(self, message):
        # The message a shell user would read, as the job's failure; and what to change,
        # since a job's command line never carries arguments.
        self.print_usage(sys.stderr)
        _sys_exit(f'{self.prog}: error: {message} (a job runs with no command-line '
                  "arguments: give each one a default, e.g. add_argument('input', "
                  "nargs='?', default='data.csv'))")

    def _read_args_from_files(self, arg_strings):
        raise ValueError('argument files (fromfile_prefix_chars) are not available here: '
                         'pass the values as arguments or give the options defaults')

    def _get_formatter(self):
        # argparse's own formatters measure the terminal unless given a width.
        if any(self.formatter_class is f for f in _ARGPARSE_FORMATTERS):
            return self.formatter_class(prog=self.prog, width=_HELP_WIDTH)
        return self.formatter_class(prog=self.prog)


class _JobFileType(argparse.FileType):
    """`argparse.FileType`: the file opened by the job's `open` (its inputs, its
    artifacts); `-` is the job's output stream, and there is no standard input."""

    def __call__(self, string):
        if string == '-':
            if any(c in self._mode for c in 'wax'):
                return sys.stdout.buffer if 'b' in self._mode else sys.stdout
            raise argparse.ArgumentTypeError("there is no standard input: name an input file")
        try:
            return _job_open(string, self._mode, self._bufsize, self._encoding, self._errors)
        except OSError as e:
            raise argparse.ArgumentTypeError(f"can't open {string!r}: {e}") from None


_ARGPARSE_FORMATTERS = (argparse.HelpFormatter, argparse.RawDescriptionHelpFormatter,
                        argparse.RawTextHelpFormatter, argparse.ArgumentDefaultsHelpFormatter,
                        argparse.MetavarTypeHelpFormatter)

_ARGPARSE_MEMBERS = {'ArgumentParser': _JobArgumentParser, 'FileType': _JobFileType}
for _name, _cls in _ARGPARSE_MEMBERS.items():
    _cls.__name__ = _cls.__qualname__ = _name
    _cls.__module__ = 'argparse'
del _name, _cls

_REVIEWED_CLASSES.extend((f'argparse.{name}', cls, dict(cls.__dict__))
                         for name, cls in _ARGPARSE_MEMBERS.items())


def _install_argparse():
    """At warm-up: the members of the job's `argparse` view that are pyward's own."""
    for name in _RULES['module_members'].get('argparse', ()):
        if name in _ARGPARSE_MEMBERS:
            _MEMBER_WRAPPERS[('argparse', name)] = _ARGPARSE_MEMBERS[name]
