//! Host PNG encoding (`PngEncoder::Host`, the default) against matplotlib's own files:
//! for every figure of the rendering corpus (`tests/data/figures`) and of the legitimate
//! corpus (`tests/data/legit`), the decoded pixels, the dpi and the text chunks are the
//! same as in the PNG matplotlib writes (`PngEncoder::Matplotlib`); the sizes are
//! printed and bounded. Run with `--nocapture` to see the size of each. `make test`
//! compares half of each corpus, `make test-long` all of it (`common::comparison_sample`).

use crate::common;

use std::path::PathBuf;

use common::{builder, comparison_sample, expect_ok, figure_corpus, legit_corpus};
use pyward::{Executor, Job, PngEncoder};

/// What a PNG shows and says: size, pixels as RGBA, pixels per metre, text chunks.
#[derive(Debug, PartialEq)]
struct Decoded {
    size: (u32, u32),
    rgba: Vec<u8>,
    per_metre: Option<u32>,
    text: Vec<(String, String)>,
}

fn decode(bytes: &[u8]) -> Decoded {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut rgba = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut rgba).unwrap();
    rgba.truncate(frame.buffer_size());
    // Read to the end: text chunks after the image data count too.
    let _ = reader.finish();
    let info = reader.info();
    let mut text: Vec<(String, String)> = info
        .uncompressed_latin1_text
        .iter()
        .map(|t| (t.keyword.clone(), t.text.clone()))
        .chain(
            info.utf8_text
                .iter()
                .map(|t| (t.keyword.clone(), t.get_text().unwrap_or_default())),
        )
        .collect();
    text.sort();
    Decoded {
        size: (frame.width, frame.height),
        rgba,
        per_metre: info.pixel_dims.map(|d| d.xppu),
        text,
    }
}

fn pool(encoder: PngEncoder) -> Executor {
    builder()
        .workers(2)
        .preload_pandas(true)
        .png_encoder(encoder)
        .build()
        .unwrap()
}

#[test]
fn host_encoded_pngs_have_matplotlibs_pixels_dpi_and_text_at_a_similar_size() {
    let host = pool(PngEncoder::Host);
    let stock = pool(PngEncoder::Matplotlib);
    let inputs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/legit_inputs");
    let mut compared = 0;
    let (mut host_total, mut stock_total) = (0u64, 0u64);
    let mut worst = (0.0f64, String::new());
    // Metadata set by the job must survive too.
    let mut scripts = comparison_sample(figure_corpus());
    scripts.push((
        "metadata".into(),
        "plt.plot([1, 2])\nplt.savefig(OUT, dpi=72, metadata={'Title': 'Δ growth', 'Author': 'pyward'})\n"
            .into(),
    ));
    scripts.extend(comparison_sample(legit_corpus()));
    for (name, code) in &scripts {
        if code.contains("PdfPages(OUT)") {
            continue; // its OUT is a PDF
        }
        let job = || {
            Job::new(code.as_str())
                .src_dir(&inputs)
                .seed(1)
                .allow_blank()
        };
        let a = host.run(job()).unwrap();
        let b = stock.run(job()).unwrap();
        expect_ok(&a);
        expect_ok(&b);
        for x in a.artifacts().iter().filter(|x| x.media_type == "image/png") {
            let y = b.artifact(&x.name).expect("the same artifacts");
            let (dx, dy) = (decode(&x.bytes), decode(&y.bytes));
            assert_eq!(dx.size, dy.size, "{name}: {}", x.name);
            assert!(dx.rgba == dy.rgba, "{name}: {}: pixels differ", x.name);
            assert_eq!(dx.per_metre, dy.per_metre, "{name}: dpi");
            assert_eq!(dx.text, dy.text, "{name}: text chunks");
            let ratio = x.bytes.len() as f64 / y.bytes.len() as f64;
            println!(
                "{name:44} {:>8} bytes host, {:>8} matplotlib, {ratio:.2}x",
                x.bytes.len(),
                y.bytes.len()
            );
            if ratio > worst.0 {
                worst = (ratio, format!("{name}: {}", x.name));
            }
            host_total += x.bytes.len() as u64;
            stock_total += y.bytes.len() as u64;
            compared += 1;
        }
    }
    let total = host_total as f64 / stock_total as f64;
    println!(
        "{compared} PNGs: host {host_total} bytes, matplotlib {stock_total} bytes, {total:.3}x; largest ratio {:.2}x ({})",
        worst.0, worst.1
    );
    assert!(
        compared >= scripts.len() * 9 / 10,
        "{compared} PNGs compared from {} scripts",
        scripts.len()
    );
    assert!(
        total <= 1.3,
        "host PNGs are {total:.2}x matplotlib's in total"
    );
}
