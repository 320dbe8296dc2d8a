//! Host writes of job-derived names. An artifact's name was chosen by the job's code
//! (or by whatever reached the worker's descriptors), so the host treats it like a
//! file name from the internet: [`check_file_name`] accepts one plain file name and
//! nothing else, and every write goes through a directory handle that cannot be left.
//!
//! [`OutputDir`] is that handle. It is opened once from a path the *caller* chose (the
//! one ambient path); after that every name is resolved beneath it by
//! [`cap_std`](https://docs.rs/cap-std) (`openat2(RESOLVE_BENEATH)` where the kernel has
//! it, a checked walk otherwise), so neither `..`, an absolute path nor a symbolic link
//! can reach a file outside, whatever the name checks let through. Names are still
//! checked first, so a refused name is a typed [`OutputError::Name`] saying what was
//! wrong rather than an I/O error, and a symbolic link at the final name is refused,
//! never followed (`O_NOFOLLOW`), even one that points inside. Two checks, each enough
//! on its own: the name rule can be forgotten by a new caller, the handle cannot.
//!
//! ```no_run
//! use pyward::output_dir::OutputDir;
//! # fn demo(outcome: pyward::Outcome) -> Result<(), Box<dyn std::error::Error>> {
//! let out = OutputDir::create("figures")?;
//! if let Ok(artifacts) = &outcome.result {
//!     // Each artifact under its own (job-chosen, checked) name, inside figures/ only.
//!     for path in out.write_artifacts(artifacts)? {
//!         println!("wrote {}", path.display());
//!     }
//! }
//! # Ok(()) }
//! ```

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};

use crate::outcome::Artifact;

/// Longest artifact name, in bytes (Linux's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// Why a job-derived name is not one plain file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    #[error("the name is empty")]
    Empty,
    /// Longer than [`MAX_NAME_BYTES`].
    #[error("the name is longer than {MAX_NAME_BYTES} bytes")]
    TooLong,
    /// `.` or `..`.
    #[error("the name is a directory reference")]
    DotName,
    /// Contains `/` or `\`.
    #[error("the name contains a path separator")]
    Separator,
    /// Contains NUL or another control character.
    #[error("the name contains a control character")]
    Control,
    /// A relative path ([`check_relative_path`]) that starts with `/`.
    #[error("the path is absolute")]
    Absolute,
    /// A relative path with an empty component (`a//b`, `a/`).
    #[error("the path has an empty component")]
    EmptyComponent,
    /// An output name ([`check_out_name`]) without one of [`OUT_SUFFIXES`].
    #[error(
        "the name does not end in .png, .svg, .pdf, .jpg, .jpeg, .webp, .gif, .csv, .tsv, .json, .txt, .md, .log, .html or .xlsx"
    )]
    Suffix,
}

/// The suffixes an output name may end in ([`check_out_name`]): the figure formats and
/// the data formats whose content the output checks verify (case does not matter).
pub const OUT_SUFFIXES: [&str; 16] = [
    "png", "svg", "pdf", "jpg", "jpeg", "webp", "gif", "csv", "tsv", "json", "txt", "md", "log",
    "html", "htm", "xlsx",
];

/// Accepts a name a client gives for a job's output (the HTTP `options.out_name`): one
/// plain file name ([`check_file_name`]) ending in one of [`OUT_SUFFIXES`]. The one
/// test of every output name a request may give, so that a refusal says what was
/// wrong before any worker sees the name.
pub fn check_out_name(name: &str) -> Result<(), NameError> {
    check_file_name(name)?;
    let suffix = name
        .rsplit_once('.')
        .map(|(stem, s)| (stem, s.to_ascii_lowercase()));
    match suffix {
        Some((stem, s)) if !stem.is_empty() && OUT_SUFFIXES.contains(&s.as_str()) => Ok(()),
        _ => Err(NameError::Suffix),
    }
}

