//! The bounded pass over a workbook's zip parts, before any reader sees them: every
//! part inflated once against a running budget (a zip bomb lies about its sizes), DTDs
//! refused, the shared-string count bounded, the sheet list read from the workbook and
//! its relationships, and formula cells found by this module's own scan of the sheet
//! XML, with what runs or fetches outside the cells ([`super::active_content`]). The
//! limits are [`super::bounds`].

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Cursor, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};

use quick_xml::events::Event;

use super::active_content::{active_content_type, active_part, active_relationship, calls_out};
use super::bounds::{truncate, MAX_INFLATED_BYTES, MAX_TABLE_CELLS, MAX_ZIP_ENTRIES, NAMED};

/// What the bounded pass over a workbook's parts found.
pub(super) struct Parts {
    /// Sheet name -> its part's path, in workbook order.
    pub(super) sheets: Vec<(String, String)>,
    /// Formula cells per sheet part: (cell, formula text).
    pub(super) formulas: HashMap<String, Vec<(String, String)>>,
    pub(super) formula_count: usize,
    /// What a spreadsheet program runs or fetches outside the cells, named (at most
    /// [`NAMED`]); and how many there were.
    pub(super) active: Vec<String>,
    pub(super) active_count: usize,
}

impl Parts {
    fn note_active(&mut self, finding: String) {
        self.active_count += 1;
        if self.active.len() < NAMED {
            self.active.push(finding);
        }
    }
}

/// A reader that fails once more than its budget has been read through it.
struct Budget<'a, R> {
    inner: R,
    left: &'a mut u64,
}

impl<R: Read> Read for Budget<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > *self.left {
            *self.left = 0;
            return Err(std::io::Error::other(INFLATE_BOUND));
        }
        *self.left -= n as u64;
        Ok(n)
    }
}

const INFLATE_BOUND: &str = "inflates past the bound";

fn inflate_error(name: &str, e: impl std::fmt::Display) -> String {
    let e = e.to_string();
    if e.contains(INFLATE_BOUND) {
        format!(
            "{name} inflates to more than {} MiB (a zip bomb?): refused",
            MAX_INFLATED_BYTES >> 20
        )
    } else {
        format!("{name} is not a readable workbook: {}", truncate(&e, 200))
    }
}

