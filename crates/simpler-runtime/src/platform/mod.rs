//! The simulated platform: clusters of 1 AIC + 2 AIV virtual cores, task shapes, and the
//! kernels they run (see [`kernel`]).
//!
//! Virtual cores are multiplexed onto the scheduler threads: each scheduler thread owns a
//! round-robin share of the clusters and runs the kernels of its cores itself. A virtual core
//! is busy while its thread runs a kernel on it.

pub mod kernel;

use std::fmt;

/// The two kinds of compute cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoreType {
    /// Cube core (matrix work).
    Aic,
    /// Vector core.
    Aiv,
}

impl CoreType {
    /// `"aic"` or `"aiv"`.
    pub const fn name(self) -> &'static str {
        match self {
            CoreType::Aic => "aic",
            CoreType::Aiv => "aiv",
        }
    }
}

/// A virtual core: AIC cores are numbered `0..clusters`, AIV cores `clusters..3·clusters`
/// (cluster `c` owns AIC `c` and AIV `clusters + 2c`, `clusters + 2c + 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoreId {
    /// Global core index.
    pub index: u32,
    /// Its type.
    pub core_type: CoreType,
}

impl fmt::Display for CoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.core_type {
            CoreType::Aic => write!(f, "AIC_{}", self.index),
            CoreType::Aiv => write!(f, "AIV_{}", self.index),
        }
    }
}

/// Core geometry of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// Number of clusters.
    pub clusters: u32,
}

impl Platform {
    /// The AIC core of cluster `c`.
    pub fn aic(&self, c: u32) -> CoreId {
        CoreId {
            index: c,
            core_type: CoreType::Aic,
        }
    }
    /// AIV core `k` (0 or 1) of cluster `c`.
    pub fn aiv(&self, c: u32, k: u32) -> CoreId {
        CoreId {
            index: self.clusters + 2 * c + k,
            core_type: CoreType::Aiv,
        }
    }
    /// Total AIV cores.
    pub fn aiv_count(&self) -> u32 {
        2 * self.clusters
    }
}

/// No kernel in a subslot.
pub const NO_KERNEL: i32 = -1;

/// Kernel ids per subslot of a cluster: `[aic, aiv0, aiv1]`, `-1` when inactive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MixedKernels {
    /// Kernel on the AIC, or -1.
    pub aic: i32,
    /// Kernel on the first AIV, or -1.
    pub aiv0: i32,
    /// Kernel on the second AIV, or -1.
    pub aiv1: i32,
}

impl MixedKernels {
    /// No kernel at all (a dummy task).
    pub const NONE: MixedKernels = MixedKernels {
        aic: NO_KERNEL,
        aiv0: NO_KERNEL,
        aiv1: NO_KERNEL,
    };

    /// One AIC kernel.
    pub const fn aic(id: i32) -> Self {
        MixedKernels {
            aic: id,
            ..Self::NONE
        }
    }
    /// One AIV kernel.
    pub const fn aiv(id: i32) -> Self {
        MixedKernels {
            aiv0: id,
            ..Self::NONE
        }
    }
    /// As an array `[aic, aiv0, aiv1]`.
    pub const fn as_array(self) -> [i32; 3] {
        [self.aic, self.aiv0, self.aiv1]
    }
    /// Moves a lone `aiv1` kernel to `aiv0` (as the original does).
    pub fn normalized(self) -> Self {
        if self.aic < 0 && self.aiv0 < 0 && self.aiv1 >= 0 {
            MixedKernels {
                aiv0: self.aiv1,
                aiv1: NO_KERNEL,
                ..self
            }
        } else {
            self
        }
    }
    /// Number of active subslots.
    pub fn active_count(self) -> u32 {
        self.as_array().iter().filter(|&&k| k >= 0).count() as u32
    }
    /// The dispatch shape.
    pub fn shape(self) -> TaskShape {
        match (self.active_count(), self.aic >= 0) {
            (0, _) => TaskShape::Dummy,
            (1, true) => TaskShape::Aic,
            (1, false) => TaskShape::Aiv,
            _ => TaskShape::Mix,
        }
    }
}

/// Where a ready task is dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskShape {
    /// One AIC.
    Aic = 0,
    /// One AIV.
    Aiv = 1,
    /// A whole cluster (two or three subslots).
    Mix = 2,
    /// No core: completed inline by a scheduler thread.
    Dummy = 3,
}

impl TaskShape {
    /// All shapes, in queue order.
    pub const ALL: [TaskShape; 4] = [TaskShape::Aic, TaskShape::Aiv, TaskShape::Mix, TaskShape::Dummy];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(MixedKernels::NONE.shape(), TaskShape::Dummy);
        assert_eq!(MixedKernels::aic(3).shape(), TaskShape::Aic);
        assert_eq!(MixedKernels::aiv(3).shape(), TaskShape::Aiv);
        let lone = MixedKernels {
            aiv1: 4,
            ..MixedKernels::NONE
        };
        assert_eq!(lone.normalized(), MixedKernels::aiv(4));
        let mix = MixedKernels {
            aic: 1,
            aiv0: 2,
            aiv1: 3,
        };
        assert_eq!((mix.shape(), mix.active_count()), (TaskShape::Mix, 3));
        let p = Platform { clusters: 8 };
        assert_eq!(
            (p.aic(2).to_string(), p.aiv(2, 1).to_string()),
            ("AIC_2".into(), "AIV_13".into())
        );
    }
}
