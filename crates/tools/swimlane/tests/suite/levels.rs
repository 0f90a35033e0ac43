//! Per-level behaviour on the interop cases and the original's statistics UT.
