//! The packages suite (feature `packages-tests`, run by `.ci/run` after
//! `scripts/package-setup.sh` and `scripts/release.sh`): the release archive
//! (contents, owners, times, checksums, reproducibility, the binary static
//! and stripped but still naming its functions), the .deb installed with
//! dpkg on this machine (the binary, `man`, completions, the systemd units
//! checked by `systemd-analyze verify` and their command run, `lintian`,
//! then `dpkg -r` leaving nothing) and the .rpm inspected with Debian's rpm
//! tools (`rpm -qpi`, `-qpl`, `-K`) with its payload run from `rpm2cpio`.
//! Needs root (dpkg); fails, saying why, when anything is missing.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/ansible.rs"]
mod ansible;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn dist() -> PathBuf {
    repo().join("target/dist")
}

/// A file scripts/release.sh wrote into target/dist.
fn artifact(name: &str) -> PathBuf {
    let p = dist().join(name);
    assert!(p.is_file(), "{} is missing: run scripts/release.sh first", p.display());
    p
}

fn archive_name() -> String {
    format!("numaprobe-{VERSION}-x86_64-linux")
}

/// Runs a command, failing the test with its output unless it exits 0;
/// returns its stdout.
fn run_ok(mut c: impl std::borrow::BorrowMut<Command>) -> String {
    let c = c.borrow_mut();
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e} (is it installed?)"));
    assert!(
        out.status.success(),
        "{c:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn cmd(program: &str, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args);
    c
}

fn git(args: &[&str]) -> String {
    run_ok(Command::new("git").arg("-C").arg(repo()).args(args)).trim().to_string()
}

/// The commit's time: every time in the archive and packages.
fn commit_time() -> u64 {
    git(&["show", "-s", "--format=%ct", "HEAD"]).parse().unwrap()
}

/// `numaprobe VERSION (HASH12 DATE)` for HEAD, the date from git itself.
fn expected_version_line() -> String {
    let hash = git(&["rev-parse", "--short=12", "HEAD"]);
    let out = run_ok(
        Command::new("git")
            .arg("-C")
            .arg(repo())
            .args(["show", "-s", "--date=format-local:%Y-%m-%d", "--format=%cd", "HEAD"])
            .env("TZ", "UTC"),
    );
    format!("numaprobe {VERSION} ({hash} {})", out.trim())
}

/// The commands the binary lists in `--help` (without clap's `help`).
fn commands(bin: &Path) -> Vec<String> {
    let help = run_ok(cmd(bin.to_str().unwrap(), &["--help"]));
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Checks a numaprobe binary: its version line, `topo` on this machine,
/// statically linked, no debug sections, and a symbol table that names
/// numaprobe's functions (what a panic's backtrace prints).
fn check_binary(bin: &Path) {
    let b = bin.to_str().unwrap();
    assert_eq!(run_ok(cmd(b, &["--version"])).trim(), expected_version_line());
    let topo: serde_json::Value =
        serde_json::from_str(&run_ok(cmd(b, &["topo", "--json", "--quiet"]))).unwrap();
    assert!(topo["nodes"].as_array().is_some_and(|n| !n.is_empty()), "{topo}");
    let file = run_ok(cmd("file", &["-b", b]));
    assert!(file.contains("statically linked") || file.contains("static-pie linked"), "{file}");
    let sections = run_ok(cmd("readelf", &["-S", "-W", b]));
    assert!(!sections.contains(".debug_"), "debug sections left in {b}:\n{sections}");
    assert!(sections.contains(".symtab"), "no symbol table in {b}");
    // No path of the build machine's (scripts/static-rustflags remaps the
    // registry's; the workspace's own are relative).
    let bytes = std::fs::read(bin).unwrap();
    let home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap()));
    for leak in [home, repo().to_string_lossy().into_owned()] {
        let found = bytes.windows(leak.len()).any(|w| w == leak.as_bytes());
        assert!(!found, "{b} holds the build machine's path {leak}");
    }
    let symbols = run_ok(cmd("nm", &["-C", b]));
    for f in ["numaprobe::main", "numaprobe::cmd::", "topo::"] {
        assert!(symbols.contains(f), "{b}: no symbol naming {f}");
    }
    check_parquet(bin);
}

/// The shipped binary exports Parquet (a default feature): the fixture's
/// runs imported, `export --format parquet --all` writes the three tables
/// of schema version 2, each a Parquet file.
fn check_parquet(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let fixture = repo().join("crates/report/tests/fixtures/synthetic-export.json");
    run_ok(Command::new(bin).arg("--db").arg(&db).args(["--quiet", "import"]).arg(fixture));
    let out = dir.path().join("fleet.parquet");
    let said = run_ok(
        Command::new(bin)
            .arg("--db")
            .arg(&db)
            .args(["--json", "export", "--format", "parquet", "--all", "-o"])
            .arg(&out),
    );
    let said: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(said["parquet_schema_version"], 2, "{said}");
    assert_eq!(said["runs"]["rows"], 3, "{said}");
    for f in ["fleet.parquet", "fleet.runs.parquet", "fleet.settings.parquet"] {
        let bytes = std::fs::read(dir.path().join(f)).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"), "{}: {f}", bin.display());
    }
}

