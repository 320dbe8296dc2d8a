//! Fonts (`python/prelude/fonts.py`). Chinese, Japanese and Korean text in figures is
//! drawn with the installed CJK font (`make` installs Debian's fonts-wqy-microhei), with
//! the default fonts and under the font names desktop code asks for, without a warning;
//! Latin text is drawn as before, byte for byte. The Western fonts desktop code names
//! (Arial, Times New Roman, Courier New) draw with matplotlib's DejaVu family of their
//! kind, without a warning.
//!
//! A character no font has is drawn as the same box whatever it is, so two figures whose
//! only difference is their CJK text come out identical when the glyphs are missing:
//! each CJK test draws such a pair and asserts the two differ.

use crate::common;

use common::{expect_ok, shared_pool, Gate};
use pyward::{Job, Outcome};

/// The font `make` installs; the tests say so when it is missing.
const CJK_FONT: &str = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc";

fn run(code: &str) -> Outcome {
    assert!(
        std::path::Path::new(CJK_FONT).exists(),
        "no CJK font at {CJK_FONT}: install it with `make fonts` (Debian's fonts-wqy-microhei)"
    );
    let outcome = shared_pool(false, Gate::Figures)
        .run(Job::new(code))
        .expect("infrastructure");
    expect_ok(&outcome);
    outcome
}

fn bytes<'a>(o: &'a Outcome, name: &str) -> &'a [u8] {
    &o.artifact(name)
        .unwrap_or_else(|| panic!("no {name}: {:?}", o.result))
        .bytes
}

/// Neither a missing glyph nor a missing font was reported.
fn no_font_warnings(o: &Outcome) {
    for said in ["missing from font", "findfont"] {
        assert!(
            !o.stderr.contains(said),
            "stderr says {said:?}:\n{}",
            o.stderr
        );
    }
}

/// Neither a missing glyph nor a missing font was reported, and the figures `a.png` and
/// `b.png`, which differ only in their CJK text, differ (boxes would make them identical).
fn cjk_glyphs_drawn(o: &Outcome) {
    no_font_warnings(o);
    assert_ne!(
        bytes(o, "a.png"),
        bytes(o, "b.png"),
        "the CJK text was drawn as boxes"
    );
}

#[test]
fn cjk_text_is_drawn_with_the_default_fonts() {
    let o = run(r#"
for name, words in (('a.png', '销售额 매출 売上'), ('b.png', '营收表 판매 利益')):
    fig, ax = plt.subplots(figsize=(3, 2), dpi=60)
    ax.set_title(words)
    ax.bar(['研发', 'Sales'], [1, 2])
    fig.savefig(name)
"#);
    cjk_glyphs_drawn(&o);
}

#[test]
fn the_cjk_fonts_desktop_code_names_draw_without_a_warning() {
    let o = run(r#"
import matplotlib.pyplot as plt
plt.rcParams['font.sans-serif'] = ['SimHei']
plt.rcParams['axes.unicode_minus'] = False
for name, words in (('a.png', '月度销售额'), ('b.png', '年度营业额')):
    fig, ax = plt.subplots(figsize=(3, 2), dpi=60)
    ax.set_title(words)
    ax.set_xlabel(words, fontname='Malgun Gothic')
    ax.set_ylabel(words, fontfamily='Microsoft YaHei')
    fig.savefig(name)
plt.rcParams['font.family'] = 'PingFang SC'
plt.figure(figsize=(2, 1), dpi=60)
plt.text(0.1, 0.5, '金额（万元）')
plt.savefig('c.png')
"#);
    cjk_glyphs_drawn(&o);
}

#[test]
fn latin_text_is_drawn_as_matplotlib_s_default_fonts_draw_it() {
    // The same figure with the default family alone (stock matplotlib's setting) and with
    // the CJK font behind it.
    let o = run(r#"
import matplotlib.pyplot as plt
assert len(plt.rcParams['font.family']) == 2, plt.rcParams['font.family']
def draw(name):
    fig, ax = plt.subplots(figsize=(4, 3), dpi=80)
    ax.plot([1, 2, 3], [3, 1, 2], label='Revenue − costs, €')
    ax.set_title('Quarterly results: Zürich & São Paulo', fontweight='bold')
    ax.set_xlabel('quarter'); ax.legend()
    fig.savefig(name)
draw('with_fallback.png')
plt.rcParams['font.family'] = ['sans-serif']
draw('stock.png')
"#);
    no_font_warnings(&o);
    assert_eq!(bytes(&o, "with_fallback.png"), bytes(&o, "stock.png"));
}

#[test]
fn desktop_font_names_draw_as_the_bundled_family_of_their_kind() {
    // Each pair: a desktop family and the generic family whose font stands in for it.
    let o = run(r#"
import matplotlib.pyplot as plt
def draw(name, family, **text):
    plt.rcParams['font.family'] = family
    fig, ax = plt.subplots(figsize=(3, 2), dpi=60)
    ax.plot([1, 2, 3], [3, 1, 2], label='Revenue')
    ax.set_title('Quarterly results', fontweight='bold')
    ax.set_xlabel('quarter', **text); ax.legend()
    fig.savefig(name)
draw('arial.png', 'Arial')
draw('sans.png', 'sans-serif')
draw('times.png', 'Times New Roman', style='italic')
draw('serif.png', 'serif', style='italic')
draw('courier.png', ['Courier New'])
draw('mono.png', ['monospace'])
plt.rcParams['font.family'] = 'sans-serif'
draw('fontname.png', 'sans-serif', fontname='Helvetica')
"#);
    no_font_warnings(&o);
    assert_eq!(bytes(&o, "arial.png"), bytes(&o, "sans.png"));
    assert_eq!(bytes(&o, "times.png"), bytes(&o, "serif.png"));
    assert_eq!(bytes(&o, "courier.png"), bytes(&o, "mono.png"));
    assert_eq!(bytes(&o, "fontname.png"), bytes(&o, "sans.png"));
    assert_ne!(
        bytes(&o, "times.png"),
        bytes(&o, "sans.png"),
        "a serif was drawn sans"
    );
}
