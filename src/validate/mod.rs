//! Artifact checks: "exit 0" is not success. An artifact must exist, be non-empty and
//! really be what its name says, within size caps.

use std::path::Path;

mod active_content;
mod bounds;
mod expect;
mod outputs;
mod preview;
mod sheet;
mod table;
mod xlsx_parts;

pub use crate::outcome::{is_figure, main_figure, FIGURE_SUFFIXES};
pub(crate) use outputs::{bound_failure, check_outputs, OutputRules};

pub use bounds::{MAX_INFLATED_BYTES, MAX_TABLE_BYTES, MAX_TABLE_CELLS, MAX_ZIP_ENTRIES};
pub use expect::{Expectations, ExpectationsError, EXPECTATIONS_VERSION};
pub use preview::{ColumnPreview, TablePreview, PREVIEW_CELL_CHARS, PREVIEW_COLUMNS, PREVIEW_ROWS};
pub use table::{BoundCheck, ColumnsUnchanged, Decimals, KeysFromInput, SumCheck, TableCheck};

use crate::outcome::{Artifact, JobFailure};

/// Largest PNG accepted, in pixels (width × height).
pub const MAX_PNG_PIXELS: u64 = 100_000_000;

/// What a [`Validator`] sees: the artifacts of a job that ran to the end, and the
/// directory its inputs were staged in (for checks against an input table).
#[derive(Debug)]
pub struct ValidationContext<'a> {
    /// The job's artifacts, type-checked already.
    pub artifacts: &'a [Artifact],
    /// Where the job's inputs are (read-only; valid during validation only).
    pub inputs: &'a Path,
}

impl ValidationContext<'_> {
    /// The artifact with this name, or a failure detail naming what exists.
    pub fn artifact(&self, name: &str) -> Result<&Artifact, String> {
        self.artifacts
            .iter()
            .find(|a| a.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.artifacts.iter().map(|a| a.name.as_str()).collect();
                format!("{name} was not written (files written: {names:?})")
            })
    }
}

/// A check over a job's artifacts, run after every successful execution. Failures
/// become `JobFailure::InvalidOutput` with [`id`](Validator::id) as the check name.
pub trait Validator: Send + Sync + std::fmt::Debug {
    /// Stable id of the check, reported in `InvalidOutput::check`.
    fn id(&self) -> String;
    /// `Err(detail)` when the artifacts fail the check; the detail is shown to a model.
    fn check(&self, ctx: &ValidationContext<'_>) -> Result<(), String>;
}

/// Fails when a PNG artifact is a single colour: a figure with nothing drawn on it is
/// a failure the model must hear about, not a success.
#[derive(Debug, Clone)]
pub struct NotBlank {
    /// The PNG artifact to inspect.
    pub artifact: String,
}

impl Validator for NotBlank {
    fn id(&self) -> String {
        "blank".into()
    }

    fn check(&self, ctx: &ValidationContext<'_>) -> Result<(), String> {
        let art = ctx.artifact(&self.artifact)?;
        match png_is_single_colour(&art.bytes) {
            Ok(false) => Ok(()),
            Ok(true) => Err(format!(
                "{} is blank: every pixel has the same colour; draw the data before saving",
                self.artifact
            )),
            Err(e) => Err(format!("{} cannot be decoded: {e}", self.artifact)),
        }
    }
}

/// Whether every pixel of a PNG has the same value.
///
/// Deflate compresses at most about 1032:1, so a single-colour image is always smaller
/// than a twentieth of its pixel count in bytes: larger files are decided without
/// decoding, which keeps this check off the per-job hot path for real figures.
pub fn png_is_single_colour(bytes: &[u8]) -> Result<bool, String> {
    let (w, h) = png_dimensions(bytes).ok_or("not a PNG")?;
    if bytes.len() as u64 > u64::from(w) * u64::from(h) / 20 + 4096 {
        return Ok(false);
    }
    // The dimensions are the worker's word: an image too large to decode within the
    // bound is not judged blank rather than decoded.
    if u64::from(w) * u64::from(h) * 8 > MAX_DECODED_BYTES as u64 {
        return Ok(false);
    }
    let decoded = png_pixels(bytes)?;
    let first = &decoded.data[..decoded.pixel_bytes.min(decoded.data.len())];
    Ok(decoded
        .data
        .chunks_exact(decoded.pixel_bytes)
        .all(|p| p == first))
}

/// A PNG's decoded pixels (palettes and low bit depths expanded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PngPixels {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bytes per pixel in `data`.
    pub pixel_bytes: usize,
    /// The rows, top to bottom.
    pub data: Vec<u8>,
}

