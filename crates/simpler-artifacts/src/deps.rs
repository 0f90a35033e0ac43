//! `deps.json`: the tensor-annotated dependency graph (spec/dep-gen.md §4).
