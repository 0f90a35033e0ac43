//! Names in the trace and the statistics, as the original converter builds them
//! (`../shared/reference/swimlane-format.md` §6, "Slice names").
//!
//! - A task is shown as `t<local>` on ring 0, else `r<ring>t<local>` ([`TaskLabel`]).
//! - A slice is `<name>(<task>)` with the kernel's name from the name map, `task(<task>)` when
//!   the kernel is unknown (func id < 0), else `func_<id>_<letters>(<task>)`
//!   ([`fallback_name`]); an SPMD task gets `_spmd` before `(`, unless its name already says
//!   "spmd" in any case ([`write_slice_name`]).
//!
//! The kernel map is `--func-names`, else the run's own sibling `name_map*.json` (per its
//! `run.json`), else the newest ([`discover`]): the original's
//! `{"level", "orchestrator_name", "callable_id_to_name"}` or a flat `{"<id>": "<name>"}`.

use std::fmt;

pub use simpler_artifacts::name_map::{discover, resolve, NameMap as Names};

/// The short label of a raw task id: `t<local>` on ring 0, else `r<ring>t<local>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLabel(pub u64);

impl fmt::Display for TaskLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ring = (self.0 >> 32) & 0xFF;
        let local = self.0 & 0xFFFF_FFFF;
        if ring == 0 {
            write!(f, "t{local}")
        } else {
            write!(f, "r{ring}t{local}")
        }
    }
}

/// The original's name of a kernel without a mapped name: `func_<id>_<letters>`, the letters
/// the id in bijective base 26 (0 → `a`, 25 → `z`, 26 → `aa`); `func_-1_` for a negative id.
pub fn fallback_name(func_id: i32) -> String {
    let mut name = String::new();
    push_fallback_name(&mut name, func_id);
    name
}

/// Appends [`fallback_name`] of `func_id` to `out`.
pub fn push_fallback_name(out: &mut String, func_id: i32) {
    out.push_str("func_");
    out.push_str(itoa::Buffer::new().format(func_id));
    out.push('_');
    let mut letters = [0u8; 8];
    let mut len = 0;
    if func_id >= 0 {
        let mut n = i64::from(func_id) + 1;
        while n > 0 {
            n -= 1;
            letters[len] = b'a' + (n % 26) as u8;
            len += 1;
            n /= 26;
        }
    }
    for &l in letters[..len].iter().rev() {
        out.push(char::from(l));
    }
}

/// Appends [`TaskLabel`] of `task` to `out`.
pub fn push_label(out: &mut String, task: u64) {
    let ring = (task >> 32) & 0xFF;
    let local = task & 0xFFFF_FFFF;
    if ring != 0 {
        out.push('r');
        out.push_str(itoa::Buffer::new().format(ring));
    }
    out.push('t');
    out.push_str(itoa::Buffer::new().format(local));
}

/// The kernel's name in the statistics: the mapped name, else [`fallback_name`].
pub fn kernel_name(names: &Names, func_id: i32) -> String {
    names
        .get(func_id)
        .map_or_else(|| fallback_name(func_id), str::to_string)
}

/// Writes the slice name of a row of `task` running kernel `func_id` into `out`.
pub fn write_slice_name(out: &mut String, names: &Names, func_id: i32, task: u64, spmd: bool) {
    out.clear();
    if func_id < 0 {
        out.push_str("task");
    } else if let Some(name) = names.get(func_id) {
        out.push_str(name);
    } else {
        push_fallback_name(out, func_id);
    }
    let says_spmd = || out.as_bytes().windows(4).any(|w| w.eq_ignore_ascii_case(b"spmd"));
    if spmd && !says_spmd() {
        out.push_str("_spmd");
    }
    out.push('(');
    push_label(out, task);
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_labels_show_ring_only_when_nonzero() {
        assert_eq!(TaskLabel(3).to_string(), "t3");
        assert_eq!(TaskLabel(4_294_967_298).to_string(), "r1t2");
    }

    #[test]
    fn fallback_names_are_bijective_base_26() {
        assert_eq!(fallback_name(0), "func_0_a");
        assert_eq!(fallback_name(25), "func_25_z");
        assert_eq!(fallback_name(26), "func_26_aa");
        assert_eq!(fallback_name(27), "func_27_ab");
        assert_eq!(fallback_name(701), "func_701_zz");
        assert_eq!(fallback_name(702), "func_702_aaa");
        assert_eq!(fallback_name(-1), "func_-1_");
    }

    #[test]
    fn slice_names_follow_the_original() {
        let names = Names::from_pairs([(0, "kernel_add".to_string()), (2, "fa_SPMD_tile".to_string())]);
        let mut s = String::new();
        write_slice_name(&mut s, &names, 0, 0, false);
        assert_eq!(s, "kernel_add(t0)");
        write_slice_name(&mut s, &names, 0, (2 << 32) | 18, true);
        assert_eq!(s, "kernel_add_spmd(r2t18)");
        write_slice_name(&mut s, &names, 2, 5, true);
        assert_eq!(s, "fa_SPMD_tile(t5)");
        write_slice_name(&mut s, &names, 1, 5, false);
        assert_eq!(s, "func_1_b(t5)");
        write_slice_name(&mut s, &names, -1, 5, true);
        assert_eq!(s, "task_spmd(t5)");
    }
}
