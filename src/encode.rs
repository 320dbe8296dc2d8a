//! PNG encoding on the host: the figures a worker rendered and handed over as RGBA
//! pixels ([`RawPng`]) become files here, with the chunks matplotlib's own writer
//! (Pillow, through `matplotlib.image.imsave`) puts in them: the pixels as 8-bit RGBA,
//! the dpi as a pHYs chunk, the metadata as text chunks. Only the compressed stream
//! differs: zlib at level 2 with adaptive filters instead of Pillow's default level.

use crate::protocol::RawPng;

/// Encodes `rgba` (rows top to bottom) as described by `raw`.
pub(crate) fn png(raw: &RawPng, rgba: &[u8]) -> Result<Vec<u8>, String> {
    let expected = (u64::from(raw.width) * u64::from(raw.height)).checked_mul(4);
    if Some(rgba.len() as u64) != expected {
        return Err(format!(
            "{} bytes of pixels for a {}x{} image",
            rgba.len(),
            raw.width,
            raw.height
        ));
    }
    let mut out = Vec::with_capacity(rgba.len() / 8);
    let mut encoder = png::Encoder::new(&mut out, raw.width, raw.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    // flate2's backend is zlib-rs (calamine's zip crate selects it for the whole build).
    // Measured on the rendering corpus against Pillow's zlib level 6 (78 PNGs): zlib-rs
    // level 1 (its deflate_quick) is 1.8x the size, level 2 0.99x, level 3 0.96x. With
    // miniz_oxide, before, level 1 was 1.23x at ~1.8 ms a figure. Level 2: matplotlib's
    // size, the fastest level that keeps it.
    encoder.set_deflate_compression(png::DeflateCompression::Level(2));
    encoder.set_filter(png::Filter::Adaptive);
    if raw.dpi.is_finite() && raw.dpi > 0.0 {
        // Pillow: int(dpi / 0.0254 + 0.5) pixels per metre.
        let per_metre = (raw.dpi / 0.0254 + 0.5) as u32;
        encoder.set_pixel_dims(Some(png::PixelDimensions {
            xppu: per_metre,
            yppu: per_metre,
            unit: png::Unit::Meter,
        }));
    }
    for (key, value) in &raw.text {
        // Pillow: tEXt when the value is Latin-1, else iTXt.
        let added =
            if value.chars().all(|c| (c as u32) < 256) && key.chars().all(|c| (c as u32) < 256) {
                encoder.add_text_chunk(key.clone(), value.clone())
            } else {
                encoder.add_itxt_chunk(key.clone(), value.clone())
            };
        added.map_err(|e| format!("text chunk {key:?}: {e}"))?;
    }
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgba).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(width: u32, height: u32) -> RawPng {
        RawPng {
            width,
            height,
            dpi: 100.0,
            text: vec![
                ("Software".into(), "Matplotlib".into()),
                ("Title".into(), "Δ".into()),
            ],
        }
    }

    #[test]
    fn pixels_dpi_and_text_round_trip() {
        let rgba: Vec<u8> = (0..3 * 2 * 4).map(|i| (i * 11) as u8).collect();
        let bytes = png(&raw(3, 2), &rgba).unwrap();
        let mut decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
        decoder.set_transformations(png::Transformations::IDENTITY);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buf).unwrap();
        assert_eq!(buf, rgba);
        let info = reader.info();
        assert_eq!(info.pixel_dims.unwrap().xppu, 3937);
        assert_eq!(info.uncompressed_latin1_text[0].text, "Matplotlib");
        assert_eq!(info.utf8_text[0].get_text().unwrap(), "Δ");
    }

    #[test]
    fn a_wrong_buffer_size_is_an_error() {
        assert!(png(&raw(3, 2), &[0; 5]).is_err());
    }
}