/// Checks the shipped GPU helper: dynamically linked (it opens the driver
/// library with dlopen), its version, and that `numaprobe` (from the same
/// unpacked tree) finds it and measures through it against the driver
/// library's double (crates/cuda-double, built as a dev-dependency).
fn check_gpu_helper(helper: &Path, numaprobe: &Path) {
    let h = helper.to_str().unwrap();
    let file = run_ok(cmd("file", &["-b", h]));
    assert!(file.contains("dynamically linked"), "{file}");
    assert!(
        run_ok(cmd(h, &["--version"])).starts_with(&format!("numaprobe-gpu {VERSION} ")),
        "{h} --version"
    );
    let double = std::env::current_exe().unwrap().parent().unwrap().join("libcuda_double.so");
    assert!(double.is_file(), "{} (the cuda-double dev-dependency) is missing", double.display());
    let tmp = tempfile::tempdir().unwrap();
    let out = run_ok(
        Command::new(numaprobe)
            .args([
                "gpu",
                "--sizes",
                "1M",
                "--reps",
                "1",
                "--directions",
                "h2d",
                "--json",
                "--quiet",
            ])
            .env_remove("NUMAPROBE_GPU_HELPER")
            .env("NUMAPROBE_CUDA_LIBRARY", &double)
            .env("CUDA_DOUBLE", "devices=1;rate=0:0:20")
            .env("NUMAPROBE_LOCK", tmp.path().join("lock")),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let gbs = v["matrix"][0]["median_gbs"].as_f64().unwrap();
    // 1 MiB at 20 GB/s with the double's 5 us per copy.
    let want = 1048576.0 / (5e-6 + 1048576.0 / 20e9) / 1e9;
    assert!((gbs / want - 1.0).abs() < 1e-3, "{gbs} GB/s, want {want}: {v}");
}

/// Every regular file below `dir`, relative, sorted.
fn files_below(dir: &Path) -> BTreeSet<String> {
    let out = run_ok(Command::new("find").arg(dir).args(["-type", "f", "-printf", "%P\n"]));
    out.lines().map(str::to_string).collect()
}

/// The files git tracks below `path`.
fn tracked(path: &str) -> BTreeSet<String> {
    git(&["ls-files", "--", path]).lines().map(str::to_string).collect()
}

fn sha256(path: &Path) -> String {
    let out = run_ok(cmd("sha256sum", &[path.to_str().unwrap()]));
    out.split_whitespace().next().unwrap().to_string()
}

/// The man pages the archive and packages carry: numaprobe.1 and one page
/// per command, plus the pages those refer to (`numaprobe-advise-interleave`).
fn check_man_pages(pages: &BTreeSet<String>, bin: &Path, suffix: &str) {
    assert!(pages.contains(&format!("numaprobe.1{suffix}")), "{pages:?}");
    for c in commands(bin) {
        assert!(pages.contains(&format!("numaprobe-{c}.1{suffix}")), "no page for {c}: {pages:?}");
    }
    assert!(pages.contains(&format!("numaprobe-advise-interleave.1{suffix}")), "{pages:?}");
}

/// The archive: outer checksums, layout, owners, modes, times, the inner
/// SHA256SUMS, and the binary and man pages in it working.
#[test]
fn archive_holds_the_release_with_fixed_metadata_and_valid_checksums() {
    let name = archive_name();
    let tarball = artifact(&format!("{name}.tar.gz"));
    run_ok(Command::new("sha256sum").arg("-c").arg("SHA256SUMS").current_dir(dist()));

    // Entry metadata, read with the tar crate (not with the tar that wrote it).
    let mtime = commit_time();
    let mut names = Vec::new();
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(&tarball).unwrap());
    let mut archive = tar::Archive::new(gz);
    for entry in archive.entries().unwrap() {
        let e = entry.unwrap();
        let h = e.header();
        let path = e.path().unwrap().to_string_lossy().into_owned();
        assert!(path.starts_with(&name), "{path} is outside {name}/");
        assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0), "{path}: owner");
        assert_eq!(h.mtime().unwrap(), mtime, "{path}: time is not the commit's");
        let mode = h.mode().unwrap() & 0o7777;
        assert!(mode == 0o755 || mode == 0o644, "{path}: mode {mode:o}");
        if path.ends_with("/numaprobe") || path.ends_with("/numaprobe-gpu") {
            assert_eq!(mode, 0o755, "{path}");
        }
        names.push(path);
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "entries are not in name order");
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&tarball).unwrap())
        .read_to_end(&mut raw)
        .unwrap();

    let tmp = tempfile::tempdir().unwrap();
    run_ok(Command::new("tar").arg("-xzf").arg(&tarball).arg("-C").arg(tmp.path()));
    let top = tmp.path().join(&name);
    let files = files_below(&top);
    let bin = top.join("numaprobe");
    let mut expected: BTreeSet<String> =
        ["numaprobe", "numaprobe-gpu", "README.md", "LICENSE-MIT", "LICENSE-APACHE", "SHA256SUMS"]
            .into_iter()
            .chain(["completions/numaprobe.bash", "completions/_numaprobe"])
            .chain(["completions/numaprobe.fish"])
            .map(str::to_string)
            .collect();
    expected.extend(tracked("deploy"));
    let pages: BTreeSet<String> =
        files.iter().filter_map(|f| f.strip_prefix("man/")).map(str::to_string).collect();
    check_man_pages(&pages, &bin, "");
    check_gpu_helper(&top.join("numaprobe-gpu"), &bin);
    expected.extend(pages.iter().map(|p| format!("man/{p}")));
    assert_eq!(files, expected);
    for deployed in tracked("deploy") {
        assert_eq!(
            std::fs::read(top.join(&deployed)).unwrap(),
            std::fs::read(repo().join(&deployed)).unwrap(),
            "{deployed}"
        );
    }

    // SHA256SUMS lists every other file and verifies.
    let sums = std::fs::read_to_string(top.join("SHA256SUMS")).unwrap();
    let listed: BTreeSet<String> =
        sums.lines().map(|l| l.split_once("  ").unwrap().1.to_string()).collect();
    let mut others = files.clone();
    others.remove("SHA256SUMS");
    assert_eq!(listed, others);
    run_ok(Command::new("sha256sum").args(["-c", "--strict", "SHA256SUMS"]).current_dir(&top));

    check_binary(&bin);
    // The pages render, and the bash completion loads.
    let page = run_ok(
        Command::new("man").arg("-l").arg(top.join("man/numaprobe-run.1")).env("MANPAGER", "cat"),
    );
    assert!(page.contains("numaprobe-run") && page.contains("--textfile"), "{page}");
    let loaded = run_ok(Command::new("bash").arg("-c").arg(format!(
        "source {} && complete -p numaprobe",
        top.join("completions/numaprobe.bash").display()
    )));
    assert!(loaded.contains("numaprobe"), "{loaded}");
}