/// Largest decoded image [`png_pixels`] allocates, in bytes (16-bit RGBA at 4096 x
/// 4096). A PNG's header says what the decoder allocates, and a PNG comes from the
/// worker, which runs the job's code.
pub const MAX_DECODED_BYTES: usize = 128 << 20;

/// Decodes a PNG's pixels (at most [`MAX_DECODED_BYTES`] of them).
pub fn png_pixels(bytes: &[u8]) -> Result<PngPixels, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = (reader.output_buffer_size())
        .filter(|&size| size <= MAX_DECODED_BYTES)
        .ok_or("image too large to decode")?;
    let mut data = vec![0; size];
    let info = reader.next_frame(&mut data).map_err(|e| e.to_string())?;
    data.truncate(info.buffer_size());
    let depth = if info.bit_depth == png::BitDepth::Sixteen {
        2
    } else {
        1
    };
    Ok(PngPixels {
        width: info.width,
        height: info.height,
        pixel_bytes: info.color_type.samples() * depth,
        data,
    })
}

/// Checks the artifacts the worker returned: every required name is present, and every
/// artifact's content matches its extension. Fills in `media_type`.
pub fn validate(artifacts: &mut [Artifact], required: &[String]) -> Result<(), JobFailure> {
    for name in required {
        if !artifacts.iter().any(|a| &a.name == name) {
            let found: Vec<&str> = artifacts.iter().map(|a| a.name.as_str()).collect();
            return Err(invalid(
                "missing",
                format!("{name} was not written (files written: {found:?})"),
            ));
        }
    }
    for a in artifacts.iter_mut() {
        if a.bytes.is_empty() {
            return Err(invalid("empty", format!("{} is empty", a.name)));
        }
        a.media_type = sniff(&a.name, &a.bytes)?.to_string();
    }
    Ok(())
}

pub(crate) fn invalid(check: &str, detail: String) -> JobFailure {
    JobFailure::InvalidOutput {
        check: check.to_string(),
        detail,
    }
}

fn extension(name: &str) -> String {
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// The media type of an artifact whose content matches its extension.
fn sniff(name: &str, bytes: &[u8]) -> Result<&'static str, JobFailure> {
    match extension(name).as_str() {
        "png" => check_png(name, bytes).map(|()| "image/png"),
        "svg" => {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
            let tail = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(256)..]);
            if (head.contains("<svg") || head.trim_start().starts_with("<?xml"))
                && tail.contains("</svg>")
            {
                Ok("image/svg+xml")
            } else {
                Err(invalid(
                    "not-svg",
                    format!("{name} is not a complete SVG document"),
                ))
            }
        }
        "pdf" => {
            let tail = &bytes[bytes.len().saturating_sub(1024)..];
            if bytes.starts_with(b"%PDF-") && tail.windows(5).any(|w| w == b"%%EOF") {
                Ok("application/pdf")
            } else {
                Err(invalid("not-pdf", format!("{name} is not a complete PDF")))
            }
        }
        "json" => serde_json::from_slice::<serde_json::Value>(bytes)
            .map(|_| "application/json")
            .map_err(|e| invalid("not-json", format!("{name}: {e}"))),
        "jpg" | "jpeg" => {
            if bytes.starts_with(b"\xff\xd8\xff") && bytes.ends_with(b"\xff\xd9") {
                Ok("image/jpeg")
            } else {
                Err(invalid(
                    "not-jpeg",
                    format!("{name} is not a complete JPEG"),
                ))
            }
        }
        "webp" => {
            let riff_len = bytes
                .get(4..8)
                .map(|l| u32::from_le_bytes(l.try_into().expect("4 bytes")) as usize);
            if bytes.starts_with(b"RIFF")
                && bytes.get(8..12) == Some(b"WEBP")
                && riff_len == Some(bytes.len() - 8)
            {
                Ok("image/webp")
            } else {
                Err(invalid(
                    "not-webp",
                    format!("{name} is not a complete WebP"),
                ))
            }
        }
        "xlsx" => {
            if bytes.starts_with(b"PK\x03\x04") {
                Ok("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
            } else {
                Err(invalid(
                    "not-xlsx",
                    format!("{name} is not an xlsx workbook"),
                ))
            }
        }
        "gif" => check_gif(name, bytes).map(|()| "image/gif"),
        "csv" => check_text(name, bytes).map(|()| "text/csv"),
        "tsv" => check_text(name, bytes).map(|()| "text/tab-separated-values"),
        "txt" | "log" => check_text(name, bytes).map(|()| "text/plain"),
        "md" => check_text(name, bytes).map(|()| "text/markdown"),
        // Checked as text, and handed out as a download: a job's HTML is never shown
        // as a page.
        "html" | "htm" => check_text(name, bytes).map(|()| "application/octet-stream"),
        _ => Ok("application/octet-stream"),
    }
}

