//! Element types of device tensors.

use std::fmt;

/// Element type of a tensor. The names are the ones written to artifacts (`"FLOAT32"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DType {
    /// IEEE-754 binary32.
    #[default]
    Float32,
    /// IEEE-754 binary16.
    Float16,
    /// bfloat16 (the top half of a binary32).
    BFloat16,
    /// Signed 8-bit integer.
    Int8,
    /// Signed 16-bit integer.
    Int16,
    /// Signed 32-bit integer.
    Int32,
    /// Signed 64-bit integer.
    Int64,
    /// Unsigned 8-bit integer.
    UInt8,
    /// Unsigned 16-bit integer.
    UInt16,
    /// Unsigned 32-bit integer.
    UInt32,
    /// Unsigned 64-bit integer.
    UInt64,
    /// One byte, 0 or 1.
    Bool,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 12] = [
        DType::Float32,
        DType::Float16,
        DType::BFloat16,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::Bool,
    ];

    /// Size of one element in bytes.
    pub const fn size(self) -> u64 {
        match self {
            DType::Int8 | DType::UInt8 | DType::Bool => 1,
            DType::Float16 | DType::BFloat16 | DType::Int16 | DType::UInt16 => 2,
            DType::Float32 | DType::Int32 | DType::UInt32 => 4,
            DType::Int64 | DType::UInt64 => 8,
        }
    }

    /// The artifact name, e.g. `"FLOAT32"`.
    pub const fn name(self) -> &'static str {
        match self {
            DType::Float32 => "FLOAT32",
            DType::Float16 => "FLOAT16",
            DType::BFloat16 => "BFLOAT16",
            DType::Int8 => "INT8",
            DType::Int16 => "INT16",
            DType::Int32 => "INT32",
            DType::Int64 => "INT64",
            DType::UInt8 => "UINT8",
            DType::UInt16 => "UINT16",
            DType::UInt32 => "UINT32",
            DType::UInt64 => "UINT64",
            DType::Bool => "BOOL",
        }
    }

    /// Parses an artifact name (case-insensitive); `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }

    /// True for the floating-point types.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::Float32 | DType::Float16 | DType::BFloat16)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sizes() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
        assert_eq!(DType::from_name("float32"), Some(DType::Float32));
        assert_eq!(DType::from_name("FLOAT8"), None);
        assert_eq!(DType::Float32.size(), 4);
        assert_eq!(DType::BFloat16.size(), 2);
        assert_eq!(DType::Bool.size(), 1);
        assert_eq!(DType::UInt64.size(), 8);
    }
}
