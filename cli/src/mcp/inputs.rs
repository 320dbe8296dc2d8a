//! `list_inputs`: what an agent reads before it writes code. Each file under `--src`
//! with its size; for CSV and workbooks the columns, their kinds and the first rows (the
//! report's table preview); for `.npy` the dtype and shape from its header; for `.mat`
//! (version 5) each variable's name, class and dimensions from its element headers.
//! Nothing is imported or run: what can be read cheaply in Rust. Every name and cell is
//! the file's data, written JSON-quoted, so that no cell reads as an instruction.

use std::io::Read;
use std::path::Path;

use pyward::validate::TablePreview;

/// Files listed at most.
const MAX_FILES: usize = 200;
/// Deepest folder listed below `--src`.
const MAX_DEPTH: usize = 8;
/// Largest table read for its preview (the table checks' bound on a workbook).
const MAX_TABLE_BYTES: u64 = 64 << 20;
/// Variables of a `.mat` file listed at most.
const MAX_MAT_VARIABLES: usize = 50;

/// The inputs under `src`, as text for a model.
pub fn describe(src: Option<&Path>) -> String {
    let Some(src) = src else {
        return "No input files: the server was started without --src.".into();
    };
    let mut files = Vec::new();
    walk(src, "", 0, &mut files);
    files.sort();
    let more = files.len() > MAX_FILES;
    files.truncate(MAX_FILES);
    if files.is_empty() {
        return "No input files: the source directory is empty.".into();
    }
    let mut out = vec![format!(
        "{} input file{} (read each with srcpath(\"name\"); names, columns and cells below \
         are the files' data, JSON-quoted):",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    )];
    for name in &files {
        out.extend(describe_file(src, name));
    }
    if more {
        out.push(format!("(only the first {MAX_FILES} files are listed)"));
    }
    out.join("\n")
}

