//! Per-worker fixed directories, staging of a job's inputs into them, and cleanup.
//!
//! Landlock rules can only narrow, so a worker is confined once to its own `src/`,
//! `out/` and `tmp/` and keeps them for life; each job's inputs are staged into `src/`
//! (hard link when on the same filesystem, copy otherwise) and all three are emptied
//! after the job.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::job::Source;
use crate::protocol::WorkerDirs;

/// The fixed directories of one pool slot.
#[derive(Debug, Clone)]
pub struct SlotDirs {
    /// Inputs, read-only to the job.
    pub src: PathBuf,
    /// Artifacts.
    pub out: PathBuf,
    /// The job's working directory.
    pub tmp: PathBuf,
    /// The worker's private `HOME`.
    pub home: PathBuf,
    /// Empty; the worker mounts its private scratch tmpfs here first (see
    /// `sandbox::scratch`).
    pub scratch: PathBuf,
}

impl SlotDirs {
    /// Creates the directories of slot `slot` under `root`.
    pub fn create(root: &Path, slot: usize) -> io::Result<SlotDirs> {
        let base = root.join(format!("w{slot}"));
        let dirs = SlotDirs {
            src: base.join("src"),
            out: base.join("out"),
            tmp: base.join("tmp"),
            home: base.join("home"),
            scratch: base.join("scratch"),
        };
        for d in [&dirs.src, &dirs.out, &dirs.tmp, &dirs.home, &dirs.scratch] {
            fs::create_dir_all(d)?;
        }
        Ok(dirs)
    }

    /// The part the worker is told about.
    pub fn for_worker(&self) -> WorkerDirs {
        WorkerDirs {
            src: self.src.to_string_lossy().into_owned(),
            out: self.out.to_string_lossy().into_owned(),
            tmp: self.tmp.to_string_lossy().into_owned(),
            home: self.home.to_string_lossy().into_owned(),
        }
    }

    /// Empties `src/`, `out/` and `tmp/` (the directories themselves stay).
    pub fn clear(&self) -> io::Result<()> {
        for d in [&self.src, &self.out, &self.tmp] {
            clear_dir(d)?;
        }
        Ok(())
    }
}

/// Why a job's inputs could not be staged.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum StageError {
    /// A source directory or file does not exist or cannot be read.
    #[error("input {path:?}: {source}")]
    Unreadable {
        /// The offending path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A symbolic link in the input set points outside its directory.
    #[error("input symlink {0:?} points outside its directory")]
    SymlinkEscape(PathBuf),
    /// An in-memory input's name is not a plain relative path.
    #[error("input name {0:?} is not a plain relative path")]
    BadName(String),
    /// Writing into the worker's `src/` failed.
    #[error("staging into the worker: {0}")]
    Write(#[source] io::Error),
}

/// Stages `sources` into `dest` (an empty directory).
pub fn stage(sources: &[Source], dest: &Path) -> Result<usize, StageError> {
    let mut count = 0;
    for source in sources {
        match source {
            Source::Bytes { name, bytes } => {
                let rel = plain_relative(name).ok_or_else(|| StageError::BadName(name.clone()))?;
                let target = dest.join(rel);
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent).map_err(StageError::Write)?;
                }
                fs::write(&target, bytes).map_err(StageError::Write)?;
                count += 1;
            }
            Source::Dir(dir) => {
                let root = dir
                    .canonicalize()
                    .map_err(|source| StageError::Unreadable {
                        path: dir.clone(),
                        source,
                    })?;
                count += stage_dir(&root, dest)?;
            }
        }
    }
    Ok(count)
}

/// One regular file of an input directory.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// Path relative to the input directory.
    pub rel: PathBuf,
    /// Where its bytes are (the target, for a symlink inside the directory).
    pub real: PathBuf,
}

