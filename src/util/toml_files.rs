//! The `*.toml` files of an operator's directory (rule files, alert format files), read in name order.
//!
//! Uses nothing of the crate.

use std::path::{Path, PathBuf};

/// Every `*.toml` file of `dir`, in name order: its path and text; the first failure as `path: error`.
pub fn read(dir: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let entries = std::fs::read_dir(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))?;
            Ok((path, text))
        })
        .collect()
}
