//! TODO
use crate::cli::{Direction, EdgeMode, Engine};
use crate::names::NameMap;
use crate::view::View;
use std::path::Path;
/// o
pub struct HtmlOptions {
    /// e
    pub engine: Engine,
    /// d
    pub direction: Direction,
    /// s
    pub show_tensor_info: bool,
    /// m
    pub edge_mode: EdgeMode,
    /// f
    pub focused: bool,
}
/// s
pub struct HtmlStats {
    /// n
    pub nodes: usize,
    /// e
    pub edges: usize,
}
/// w
pub fn write_html_view(
    _i: &Path,
    _o: &Path,
    _v: &View<'_>,
    _s: &[bool],
    _n: Option<&NameMap>,
    _opt: &HtmlOptions,
) -> anyhow::Result<HtmlStats> {
    anyhow::bail!("todo")
}