/// Inflates every part once, within the bounds; reads the sheet list; finds formula
/// cells and active content when `formulas`; refuses DTDs and an oversized
/// shared-string count.
pub(super) fn scan_parts(name: &str, bytes: &[u8], formulas: bool) -> Result<Parts, String> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| format!("{name} is not an xlsx workbook (not a zip archive: {e})"))?;
    if zip.len() > MAX_ZIP_ENTRIES {
        return Err(format!(
            "{name} has {} parts, more than {MAX_ZIP_ENTRIES}",
            zip.len()
        ));
    }
    let mut budget = MAX_INFLATED_BYTES;
    let package_rels = read_part(&mut zip, "_rels/.rels", &mut budget, name)?.unwrap_or_default();
    refuse_another_main_part(&package_rels).map_err(|e| format!("{name}: {e}"))?;
    let workbook = read_part(&mut zip, "xl/workbook.xml", &mut budget, name)?
        .ok_or_else(|| format!("{name} is not an xlsx workbook (it has no xl/workbook.xml)"))?;
    let rels =
        read_part(&mut zip, "xl/_rels/workbook.xml.rels", &mut budget, name)?.unwrap_or_default();
    let sheets = sheet_parts(&workbook, &rels).map_err(|e| format!("{name}: {e}"))?;
    refuse_repeated_sheets(&sheets).map_err(|e| format!("{name}: {e}"))?;
    let mut found = Parts {
        sheets,
        formulas: HashMap::new(),
        formula_count: 0,
        active: Vec::new(),
        active_count: 0,
    };
    if formulas {
        for (defined, text) in defined_names(&workbook) {
            if let Some(why) = outside_formula_calls_out(&text) {
                found.note_active(format!(
                    "{name}: the defined name {defined} holds {why}: {}",
                    truncate(&text, 60)
                ));
            }
        }
    }
    for i in 0..zip.len() {
        let entry = zip
            .by_index(i)
            .map_err(|e| format!("{name} is not a readable workbook: {e}"))?;
        let part = entry.name().to_string();
        if let Some(what) = active_part(&part).filter(|_| formulas) {
            found.note_active(format!("{name} holds {part}, {what}"));
        }
        let lower = part.to_ascii_lowercase();
        let is_xml = lower.ends_with(".xml") || lower.ends_with(".rels") || lower.ends_with(".vml");
        let reader = Budget {
            inner: entry,
            left: &mut budget,
        };
        if !is_xml {
            std::io::copy(&mut { reader }, &mut std::io::sink())
                .map_err(|e| inflate_error(name, e))?;
            continue;
        }
        let sheet = found
            .sheets
            .iter()
            .find(|(_, p)| p.eq_ignore_ascii_case(&part))
            .map(|(s, _)| format!("{name}!{s}"));
        let shared_strings = lower == "xl/sharedstrings.xml";
        let mut xml = quick_xml::Reader::from_reader(BufReader::new(reader));
        check_prolog(name, &part, &mut xml, shared_strings)?;
        if !formulas {
            drain(name, xml)?;
            continue;
        }
        if lower.ends_with(".rels") || lower == "[content_types].xml" {
            for finding in package_links(name, &part, xml)? {
                found.note_active(finding);
            }
            continue;
        }
        // Formulas are rare: a search for their tags decides whether the part is
        // parsed again to name them. Every XML part is searched: a sheet's cells are
        // formula cells, and anywhere else (a chart's series, a rule) a formula must
        // not call out.
        let has_formula = find_formula_tag(xml.into_inner()).map_err(|e| inflate_error(name, e))?;
        if has_formula {
            let entry = zip
                .by_index(i)
                .map_err(|e| format!("{name} is not a readable workbook: {e}"))?;
            let mut left = MAX_INFLATED_BYTES;
            scan_formulas(
                name,
                &part,
                sheet.as_deref(),
                Budget {
                    inner: entry,
                    left: &mut left,
                },
                &mut found,
            )?;
        }
    }
    Ok(found)
}

/// Two sheets of one name, or two names for one sheet part, which no spreadsheet
/// program writes: the cells are read by sheet name (a second sheet of a name would
/// never be read, its cells never checked), and a part named N times would be read N
/// times.
fn refuse_repeated_sheets(sheets: &[(String, String)]) -> Result<(), String> {
    let mut names = HashSet::new();
    let mut parts = HashSet::new();
    for (sheet, part) in sheets {
        // Spreadsheet programs compare sheet names without case.
        if !names.insert(sheet.to_lowercase()) {
            return Err(format!("it names the sheet {sheet:?} twice"));
        }
        if !parts.insert(part.to_ascii_lowercase()) {
            return Err(format!("its part {part} is named as more than one sheet"));
        }
    }
    Ok(())
}

/// Whether an XML stream holds a formula: an element `f` (a cell's formula, or one in
/// the sheet's extensions), with a namespace prefix or without, followed by `>`, `/` or
/// white space (`<f>`, `<f t="shared" .../>`, `<x:f>`, `<f\n>`), or an element whose
/// name starts `formula` (a conditional format's rule, a data validation's list).
fn find_formula_tag<R: Read>(mut reader: R) -> std::io::Result<bool> {
    /// Bytes a tag is judged by, from its `<f` or `:f` on (`<formula`: eight).
    const JUDGED_BY: usize = 8;
    let finders = [b"<f", b":f"].map(memchr::memmem::Finder::new);
    let opens_formula = |rest: &[u8]| {
        matches!(
            rest.first(),
            Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r')
        ) || rest.starts_with(b"ormula")
    };
    let mut buf = vec![0u8; 64 << 10];
    let mut carry = 0;
    loop {
        let n = reader.read(&mut buf[carry..])?;
        let end = carry + n;
        // A tag near the end is judged once the bytes after it have arrived (or the
        // stream has ended).
        let judged = if n == 0 {
            end
        } else {
            end.saturating_sub(JUDGED_BY)
        };
        let found = finders.iter().any(|f| {
            f.find_iter(&buf[..end])
                .filter(|&at| at < judged)
                .any(|at| opens_formula(&buf[at + 2..end]))
        });
        if found {
            // The rest is inflated within the budget all the same.
            std::io::copy(&mut reader, &mut std::io::sink())?;
            return Ok(true);
        }
        if n == 0 {
            return Ok(false);
        }
        carry = end - judged;
        buf.copy_within(end - carry..end, 0);
    }
}

