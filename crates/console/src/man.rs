//! Manual pages: clap_mangen's roff of a command (rendered by numaprobe)
//! given the sections a manual page is expected to have and help text
//! cannot say: EXAMPLES where the help has none, EXIT STATUS, ENVIRONMENT
//! and FILES.

/// The command a page name means below `cmd`: a subcommand (`bw`), or a
/// subcommand's subcommand joined by `-` (`advise-interleave`), as the
/// pages refer to each other (`numaprobe-advise-interleave(1)`).
pub fn find_page<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a clap::Command> {
    cmd.find_subcommand(name).or_else(|| {
        name.match_indices('-')
            .find_map(|(i, _)| find_page(cmd.find_subcommand(&name[..i])?, &name[i + 1..]))
    })
}

/// Examples of the pages whose help has none, by page name (`""`: the
/// top page), as the docs show them.
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "numaprobe topo",
            "numaprobe run --repeat 3 --label SNC2",
            "numaprobe audit",
            "numaprobe compare label:\"SNC off\" label:SNC2",
            "numaprobe report label:\"SNC off\" --compare label:SNC2 --format html -o snc.html",
            "numaprobe exec --policies default --repeat 5 --metric 'rate: ([0-9.]+)' -- ./bench",
        ],
    ),
    ("topo", &["numaprobe topo", "numaprobe topo --json"]),
    ("run", &["numaprobe run --quick", "numaprobe run --repeat 3 --label SNC2"]),
    ("bw", &["numaprobe bw", "numaprobe bw --cpu-node 0 --mem-node 1 --threads 8 --kernel triad"]),
    ("lat", &["numaprobe lat", "numaprobe lat --counters --matrix --json"]),
    ("audit", &["numaprobe audit", "numaprobe audit --profile database --fail-on critical"]),
    ("scan", &["numaprobe scan --mem-node 0 --size all"]),
    ("place", &["numaprobe place --policy interleave --mem-nodes all --size 1G --pages thp"]),
    (
        "compare",
        &[
            "numaprobe compare label:\"SNC off\" label:SNC2",
            "numaprobe compare label:A label:B --verbose",
        ],
    ),
    (
        "report",
        &[
            "numaprobe report latest -o report.html",
            "numaprobe report label:\"SNC off\" --compare label:SNC2 --brief",
        ],
    ),
    ("export", &["numaprobe export latest -o snc2.json"]),
    ("import", &["numaprobe import snc2.json nps4.json"]),
    ("fleet", &["numaprobe fleet", "numaprobe fleet --json"]),
    ("advise", &["numaprobe advise interleave --from-run latest"]),
    ("advise-interleave", &["numaprobe advise interleave --from-run latest"]),
    ("list", &["numaprobe list", "numaprobe list --json"]),
    ("show", &["numaprobe show latest", "numaprobe show label:SNC2"]),
];

/// `text` for roff: hyphens as `\-` (minus), quotes as `\(aq`.
fn roff_text(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-").replace('\'', "\\(aq")
}

/// The page `name` (`""`: the top page) with the sections a manual page
/// is expected to have: the help's examples as EXAMPLES (kept line by
/// line), the rest of the help as NOTES, else the page's [`EXAMPLES`] when
/// it has some; then EXIT STATUS, ENVIRONMENT and FILES, before VERSION.
pub fn with_sections(roff: &str, name: &str) -> String {
    let own = EXAMPLES.iter().find(|(n, _)| *n == name).map(|(_, e)| *e);
    let mut out = String::new();
    let mut in_extra = false;
    let mut in_examples = false;
    let mut examples = false;
    let close = |out: &mut String, in_examples: &mut bool| {
        if *in_examples {
            out.push_str(".fi\n");
            *in_examples = false;
        }
    };
    for line in roff.lines() {
        if line.starts_with(".SH") {
            close(&mut out, &mut in_examples);
            in_extra = line == ".SH EXTRA";
            if line == ".SH VERSION" {
                if let Some(own) = own.filter(|_| !examples) {
                    out.push_str(".SH EXAMPLES\n.nf\n");
                    for e in own {
                        out.push_str(&roff_text(e));
                        out.push('\n');
                    }
                    out.push_str(".fi\n");
                }
                out.push_str(STANDARD_SECTIONS);
            }
            if in_extra {
                out.push_str(".SH NOTES\n");
                continue;
            }
        } else if in_extra && !in_examples && line.starts_with("Example") {
            out.push_str(".SH EXAMPLES\n.nf\n");
            in_examples = true;
            examples = true;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    close(&mut out, &mut in_examples);
    if !roff.contains("\n.SH VERSION") {
        out.push_str(STANDARD_SECTIONS);
    }
    out
}

/// EXIT STATUS, ENVIRONMENT and FILES, the same for every command.
const STANDARD_SECTIONS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success (a measurement that ran and was saved; a report written).
.TP
\fB1\fR
Failure: the command could not do what was asked (a run failed, a file could not be read or written).
.TP
\fB2\fR
Usage error: a bad flag, value or reference; nothing was measured or changed.
.TP
\fB128+N\fR
Stopped by signal N (130 for Ctrl\-C) after saving what was measured.
.SH ENVIRONMENT
.TP
\fBNUMAPROBE_DB\fR
The results database (as \fB\-\-db\fR).
.TP
\fBNUMAPROBE_LOCK\fR
The measurement lock file (as \fB\-\-lock\fR), shared by every measuring command on the machine.
.TP
\fBNUMAPROBE_HOSTNAME\fR, \fBNUMAPROBE_MACHINE_ID\fR
Override the host name and machine id that fingerprint the machine (containers, cloned images).
.TP
\fBCOLUMNS\fR
The width text output is laid out to (\fBcompare\fR); else the terminal's, else 100.
.SH FILES
.TP
\fI$XDG_DATA_HOME/numaprobe/results.db\fR (\fI~/.local/share/numaprobe/results.db\fR)
The results database (SQLite), unless \fB\-\-db\fR or \fBNUMAPROBE_DB\fR names another.
.TP
\fI/run/lock/numaprobe\-measure.lock\fR
The measurement lock (\fI/tmp/numaprobe\-measure.lock\fR where \fI/run/lock\fR is missing).
"#;
