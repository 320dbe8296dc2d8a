"""Fonts for the text jobs draw: Chinese, Japanese and Korean as well as Latin.

matplotlib's bundled DejaVu fonts have no CJK glyphs: a title in Chinese comes out as a
row of boxes, with a `Glyph ... missing` warning per character, and the job still
succeeds. Code written on a desktop names the font it expects there (`SimHei`,
`Microsoft YaHei`, `Malgun Gothic`, ...); none is installed here, so matplotlib warns
once per text and falls back to DejaVu: boxes again. At warm-up, when a CJK font is
installed (`make` installs Debian's fonts-wqy-microhei), that font

- follows the default family (`font.family` becomes `['sans-serif', <it>]`): a glyph
  DejaVu lacks is drawn from it, and text DejaVu can draw is drawn as before, pixel for
  pixel;
- answers to the names desktop code asks for, as fontconfig's aliases do on a desktop:
  `plt.rcParams['font.sans-serif'] = ['SimHei']` draws with it, without a warning.

Without one, nothing changes (matplotlib's warnings tell the job what is missing).

The Western fonts desktop code names (`plt.rcParams['font.family'] = 'Times New Roman'`,
`fontname='Arial'`) are not installed either: matplotlib warns once per text (112 lines
for one ordinary figure) and draws DejaVu Sans. Each answers here to matplotlib's own
DejaVu family of its kind (sans, serif, mono), silently: Arial is drawn exactly as
matplotlib's fallback draws it, Times New Roman as a serif.
"""

import os

# Where distributions install a font that covers Chinese (simplified and traditional),
# Japanese kana and Korean hangul, in order of preference. Read from the file itself,
# never from matplotlib's cached font list, which predates a font installed later.
_CJK_FONT_FILES = (
    '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc',            # Debian, Ubuntu
    '/usr/share/fonts/wenquanyi/wqy-microhei/wqy-microhei.ttc',  # Arch
    '/usr/share/fonts/wqy-microhei/wqy-microhei.ttc',            # Fedora
    '/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc',
    '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc',
    '/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc',
    '/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc',
)

# The CJK fonts code written on Windows, macOS or another Linux asks for by name (each
# name costs every uncached font lookup a comparison: the ones model code writes).
_CJK_FONT_NAMES = (
    # Chinese
    'SimHei', 'SimSun', 'Microsoft YaHei', 'Microsoft JhengHei', 'KaiTi', 'FangSong',
    'STHeiti', 'STSong', 'Heiti TC', 'PingFang SC', 'PingFang TC', 'Hiragino Sans GB',
    'Songti SC', 'Arial Unicode MS', 'Noto Sans CJK SC', 'Noto Sans SC',
    'Source Han Sans SC', 'Source Han Sans CN', 'WenQuanYi Zen Hei',
    # Japanese
    'MS Gothic', 'Yu Gothic', 'Meiryo', 'Hiragino Sans', 'IPAexGothic', 'IPAGothic',
    'TakaoPGothic', 'Noto Sans CJK JP',
    # Korean
    'Malgun Gothic', 'NanumGothic', 'AppleGothic', 'Noto Sans CJK KR',
)


# Desktop families by the bundled family that stands in for them (each name costs every
# uncached font lookup a comparison per face: the ones plotting code writes most).
_DESKTOP_FONT_NAMES = {
    'DejaVu Sans': ('Arial', 'Helvetica', 'Calibri', 'Verdana', 'Segoe UI'),
    'DejaVu Serif': ('Times New Roman', 'Times', 'Georgia', 'Cambria', 'Garamond',
                     'Palatino'),
    'DejaVu Sans Mono': ('Courier New', 'Courier', 'Consolas'),
}


def _install_fonts():
    """At warm-up, before anything measures or renders text: the desktop names above
    and an installed CJK font (`_install_cjk_font`)."""
    import dataclasses
    import matplotlib
    from matplotlib import font_manager
    manager = font_manager.fontManager
    bundled = matplotlib.get_data_path() + os.sep
    taken = {e.name for e in manager.ttflist}
    for family, names in _DESKTOP_FONT_NAMES.items():
        faces = [e for e in manager.ttflist if e.name == family and e.fname.startswith(bundled)]
        for name in names:
            if name not in taken:
                manager.ttflist.extend(dataclasses.replace(e, name=name) for e in faces)
    _install_cjk_font(manager)
    # findfont's answers so far were given without these entries.
    manager._findfont_cached.cache_clear()


def _install_cjk_font(manager):
    """Makes an installed CJK font the fallback of the default family and lists it in
    `manager` (matplotlib's font manager) under `_CJK_FONT_NAMES`; returns its family
    name, or None when none is installed."""
    import dataclasses
    import matplotlib
    path = next((p for p in _CJK_FONT_FILES if os.path.isfile(p)), None)
    if path is None:
        return None
    listed = [e for e in manager.ttflist if e.fname == path]
    if not listed:
        manager.addfont(path)
        listed = [e for e in manager.ttflist if e.fname == path]
    first = next((e for e in listed if e.index == 0), None)
    if first is None:
        return None
    taken = {e.name for e in manager.ttflist}
    for name in _CJK_FONT_NAMES:
        if name not in taken:
            manager.ttflist.append(dataclasses.replace(first, name=name))
    # The one face at every weight: a bold title asks each family of the default list
    # for bold, and would be warned for this one (its glyphs are drawn regular, as
    # matplotlib draws a face it has no bold of).
    weights = {e.weight for e in listed if e.name == first.name}
    for weight in range(100, 1000, 100):
        if weight not in weights:
            manager.ttflist.append(dataclasses.replace(first, weight=weight))
    family = matplotlib.rcParams['font.family']
    if first.name not in family:
        matplotlib.rcParams['font.family'] = [*family, first.name]
    return first.name
