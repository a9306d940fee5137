//! `--set KEY=VALUE` and `--set-file FILE` of the measuring commands that
//! save runs (`run`, `exec`, `bw`, `lat`): settings Linux cannot see (BIOS
//! switches), declared by the user and recorded in the run's configuration,
//! where they are part of its fingerprint (`audit::declared`).

use std::path::PathBuf;

use audit::declared::Declared;
use store::NewRun;
use topo::{SysRoot, Topology};

/// The most bytes read from a `--set-file`.
const SET_FILE_CAP: u64 = 1 << 20;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct DeclareArgs {
    /// Declare a setting Linux cannot see (a BIOS switch), recorded with
    /// the saved run and part of its configuration fingerprint, e.g.
    /// bios.numa=on, bios.snc=2, bios.power=determinism (repeatable; names
    /// for the common switches: docs/store.md). Implies saving.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = crate::grammar::assignment)]
    pub set: Vec<(String, String)>,
    /// Declare the settings listed in FILE: one KEY=VALUE per line, blank
    /// lines and lines starting with # ignored (repeatable).
    #[arg(long, value_name = "FILE")]
    pub set_file: Vec<PathBuf>,
}

impl DeclareArgs {
    /// The settings declared by `--set` and `--set-file` together (at most
    /// `audit::declared::MAX_KEYS` and `MAX_BYTES` in all). A file that
    /// cannot be read, a bad line, or a key given twice with different
    /// values is a usage error naming it; an error about a file names its
    /// line but never echoes its content (it may be any file the user can
    /// read, `/etc/shadow` under sudo).
    pub fn resolve(&self) -> anyhow::Result<Declared> {
        let mut d = Declared::default();
        for (k, v) in &self.set {
            if let Err(e) = d.insert(k.clone(), v.clone()) {
                crate::usage!("--set {e}");
            }
        }
        for f in &self.set_file {
            let text = match topo::fs::read_bounded_string(f, SET_FILE_CAP) {
                Ok(t) => t,
                Err(e) => crate::usage!("--set-file {}: cannot read it: {e}", f.display()),
            };
            if let Err((line, e)) = d.add_text(&text) {
                crate::usage!("--set-file {}:{line}: {}", f.display(), e.without_text());
            }
        }
        Ok(d)
    }
}

/// A new run of this machine ([`crate::record::new_run`]) with the
/// declared settings in its configuration.
pub fn new_run(
    root: &SysRoot,
    topo: Option<&Topology>,
    label: Option<String>,
    declared: &Declared,
) -> NewRun {
    let mut new = crate::record::new_run(root, topo, label);
    declared.apply(&mut new.config);
    // Shown even under --quiet: the run is about to be filed under a
    // setting it was not measured with, and every study of it would say so.
    let packages = topo.map(|t| t.packages.len() as u64);
    for c in analysis::declared::contradictions(&new.config, packages) {
        let c = report::study::words::contradiction(&c);
        crate::output::warn(false, &format!("{c}; check the --set values (compare will warn too)"));
    }
    new
}