/// Text, as a text file's name promises: UTF-8 (with a byte-order mark or without),
/// UTF-16 with its mark, or a legacy encoding (GBK for a Chinese bank's upload, Latin-1,
/// Shift-JIS: their bytes are no control characters). In every encoding the text holds
/// no control character but tab, line feed, form feed and carriage return (a NUL, an
/// escape sequence): UTF-8 and UTF-16 are decoded first (UTF-16 must decode whole), a
/// legacy encoding is judged by its bytes.
fn check_text(name: &str, bytes: &[u8]) -> Result<(), JobFailure> {
    let control = |c: char| c < ' ' && !matches!(c, '\t' | '\n' | '\x0c' | '\r');
    let refuse = |at: usize, what: String| {
        Err(invalid(
            "not-text",
            format!("{name} is not text: character {at} is {what}"),
        ))
    };
    let utf16 = match bytes.get(..2) {
        Some(b"\xff\xfe") => Some(u16::from_le_bytes as fn([u8; 2]) -> u16),
        Some(b"\xfe\xff") => Some(u16::from_be_bytes as fn([u8; 2]) -> u16),
        _ => None,
    };
    let utf8 = std::str::from_utf8(bytes);
    if let (Some(unit), Err(_)) = (utf16, &utf8) {
        if bytes.len() % 2 != 0 {
            return refuse(bytes.len(), "half of a UTF-16 unit".into());
        }
        let units = bytes[2..].chunks_exact(2).map(|p| unit([p[0], p[1]]));
        for (at, c) in char::decode_utf16(units).enumerate() {
            match c {
                Ok(c) if control(c) => return refuse(at, format!("the control character {:?}", c)),
                Ok(_) => {}
                Err(_) => return refuse(at, "a broken UTF-16 surrogate".into()),
            }
        }
        return Ok(());
    }
    if let Ok(text) = utf8 {
        return match text.chars().enumerate().find(|(_, c)| control(*c)) {
            Some((at, c)) => refuse(at, format!("the control character {c:?}")),
            None => Ok(()),
        };
    }
    match bytes.iter().position(|b| control(char::from(*b))) {
        Some(at) => refuse(
            at,
            format!(
                "the control byte 0x{:02x}, and the file is not UTF-8",
                bytes[at]
            ),
        ),
        None => Ok(()),
    }
}

/// An image neither empty nor past [`MAX_PNG_PIXELS`]; `bad` words a zero size.
fn sane_dimensions(
    name: &str,
    width: u32,
    height: u32,
    bad: impl Fn(&str) -> JobFailure,
) -> Result<(), JobFailure> {
    if width == 0 || height == 0 {
        return Err(bad("zero-sized image"));
    }
    if u64::from(width) * u64::from(height) > MAX_PNG_PIXELS {
        return Err(invalid(
            "too-large",
            format!("{name} is {width}x{height} pixels, over the cap of {MAX_PNG_PIXELS}"),
        ));
    }
    Ok(())
}

