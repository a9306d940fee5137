//! The few words and numbers the reports and the front end write into
//! their sentences (recommendations, drift notes) and command lines.

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

/// `s` cut to at most `n` characters after a whole word (`…` marks the
/// cut), never inside one; a first word longer than `n` is the one thing
/// cut ([`clip`]).
pub fn clip_words(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out = String::new();
    for w in s.split_whitespace() {
        let len = out.chars().count() + usize::from(!out.is_empty()) + w.chars().count();
        if len + 2 > n {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        return clip(s, n);
    }
    out.push_str(" …");
    out
}

/// `arg` as a POSIX shell reads it back as one word: as it is when every
/// character is one the shell never interprets (letters, digits and
/// `_ @ % + = : , . / -`), else in single quotes, a quote inside written
/// `'\''`. The empty word is `''`.
pub fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        return arg.to_string();
    }
    format!("'{}'", arg.replace('\'', "'\\''"))
}

/// A command line that pastes back into a POSIX shell as `args`: each
/// word [`shell_quote`]d, joined by spaces.
pub fn shell_join<S: AsRef<str>>(args: &[S]) -> String {
    args.iter().map(|a| shell_quote(a.as_ref())).collect::<Vec<_>>().join(" ")
}

/// `text` folded at spaces into lines of at most `width` characters: the
/// first line starts with `first`, the others with `rest` (a hanging
/// indent). A word longer than a line is cut at the width (a path, a
/// command line), never left to run past it.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    let len = |s: &str| s.chars().count();
    for word in text.split_whitespace() {
        let indent = if lines.is_empty() { len(first) } else { len(rest) };
        if !empty && len(&line) + 1 + len(word) > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        let mut word = word.to_string();
        let indent = if lines.is_empty() { indent } else { len(rest) };
        // A word wider than the whole line: cut it into pieces that fit.
        while empty && indent + len(&word) > width && width > indent + 1 {
            let head: String = word.chars().take(width - indent).collect();
            word = word.chars().skip(width - indent).collect();
            line.push_str(&head);
            lines.push(std::mem::replace(&mut line, rest.to_string()));
        }
        if word.is_empty() {
            continue;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(&word);
        empty = false;
    }
    if !empty || lines.is_empty() {
        lines.push(line);
    }
    lines.iter().map(|l| l.trim_end()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipped_after_a_whole_word() {
        assert_eq!(
            clip_words("2 proximity domains (2 with CPUs, 2 with memory)", 30),
            "2 proximity domains (2 with …"
        );
        assert_eq!(clip_words("short", 30), "short");
        assert_eq!(clip_words("averyveryverylongword and more", 10), "averyvery…");
    }

    #[test]
    fn signed_percentages_and_clipping() {
        assert_eq!(signed_pct(3.44), "+3.4%");
        assert_eq!(signed_pct(-6.0), "-6.0%");
        assert_eq!(signed_pct(0.01), "0.0%");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }

    /// The joined words, given to `sh -c` with a printer in front, come
    /// back as the same words: what is printed pastes back.
    #[test]
    fn shell_words_paste_back_through_sh() {
        assert_eq!(shell_quote("echo"), "echo");
        assert_eq!(shell_quote("echo X: 42"), "'echo X: 42'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        let words = [
            "sh",
            "-c",
            "echo X: 42",
            "",
            "it's",
            "$HOME",
            "a\"b",
            "*",
            "back\\slash",
            "tab\there",
            "new\nline",
            "--metric=v=(\\d+)",
            "é",
            ";",
            "`id`",
        ];
        let line = format!("printf '%s\\0' {}", shell_join(&words));
        let out = std::process::Command::new("sh").arg("-c").arg(&line).output().unwrap();
        assert!(out.status.success(), "{line}");
        let back: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(str::to_string)
            .collect();
        assert_eq!(back, words, "{line}");
    }

    #[test]
    fn wrapping_keeps_every_line_within_the_width() {
        let t = "one two three four five six seven eight nine ten";
        assert_eq!(
            wrap(t, 20, "- ", "  "),
            "- one two three four\n  five six seven\n  eight nine ten"
        );
        for w in [10, 15, 33] {
            let out = wrap(t, w, "1. ", "   ");
            assert!(out.lines().all(|l| l.chars().count() <= w), "{w}: {out}");
            let words: Vec<&str> = out.split_whitespace().filter(|x| *x != "1.").collect();
            assert_eq!(words.join(" "), t, "no word lost or split at {w}");
        }
        // a word wider than the line is cut, never left to overflow
        let long = wrap("x /a/very/long/path/that/goes/on y", 12, "", "  ");
        assert!(long.lines().all(|l| l.chars().count() <= 12), "{long}");
        assert_eq!(long.replace(['\n', ' '], ""), "x/a/very/long/path/that/goes/ony");
        assert_eq!(wrap("", 10, "a: ", ""), "a:");
    }
}
