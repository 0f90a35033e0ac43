//! Facts about the host that writers and tools size themselves by.

/// This machine's physical memory (`MemTotal` of `/proc/meminfo`), when it can be read.
pub fn mem_total_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}