/// Longest relative path [`check_relative_path`] accepts, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Accepts one plain file name: not empty, at most [`MAX_NAME_BYTES`] bytes, not `.` or
/// `..`, no `/` or `\`, no NUL or other control character. Checked on the host for
/// every name a worker sends, before anything is done with it.
pub fn check_file_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        Err(NameError::Empty)
    } else if name.len() > MAX_NAME_BYTES {
        Err(NameError::TooLong)
    } else if name == "." || name == ".." {
        Err(NameError::DotName)
    } else if name.contains(['/', '\\']) {
        Err(NameError::Separator)
    } else if name.chars().any(char::is_control) {
        Err(NameError::Control)
    } else {
        Ok(())
    }
}

/// Accepts a relative path of plain components, such as an input staged under a
/// subdirectory (`sub/data.csv`): not empty, at most [`MAX_PATH_BYTES`] bytes, not
/// absolute, and every `/`-separated component one plain file name
/// ([`check_file_name`]: no `.`, `..`, empty component, `\` or control character).
pub fn check_relative_path(path: &str) -> Result<(), NameError> {
    if path.is_empty() {
        return Err(NameError::Empty);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(NameError::TooLong);
    }
    if path.starts_with('/') {
        return Err(NameError::Absolute);
    }
    for part in path.split('/') {
        match check_file_name(part) {
            Err(NameError::Empty) => return Err(NameError::EmptyComponent),
            other => other?,
        }
    }
    Ok(())
}

/// What a write does when a file already has the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Truncate it and write (a symbolic link there is still refused).
    Replace,
    /// Fail (`O_CREAT | O_EXCL`): for directories the host just made, where anything
    /// already there is a surprise.
    Refuse,
}

/// Why a write under an [`OutputDir`] did not happen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The name is not one plain file name (or plain relative path): nothing was
    /// written. `name` is the refused name escaped and cut to a short excerpt.
    #[error("refused name {name}: {why}")]
    Name {
        /// The refused name, escaped (`{:?}`) and at most about 80 characters.
        name: String,
        /// What is wrong with it.
        why: NameError,
    },
    /// A symbolic link sits at the name, or at a directory on the way to it: it is not
    /// followed, wherever it points.
    #[error("{}: a symbolic link is in the way (not followed)", path.display())]
    Symlink {
        /// Where, under the directory's path.
        path: PathBuf,
    },
    /// The filesystem refused (including cap-std refusing a path that would leave the
    /// directory).
    #[error("{}: {source}", path.display())]
    Io {
        /// The directory, or the file under it.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl OutputError {
    fn name(name: &str, why: NameError) -> OutputError {
        const MAX: usize = 80;
        let mut shown = format!("{name:?}");
        if shown.chars().count() > MAX {
            shown = shown.chars().take(MAX - 4).collect::<String>() + "...\"";
        }
        OutputError::Name { name: shown, why }
    }

    fn io(path: PathBuf, source: io::Error) -> OutputError {
        if source.raw_os_error() == Some(libc::ELOOP) {
            OutputError::Symlink { path }
        } else {
            OutputError::Io { path, source }
        }
    }
}

/// For callers that speak `io::Result` (the run recorder): a refused name or a symbolic
/// link is `InvalidInput`; a filesystem error keeps its kind. The message is kept.
impl From<OutputError> for io::Error {
    fn from(e: OutputError) -> io::Error {
        let kind = match &e {
            OutputError::Io { source, .. } => source.kind(),
            OutputError::Name { .. } | OutputError::Symlink { .. } => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, e)
    }
}

/// A directory the host writes job-named files into, which no name can leave.
///
/// Opened from a path the caller chose; every later name is checked
/// ([`check_file_name`], or [`check_relative_path`] for
/// [`write_relative`](OutputDir::write_relative)) and then resolved beneath the open
/// directory by cap-std, with symbolic links at the final name refused. Use it for any
/// file whose name came from a job: artifact names, input names, array names.
#[derive(Debug)]
pub struct OutputDir {
    dir: Dir,
    path: PathBuf,
}