/// A second archive of the same commit, written elsewhere under another
/// umask after the sources' times changed, has the same bytes.
#[test]
fn archive_is_reproducible() {
    let first = artifact(&format!("{}.tar.gz", archive_name()));
    let tmp = tempfile::tempdir().unwrap();
    // New times on tracked files (contents unchanged, so the tree is as clean as before).
    run_ok(Command::new("touch").arg(repo().join("README.md")).arg(repo().join("deploy")));
    let out = tmp.path().join("again");
    run_ok(
        Command::new("bash")
            .arg("-c")
            .arg("umask 077 && scripts/release.sh --archive-only --allow-dirty --out \"$1\"")
            .arg("release")
            .arg(&out)
            .current_dir(repo()),
    );
    let second = out.join(first.file_name().unwrap());
    assert_eq!(sha256(&first), sha256(&second), "two archives of one commit differ");
}

/// Removes the package at the end of the test, whatever happened.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["-r", "numaprobe"]).output();
    }
}

/// dpkg's status of the package: `installed`, `not-installed`,
/// `config-files`..., or empty when dpkg does not know it at all.
fn dpkg_status() -> String {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f", "${db:Status-Status}", "numaprobe"])
        .output()
        .expect("dpkg-query");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The paths a .deb holds (`dpkg-deb -c`): files, and folders.
fn deb_contents(deb: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let listing = run_ok(cmd("dpkg-deb", &["-c", deb.to_str().unwrap()]));
    let (mut files, mut dirs) = (BTreeSet::new(), BTreeSet::new());
    for line in listing.lines() {
        let path = line.split_whitespace().nth(5).unwrap().trim_start_matches('.').to_string();
        if line.starts_with('d') {
            dirs.insert(path.trim_end_matches('/').to_string());
        } else {
            files.insert(path);
        }
    }
    dirs.remove("");
    (files, dirs)
}

/// The unit's `ExecStart=` with `${VAR}` replaced from `vars`.
fn exec_start(unit: &str, vars: &[(String, String)]) -> Vec<String> {
    let line = unit.lines().find_map(|l| l.strip_prefix("ExecStart=")).expect("ExecStart=");
    line.split_whitespace()
        .map(|w| {
            let mut w = w.to_string();
            for (k, v) in vars {
                w = w.replace(&format!("${{{k}}}"), v);
            }
            w
        })
        .collect()
}

/// The unit's `Environment=NAME=VALUE` lines.
fn environment(unit: &str) -> Vec<(String, String)> {
    unit.lines()
        .filter_map(|l| l.strip_prefix("Environment="))
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn deb_installs_works_and_removes_everything() {
    let deb = artifact(&format!("numaprobe_{VERSION}-1_amd64.deb"));
    let d = deb.to_str().unwrap();
    assert_can_install();

    // Control: name, version, arch, no dependency, no maintainer scripts
    // (so nothing enables the timer).
    let field = |f: &str| run_ok(cmd("dpkg-deb", &["-f", d, f])).trim().to_string();
    assert_eq!(field("Package"), "numaprobe");
    assert_eq!(field("Version"), format!("{VERSION}-1"));
    assert_eq!(field("Architecture"), "amd64");
    // numaprobe is static; its GPU helper needs glibc (scripts/release.sh
    // checks that no symbol is newer than 2.34).
    assert_eq!(field("Depends"), "libc6 (>= 2.34)");
    let control =
        run_ok(Command::new("sh").arg("-c").arg(format!("dpkg-deb --ctrl-tarfile {d} | tar -t")));
    let control: BTreeSet<&str> = control.lines().filter(|l| !l.ends_with('/')).collect();
    assert!(control.contains("./control"), "{control:?}");
    for script in ["preinst", "postinst", "prerm", "postrm", "config", "triggers"] {
        assert!(!control.contains(format!("./{script}").as_str()), "{script}: {control:?}");
    }

    let (files, _) = deb_contents(&deb);
    let mut expected: BTreeSet<String> = [
        "/usr/bin/numaprobe",
        "/usr/libexec/numaprobe/numaprobe-gpu",
        "/usr/share/bash-completion/completions/numaprobe",
        "/usr/share/zsh/vendor-completions/_numaprobe",
        "/usr/share/fish/vendor_completions.d/numaprobe.fish",
        "/lib/systemd/system/numaprobe.service",
        "/lib/systemd/system/numaprobe.timer",
        "/usr/share/doc/numaprobe/README.md",
        "/usr/share/doc/numaprobe/copyright",
        "/usr/share/doc/numaprobe/changelog.Debian.gz",
        "/usr/share/lintian/overrides/numaprobe",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    let pages: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix("/usr/share/man/man1/"))
        .map(str::to_string)
        .collect();
    expected.extend(pages.iter().map(|p| format!("/usr/share/man/man1/{p}")));
    assert_eq!(files, expected);

    let _installed = Installed;
    run_ok(cmd("dpkg", &["-i", d]));
    assert_eq!(dpkg_status(), "installed");
    let bin = Path::new("/usr/bin/numaprobe");
    check_binary(bin);
    check_gpu_helper(Path::new("/usr/libexec/numaprobe/numaprobe-gpu"), bin);
    check_man_pages(&pages, bin, ".gz");
    assert!(run_ok(cmd("numaprobe", &["topo", "--quiet"])).contains("NUMA"), "topo from PATH");
    for page in ["numaprobe", "numaprobe-run", "numaprobe-advise-interleave"] {
        let text =
            run_ok(Command::new("man").arg(page).env("MANPAGER", "cat").env("MANWIDTH", "80"));
        assert!(text.contains(page), "man {page}:\n{text}");
    }
    let loaded =
        run_ok(Command::new("bash").arg("-c").arg(
            "source /usr/share/bash-completion/completions/numaprobe && complete -p numaprobe",
        ));
    assert!(loaded.contains("numaprobe"), "{loaded}");

    // The units: installed, not enabled, valid for systemd (with the
    // installed binary and man pages they name).
    for wants in
        ["timers.target.wants/numaprobe.timer", "multi-user.target.wants/numaprobe.service"]
    {
        let link = Path::new("/etc/systemd/system").join(wants);
        assert!(!link.exists() && link.symlink_metadata().is_err(), "{} enabled", link.display());
    }
    let units = ["/lib/systemd/system/numaprobe.service", "/lib/systemd/system/numaprobe.timer"];
    let out = Command::new("systemd-analyze").arg("verify").args(units).output().unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "systemd-analyze verify: {said}");
    assert!(!said.contains("numaprobe"), "systemd-analyze verify has remarks: {said}");

    // The service's own command, with its variables, for real: a short run
    // (`--quick --only lat-matrix` added) writes the textfile. The folder,
    // database and lock are this test's, as `systemctl edit` would set them.
    let unit = std::fs::read_to_string(units[0]).unwrap();
    assert!(!unit.contains("--lock") && !unit.contains("NUMAPROBE_LOCK"), "the machine lock");
    let tmp = tempfile::tempdir().unwrap();
    let textfile = tmp.path().join("textfile");
    std::fs::create_dir(&textfile).unwrap();
    let mut vars = environment(&unit);
    assert!(vars.iter().any(|(k, _)| k == "NUMAPROBE_TEXTFILE_DIR"), "{unit}");
    for (k, v) in &mut vars {
        match k.as_str() {
            "NUMAPROBE_TEXTFILE_DIR" => *v = textfile.to_string_lossy().into_owned(),
            "NUMAPROBE_DB" => *v = tmp.path().join("results.db").to_string_lossy().into_owned(),
            _ => {}
        }
    }
    let argv = exec_start(&unit, &vars);
    assert_eq!(argv[0], "/usr/bin/numaprobe");
    run_ok(Command::new(&argv[0]).args(&argv[1..]).arg("--dry-run").envs(vars.clone()));
    run_ok(
        Command::new(&argv[0])
            .args(&argv[1..])
            .args(["--quick", "--only", "lat-matrix"])
            .envs(vars.clone())
            .env("NUMAPROBE_LOCK", tmp.path().join("lock")),
    );
    let prom = std::fs::read_to_string(textfile.join("numaprobe.prom")).unwrap();
    assert!(prom.contains("numaprobe_run_info{") && prom.contains("label=\"periodic\""), "{prom}");
    assert!(prom.contains("numaprobe_latency_seconds"), "{prom}");

    remove_and_check_nothing_left(&deb);
}

/// Fails unless this test can install the package: root, and numaprobe not
/// installed (by dpkg or otherwise).
fn assert_can_install() {
    assert_eq!(run_ok(cmd("id", &["-u"])).trim(), "0", "dpkg -i needs root");
    assert!(
        !matches!(dpkg_status().as_str(), "installed" | "config-files" | "half-installed"),
        "numaprobe is already installed here: dpkg -r numaprobe first"
    );
    assert!(!Path::new("/usr/bin/numaprobe").exists(), "/usr/bin/numaprobe exists already");
}

/// `dpkg -r numaprobe`, then none of the .deb's files is left, nor its own
/// folders, and dpkg no longer counts it installed.
fn remove_and_check_nothing_left(deb: &Path) {
    let (files, dirs) = deb_contents(deb);
    run_ok(cmd("dpkg", &["-r", "numaprobe"]));
    // Forgotten entirely (no conffiles to keep), or known as not installed.
    assert!(matches!(dpkg_status().as_str(), "" | "not-installed"), "{}", dpkg_status());
    for f in &files {
        assert!(Path::new(f).symlink_metadata().is_err(), "{f} left after dpkg -r");
    }
    for dir in dirs.iter().filter(|d| d.contains("numaprobe")) {
        assert!(!Path::new(dir).exists(), "{dir} left after dpkg -r");
    }
}

/// lintian finds nothing (the tags overridden in
/// packaging/deb/lintian-overrides say why each is accepted).
#[test]
fn deb_is_lintian_clean() {
    assert_lintian_clean(&artifact(&format!("numaprobe_{VERSION}-1_amd64.deb")));
}

/// lintian, pedantic, finds nothing in `deb`.
fn assert_lintian_clean(deb: &Path) {
    let out = Command::new("lintian")
        .args(["--fail-on", "error,warning,info,pedantic", "--display-info", "--pedantic"])
        .arg(deb)
        .output()
        .expect("lintian (scripts/package-setup.sh installs it)");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.trim().is_empty(),
        "lintian:\n{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rpm_has_the_layout_and_metadata_and_its_payload_runs() {
    let rpm = artifact(&format!("numaprobe-{VERSION}-1.x86_64.rpm"));
    let r = rpm.to_str().unwrap();
    let info = run_ok(cmd("rpm", &["-qpi", r]));
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.trim_start().strip_prefix(':'))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {name} in rpm -qpi:\n{info}"))
    };
    assert_eq!(field("Name"), "numaprobe");
    assert_eq!(field("Version"), VERSION);
    assert_eq!(field("Release"), "1");
    assert_eq!(field("Architecture"), "x86_64");
    assert_eq!(field("License"), "MIT OR Apache-2.0");
    // Its digests verify.
    let k = run_ok(cmd("rpm", &["-K", "--nosignature", r]));
    assert!(k.trim_end().ends_with("digests OK"), "{k}");
    // No dependency but rpm's own features (a static binary that installs
    // on EL8 too; the GPU helper's glibc 2.34 is not required: docs/gpu.md).
    let requires = run_ok(cmd("rpm", &["-qpR", r]));
    assert!(requires.lines().all(|l| l.starts_with("rpmlib(")), "requires:\n{requires}");
    assert!(run_ok(cmd("rpm", &["-qp", "--scripts", r])).trim().is_empty());
    // xz, which EL8's rpm reads as well as EL9's.
    assert_eq!(run_ok(cmd("rpm", &["-qp", "--qf", "%{PAYLOADCOMPRESSOR}", r])), "xz");
    // The licences are %license (installed even with --nodocs).
    let licences = run_ok(cmd("rpm", &["-qpL", r]));
    assert_eq!(
        licences.lines().collect::<BTreeSet<_>>(),
        BTreeSet::from([
            "/usr/share/licenses/numaprobe/LICENSE-APACHE",
            "/usr/share/licenses/numaprobe/LICENSE-MIT"
        ])
    );

    let files: BTreeSet<String> =
        run_ok(cmd("rpm", &["-qpl", r])).lines().map(str::to_string).collect();
    let pages: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix("/usr/share/man/man1/"))
        .map(str::to_string)
        .collect();
    let mut expected: BTreeSet<String> = [
        "/usr/bin/numaprobe",
        "/usr/libexec/numaprobe/numaprobe-gpu",
        "/usr/share/bash-completion/completions/numaprobe",
        "/usr/share/zsh/site-functions/_numaprobe",
        "/usr/share/fish/vendor_completions.d/numaprobe.fish",
        "/usr/lib/systemd/system/numaprobe.service",
        "/usr/lib/systemd/system/numaprobe.timer",
        "/usr/share/doc/numaprobe/README.md",
        "/usr/share/licenses/numaprobe/LICENSE-MIT",
        "/usr/share/licenses/numaprobe/LICENSE-APACHE",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    expected.extend(pages.iter().map(|p| format!("/usr/share/man/man1/{p}")));
    assert_eq!(files, expected);
    let modes = run_ok(cmd(
        "rpm",
        &["-qp", "--qf", "[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]", r],
    ));
    for line in modes.lines() {
        let exe = line.ends_with("/usr/bin/numaprobe") || line.ends_with("/numaprobe-gpu");
        let want = if exe { "-rwxr-xr-x" } else { "-rw-r--r--" };
        assert!(line.starts_with(&format!("{want} root:root ")), "{line}");
    }

    // The payload, unpacked without rpm, runs.
    let tmp = tempfile::tempdir().unwrap();
    run_ok(
        Command::new("sh")
            .arg("-c")
            .arg(format!("rpm2cpio '{r}' | cpio -idm --quiet"))
            .current_dir(tmp.path()),
    );
    let bin = tmp.path().join("usr/bin/numaprobe");
    check_binary(&bin);
    check_gpu_helper(&tmp.path().join("usr/libexec/numaprobe/numaprobe-gpu"), &bin);
    check_man_pages(&pages, &bin, ".gz");
    assert_eq!(
        std::fs::read(tmp.path().join("usr/lib/systemd/system/numaprobe.timer")).unwrap(),
        std::fs::read(repo().join("deploy/systemd/numaprobe.timer")).unwrap()
    );
}

