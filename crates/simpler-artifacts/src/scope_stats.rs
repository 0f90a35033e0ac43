//! `scope_stats/scope_stats.jsonl`: metadata line + one line per scope sample (spec/scope-stats.md §3).
