//! Where a job's code was when its deadline stopped it: the worker's `faulthandler`
//! dump (see `WorkerProcess::dump_stack`), reduced to the job's own frames, with the
//! innermost loop around the line.

use crate::outcome::StoppedAt;

/// The job's frames in a `faulthandler` dump (innermost first in the dump), as a
/// [`StoppedAt`] over `code`; `None` when no frame of the job's code is in it.
pub(crate) fn from_dump(dump: &str, code: &str) -> Option<StoppedAt> {
    // `  File "<job>", line 9 in <module>`
    let frames: Vec<(u32, &str)> = dump
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("File \"<job>\", line "))
        .filter_map(|rest| {
            let (line, name) = rest.split_once(" in ")?;
            Some((line.trim().parse().ok()?, name.trim()))
        })
        .collect();
    let &(line, _) = frames.first()?;
    let lines: Vec<&str> = code.lines().collect();
    let source = |n: u32| lines.get(n as usize - 1).map_or("", |l| l.trim());
    let traceback = frames
        .iter()
        .rev()
        .map(|&(n, name)| {
            let place = if name == "<module>" {
                String::new()
            } else {
                format!(", in {name}")
            };
            format!("  line {n}{place}\n    {}", source(n))
        })
        .collect::<Vec<_>>()
        .join("\n");
    Some(StoppedAt {
        line,
        traceback,
        in_loop: enclosing_loop(&lines, line),
    })
}

/// The innermost `for`/`while` statement whose block holds line `line` (1-based), by
/// indentation: walking up, every less-indented header opens an enclosing block.
fn enclosing_loop(lines: &[&str], line: u32) -> Option<(u32, String)> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let at = *lines.get(line.checked_sub(1)? as usize)?;
    let mut level = indent(at);
    let header = at.trim_start();
    if is_loop(header) && header.contains(':') && !header.trim_end().ends_with(':') {
        // A one-line loop (`while x: x += 1`).
        return Some((line, header.trim_end().to_string()));
    }
    for n in (0..line as usize - 1).rev() {
        let text = lines[n];
        let stripped = text.trim_start();
        if stripped.is_empty() || stripped.starts_with('#') || indent(text) >= level {
            continue;
        }
        level = indent(text);
        if is_loop(stripped) {
            return Some((n as u32 + 1, stripped.trim_end().to_string()));
        }
        if level == 0 {
            break;
        }
    }
    None
}

fn is_loop(statement: &str) -> bool {
    statement.starts_with("for ") || statement.starts_with("while ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = "t = 0\nxs = []\nwhile t < 1.0:\n    if t > 0.5:\n        xs.append(t)\n    t += 0\nplt.plot(xs)\n";

    #[test]
    fn the_innermost_job_frame_and_its_loop() {
        let dump = "  File \"/numpy/x.py\", line 10 in f\n  File \"<job>\", line 5 in <module>\n";
        let at = from_dump(dump, CODE).unwrap();
        assert_eq!(at.line, 5);
        assert_eq!(at.in_loop, Some((3, "while t < 1.0:".into())));
        assert_eq!(at.traceback, "  line 5\n    xs.append(t)");
    }

    #[test]
    fn frames_of_job_functions_read_outermost_first() {
        let code = "def f():\n    for i in range(9):\n        pass\nf()\n";
        let dump = "  File \"<job>\", line 3 in f\n  File \"<job>\", line 4 in <module>\n";
        let at = from_dump(dump, code).unwrap();
        assert_eq!(at.traceback, "  line 4\n    f()\n  line 3, in f\n    pass");
        assert_eq!(at.in_loop, Some((2, "for i in range(9):".into())));
    }

    #[test]
    fn no_job_frame_no_location() {
        assert!(from_dump("  File \"/lib.py\", line 1 in g\n", CODE).is_none());
        assert!(from_dump("", CODE).is_none());
    }
}