/// The Ansible role's package mode (docs/fleet.md, "Ansible"): the real
/// ansible-playbook (scripts/fleet-setup.sh installs it) runs
/// deploy/ansible/numaprobe.yml on this machine as one host (connection
/// local) with `numaprobe_install=package` and the release's .deb, the
/// binary variable pointing at nothing (so only the package can be what
/// runs). The .deb is copied to the host and installed at its version
/// (`dpkg -V` clean), `/usr/bin/numaprobe` is the package's binary, the
/// round ends as in binary mode (the run fetched, imported, the fleet
/// report of one healthy host written), a second round installs nothing
/// and copies nothing (both tasks `ok`, not `changed`) but measures again,
/// and `dpkg -r` leaves nothing.
#[test]
fn deb_via_the_ansible_role_installs_once_and_measures() {
    let deb = artifact(&format!("numaprobe_{VERSION}-1_amd64.deb"));
    let have = Command::new("ansible-playbook").arg("--version").output();
    assert!(
        have.as_ref().is_ok_and(|o| o.status.success()),
        "ansible-playbook is missing or broken ({:?}): scripts/fleet-setup.sh installs \
         ansible-core (.ci/run runs it before this suite)",
        have.map(|o| o.status)
    );
    assert_can_install();
    let _installed = Installed;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut inv = String::from("[fleet]\n");
    inv.push_str(&ansible::host_line(d, "np-pkg", ""));
    inv.push_str(ansible::INVENTORY_VARS);
    inv.push_str(&format!("numaprobe_lock={}\n", d.join("measure.lock").display()));
    let args = [
        "numaprobe_install=package".to_string(),
        format!("numaprobe_package={}", deb.display()),
        format!("numaprobe_binary={}", d.join("no-binary-here").display()),
        // The controller is this machine: it runs the package's binary too.
        "numaprobe_controller_binary=/usr/bin/numaprobe".to_string(),
    ]
    .into_iter()
    .flat_map(|a| ["-e".to_string(), a])
    .collect::<Vec<_>>();
    let round = || {
        let (code, text) = ansible::playbook(&repo(), d, &inv, &args);
        assert_eq!(code, Some(0), "{text}");
        assert!(text.contains("Validating arguments against arg spec 'main'"), "{text}");
        let recap = ansible::recap(&text, "np-pkg");
        assert!(recap.contains("failed=0") && recap.contains("unreachable=0"), "{recap}");
        text
    };
    let result = |text: &str, task: &str| {
        let r = ansible::task_results(text, task, "np-pkg");
        assert_eq!(r.len(), 1, "{task}: {r:?}");
        r[0].clone()
    };
    let (copy, install) =
        ("Copy the numaprobe package", "Install numaprobe from the package (.deb, apt)");

    let first = round();
    assert!(first.contains(&format!("installing the package {}", deb.display())), "{first}");
    assert_eq!(result(&first, copy), "changed");
    assert_eq!(result(&first, install), "changed");
    assert_eq!(result(&first, "Copy the numaprobe binary"), "skipping");
    assert_eq!(result(&first, "Install numaprobe from the package (.rpm, dnf)"), "skipping");

    // Installed at the package's version, its files as packaged.
    let deb_version = run_ok(cmd("dpkg-deb", &["-f", deb.to_str().unwrap(), "Version"]));
    assert_eq!(dpkg_status(), "installed");
    let installed = run_ok(cmd("dpkg-query", &["-W", "-f", "${Version}", "numaprobe"]));
    assert_eq!(installed.trim(), deb_version.trim());
    assert_eq!(
        run_ok(cmd("dpkg", &["-V", "numaprobe"])),
        "",
        "installed files differ from the .deb"
    );
    // /usr/bin/numaprobe says what the .deb's own binary says.
    let unpacked = d.join("unpacked");
    run_ok(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&unpacked));
    let packaged = run_ok(Command::new(unpacked.join("usr/bin/numaprobe")).arg("--version"));
    assert!(packaged.starts_with(&format!("numaprobe {VERSION} (")), "{packaged}");
    assert_eq!(run_ok(cmd("/usr/bin/numaprobe", &["--version"])), packaged);
    // The host holds the package and its database, no copied binary.
    let host = d.join("np-pkg");
    assert_eq!(
        std::fs::read(host.join(deb.file_name().unwrap())).unwrap(),
        std::fs::read(&deb).unwrap()
    );
    assert!(!host.join("numaprobe").exists(), "a binary was copied in package mode");

    // What binary mode produces: this round's run fetched, imported and
    // reported.
    let np = |db: &Path, args: &[&str]| -> serde_json::Value {
        let out = run_ok(Command::new("/usr/bin/numaprobe").arg("--db").arg(db).args(args));
        serde_json::from_str(&out).unwrap()
    };
    let run = np(&host.join("results.db"), &["--json", "show", "latest"]);
    assert_eq!(run["status"], "complete", "{run}");
    let uuid = run["uuid"].as_str().unwrap().to_string();
    let ctl = d.join("controller");
    let export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ctl.join("exports/np-pkg.json")).unwrap())
            .unwrap();
    assert_eq!(export["runs"][0]["uuid"], uuid.as_str());
    let fleet = ansible::fleet_json(&ctl);
    assert_eq!(ansible::compared(&fleet), [("np-pkg".to_string(), uuid.clone())], "{fleet}");
    // One host: measured and fresh, but without peers, so not judged.
    assert_eq!(
        (fleet["hosts"].as_u64(), fleet["healthy"].as_u64(), fleet["no_peers"].as_u64()),
        (Some(1), Some(0), Some(1)),
        "{fleet}"
    );
    assert!(ansible::unmeasured(&fleet).is_empty(), "{fleet}");
    let html = std::fs::read_to_string(ctl.join("fleet.html")).unwrap();
    assert!(html.contains("Fleet report: 1 host(s)"), "fleet.html");
    assert!(ctl.join("fleet.md").is_file() && ctl.join("fleet.txt").is_file());

    // Again: nothing to copy or install, a new run measured and reported.
    let second = round();
    assert_eq!(result(&second, copy), "ok", "the package was copied again");
    assert_eq!(result(&second, install), "ok", "the package was installed again");
    let fleet = ansible::fleet_json(&ctl);
    let again = ansible::compared(&fleet);
    assert_eq!(again.len(), 1, "{fleet}");
    assert_ne!(again[0].1, uuid, "not measured again: {fleet}");
    let runs = np(&ctl.join("fleet.db"), &["list", "--json"]);
    assert_eq!(runs.as_array().map(Vec::len), Some(2), "{runs}");

    remove_and_check_nothing_left(&deb);
}

