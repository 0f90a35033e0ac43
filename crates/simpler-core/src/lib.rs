//! Core types.
