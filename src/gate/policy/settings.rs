//! Library state every job in a worker shares: the settings (matplotlib's rcParams,
//! pandas options) a job may not write because they start programs, import modules by
//! name or read files, and the library functions that register into process-wide
//! registries, with how to do the same for one figure.

/// matplotlib / pandas settings that start programs, import modules by name or read
/// files. Compared as lower-case prefixes of the setting key.
pub(super) const DENIED_SETTING_PREFIXES: &[&str] = &[
    "animation.",        // *_path / *_args / writer: ffmpeg, imagemagick
    "text.usetex",       // spawns latex, dvipng, ghostscript
    "text.latex.",       // latex preamble
    "pgf.",              // pgf.texsystem: which TeX program is spawned
    "ps.usedistiller",   // spawns ghostscript / xpdf
    "webagg.",           // web server backend
    "savefig.directory", // GUI save dialog default
    "backend",           // backend switch imports GUI toolkits (also backend_fallback)
    "interactive",       // interactive mode hooks
    "tk.",               // GUI toolkit
    "macosx.",           // GUI toolkit
    "toolbar",           // GUI toolkit
    "figure.hooks",      // pyplot imports "module:function" names and calls them
    "plotting.backend",  // pandas: imports any module named here
    "io.",               // pandas: reader/writer engines imported by name
];

/// Of the denied settings, those the worker keeps at their values whatever key a job
/// computes (`RcParams.__setitem__`, python/library_guards/libraries.py): each names a
/// program, its arguments, a module, a GUI toolkit or a folder. The gate refuses the other
/// denied ones by literal key only: `plt.ion()` writes `interactive`, and
/// `animation.bitrate` is a number for a writer that cannot start.
pub(super) const GUARDED_SETTING_PREFIXES: &[&str] = &[
    "animation.writer",
    "animation.ffmpeg_",
    "animation.convert_",
    "animation.html",
    "text.usetex",
    "text.latex.",
    "pgf.",
    "ps.usedistiller",
    "webagg.",
    "savefig.directory",
    "backend",
    "tk.",
    "macosx.",
    "toolbar",
    "figure.hooks",
];

/// Library functions that register into process-wide registries, with how to do the
/// same for one figure. Refused where they are reached through a module (not on a job's
/// own objects); the after-job state guard restores what a missed one changes.
pub(super) const REGISTRAR_HINTS: &[(&str, &str)] = &[
    (
        "register",
        "pass the object directly: plt.imshow(x, cmap=my_cmap), ax.set_prop_cycle(color=[...])",
    ),
    (
        "register_cmap",
        "pass the colormap directly: plt.imshow(x, cmap=my_cmap)",
    ),
    (
        "register_scale",
        "use the scale directly: ax.set_yscale('function', functions=(f, inverse))",
    ),
    (
        "register_projection",
        "use the axes class directly: fig.add_subplot(axes_class=MyAxes)",
    ),
    (
        "register_backend",
        "figures are saved with plt.savefig(OUT)",
    ),
    (
        "addfont",
        "use a font file for one text with FontProperties: from matplotlib.font_manager import FontProperties; ax.set_title('标题', fontproperties=FontProperties(fname='font.ttf')), or the installed fonts: fontfamily='DejaVu Sans'",
    ),
    (
        "register_dataframe_accessor",
        "write a function and call it directly: summarize(df)",
    ),
    (
        "register_series_accessor",
        "write a function and call it directly: summarize(s)",
    ),
    (
        "register_index_accessor",
        "write a function and call it directly: summarize(idx)",
    ),
    ("register_extension_dtype", "use the built-in dtypes"),
    ("register_option", "use pd.set_option for existing options"),
];

/// Registrars a job may call after all: matplotlib's registries of colormaps and colour
/// sequences, which the state guard snapshots and restores after every job (a
/// colormap registered by one job is gone for the next: `tests/it/state_guard.rs`,
/// `tests/it/cross_job_state.rs`). Model code registers a brand colormap and uses it
/// by name (`cmap="brand"`).
pub(super) const GUARDED_REGISTRARS: &[&str] = &[
    "matplotlib.colormaps.register",
    "matplotlib.color_sequences.register",
];