/// Reads an XML part up to its root element: a DTD is refused, and the shared-string
/// count calamine reserves memory for is bounded.
fn check_prolog<R: std::io::BufRead>(
    name: &str,
    part: &str,
    xml: &mut quick_xml::Reader<R>,
    shared_strings: bool,
) -> Result<(), String> {
    let mut buf = Vec::new();
    loop {
        match next_event(name, xml, &mut buf)? {
            Event::DocType(_) => {
                return Err(format!(
                    "{name}: its part {part} declares a DTD (entity declarations are refused, as the worker's parser refuses them)"
                ));
            }
            Event::Start(e) | Event::Empty(e) => {
                if shared_strings {
                    for a in e.attributes().flatten() {
                        if matches!(a.key.local_name().as_ref(), b"uniqueCount" | b"count") {
                            let n: u64 = std::str::from_utf8(&a.value)
                                .ok()
                                .and_then(|v| v.trim().parse().ok())
                                .unwrap_or(u64::MAX);
                            if n > MAX_TABLE_CELLS {
                                return Err(format!(
                                    "{name} declares {} shared strings, more than the {MAX_TABLE_CELLS} a table check reads",
                                    String::from_utf8_lossy(&a.value)
                                ));
                            }
                        }
                    }
                }
                return Ok(());
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// Notes the formula cells of a sheet part, and the formulas outside its cells (a
/// conditional format's rule, a data validation's list, the sheet extensions', a
/// chart's series in a part that is no sheet) that call out. `sheet` names a sheet in
/// findings (`result.xlsx!Data`); `None`: the part is no sheet, and has no cells.
///
/// In a sheet, every `f` outside the rules and the extensions is a formula cell,
/// wherever it sits: the cell it belongs to names it, and no element of a foreign
/// namespace between the two hides it.
fn scan_formulas<R: Read>(
    name: &str,
    part: &str,
    sheet: Option<&str>,
    reader: R,
    found: &mut Parts,
) -> Result<(), String> {
    let mut xml = quick_xml::Reader::from_reader(BufReader::new(reader));
    xml.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    // The last cell opened, to name a formula cell by.
    let mut cell: Option<String> = None;
    // What holds the formulas outside the cells ("the conditional format on A2:B9"),
    // and how deep inside such holders (and extension lists) the reader is.
    let mut holder: Option<String> = None;
    let mut outside_cells = 0usize;
    let mut in_formula = false;
    let mut formula = String::new();
    loop {
        let event = next_event(name, &mut xml, &mut buf)?;
        let in_cells = sheet.is_some() && outside_cells == 0;
        match &event {
            Event::Start(e) if e.local_name().as_ref() == b"c" => {
                cell = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.local_name().as_ref() == b"r")
                    .map(|a| String::from_utf8_lossy(&a.value).into_owned());
            }
            Event::Start(e) if is_holder(e.local_name().as_ref()) => {
                outside_cells += 1;
                let what = match e.local_name().as_ref() {
                    b"dataValidation" => "data validation",
                    b"conditionalFormatting" => "conditional format",
                    _ => continue,
                };
                let [range] = attributes(e, xml.decoder(), [b"sqref"]);
                holder = Some(match range {
                    Some(r) => format!("the {what} on {}", truncate(&r, 40)),
                    None => format!("a {what}"),
                });
            }
            Event::End(e) if is_holder(e.local_name().as_ref()) => {
                outside_cells = outside_cells.saturating_sub(1);
                if e.local_name().as_ref() != b"extLst" {
                    holder = None; // a later formula is named by its own holder
                }
            }
            Event::Start(e) if is_formula_element(e.local_name().as_ref()) => {
                in_formula = true;
                formula.clear();
            }
            Event::Empty(e) if in_cells && e.local_name().as_ref() == b"f" => {
                note_formula(found, part, cell.as_deref(), "(shared)");
            }
            Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) if in_formula => {
                push_content(&mut formula, &event);
            }
            Event::End(e) if in_formula && is_formula_element(e.local_name().as_ref()) => {
                in_formula = false;
                let text = std::mem::take(&mut formula);
                if in_cells && e.local_name().as_ref() == b"f" {
                    note_formula(found, part, cell.as_deref(), &text);
                } else if let Some(why) = outside_formula_calls_out(&text) {
                    let at = if sheet.is_some() {
                        holder.as_deref().unwrap_or("a formula outside the cells")
                    } else {
                        "a formula"
                    };
                    found.note_active(format!(
                        "{}: {at} holds {why}: {}",
                        sheet.map_or_else(|| format!("{name}!{part}"), str::to_string),
                        truncate(&text, 60)
                    ));
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// Elements of a sheet whose formulas are no cells': rules, lists and extension lists.
fn is_holder(local: &[u8]) -> bool {
    matches!(
        local,
        b"conditionalFormatting" | b"dataValidation" | b"extLst"
    )
}

/// Most characters of a formula read (Excel's own limit is 8,192).
const MAX_FORMULA_CHARS: usize = 65_536;

/// Appends an element's content as the XML says it: text, CDATA, and references
/// (`&quot;`, `&#124;`) resolved, so that no character hides behind one. A reference
/// that names no character is kept as written.
fn push_content(out: &mut String, event: &Event<'_>) {
    if out.len() > MAX_FORMULA_CHARS {
        return;
    }
    match event {
        Event::Text(t) => out.push_str(&String::from_utf8_lossy(t)),
        Event::CData(t) => out.push_str(&String::from_utf8_lossy(t)),
        Event::GeneralRef(r) => {
            let name = String::from_utf8_lossy(r);
            match r.resolve_char_ref() {
                Ok(Some(c)) => out.push(c),
                _ => match quick_xml::escape::resolve_predefined_entity(&name) {
                    Some(s) => out.push_str(s),
                    None => out.push_str(&format!("&{name};")),
                },
            }
        }
        _ => {}
    }
}

/// [`calls_out`] for a formula read with [`push_content`]: one too long to have been
/// read whole is refused as such.
fn outside_formula_calls_out(text: &str) -> Option<String> {
    if text.len() > MAX_FORMULA_CHARS {
        return Some(format!(
            "a formula of more than {MAX_FORMULA_CHARS} characters"
        ));
    }
    calls_out(text)
}

/// Whether an element holds a formula: `f` (a cell's, an extension's, a chart
/// series'), and `formula`, `formula1`, `formula2` (rules and lists).
fn is_formula_element(local: &[u8]) -> bool {
    matches!(local, b"f" | b"formula" | b"formula1" | b"formula2")
}

/// The main part `_rels/.rels` names must be `xl/workbook.xml`, the one whose sheets
/// are read: a package whose main part is another would be opened as that one by a
/// spreadsheet program, and checked as this one here.
fn refuse_another_main_part(package_rels: &[u8]) -> Result<(), String> {
    let mut xml = quick_xml::Reader::from_reader(package_rels);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match xml.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == b"Relationship" => {
                let [kind, target] = attributes(&e, xml.decoder(), [b"Type", b"Target"]);
                let main = kind.is_some_and(|k| k.ends_with("/officeDocument"));
                let target = target.unwrap_or_default();
                let plain = target.trim_start_matches('/');
                if main && !plain.eq_ignore_ascii_case("xl/workbook.xml") {
                    return Err(format!(
                        "its main part is {:?}, not xl/workbook.xml: refused",
                        truncate(&target, 80)
                    ));
                }
            }
            Ok(Event::DocType(_)) => return Err("its package relationships declare a DTD".into()),
            Ok(Event::Eof) => return Ok(()),
            Err(e) => return Err(format!("its package relationships do not parse: {e}")),
            _ => {}
        }
    }
}

/// What a relationships part or the content types bring in that runs or fetches:
/// relationships by their type and target mode, declared parts by their content type.
fn package_links<R: std::io::BufRead>(
    name: &str,
    part: &str,
    mut xml: quick_xml::Reader<R>,
) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let mut buf = Vec::new();
    loop {
        match next_event(name, &mut xml, &mut buf)? {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"Relationship" => {
                    let [kind, target, mode] =
                        attributes(&e, xml.decoder(), [b"Type", b"Target", b"TargetMode"]);
                    let external = mode.is_some_and(|m| m.eq_ignore_ascii_case("External"));
                    if let Some(what) = active_relationship(&kind.unwrap_or_default(), external) {
                        found.push(format!(
                            "{name}: {part} brings in {what} ({})",
                            truncate(&target.unwrap_or_default(), 60)
                        ));
                    }
                }
                b"Default" | b"Override" => {
                    let [kind, at, extension] = attributes(
                        &e,
                        xml.decoder(),
                        [b"ContentType", b"PartName", b"Extension"],
                    );
                    if let Some(what) = active_content_type(&kind.unwrap_or_default()) {
                        let declared = at
                            .or(extension.map(|x| format!("*.{x}")))
                            .unwrap_or_default();
                        found.push(format!(
                            "{name}: [Content_Types].xml declares {what} ({})",
                            truncate(&declared, 60)
                        ));
                    }
                }
                _ => {}
            },
            Event::Eof => return Ok(found),
            _ => {}
        }
    }
}

/// The next event of a part being inflated, its failure said as the workbook's.
fn next_event<'b, R: std::io::BufRead>(
    name: &str,
    xml: &mut quick_xml::Reader<R>,
    buf: &'b mut Vec<u8>,
) -> Result<Event<'b>, String> {
    buf.clear();
    xml.read_event_into(buf).map_err(|e| inflate_error(name, e))
}

fn drain<R: std::io::BufRead>(name: &str, xml: quick_xml::Reader<R>) -> Result<(), String> {
    std::io::copy(&mut xml.into_inner(), &mut std::io::sink())
        .map(|_| ())
        .map_err(|e| inflate_error(name, e))
}

fn note_formula(found: &mut Parts, part: &str, cell: Option<&str>, text: &str) {
    found.formula_count += 1;
    let list = found.formulas.entry(part.to_string()).or_default();
    if list.len() < NAMED {
        list.push((cell.unwrap_or("?").to_string(), text.to_string()));
    }
}

/// A small part read whole (the workbook and its relationships), within the budget.
fn read_part(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    part: &str,
    budget: &mut u64,
    name: &str,
) -> Result<Option<Vec<u8>>, String> {
    let Some(index) = (0..zip.len()).find(|&i| {
        zip.name_for_index(i)
            .is_some_and(|n| n.eq_ignore_ascii_case(part))
    }) else {
        return Ok(None);
    };
    let entry = zip
        .by_index(index)
        .map_err(|e| format!("{name} is not a readable workbook: {e}"))?;
    let mut out = Vec::new();
    // A workbook part past 16 MiB is no workbook a job wrote.
    let mut left = (*budget).min(16 << 20);
    Budget {
        inner: entry,
        left: &mut left,
    }
    .read_to_end(&mut out)
    .map_err(|e| inflate_error(name, e))?;
    *budget = budget.saturating_sub(out.len() as u64);
    Ok(Some(out))
}

/// The unescaped values of an element's attributes named (by local name) in `names`.
fn attributes<const N: usize>(
    element: &quick_xml::events::BytesStart<'_>,
    decoder: quick_xml::encoding::Decoder,
    names: [&[u8]; N],
) -> [Option<String>; N] {
    let mut found = [const { None }; N];
    for a in element.attributes().flatten() {
        let key = a.key.local_name();
        if let Some(i) = names.iter().position(|n| *n == key.as_ref()) {
            let value = a.decode_and_unescape_value(decoder);
            found[i] = Some(value.map(|v| v.into_owned()).unwrap_or_default());
        }
    }
    found
}

/// Sheet names and their parts, from `xl/workbook.xml` and its relationships.
fn sheet_parts(workbook: &[u8], rels: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut targets = HashMap::new();
    let mut xml = quick_xml::Reader::from_reader(rels);
    let mut buf = Vec::new();
    loop {
        match xml.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == b"Relationship" => {
                let [id, target] = attributes(&e, xml.decoder(), [b"Id", b"Target"]);
                if let (Some(id), Some(target)) = (id, target) {
                    let path = match target.strip_prefix('/') {
                        Some(abs) => abs.to_string(),
                        None => format!("xl/{target}"),
                    };
                    targets.insert(id, path);
                }
            }
            Ok(Event::DocType(_)) => return Err("its relationships declare a DTD".into()),
            Ok(Event::Eof) => break,
            Err(e) => return Err(format!("its relationships do not parse: {e}")),
            _ => {}
        }
        buf.clear();
    }
    let mut sheets = Vec::new();
    let mut xml = quick_xml::Reader::from_reader(workbook);
    loop {
        buf.clear();
        match xml.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == b"sheet" => {
                let [sheet, id] = attributes(&e, xml.decoder(), [b"name", b"id"]);
                if let Some(sheet) = sheet {
                    let part = id
                        .and_then(|id| targets.get(&id).cloned())
                        .unwrap_or_default();
                    sheets.push((sheet, part));
                }
            }
            Ok(Event::DocType(_)) => return Err("its workbook part declares a DTD".into()),
            Ok(Event::Eof) => break,
            Err(e) => return Err(format!("its workbook part does not parse: {e}")),
            _ => {}
        }
    }
    Ok(sheets)
}

