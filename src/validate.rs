//! Artifact checks: "exit 0" is not success. An artifact must exist, be non-empty and
//! really be what its name says, within size caps.

use crate::outcome::{Artifact, JobFailure};

/// Largest PNG accepted, in pixels (width × height).
pub const MAX_PNG_PIXELS: u64 = 100_000_000;

/// A check over a job's artifacts, run after every successful execution.
pub trait Validator: Send + Sync {
    /// Stable id of the check, reported in `InvalidOutput::check`.
    fn id(&self) -> &str;
    /// `Err(detail)` when the artifacts fail the check.
    fn check(&self, artifacts: &[Artifact]) -> Result<(), String>;
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

fn invalid(check: &str, detail: String) -> JobFailure {
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
        "csv" | "txt" => std::str::from_utf8(bytes)
            .map(|_| {
                if extension(name) == "csv" {
                    "text/csv"
                } else {
                    "text/plain"
                }
            })
            .map_err(|_| invalid("not-text", format!("{name} is not UTF-8 text"))),
        _ => Ok("application/octet-stream"),
    }
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
    if width == 0 || height == 0 {
        return Err(bad("zero-sized image"));
    }
    if u64::from(width) * u64::from(height) > MAX_PNG_PIXELS {
        return Err(invalid(
            "too-large",
            format!("{name} is {width}x{height} pixels, over the cap of {MAX_PNG_PIXELS}"),
        ));
    }
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
        Artifact {
            name: name.into(),
            media_type: String::new(),
            bytes: bytes.to_vec(),
        }
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
    fn missing_and_empty_outputs_fail() {
        let mut none: [Artifact; 0] = [];
        assert!(
            matches!(validate(&mut none, &["figure.png".into()]), Err(JobFailure::InvalidOutput { check, .. }) if check == "missing")
        );
        let mut empty = [art("figure.png", b"")];
        assert!(validate(&mut empty, &[]).is_err());
    }
}
