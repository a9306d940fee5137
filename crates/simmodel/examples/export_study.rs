//! Writes a modelled settings study as a `numaprobe export` document, to
//! import into any numaprobe and compare (docs/testing.md, "The simulated
//! truth"), and prints the model's truth per profile on stderr.
//!
//! ```console
//! $ cargo run -p simmodel --example export_study -- xeon-8380 study.json
//! $ numaprobe import study.json && numaprobe compare label:"SNC off" label:SNC2 label:SNC4
//! ```
//!
//! Studies: `xeon-8380` (STUDIES.md study 1: SNC off, SNC2, SNC4, BIOS NUMA
//! off), `milan-64` (study 3: NPS1, NPS2, NPS4), `two-socket-96` (study 5:
//! NUMA on, on + numa=off, BIOS off, BIOS off + numa=off), `random:SEED`
//! (the proptest's study of that seed). Options: `--runs N` (3), `--seed S`
//! (0), `--quick` (default budget otherwise), `--noise-free`,
//! `--no-scope` (runs as a numaprobe before the package-scope steps stored
//! them).

use simmodel::facts::Setting;
use simmodel::runs::{Budget, Noise, Study};
use simmodel::truth::{truths, Bands};
use simmodel::view::View;

/// The value after flag `f`, parsed.
fn value<T: std::str::FromStr>(args: &[String], f: &str) -> Option<T> {
    args.iter().position(|a| a == f).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let positional: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            let after_value_flag = *i > 0 && ["--runs", "--seed"].contains(&args[i - 1].as_str());
            !a.starts_with("--") && !after_value_flag
        })
        .map(|(_, a)| a)
        .collect();
    let [name, out] = positional.as_slice() else {
        eprintln!("usage: export_study STUDY OUT.json [--runs N] [--seed S] [--quick] [--noise-free] [--no-scope]");
        std::process::exit(2);
    };
    let runs: usize = value(&args, "--runs").unwrap_or(3);
    let seed: u64 = value(&args, "--seed").unwrap_or(0);
    let mut s = match name.as_str() {
        "xeon-8380" => {
            let settings = vec![
                Setting::domains(1),
                Setting::domains(2),
                Setting::domains(4),
                Setting::bios_numa_off(),
            ];
            Study::new(simmodel::studies::xeon_8380(), settings, runs, seed)
        }
        "milan-64" => {
            let settings = vec![Setting::domains(1), Setting::domains(2), Setting::domains(4)];
            Study::new(simmodel::studies::epyc_7763(), settings, runs, seed)
        }
        "two-socket-96" => {
            let (on, off) = (Setting::domains(1), Setting::bios_numa_off());
            let settings = vec![on, on.with_numa_off(), off, off.with_numa_off()];
            Study::new(simmodel::studies::two_socket_96(), settings, runs, seed)
        }
        r => match r.strip_prefix("random:").and_then(|x| x.parse().ok()) {
            Some(seed) => simmodel::random::study(seed),
            None => {
                eprintln!("unknown study {r:?}");
                std::process::exit(2);
            }
        },
    };
    if !name.starts_with("random:") {
        s.budget = if flag("--quick") { Budget::Quick } else { Budget::Default };
    }
    if flag("--noise-free") {
        s.noise = Noise::none();
    }
    s.scope_steps = !flag("--no-scope");
    let doc = simmodel::runs::export(&s.runs());
    if let Err(e) = std::fs::write(out, doc.to_string()) {
        eprintln!("{out}: {e}");
        std::process::exit(1);
    }
    let views: Vec<View> = s.settings.iter().map(|x| View::new(&s.machine, *x)).collect();
    eprintln!(
        "wrote {} runs of {} to {out}; the model's truth (margin 3%, band 3x the noise):",
        s.settings.len() * s.runs_per_setting,
        s.labels.join(", ")
    );
    for t in truths(&views, 0.03, Bands::of(&s.noise, 3.0)) {
        let names: Vec<&str> = t.acceptable.iter().map(|&i| s.labels[i].as_str()).collect();
        eprintln!(
            "  {:<15} {} (by {}; acceptable: {})",
            t.profile,
            t.pick.map_or("no pick", |i| s.labels[i].as_str()),
            t.decided_by.map_or("-", |f| f.metric_id()),
            names.join(", ")
        );
    }
}
