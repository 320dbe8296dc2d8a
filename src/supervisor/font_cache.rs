//! matplotlib's font list, kept between pools.
//!
//! Each pool gives its workers a private, empty `MPLCONFIGDIR` (no `matplotlibrc` of
//! the user's can change a figure), so matplotlib would scan the system's fonts and
//! write `fontlist-vNNN.json` there on every pool start: about 350 ms of every
//! warm-up, more than a third of a one-off `pyward run`. The list is copied in from a
//! per-user cache before the first process starts and copied back after a pool has
//! warmed up. Only the font list is shared, never a configuration file; the cache is
//! keyed by the Python installation (the list holds absolute paths of its bundled
//! fonts). Jobs only ever see the pool's copy, read-only. Any failure here just means
//! matplotlib builds the list itself, as it would without a cache.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::python_env::PythonEnv;

/// Environment variable that moves the cache (default `$XDG_CACHE_HOME/pyward` or
/// `~/.cache/pyward`).
pub(crate) const CACHE_ENV_VAR: &str = "PYWARD_CACHE_DIR";

/// The directory holding font lists for `python`, if a cache location is known.
pub(crate) fn cache_dir(python: &PythonEnv) -> Option<PathBuf> {
    let base = match std::env::var_os(CACHE_ENV_VAR) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("XDG_CACHE_HOME") {
            Some(dir) => PathBuf::from(dir).join("pyward"),
            None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/pyward"),
        },
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&python.executable, &python.home, &python.paths).hash(&mut h);
    Some(base.join(format!("fonts-{:016x}", h.finish())))
}

/// Copies cached font lists into a pool's fresh `MPLCONFIGDIR`.
pub(crate) fn seed(cache: Option<&Path>, mpl_config: &Path) {
    if let Some(cache) = cache {
        copy_font_lists(cache, mpl_config);
    }
}

/// Keeps the font lists a pool's warm-up wrote, for the next pool.
pub(crate) fn save(cache: Option<&Path>, mpl_config: &Path) {
    if let Some(cache) = cache {
        if std::fs::create_dir_all(cache).is_ok() {
            copy_font_lists(mpl_config, cache);
        }
    }
}

/// Copies every `fontlist-*.json` of `from` that `to` lacks, each by a rename of a
/// temporary copy so that a concurrent reader never sees half a file.
fn copy_font_lists(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if !(text.starts_with("fontlist-") && text.ends_with(".json")) {
            continue;
        }
        let target = to.join(&name);
        if target.exists() {
            continue;
        }
        let partial = to.join(format!(".{text}.{}", std::process::id()));
        if std::fs::copy(entry.path(), &partial).is_ok() {
            let _ = std::fs::rename(&partial, &target);
        }
        let _ = std::fs::remove_file(&partial);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn font_lists_go_both_ways_and_nothing_else_does() {
        let (cache, pool) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(pool.path().join("fontlist-v390.json"), "{}").unwrap();
        std::fs::write(pool.path().join("matplotlibrc"), "lines.linewidth: 9").unwrap();
        save(Some(cache.path()), pool.path());
        let fresh = tempfile::tempdir().unwrap();
        seed(Some(cache.path()), fresh.path());
        let names: Vec<_> = std::fs::read_dir(fresh.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["fontlist-v390.json"]);
    }
}
