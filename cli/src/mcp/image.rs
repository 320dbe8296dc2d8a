//! The image a model can afford: a figure's PNG bounded to a long side and a byte
//! budget. A figure within both is sent as it is; a larger one is downscaled as a whole
//! (area averaging: every pixel of the figure counts, nothing is cropped) and encoded
//! again, smaller each time until it fits the budget.

use std::io::Cursor;

/// The bounds of the image a tool answer carries.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// Longest side, in pixels.
    pub max_side: u32,
    /// Largest PNG, in bytes.
    pub max_bytes: usize,
}

/// Default longest side of the image, in pixels.
pub const DEFAULT_MAX_SIDE: u32 = 1500;
/// Default largest image, in bytes of PNG.
pub const DEFAULT_MAX_BYTES: u64 = 64_000;

impl Default for Bound {
    fn default() -> Bound {
        Bound {
            max_side: DEFAULT_MAX_SIDE,
            max_bytes: DEFAULT_MAX_BYTES as usize,
        }
    }
}

/// The image sent: its PNG bytes and size, and whether it was downscaled.
#[derive(Debug)]
pub struct Bounded {
    /// The PNG.
    pub png: Vec<u8>,
    /// Its width and height.
    pub width: u32,
    /// Its height.
    pub height: u32,
    /// The figure's own size, when the image is smaller.
    pub scaled_from: Option<(u32, u32)>,
}

/// The smallest side a downscale goes to, whatever the budget.
const MIN_SIDE: u32 = 64;
/// Attempts at meeting the byte budget before the smallest image is sent as it is.
const BUDGET_ATTEMPTS: usize = 6;
/// Largest decoded figure, in bytes (a 10,000 x 10,000 RGBA figure is 400 MB).
const MAX_DECODED_BYTES: usize = 256 << 20;

/// `png` within `bound`; `Err` when it does not decode as a PNG. A figure within the
/// bound is sent as it is, judged by its header alone (its pixels were decoded by the
/// output checks already); only a figure to downscale is decoded here.
pub fn bound(png_bytes: &[u8], bound: Bound) -> Result<Bounded, String> {
    let header = png::Decoder::new(Cursor::new(png_bytes))
        .read_info()
        .map_err(|e| e.to_string())?;
    let (width, height) = (header.info().width, header.info().height);
    if width.max(height) <= bound.max_side && png_bytes.len() <= bound.max_bytes {
        return Ok(Bounded {
            png: png_bytes.to_vec(),
            width,
            height,
            scaled_from: None,
        });
    }
    let (pixels, width, height, color) = decode(png_bytes)?;
    let long = width.max(height);
    let channels = color.samples();
    let mut scale = f64::from(bound.max_side.min(long)) / f64::from(long);
    let mut best = None;
    for _ in 0..BUDGET_ATTEMPTS {
        let (w, h) = scaled(width, height, scale);
        let small = downscale(&pixels, width, height, channels, w, h);
        let encoded = encode(&small, w, h, color)?;
        let fits = encoded.len() <= bound.max_bytes;
        let size = encoded.len();
        best = Some((encoded, w, h));
        if fits || w.max(h) <= MIN_SIDE {
            break;
        }
        // PNG size grows roughly with the pixel count.
        scale *= (bound.max_bytes as f64 / size as f64).sqrt() * 0.9;
    }
    let (png, w, h) = best.ok_or("no image")?;
    Ok(Bounded {
        png,
        width: w,
        height: h,
        scaled_from: Some((width, height)),
    })
}

fn scaled(width: u32, height: u32, scale: f64) -> (u32, u32) {
    let long = width.max(height);
    let target_long = ((f64::from(long) * scale).round() as u32).clamp(MIN_SIDE.min(long), long);
    let w = (u64::from(width) * u64::from(target_long) / u64::from(long)).max(1) as u32;
    let h = (u64::from(height) * u64::from(target_long) / u64::from(long)).max(1) as u32;
    (w, h)
}