/// The aarch64 archive, .deb and .rpm (`scripts/release.sh --target
/// aarch64-unknown-linux-gnu` after the x86-64 release), their payload run
/// under qemu-user. Feature `packages-aarch64-tests` (docs/aarch64.md):
/// they need the aarch64 toolchain and both releases built.
#[cfg(feature = "packages-aarch64-tests")]
mod aarch64 {
    use super::*;

    const AARCH64: &str = "aarch64-unknown-linux-gnu";

    /// A short `bw` (there is no `bw --quick`: the smallest figures the
    /// guest suites use), whose arithmetic is validated and whose pages are
    /// checked; speed under emulation means nothing.
    const BW_SHORT: &[&str] = &[
        "bw",
        "--json",
        "--kernel",
        "triad",
        "--size",
        "1M",
        "--pages",
        "nothp",
        "--min-reps",
        "2",
        "--max-reps",
        "2",
        "--budget",
        "0.1",
    ];

    /// Runs the aarch64 program `bin` under `qemu-aarch64-static` emulating
    /// CPU model `cpu` (`max`: SVE; `cortex-a72`: NEON only), with the aarch64
    /// glibc for a dynamic program; fails unless it exits 0; returns stdout.
    fn qemu_ok(cpu: &str, bin: &Path, args: &[&str]) -> String {
        let lock = tempfile::tempdir().unwrap();
        run_ok(
            Command::new("qemu-aarch64-static")
                .args(["-cpu", cpu])
                .arg(bin)
                .args(args)
                .env("QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu")
                .env("NUMAPROBE_LOCK", lock.path().join("lock")),
        )
    }