/// A GIF (an animation's frames, as `PillowWriter` writes them): its signature, a
/// screen of sane dimensions, and the trailer byte that ends every complete one.
fn check_gif(name: &str, b: &[u8]) -> Result<(), JobFailure> {
    let bad = |why: &str| invalid("not-gif", format!("{name}: {why}"));
    if b.len() < 14 || !(b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a")) {
        return Err(bad("not a GIF file"));
    }
    let width = u16::from_le_bytes([b[6], b[7]]);
    let height = u16::from_le_bytes([b[8], b[9]]);
    sane_dimensions(name, width.into(), height.into(), bad)?;
    if b.last() != Some(&0x3b) {
        return Err(bad("truncated (no trailer)"));
    }
    Ok(())
}

/// Signature, IHDR first with sane dimensions, and an IEND chunk at the end.
fn check_png(name: &str, b: &[u8]) -> Result<(), JobFailure> {
    const SIG: &[u8] = b"\x89PNG\r\n\x1a\n";
    let bad = |why: &str| invalid("not-png", format!("{name}: {why}"));
    if b.len() < 8 + 25 + 12 || !b.starts_with(SIG) {
        return Err(bad("not a PNG file"));
    }
    if &b[12..16] != b"IHDR" {
        return Err(bad("first chunk is not IHDR"));
    }
    let width = u32::from_be_bytes([b[16], b[17], b[18], b[19]]);
    let height = u32::from_be_bytes([b[20], b[21], b[22], b[23]]);
    sane_dimensions(name, width, height, bad)?;
    if &b[b.len() - 8..b.len() - 4] != b"IEND" {
        return Err(bad("truncated (no IEND chunk)"));
    }
    Ok(())
}