impl OutputDir {
    /// Opens the existing directory `path` (the caller's path: it is trusted, symbolic
    /// links in it are followed like any path the caller names).
    pub fn open(path: impl Into<PathBuf>) -> Result<OutputDir, OutputError> {
        let path = path.into();
        match Dir::open_ambient_dir(&path, cap_std::ambient_authority()) {
            Ok(dir) => Ok(OutputDir { dir, path }),
            Err(e) => Err(OutputError::io(path, e)),
        }
    }

    /// Creates `path` and its parents when missing, then [`open`](OutputDir::open)s it.
    pub fn create(path: impl Into<PathBuf>) -> Result<OutputDir, OutputError> {
        let path = path.into();
        if let Err(e) = std::fs::create_dir_all(&path) {
            return Err(OutputError::io(path, e));
        }
        OutputDir::open(path)
    }

    /// The path it was opened from (for messages: writes never go through it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes` to the file `name` (one plain file name), replacing a file of
    /// that name; returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, OutputError> {
        self.write_with(name, bytes, Existing::Replace)
    }

    /// Writes `bytes` to the file `name`, which must not exist yet; returns its path.
    pub fn write_new(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, OutputError> {
        self.write_with(name, bytes, Existing::Refuse)
    }

    /// Writes `bytes` to the file `name` (one plain file name) as `existing` says;
    /// returns its path.
    pub fn write_with(
        &self,
        name: &str,
        bytes: &[u8],
        existing: Existing,
    ) -> Result<PathBuf, OutputError> {
        let mut file = self.create_file(name, existing)?;
        let path = self.path.join(name);
        match file.write_all(bytes) {
            Ok(()) => Ok(path),
            Err(e) => Err(OutputError::io(path, e)),
        }
    }

    /// Opens the file `name` (one plain file name) for writing, created as `existing`
    /// says: for contents written in parts.
    pub fn create_file(
        &self,
        name: &str,
        existing: Existing,
    ) -> Result<std::fs::File, OutputError> {
        check_file_name(name).map_err(|why| OutputError::name(name, why))?;
        open_file(&self.dir, name, existing).map_err(|e| OutputError::io(self.path.join(name), e))
    }

    /// Writes `bytes` to `path`, a relative path of plain components
    /// ([`check_relative_path`]), creating its directories; returns the file's path.
    /// Each directory on the way is opened without following a symbolic link.
    pub fn write_relative(
        &self,
        path: &str,
        bytes: &[u8],
        existing: Existing,
    ) -> Result<PathBuf, OutputError> {
        check_relative_path(path).map_err(|why| OutputError::name(path, why))?;
        let (parents, file) = path.rsplit_once('/').unwrap_or(("", path));
        let mut here = OutputDir {
            dir: self
                .dir
                .try_clone()
                .map_err(|e| OutputError::io(self.path.clone(), e))?,
            path: self.path.clone(),
        };
        for part in parents.split('/').filter(|p| !p.is_empty()) {
            here = here.subdir(part)?;
        }
        here.write_with(file, bytes, existing)
    }

    /// The subdirectory `name` (one plain file name), created when missing; a symbolic
    /// link there is refused.
    pub fn subdir(&self, name: &str) -> Result<OutputDir, OutputError> {
        check_file_name(name).map_err(|why| OutputError::name(name, why))?;
        let path = self.path.join(name);
        match self.dir.create_dir(name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(OutputError::io(path, e)),
        }
        match self.dir.open_dir_nofollow(name) {
            Ok(dir) => Ok(OutputDir { dir, path }),
            Err(e) => Err(OutputError::io(path, e)),
        }
    }

    /// Writes one artifact under its own name, replacing a file of that name; returns
    /// its path. The name is the job's choice: it is checked like any other.
    pub fn write_artifact(&self, artifact: &Artifact) -> Result<PathBuf, OutputError> {
        self.write(&artifact.name, &artifact.bytes)
    }

    /// Writes every artifact under its own name ([`write_artifact`](Self::write_artifact));
    /// returns their paths, in order. Every name is checked before the first write, so a
    /// refused name leaves nothing half-written.
    pub fn write_artifacts(&self, artifacts: &[Artifact]) -> Result<Vec<PathBuf>, OutputError> {
        for a in artifacts {
            check_file_name(&a.name).map_err(|why| OutputError::name(&a.name, why))?;
        }
        artifacts.iter().map(|a| self.write_artifact(a)).collect()
    }
}