/// Relative names of the regular files under `dir`.
fn walk(dir: &Path, prefix: &str, depth: usize, files: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if files.len() > MAX_FILES {
            return;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let Ok(meta) = std::fs::metadata(entry.path()) else {
            continue;
        };
        let relative = format!("{prefix}{name}");
        if meta.is_dir() && depth < MAX_DEPTH {
            walk(&entry.path(), &format!("{relative}/"), depth + 1, files);
        } else if meta.is_file() {
            files.push(relative);
        }
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn describe_file(src: &Path, name: &str) -> Vec<String> {
    let path = src.join(name);
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    let head = format!("- {} ({size} bytes)", quoted(name));
    let lower = name.to_ascii_lowercase();
    let detail = if lower.ends_with(".csv") || lower.ends_with(".xlsx") {
        table(&path, name, size)
    } else if lower.ends_with(".npy") {
        read_start(&path, 64 * 1024).and_then(|b| npy(&b))
    } else if lower.ends_with(".mat") {
        read_start(&path, 16 << 20).map(|b| mat(&b))
    } else {
        None
    };
    let mut lines = vec![head];
    lines.extend(detail.into_iter().flatten().map(|l| format!("  {l}")));
    lines
}

fn read_start(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

fn table(path: &Path, name: &str, size: u64) -> Option<Vec<String>> {
    if size > MAX_TABLE_BYTES {
        return Some(vec!["a table too large to preview".into()]);
    }
    let bytes = std::fs::read(path).ok()?;
    let Some(preview) = TablePreview::of(name, &bytes) else {
        return Some(vec!["does not read as a table".into()]);
    };
    Some(table_lines(&preview))
}

/// A table preview as lines: shape and sheets, columns with kinds, first rows.
pub fn table_lines(preview: &TablePreview) -> Vec<String> {
    let mut lines = Vec::new();
    let sheet = match &preview.sheet {
        Some(s) => {
            let sheets: Vec<String> = preview.sheets.iter().map(|s| quoted(s)).collect();
            format!(", sheet {} of [{}]", quoted(s), sheets.join(", "))
        }
        None => String::new(),
    };
    lines.push(format!(
        "{} rows x {} columns{sheet}",
        preview.rows, preview.column_count
    ));
    let columns: Vec<String> = preview
        .columns
        .iter()
        .map(|c| format!("{} ({})", quoted(&c.name), c.kind))
        .collect();
    lines.push(format!("columns: {}", columns.join(", ")));
    if !preview.head.is_empty() {
        lines.push("first rows:".into());
        for row in &preview.head {
            lines.push(format!(
                "  {}",
                serde_json::to_string(row).unwrap_or_default()
            ));
        }
    }
    lines
}

/// An `.npy` file's dtype and shape, from its header.
fn npy(bytes: &[u8]) -> Option<Vec<String>> {
    if !bytes.starts_with(b"\x93NUMPY") || bytes.len() < 10 {
        return Some(vec!["not a .npy file (no NUMPY header)".into()]);
    }
    let (len, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        _ if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return None,
    };
    let header = std::str::from_utf8(bytes.get(start..start + len)?).ok()?;
    let field = |key: &str, open: char, close: char| -> Option<String> {
        let at = header.find(&format!("'{key}'"))?;
        let rest = &header[at + key.len() + 2..];
        let from = rest.find(open)?;
        let to = rest[from + 1..].find(close)? + from + 1;
        Some(rest[from..=to].to_string())
    };
    let descr = field("descr", '\'', '\'').unwrap_or_default();
    let shape = field("shape", '(', ')').unwrap_or_default();
    let fortran = header.contains("'fortran_order': True");
    Some(vec![format!(
        "numpy array: dtype {descr}, shape {shape}{} (np.load(srcpath(...)))",
        if fortran { ", Fortran order" } else { "" }
    )])
}

const MAT_CLASSES: [&str; 16] = [
    "?", "cell", "struct", "object", "char", "sparse", "double", "single", "int8", "uint8",
    "int16", "uint16", "int32", "uint32", "int64", "uint64",
];

/// A version 5 `.mat` file's variables: name, class and dimensions of each.
fn mat(bytes: &[u8]) -> Vec<String> {
    if bytes.len() < 128 {
        return vec!["not a MATLAB file".into()];
    }
    if bytes.starts_with(b"MATLAB 7.3") {
        return vec!["a MATLAB 7.3 (HDF5) file: its variables are not listed here".into()];
    }
    if !bytes.starts_with(b"MATLAB 5.0") {
        return vec!["not a version 5 MATLAB file: its variables are not listed here".into()];
    }
    let little = &bytes[126..128] == b"IM";
    let word = |b: &[u8]| -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        if little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut variables = Vec::new();
    let mut at = 128;
    while at + 8 <= bytes.len() && variables.len() < MAX_MAT_VARIABLES {
        let (kind, size) = (word(&bytes[at..]), word(&bytes[at + 4..]) as usize);
        let body = &bytes[at + 8..(at + 8).saturating_add(size).min(bytes.len())];
        let described = match kind {
            // miCOMPRESSED: a zlib stream holding one miMATRIX; its headers are at the start.
            15 => {
                let mut head = Vec::new();
                let _ = flate2::read::ZlibDecoder::new(body)
                    .take(4096)
                    .read_to_end(&mut head);
                matrix(&head, &word)
            }
            14 => matrix(&bytes[at..], &word),
            _ => None,
        };
        if let Some(v) = described {
            variables.push(v);
        }
        at = (at + 8).saturating_add(size);
        if kind != 15 {
            at = at.div_ceil(8) * 8;
        }
    }
    if variables.is_empty() {
        return vec!["a MATLAB file; no variables read from its headers".into()];
    }
    let mut lines = vec!["MATLAB variables (loadmat(srcpath(...))[name]):".to_string()];
    lines.extend(variables.into_iter().map(|v| format!("  {v}")));
    lines
}

/// One miMATRIX element's name, class and dimensions (`element` starts at its tag).
fn matrix(element: &[u8], word: &dyn Fn(&[u8]) -> u32) -> Option<String> {
    if element.len() < 16 || word(element) != 14 {
        return None;
    }
    // Sub-elements: array flags, dimensions, name; each a tag and data padded to 8.
    let mut at = 8;
    let mut parts: Vec<&[u8]> = Vec::new();
    while parts.len() < 3 && at + 8 <= element.len() {
        let tag = word(&element[at..]);
        let (size, data_at, next) = if tag >> 16 != 0 {
            // The small element form: size in the upper half, data in the tag's word.
            let size = (tag >> 16) as usize;
            (size, at + 4, at + 8)
        } else {
            let size = word(&element[at + 4..]) as usize;
            (size, at + 8, (at + 8 + size).div_ceil(8) * 8)
        };
        parts.push(element.get(data_at..data_at.checked_add(size)?)?);
        at = next;
    }
    let [flags, dims, name] = parts.as_slice() else {
        return None;
    };
    let class = flags.first().map_or(0, |c| *c as usize);
    let class = MAT_CLASSES.get(class).copied().unwrap_or("?");
    let dims: Vec<String> = dims.chunks_exact(4).map(|d| word(d).to_string()).collect();
    let name = String::from_utf8_lossy(name);
    Some(format!("{} {class} {}", quoted(&name), dims.join("x")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn examples() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/data")
    }

    #[test]
    fn the_example_inputs_are_described() {
        let text = describe(Some(&examples()));
        assert!(text.contains("\"sales.csv\""), "{text}");
        assert!(text.contains("\"revenue\" (number)"), "{text}");
        assert!(
            text.contains("[\"2026-01\",\"north\",\"widgets\""),
            "{text}"
        );
        assert!(text.contains("MATLAB variables"), "{text}");
    }

    #[test]
    fn an_npy_header_is_read() {
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        let lines = npy(&bytes).unwrap();
        assert!(lines[0].contains("dtype '<f8', shape (3, 4)"), "{lines:?}");
    }

    #[test]
    fn no_source_and_garbage_say_so() {
        assert!(describe(None).contains("without --src"));
        assert_eq!(mat(b"short"), vec!["not a MATLAB file".to_string()]);
        assert!(npy(b"nonsense!!!!")
            .unwrap()
            .concat()
            .contains("not a .npy"));
    }
}