    /// The aarch64 payload: `numaprobe` a static aarch64 program whose
    /// version, `topo` and a short `bw` work under qemu-user; `bw` picks SVE
    /// on a CPU with it and falls back to NEON on one without, and each result
    /// records the variant it used; the GPU helper a dynamic aarch64 program
    /// that prints its version.
    fn check_aarch64_payload(bin: &Path, helper: &Path) {
        let file = run_ok(cmd("file", &["-b", bin.to_str().unwrap()]));
        assert!(file.contains("ARM aarch64"), "{file}");
        assert!(file.contains("statically linked") || file.contains("static-pie linked"), "{file}");
        assert_eq!(qemu_ok("max", bin, &["--version"]).trim(), expected_version_line());
        let topo: serde_json::Value =
            serde_json::from_str(&qemu_ok("max", bin, &["topo", "--json", "--quiet"])).unwrap();
        assert!(topo["nodes"].as_array().is_some_and(|n| !n.is_empty()), "{topo}");
        for (cpu, isa) in [("max", "sve"), ("cortex-a72", "neon")] {
            let out = qemu_ok(cpu, bin, BW_SHORT);
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let results = v["results"].as_array().unwrap_or_else(|| panic!("no results: {out}"));
            assert!(!results.is_empty(), "{out}");
            for r in results {
                assert_eq!(r["isa"], isa, "-cpu {cpu}: {r}");
                assert_eq!(r["validated"], true, "-cpu {cpu}: {r}");
            }
        }
        let file = run_ok(cmd("file", &["-b", helper.to_str().unwrap()]));
        assert!(file.contains("ARM aarch64") && file.contains("dynamically linked"), "{file}");
        let version = qemu_ok("max", helper, &["--version"]);
        assert!(version.starts_with(&format!("numaprobe-gpu {VERSION} ")), "{version}");
    }

