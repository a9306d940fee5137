//! The few words and numbers the analysis writes into its sentences
//! (recommendations, drift notes), shared with the reports that print them.

/// `+3.4%`, `-6.0%`, `0.0%`.
pub fn signed_pct(v: f64) -> String {
    if v.abs() < 0.05 {
        "0.0%".into()
    } else {
        format!("{v:+.1}%")
    }
}

/// `s` cut to `n` characters, an ellipsis marking the cut.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_percentages_and_clipping() {
        assert_eq!(signed_pct(3.44), "+3.4%");
        assert_eq!(signed_pct(-6.0), "-6.0%");
        assert_eq!(signed_pct(0.01), "0.0%");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }
}
