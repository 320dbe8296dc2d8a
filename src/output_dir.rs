//! Host writes of job-derived names. An artifact's name was chosen by the job's code
//! (or by whatever reached the worker's descriptors), so the host treats it like a
//! file name from the internet: [`check_file_name`] accepts one plain file name and
//! nothing else, and every write goes through a directory handle that cannot be left.

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
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_pass() {
        for ok in ["figure.png", "a b.csv", "..png", ".hidden", "图.png", "x..y"] {
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