/// `name` under `dir`, for writing, never through a symbolic link at `name`.
fn open_file(dir: &Dir, name: &str, existing: Existing) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.write(true).follow(FollowSymlinks::No);
    match existing {
        Existing::Replace => options.create(true).truncate(true),
        Existing::Refuse => options.create_new(true),
    };
    dir.open_with(name, &options)
        .map(cap_std::fs::File::into_std)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_name_is_one_plain_name_with_a_known_suffix() {
        for ok in [
            "figure.png",
            "a.SVG",
            "x.pdf",
            "t.csv",
            "d.json",
            "r.txt",
            "a.b.png",
            "c.jpg",
            "c.JPEG",
            "w.webp",
        ] {
            assert_eq!(check_out_name(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("../../tmp/x.png", NameError::Separator),
            ("/etc/x.png", NameError::Separator),
            ("sub/x.png", NameError::Separator),
            ("", NameError::Empty),
            (".", NameError::DotName),
            ("x.exe", NameError::Suffix),
            ("x.tiff", NameError::Suffix),
            ("png", NameError::Suffix),
            (".png", NameError::Suffix),
            ("x.png.bak", NameError::Suffix),
        ] {
            assert_eq!(check_out_name(bad), Err(why), "{bad:?}");
        }
        assert_eq!(
            check_out_name(&format!("{}.png", "a".repeat(MAX_NAME_BYTES))),
            Err(NameError::TooLong)
        );
    }

    #[test]
    fn only_plain_names_pass() {
        for ok in [
            "figure.png",
            "a b.csv",
            "..png",
            ".hidden",
            "图.png",
            "x..y",
        ] {
            assert_eq!(check_file_name(ok), Ok(()), "{ok}");
        }
        let long = "a".repeat(MAX_NAME_BYTES + 1);
        for (bad, why) in [
            ("", NameError::Empty),
            (".", NameError::DotName),
            ("..", NameError::DotName),
            ("../x.png", NameError::Separator),
            ("/tmp/marker", NameError::Separator),
            ("a/b.png", NameError::Separator),
            ("a\\b.png", NameError::Separator),
            ("a\0b", NameError::Control),
            ("a\nb", NameError::Control),
            ("a\u{7f}", NameError::Control),
            (long.as_str(), NameError::TooLong),
        ] {
            assert_eq!(check_file_name(bad), Err(why), "{bad:?}");
        }
    }
}

#[cfg(test)]
mod dir_tests {
    use super::*;
    use std::fs;

    /// `root/out` opened as an [`OutputDir`]: every canary lives in `root`, outside
    /// `out` but inside the temporary directory, so a wrong write stays in the sandbox
    /// of the test and is seen.
    fn setup() -> (tempfile::TempDir, OutputDir) {
        let root = tempfile::tempdir().unwrap();
        let out = OutputDir::create(root.path().join("out")).unwrap();
        (root, out)
    }

    /// The names of `dir`'s entries, sorted.
    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn artifact(name: &str, bytes: &[u8]) -> Artifact {
        Artifact::new(name, "image/png", bytes.to_vec())
    }

    #[test]
    fn a_name_that_is_not_plain_is_refused_and_nothing_is_written() {
        let (root, out) = setup();
        let absolute = root.path().join("abs-canary").display().to_string();
        let bad: [(&str, NameError); 8] = [
            ("../canary", NameError::Separator),
            ("../../canary", NameError::Separator),
            (absolute.as_str(), NameError::Separator),
            ("a/b", NameError::Separator),
            ("..", NameError::DotName),
            (".", NameError::DotName),
            ("", NameError::Empty),
            ("canary\0.png", NameError::Control),
        ];
        for (name, why) in bad {
            for result in [
                out.write(name, b"x"),
                out.write_new(name, b"x"),
                out.write_artifact(&artifact(name, b"x")),
            ] {
                match result {
                    Err(OutputError::Name { why: got, .. }) => assert_eq!(got, why, "{name:?}"),
                    other => panic!("{name:?}: {other:?}"),
                }
            }
            assert!(matches!(out.subdir(name), Err(OutputError::Name { .. })));
            assert!(matches!(
                out.create_file(name, Existing::Replace),
                Err(OutputError::Name { .. })
            ));
        }
        assert_eq!(entries(root.path()), ["out"], "nothing beside out/");
        assert!(entries(out.path()).is_empty(), "nothing inside out/");
    }

    #[test]
    fn relative_paths_take_plain_components_only() {
        let (root, out) = setup();
        let absolute = root.path().join("abs-canary").display().to_string();
        for (path, why) in [
            ("../canary", NameError::DotName),
            ("sub/../../canary", NameError::DotName),
            ("./canary", NameError::DotName),
            (absolute.as_str(), NameError::Absolute),
            ("a//b", NameError::EmptyComponent),
            ("a/", NameError::EmptyComponent),
            ("", NameError::Empty),
            ("a\\..\\b", NameError::Separator),
            ("a/b\0c", NameError::Control),
        ] {
            assert_eq!(check_relative_path(path), Err(why.clone()), "{path:?}");
            match out.write_relative(path, b"x", Existing::Replace) {
                Err(OutputError::Name { why: got, .. }) => assert_eq!(got, why, "{path:?}"),
                other => panic!("{path:?}: {other:?}"),
            }
        }
        assert_eq!(
            check_relative_path(&"a/".repeat(MAX_PATH_BYTES / 2 + 1)),
            Err(NameError::TooLong)
        );
        assert_eq!(entries(root.path()), ["out"]);
        assert!(entries(out.path()).is_empty());

        let written = out
            .write_relative("sub/deeper/data.csv", b"a,b\n", Existing::Refuse)
            .unwrap();
        assert_eq!(written, out.path().join("sub/deeper/data.csv"));
        assert_eq!(fs::read(&written).unwrap(), b"a,b\n");
        out.write_relative("top.csv", b"t", Existing::Refuse)
            .unwrap();
        assert_eq!(entries(out.path()), ["sub", "top.csv"]);
    }

    #[test]
    fn a_symlink_planted_inside_is_never_written_through() {
        let (root, out) = setup();
        // A link to a file that does not exist outside (a write would create it), one to
        // a file that does (a write would change it), and one to the directory above.
        let missing = root.path().join("missing-canary.png");
        let existing = root.path().join("existing-canary.png");
        fs::write(&existing, b"keep").unwrap();
        std::os::unix::fs::symlink(&missing, out.path().join("new.png")).unwrap();
        std::os::unix::fs::symlink(&existing, out.path().join("old.png")).unwrap();
        std::os::unix::fs::symlink("../existing-canary.png", out.path().join("rel.png")).unwrap();
        std::os::unix::fs::symlink(root.path(), out.path().join("up")).unwrap();
        // A link that stays inside is refused too: links are not followed at all.
        fs::write(out.path().join("inside.png"), b"inside").unwrap();
        std::os::unix::fs::symlink("inside.png", out.path().join("alias.png")).unwrap();

        for name in ["new.png", "old.png", "rel.png", "alias.png"] {
            for result in [out.write(name, b"pwned"), out.write_new(name, b"pwned")] {
                assert!(result.is_err(), "{name}: {result:?}");
            }
            assert!(
                matches!(out.write(name, b"pwned"), Err(OutputError::Symlink { .. })),
                "{name}"
            );
        }
        for path in [
            "up/missing-canary.png",
            "up/existing-canary.png",
            "up/x/y.png",
        ] {
            let result = out.write_relative(path, b"pwned", Existing::Replace);
            assert!(result.is_err(), "{path}: {result:?}");
        }
        assert!(out.subdir("up").is_err());

        assert!(!missing.exists(), "written through a link");
        assert_eq!(fs::read(&existing).unwrap(), b"keep");
        assert_eq!(fs::read(out.path().join("inside.png")).unwrap(), b"inside");
        assert_eq!(entries(root.path()), ["existing-canary.png", "out"]);
    }

    #[test]
    fn the_handle_alone_holds_when_the_name_check_is_skipped() {
        // The second layer by itself: names that skip `check_file_name` still cannot
        // leave the directory, because cap-std resolves them beneath it.
        let (root, out) = setup();
        fs::create_dir(out.path().join("sub")).unwrap();
        let absolute = root.path().join("abs-canary");
        for name in ["../canary", "sub/../../canary", absolute.to_str().unwrap()] {
            for existing in [Existing::Replace, Existing::Refuse] {
                let result = open_file(&out.dir, name, existing);
                assert!(result.is_err(), "{name:?}: {result:?}");
            }
        }
        assert_eq!(entries(root.path()), ["out"]);
        assert_eq!(entries(out.path()), ["sub"]);
    }

    #[test]
    fn plain_names_are_written_replaced_or_refused_as_asked() {
        let (_root, out) = setup();
        let path = out.write("figure.png", b"one").unwrap();
        assert_eq!(path, out.path().join("figure.png"));
        out.write("figure.png", b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let again = out.write_new("figure.png", b"three").unwrap_err();
        assert!(
            matches!(&again, OutputError::Io { source, .. } if source.kind() == io::ErrorKind::AlreadyExists),
            "{again:?}"
        );
        assert_eq!(fs::read(&path).unwrap(), b"two");

        let mut file = out.create_file("parts.npy", Existing::Refuse).unwrap();
        file.write_all(b"head").unwrap();
        file.write_all(b"body").unwrap();
        drop(file);
        assert_eq!(fs::read(out.path().join("parts.npy")).unwrap(), b"headbody");

        let sub = out.subdir("attempt-1").unwrap();
        assert_eq!(sub.path(), out.path().join("attempt-1"));
        sub.write("图 1.png", b"x").unwrap();
        assert!(
            out.subdir("attempt-1").is_ok(),
            "an existing directory opens"
        );
        assert_eq!(entries(sub.path()), ["图 1.png"]);
    }

    #[test]
    fn artifacts_are_all_checked_before_the_first_is_written() {
        let (root, out) = setup();
        let batch = [artifact("good.png", b"g"), artifact("../canary.png", b"c")];
        let err = out.write_artifacts(&batch).unwrap_err();
        assert!(matches!(err, OutputError::Name { .. }), "{err:?}");
        assert!(entries(out.path()).is_empty(), "the good one waited");
        assert_eq!(entries(root.path()), ["out"]);

        let paths = out
            .write_artifacts(&[artifact("a.png", b"a"), artifact("b.svg", b"b")])
            .unwrap();
        assert_eq!(paths, [out.path().join("a.png"), out.path().join("b.svg")]);
        assert_eq!(entries(out.path()), ["a.png", "b.svg"]);
    }

    #[test]
    fn errors_are_short_and_say_what_was_wrong() {
        let (_root, out) = setup();
        let long = format!("../{}", "x".repeat(10_000));
        let err = out.write(&long, b"x").unwrap_err();
        let text = err.to_string();
        assert!(text.len() < 160, "{text}");
        assert!(text.starts_with("refused name \"../xxx"), "{text}");
        assert!(
            text.ends_with("the name is longer than 255 bytes"),
            "{text}"
        );
        let err = out.write("a\nb", b"x").unwrap_err().to_string();
        assert_eq!(
            err,
            "refused name \"a\\nb\": the name contains a control character"
        );
        let io: io::Error = out.write("../x", b"x").unwrap_err().into();
        assert_eq!(io.kind(), io::ErrorKind::InvalidInput);
        assert!(OutputDir::open(out.path().join("absent")).is_err());
    }
}
