//! Turning command-line paths into named manifest text. Everything that can go wrong here
//! is an input error (exit 2) naming the path, and the line and column when there is one.

use std::io::Read;
use std::path::{Path, PathBuf};

use gangwarden_manifests::{InputError, SourceFile, read_documents};
use serde_json::Value;

/// The name stdin goes by in messages and reports.
pub const STDIN: &str = "<stdin>";

fn error(path: &str, line: usize, column: usize, message: String) -> InputError {
    InputError { file: path.to_string(), line, column, message }
}

fn is_manifest(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
}

/// Every manifest file under `dir`, sorted so reports are stable.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, errors: &mut Vec<InputError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return errors.push(error(&dir.display().to_string(), 0, 0, format!("cannot read directory: {e}"))),
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            walk(&path, out, errors);
        } else if is_manifest(&path) {
            out.push(path);
        }
    }
}

/// Text from bytes, or an error at the first byte that is not UTF-8.
fn utf8(name: &str, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let text = String::from_utf8_lossy(valid);
        let line = text.matches('\n').count() + 1;
        let column = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        error(name, line, column, "not UTF-8 text".into())
    })
}

/// Reads one file (`-`: stdin).
pub fn read_file(path: &Path, errors: &mut Vec<InputError>) -> Option<SourceFile> {
    let (name, bytes) = if path == Path::new("-") {
        let mut bytes = Vec::new();
        (STDIN.to_string(), std::io::stdin().read_to_end(&mut bytes).map(|_| bytes))
    } else {
        (path.display().to_string(), std::fs::read(path))
    };
    match bytes {
        Err(e) => {
            errors.push(error(&name, 0, 0, format!("cannot read: {e}")));
            None
        }
        Ok(bytes) => match utf8(&name, bytes) {
            Ok(text) => Some(SourceFile { name, text }),
            Err(e) => {
                errors.push(e);
                None
            }
        },
    }
}

/// Reads files, directories (recursively) and `-`, in the order given.
pub fn read_paths(paths: &[PathBuf], errors: &mut Vec<InputError>) -> Vec<SourceFile> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found, errors);
            files.extend(found.iter().filter_map(|p| read_file(p, errors)));
        } else {
            files.extend(read_file(path, errors));
        }
    }
    files
}

/// The single object a file holds (for `policy-request`).
pub fn read_one_object(path: &Path, errors: &mut Vec<InputError>) -> Option<Value> {
    let file = read_file(path, errors)?;
    let documents = match read_documents(&file) {
        Ok(d) => d,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    match documents.as_slice() {
        [one] if one.value.is_object() => Some(one.value.clone()),
        [] => {
            errors.push(error(&file.name, 0, 0, "holds no document".into()));
            None
        }
        [one] => {
            let at = one.position();
            errors.push(error(&file.name, at.line, at.column, "is not a Kubernetes object (a mapping)".into()));
            None
        }
        [_, second, ..] => {
            let at = second.position();
            errors.push(error(&file.name, at.line, at.column, "holds more than one object; give one".into()));
            None
        }
    }
}