    /// The man pages of a tree (`man/*.1`, or the packages' `*.1.gz`
    /// unpacked), by name.
    fn pages_in(dir: &Path) -> BTreeSet<String> {
        files_below(dir).into_iter().filter(|f| f.ends_with(".1") || f.ends_with(".1.gz")).collect()
    }

    #[test]
    fn aarch64_archive_holds_the_release_and_runs_under_qemu() {
        let name = format!("numaprobe-{VERSION}-aarch64-linux");
        let tarball = artifact(&format!("{name}.tar.gz"));
        run_ok(Command::new("sha256sum").args(["-c", "SHA256SUMS-aarch64"]).current_dir(dist()));
        let tmp = tempfile::tempdir().unwrap();
        run_ok(Command::new("tar").arg("-xzf").arg(&tarball).arg("-C").arg(tmp.path()));
        let top = tmp.path().join(&name);
        let files = files_below(&top);
        // The same files as the x86-64 archive, man pages included (written
        // by the aarch64 binary itself, under qemu: the same text).
        let x86 = artifact(&format!("{}.tar.gz", archive_name()));
        run_ok(Command::new("tar").arg("-xzf").arg(&x86).arg("-C").arg(tmp.path()));
        let x86_top = tmp.path().join(archive_name());
        assert_eq!(
            files,
            files_below(&x86_top),
            "aarch64 and x86-64 archives hold different files"
        );
        for page in pages_in(&top.join("man")) {
            assert_eq!(
                std::fs::read(top.join("man").join(&page)).unwrap(),
                std::fs::read(x86_top.join("man").join(&page)).unwrap(),
                "man/{page} differs between the aarch64 and x86-64 archives"
            );
        }
        run_ok(Command::new("sha256sum").args(["-c", "--strict", "SHA256SUMS"]).current_dir(&top));
        check_aarch64_payload(&top.join("numaprobe"), &top.join("numaprobe-gpu"));
    }