/// Width and height of a PNG, if `bytes` starts like one.
pub fn png_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || !bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return None;
    }
    let w = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
    let h = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
    Some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn art(name: &str, bytes: &[u8]) -> Artifact {
        Artifact::new(name, "", bytes.to_vec())
    }

    fn tiny_png(w: u32, h: u32) -> Vec<u8> {
        let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
        v.extend_from_slice(&13u32.to_be_bytes());
        v.extend_from_slice(b"IHDR");
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        v.extend_from_slice(&0u32.to_be_bytes());
        v.extend_from_slice(b"IEND");
        v.extend_from_slice(&[0xae, 0x42, 0x60, 0x82]);
        v
    }

    #[test]
    fn png_checks() {
        let mut ok = [art("figure.png", &tiny_png(10, 10))];
        validate(&mut ok, &["figure.png".into()]).unwrap();
        assert_eq!(ok[0].media_type, "image/png");
        let mut fake = [art(
            "figure.png",
            b"GIF89a this is not a png at all, really not",
        )];
        assert!(
            matches!(validate(&mut fake, &[]), Err(JobFailure::InvalidOutput { check, .. }) if check == "not-png")
        );
        let mut huge = [art("figure.png", &tiny_png(100_000, 100_000))];
        assert!(
            matches!(validate(&mut huge, &[]), Err(JobFailure::InvalidOutput { check, .. }) if check == "too-large")
        );
        let mut truncated = [art("figure.png", &tiny_png(10, 10)[..40])];
        assert!(validate(&mut truncated, &[]).is_err());
    }

    #[test]
    fn blank_detection_decodes_only_small_pngs() {
        let mut blank = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut blank, 64, 48);
            enc.set_color(png::ColorType::Rgba);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&[255u8; 64 * 48 * 4]).unwrap();
        }
        assert!(png_is_single_colour(&blank).unwrap());
        let mut dot = vec![255u8; 64 * 48 * 4];
        dot[1000] = 0;
        let mut one_dot = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut one_dot, 64, 48);
            enc.set_color(png::ColorType::Rgba);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&dot).unwrap();
        }
        assert!(!png_is_single_colour(&one_dot).unwrap());
        let ctx = ValidationContext {
            artifacts: &[art("f.png", &blank)],
            inputs: Path::new("/"),
        };
        assert!(NotBlank {
            artifact: "f.png".into()
        }
        .check(&ctx)
        .unwrap_err()
        .contains("blank"));
    }

    #[test]
    fn missing_and_empty_outputs_fail() {
        let mut none: [Artifact; 0] = [];
        assert!(
            matches!(validate(&mut none, &["figure.png".into()]), Err(JobFailure::InvalidOutput { check, .. }) if check == "missing")
        );
        let mut empty = [art("figure.png", b"")];
        assert!(validate(&mut empty, &[]).is_err());
    }

    #[test]
    fn a_gif_must_be_whole() {
        let gif = b"GIF89a\x02\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x00\x00\x00\x00\x00,\x00\x00\x00\x00\x02\x00\x01\x00\x00\x02\x02D\x01\x00;";
        let mut a = [art("wave.gif", gif)];
        validate(&mut a, &[]).unwrap();
        assert_eq!(a[0].media_type, "image/gif");
        for (bytes, check) in [
            (&gif[..gif.len() - 1], "not-gif"),
            (b"GIF89a\x00\x00\x01\x00 zero wide;".as_slice(), "not-gif"),
            (b"\x89PNG\r\n\x1a\n not a gif;".as_slice(), "not-gif"),
            (
                b"GIF89a\xff\xff\xff\xff more pixels than the cap;".as_slice(),
                "too-large",
            ),
        ] {
            let e = validate(&mut [art("wave.gif", bytes)], &[]).unwrap_err();
            assert!(
                matches!(&e, JobFailure::InvalidOutput { check: c, .. } if c == check),
                "{e:?}"
            );
        }
    }

    #[test]
    fn text_files_are_text_in_any_encoding_and_binary_is_not() {
        // "部门,金额" in GBK, in UTF-16 with its mark, Latin-1, UTF-8 with a mark.
        let gbk: &[u8] = b"\xb2\xbf\xc3\xc5,\xbd\xf0\xb6\xee\r\n\xd1\xd0\xb7\xa2,1.5\r\n";
        let utf16: &[u8] = b"\xff\xfe\xe8\x90\xe8\x95,\x00";
        for (name, bytes, media) in [
            ("pay.csv", gbk, "text/csv"),
            (
                "pay.tsv",
                b"a\tb\n1\t2\n".as_slice(),
                "text/tab-separated-values",
            ),
            ("u16.txt", utf16, "text/plain"),
            ("caf\u{e9}.log", b"caf\xe9 ok\n".as_slice(), "text/plain"),
            ("summary.md", "# 汇总\n".as_bytes(), "text/markdown"),
            (
                "report.html",
                b"\xef\xbb\xbf<p>ok</p>".as_slice(),
                "application/octet-stream",
            ),
        ] {
            let mut a = [art(name, bytes)];
            validate(&mut a, &[]).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(a[0].media_type, media, "{name}");
        }
        // Binary under a text name, in each encoding's guise: a control byte outside
        // UTF-8, a NUL or an escape sequence in UTF-8, a UTF-16 mark before random
        // bytes (a broken surrogate, a control character) or an odd length.
        for (name, bytes) in [
            ("x.csv", b"\xb2\xbf\x00\x01".as_slice()),
            ("x.md", b"\x89PNG\r\n\x1a\n\xff".as_slice()),
            ("x.html", b"\xff\xfe\x00".as_slice()),
            ("x.log", b"ok\x1b[31mred\n".as_slice()),
            ("x.tsv", b"PK\x03\x04\x14\x00".as_slice()),
            ("x.txt", b"\xff\xfe\x00\xd8\x41\x00".as_slice()),
            ("x.csv", b"\xff\xfe\x01\x00\x41\x00".as_slice()),
        ] {
            let e = validate(&mut [art(name, bytes)], &[]).unwrap_err();
            assert!(
                matches!(&e, JobFailure::InvalidOutput { check, detail } if check == "not-text" && detail.contains("is not text")),
                "{name}: {e:?}"
            );
        }
    }
}