/// The defined names of a workbook part and their formulas, as (name, formula).
fn defined_names(workbook: &[u8]) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let mut xml = quick_xml::Reader::from_reader(workbook);
    let mut buf = Vec::new();
    let mut open: Option<(String, String)> = None;
    loop {
        buf.clear();
        match xml.read_event_into(&mut buf) {
            Ok(Event::Start(e)) if e.local_name().as_ref() == b"definedName" => {
                let [name] = attributes(&e, xml.decoder(), [b"name"]);
                open = Some((name.unwrap_or_default(), String::new()));
            }
            Ok(event @ (Event::Text(_) | Event::CData(_) | Event::GeneralRef(_))) => {
                if let Some((_, text)) = open.as_mut() {
                    push_content(text, &event);
                }
            }
            Ok(Event::End(e)) if e.local_name().as_ref() == b"definedName" => {
                names.extend(open.take());
            }
            // The part parsed once already (`sheet_parts`): what does not parse now is
            // refused there.
            Ok(Event::Eof) | Err(_) => return names,
            _ => {}
        }
    }
}

/// The sheets of workbook `name`, in order.
pub(crate) fn sheet_names(name: &str, bytes: &[u8]) -> Result<Vec<String>, String> {
    let parts = catch_unwind(AssertUnwindSafe(|| scan_parts(name, bytes, false)))
        .map_err(|_| format!("{name} could not be read: the reader failed on it"))??;
    Ok(parts.sheets.into_iter().map(|(n, _)| n).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `chunk` bytes a call, as an inflating zip entry hands
    /// out what it has.
    struct Chunked<'a> {
        rest: &'a [u8],
        chunk: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.chunk.min(buf.len()).min(self.rest.len());
            buf[..n].copy_from_slice(&self.rest[..n]);
            self.rest = &self.rest[n..];
            Ok(n)
        }
    }

    #[test]
    fn formula_tags_are_found_wherever_the_reads_split_them() {
        let found = |xml: &str, chunk: usize| {
            let padded = format!("{}{xml}", " ".repeat(chunk * 3));
            find_formula_tag(Chunked {
                rest: padded.as_bytes(),
                chunk,
            })
            .unwrap()
        };
        for chunk in 1..=12 {
            for xml in [
                "<c r=\"A1\"><f>1+1</f></c>",
                "<x:c><x:f/></x:c>",
                "<c><f\n>1</f></c>",
                "<formula>$B2>0</formula>",
                "<dataValidation><formula1>\"a\"</formula1>",
                "<x14:cfRule><xm:f>A1</xm:f>",
            ] {
                assert!(found(xml, chunk), "{xml} in chunks of {chunk}");
            }
            for xml in [
                "<fill><font/></fill>",
                "<c r=\"F1\"><v>1</v></c>",
                "<xm:sqref>A1</xm:sqref>",
                "<c><f",
            ] {
                assert!(!found(xml, chunk), "{xml} in chunks of {chunk}");
            }
        }
    }
}