    #[test]
    fn aarch64_deb_has_the_layout_and_its_payload_runs() {
        let deb = artifact(&format!("numaprobe_{VERSION}-1_arm64.deb"));
        let d = deb.to_str().unwrap();
        let field = |f: &str| run_ok(cmd("dpkg-deb", &["-f", d, f])).trim().to_string();
        assert_eq!(field("Package"), "numaprobe");
        assert_eq!(field("Version"), format!("{VERSION}-1"));
        assert_eq!(field("Architecture"), "arm64");
        assert_eq!(field("Depends"), "libc6 (>= 2.34)");
        let (files, _) = deb_contents(&deb);
        let (amd64, _) = deb_contents(&artifact(&format!("numaprobe_{VERSION}-1_amd64.deb")));
        assert_eq!(files, amd64, "arm64 and amd64 packages hold different files");
        let tmp = tempfile::tempdir().unwrap();
        run_ok(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(tmp.path()));
        check_aarch64_payload(
            &tmp.path().join("usr/bin/numaprobe"),
            &tmp.path().join("usr/libexec/numaprobe/numaprobe-gpu"),
        );
        assert_lintian_clean(&deb);
    }

    #[test]
    fn aarch64_rpm_has_the_layout_and_its_payload_runs() {
        let rpm = artifact(&format!("numaprobe-{VERSION}-1.aarch64.rpm"));
        let r = rpm.to_str().unwrap();
        let arch = run_ok(cmd("rpm", &["-qp", "--qf", "%{ARCH}", r]));
        assert_eq!(arch, "aarch64");
        let k = run_ok(cmd("rpm", &["-K", "--nosignature", r]));
        assert!(k.trim_end().ends_with("digests OK"), "{k}");
        let requires = run_ok(cmd("rpm", &["-qpR", r]));
        assert!(requires.lines().all(|l| l.starts_with("rpmlib(")), "requires:\n{requires}");
        let list = |p: &str| -> BTreeSet<String> {
            run_ok(cmd("rpm", &["-qpl", p])).lines().map(str::to_string).collect()
        };
        let x86 = artifact(&format!("numaprobe-{VERSION}-1.x86_64.rpm"));
        assert_eq!(list(r), list(x86.to_str().unwrap()), "aarch64 and x86_64 rpms differ");
        let tmp = tempfile::tempdir().unwrap();
        run_ok(
            Command::new("sh")
                .arg("-c")
                .arg(format!("rpm2cpio '{r}' | cpio -idm --quiet"))
                .current_dir(tmp.path()),
        );
        check_aarch64_payload(
            &tmp.path().join("usr/bin/numaprobe"),
            &tmp.path().join("usr/libexec/numaprobe/numaprobe-gpu"),
        );
    }

    /// The aarch64 release is built with the cross toolchain the README
    /// names, for the target the archive's name says.
    #[test]
    fn aarch64_binary_is_built_for_aarch64_with_every_release_feature() {
        let bin = repo().join("target/aarch64").join(AARCH64).join("release/numaprobe");
        assert!(
            bin.is_file(),
            "{} is missing: run scripts/release.sh --target {AARCH64}",
            bin.display()
        );
        let help = qemu_ok("max", &bin, &["export", "--help"]);
        assert!(help.contains("parquet"), "the aarch64 binary lacks the Parquet export:\n{help}");
        let isa = qemu_ok("max", &bin, &["bw", "--help"]);
        assert!(isa.contains("neon") && isa.contains("sve"), "bw --isa values:\n{isa}");
    }
}
