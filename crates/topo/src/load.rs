//! The machine's load as the kernel averages it (`/proc/loadavg`): how
//! many tasks were runnable (or in uninterruptible sleep), on average
//! over the last minute. A plan's time estimate assumes its threads have
//! their CPUs to themselves; this says how far the machine is from that.

use crate::fs::{SysRoot, TopoError};

/// The 1-minute load average from `/proc/loadavg`'s text (`0.52 0.58 0.59
/// 1/467 12345`); `None` when the first field is not a number.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// The 1-minute load average of the machine under `root`; `None` where
/// the file is absent or holds no number.
pub fn load_average(root: &SysRoot) -> Result<Option<f64>, TopoError> {
    Ok(root.read_optional("proc/loadavg")?.as_deref().and_then(parse_loadavg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_field_is_the_one_minute_average() {
        assert_eq!(parse_loadavg("3.10 2.05 1.00 3/467 12345\n"), Some(3.1));
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_loadavg("x 1 2"), None);
        assert_eq!(parse_loadavg("-1 0 0"), None);
    }
}