/// The PNG's pixels as 8-bit samples, its size and colour type.
fn decode(bytes: &[u8]) -> Result<(Vec<u8>, u32, u32, png::ColorType), String> {
    let mut decoder = png::Decoder::new_with_limits(
        Cursor::new(bytes),
        png::Limits {
            bytes: MAX_DECODED_BYTES,
        },
    );
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or("the figure is too large to decode")?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    buf.truncate(info.buffer_size());
    // A row may be padded beyond width * samples: keep exactly the pixels.
    let channels = info.color_type.samples();
    let row = info.width as usize * channels;
    if info.line_size != row {
        buf = buf
            .chunks(info.line_size)
            .flat_map(|line| &line[..row])
            .copied()
            .collect();
    }
    Ok((buf, info.width, info.height, info.color_type))
}

/// Area-averaged downscale of `pixels` (`channels` samples each) to `w` x `h`.
fn downscale(pixels: &[u8], width: u32, height: u32, channels: usize, w: u32, h: u32) -> Vec<u8> {
    let (width, height, w, h) = (width as usize, height as usize, w as usize, h as usize);
    let mut out = vec![0u8; w * h * channels];
    let mut sums = vec![0u64; channels];
    for y in 0..h {
        let (y0, y1) = (
            y * height / h,
            ((y + 1) * height / h).max(y * height / h + 1),
        );
        for x in 0..w {
            let (x0, x1) = (x * width / w, ((x + 1) * width / w).max(x * width / w + 1));
            sums.iter_mut().for_each(|s| *s = 0);
            for sy in y0..y1.min(height) {
                let line =
                    &pixels[(sy * width + x0) * channels..(sy * width + x1.min(width)) * channels];
                for px in line.chunks_exact(channels) {
                    for (s, v) in sums.iter_mut().zip(px) {
                        *s += u64::from(*v);
                    }
                }
            }
            let n = ((y1.min(height) - y0) * (x1.min(width) - x0)).max(1) as u64;
            let at = (y * w + x) * channels;
            for (o, s) in out[at..at + channels].iter_mut().zip(&sums) {
                *o = ((s + n / 2) / n) as u8;
            }
        }
    }
    out
}

fn encode(pixels: &[u8], w: u32, h: u32, color: png::ColorType) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(color);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Balanced);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(pixels).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(w: u32, h: u32) -> Vec<u8> {
        // Noise compresses badly: a large PNG for its size.
        let mut state = 12345u32;
        let pixels: Vec<u8> = (0..w * h * 3)
            .map(|_| {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (state >> 16) as u8
            })
            .collect();
        encode(&pixels, w, h, png::ColorType::Rgb).unwrap()
    }

    #[test]
    fn a_small_figure_is_sent_as_it_is() {
        let png = figure(100, 50);
        let b = bound(
            &png,
            Bound {
                max_side: 1500,
                max_bytes: 1 << 20,
            },
        )
        .unwrap();
        assert_eq!(b.png, png);
        assert_eq!((b.width, b.height, b.scaled_from), (100, 50, None));
    }

    #[test]
    fn a_large_figure_is_downscaled_whole_within_both_bounds() {
        let png = figure(900, 300);
        let b = bound(
            &png,
            Bound {
                max_side: 600,
                max_bytes: 60_000,
            },
        )
        .unwrap();
        assert!(b.width <= 600 && b.png.len() <= 60_000, "{b:?}");
        // The aspect ratio is kept: scaled, not cropped.
        assert!(b.width.abs_diff(b.height * 3) <= 2, "{b:?}");
        assert_eq!(b.scaled_from, Some((900, 300)));
        let (_, w, h, _) = decode(&b.png).unwrap();
        assert_eq!((w, h), (b.width, b.height));
    }

    #[test]
    fn not_a_png_is_an_error() {
        assert!(bound(
            b"GIF89a",
            Bound {
                max_side: 10,
                max_bytes: 10
            }
        )
        .is_err());
    }
}