/// Every regular file below `root` (canonical), sorted by relative path. A symlink is
/// followed only if it stays inside `root`: a caller's input directory must not become
/// a way to stage /etc/shadow into the worker. Symlinked directories are not descended.
pub fn input_files(root: &Path) -> Result<Vec<InputFile>, StageError> {
    let mut files = Vec::new();
    walk(root, root, &mut files)?;
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(files)
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<InputFile>) -> Result<(), StageError> {
    let unreadable = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StageError::Unreadable { path, source }
    };
    for entry in fs::read_dir(dir).map_err(unreadable(dir))? {
        let entry = entry.map_err(unreadable(dir))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(unreadable(&path))?;
        let real = if kind.is_symlink() {
            let real = path.canonicalize().map_err(unreadable(&path))?;
            if !real.starts_with(root) {
                return Err(StageError::SymlinkEscape(path));
            }
            real
        } else {
            path.clone()
        };
        let meta = fs::metadata(&real).map_err(unreadable(&real))?;
        if meta.is_dir() && !kind.is_symlink() {
            walk(root, &real, files)?;
        } else if meta.is_file() {
            let rel = path
                .strip_prefix(root)
                .expect("walk stays under root")
                .to_path_buf();
            files.push(InputFile { rel, real });
        }
    }
    Ok(())
}

fn stage_dir(root: &Path, dest: &Path) -> Result<usize, StageError> {
    let files = input_files(root)?;
    for f in &files {
        let target = dest.join(&f.rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(StageError::Write)?;
        }
        // A hard link costs nothing; it fails across filesystems, then we copy.
        if fs::hard_link(&f.real, &target).is_err() {
            fs::copy(&f.real, &target).map_err(StageError::Write)?;
        }
    }
    Ok(files.len())
}

/// `name` as a relative path of normal components only, written in its one plain form
/// (no `a/`, `a//b` or `a/./b`, which name the same file as another spelling or a
/// directory), or `None`.
pub(crate) fn plain_relative(name: &str) -> Option<&Path> {
    let path = Path::new(name);
    let mut parts = 0;
    let normal = path.components().all(|c| {
        parts += 1;
        matches!(c, Component::Normal(_))
    });
    let ok = !name.is_empty() && !name.contains('\0') && normal && name.split('/').count() == parts;
    ok.then_some(path)
}

/// Removes everything inside `dir`, keeping `dir`.
pub fn clear_dir(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            fs::remove_dir_all(&path)?;
        } else {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_plain_relative_paths() {
        assert!(plain_relative("data.csv").is_some());
        assert!(plain_relative("sub/data.csv").is_some());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a\0b",
            "./x",
            "x/",
            "x/.",
            "a//b",
            "a/./b",
        ] {
            assert!(plain_relative(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn staging_refuses_symlinks_that_leave_the_input_dir() {
        let input = tempfile::tempdir().unwrap();
        let dest = tempfile::tempdir().unwrap();
        fs::write(input.path().join("ok.csv"), "a\n").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", input.path().join("leak")).unwrap();
        let err = stage(&[Source::Dir(input.path().into())], dest.path()).unwrap_err();
        assert!(matches!(err, StageError::SymlinkEscape(_)), "{err}");
    }

    #[test]
    fn staging_copies_nested_files_and_inner_symlinks() {
        let input = tempfile::tempdir().unwrap();
        let dest = tempfile::tempdir().unwrap();
        fs::create_dir(input.path().join("sub")).unwrap();
        fs::write(input.path().join("sub/a.txt"), "A").unwrap();
        std::os::unix::fs::symlink(input.path().join("sub/a.txt"), input.path().join("b.txt"))
            .unwrap();
        let n = stage(
            &[
                Source::Dir(input.path().into()),
                Source::Bytes {
                    name: "c.txt".into(),
                    bytes: b"C".to_vec(),
                },
            ],
            dest.path(),
        )
        .unwrap();
        assert_eq!(n, 3);
        assert_eq!(fs::read_to_string(dest.path().join("b.txt")).unwrap(), "A");
        assert_eq!(
            fs::read_to_string(dest.path().join("sub/a.txt")).unwrap(),
            "A"
        );
        clear_dir(dest.path()).unwrap();
        assert_eq!(fs::read_dir(dest.path()).unwrap().count(), 0);
    }
}
