//! The fleet integrations against the real programs (feature `fleet-tests`,
//! run by `.ci/run` after `scripts/fleet-setup.sh` installed them):
//! Ansible (deploy/ansible on "hosts" of this machine, each with its own
//! folder and machine identity: four measured, one failing, one
//! unreachable over ssh, one timing out on the measuring lock; serial and
//! `--limit` rounds), Slurm (deploy/slurm on a one-host cluster from
//! scripts/slurm-cluster.sh, used twice) and Prometheus (`promtool check
//! metrics`, `promtool check rules` and `test rules` on deploy/prometheus
//! and on numaprobe's real output, node_exporter's textfile collector
//! scraped on a loopback port) and systemd (`systemd-analyze verify` of
//! deploy/systemd). Every
//! `numaprobe run` here is the smallest there is (`--quick --only
//! bw-local`, a few seconds). Servers listen on loopback only and are
//! stopped by the test and by a time limit of their own.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/ansible.rs"]
mod ansible;
use ansible::{compared, fleet_json, host_line, recap, unmeasured, INVENTORY_VARS};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("numaprobe")
}

/// Runs a command, failing the test with its output unless it exits 0.
fn run_ok(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{c:?} failed ({}):\n{text}", out.status);
    text
}

fn np(db: &Path) -> Command {
    let mut c = Command::new(bin());
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn json_of(c: &mut Command) -> Value {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{c:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Holds an exclusive flock on a file until dropped (a measurement under
/// way, as `numaprobe run` sees it): the open file is the lock.
struct HeldLock {
    _file: std::fs::File,
}

impl HeldLock {
    fn on(path: &Path) -> HeldLock {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
        HeldLock { _file: f }
    }
}

/// Runs the playbook on `inventory` (the controller in `d/controller`)
/// with this build's binary: its exit status and output.
fn playbook(d: &Path, inventory: &str, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["-e".to_string(), format!("numaprobe_binary={}", bin().display())];
    args.extend(extra.iter().map(|a| a.to_string()));
    ansible::playbook(&repo(), d, inventory, &args)
}

/// Issue 27: four hosts measured (two of them clones with one host name),
/// one whose run fails, one unreachable, one that times out waiting for
/// the measuring lock with an older run in its database. The measured
/// hosts are in the report, the others are listed with why and fail the
/// play (exit 2); the old run is never sent as new; what was copied to the
/// hosts is a stripped binary.
#[test]
fn ansible_round_survives_failed_unreachable_and_timed_out_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // np-slow measured once before: its database holds an older run.
    let slow_db = d.join("np-slow/results.db");
    std::fs::create_dir_all(slow_db.parent().unwrap()).unwrap();
    run_ok(
        np(&slow_db)
            .env("NUMAPROBE_HOSTNAME", "np-slow")
            .env("NUMAPROBE_MACHINE_ID", "np-slow")
            .env("NUMAPROBE_LOCK", d.join("seed.lock"))
            .args(["--quiet", "run", "--quick", "--only", "bw-local", "--label", "fleet"]),
    );
    let old = json_of(np(&slow_db).args(["--json", "show", "latest"]));
    let old_uuid = old["uuid"].as_str().unwrap().to_string();
    // ... and now a measurement is under way there for longer than its
    // timeout.
    let slow_lock = d.join("slow.lock");
    let _held = HeldLock::on(&slow_lock);
    let mut inv = String::from("[fleet]\n");
    for h in ["np-a", "np-b"] {
        inv.push_str(&host_line(d, h, ""));
    }
    for h in ["clone-1", "clone-2"] {
        inv.push_str(&host_line(d, h, "numaprobe_hostname=clone"));
    }
    inv.push_str(&host_line(d, "np-bad", "numaprobe_extra_args='[\"--only\", \"no-such-step\"]'"));
    // Nothing listens on port 9 of the loopback: ssh is refused.
    inv.push_str(&host_line(
        d,
        "np-gone",
        "ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=9 \
         ansible_ssh_common_args='-o ConnectTimeout=5'",
    ));
    inv.push_str(&host_line(
        d,
        "np-slow",
        &format!("numaprobe_lock={} numaprobe_timeout=5", slow_lock.display()),
    ));
    inv.push_str(INVENTORY_VARS);
    inv.push_str(&format!("numaprobe_lock={}\n", d.join("measure.lock").display()));
    let (code, text) = playbook(d, &inv, &[]);
    // Exit 2: hosts were not measured, each named with why.
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("Validating arguments against arg spec 'main'"), "{text}");
    for h in ["np-a", "np-b", "clone-1", "clone-2"] {
        assert!(recap(&text, h).contains("failed=0"), "{}", recap(&text, h));
    }
    for h in ["np-bad", "np-gone", "np-slow"] {
        assert!(recap(&text, h).contains("failed=1"), "{}", recap(&text, h));
        assert!(recap(&text, h).contains("unreachable=0"), "{}", recap(&text, h));
    }
    assert!(text.contains("numaprobe: np-bad: numaprobe run exit status 2: error:"), "{text}");
    assert!(text.contains("numaprobe: np-gone: unreachable:"), "{text}");
    assert!(
        text.contains("numaprobe: np-slow: timed out after 5 s")
            && text.contains("waiting for the measuring lock"),
        "{text}"
    );
    let ctl = d.join("controller");
    let fleet = fleet_json(&ctl);
    // Four machines, the two clones both there and marked.
    let hosts: Vec<String> = compared(&fleet).into_iter().map(|(h, _)| h).collect();
    assert_eq!(hosts, ["clone", "clone", "np-a", "np-b"], "{fleet}");
    assert_eq!(fleet["hosts"], 4);
    assert!(fleet["warnings"].to_string().contains("host name clone is used by 2 machines"));
    for h in fleet["groups"][0]["hosts"].as_array().unwrap() {
        assert_eq!(h["stale"], false, "{h}");
        assert!(h["age_s"].as_f64().unwrap() < 3600.0, "{h}");
        assert_eq!(h["machine_id_source"], "NUMAPROBE_MACHINE_ID", "{h}");
    }
    let un = unmeasured(&fleet);
    let names: Vec<&str> = un.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(names, ["np-bad", "np-gone", "np-slow"], "{fleet}");
    assert!(un[2].1.contains("gave up waiting for the measuring lock"), "{un:?}");
    // np-slow's older run was never sent: not in the controller's database.
    assert!(fleet["unmeasured"][2]["last_run"].is_null(), "{fleet}");
    let list = json_of(np(&ctl.join("fleet.db")).args(["list", "--json"]));
    let uuids: Vec<&str> =
        list.as_array().unwrap().iter().map(|r| r["uuid"].as_str().unwrap()).collect();
    assert_eq!(uuids.len(), 4, "{list}");
    assert!(!uuids.contains(&old_uuid.as_str()), "the old run was re-sent: {list}");
    let html = std::fs::read_to_string(ctl.join("fleet.html")).unwrap();
    assert!(html.contains("Fleet report: 4 host(s)") && html.contains("Not measured: 3 host(s)"));
    assert!(ctl.join("fleet.md").is_file() && ctl.join("fleet.txt").is_file());
    // The binary on the hosts is the one given without its debug
    // information, its symbol table kept (backtraces name functions).
    let shipped = std::fs::read(d.join("np-a/numaprobe")).unwrap();
    let given = std::fs::metadata(bin()).unwrap().len();
    assert!((shipped.len() as u64) < given, "{} vs {given} bytes", shipped.len());
    let sections = elf_sections(&shipped);
    assert!(sections.iter().any(|s| s == ".text"), "{sections:?}");
    assert!(
        !sections.iter().any(|s| [".debug_info", ".debug_line"].contains(&s.as_str())),
        "the shipped binary has debug information: {sections:?}"
    );
    assert!(sections.iter().any(|s| s == ".symtab"), "{sections:?}");
    assert!(elf_sections(&std::fs::read(bin()).unwrap()).iter().any(|s| s == ".debug_info"));
    assert!(text.contains("MB, without debug information)"), "{text}");
}

/// A copy of `src` at `dst` with a section of its own, `.note.NAME`, so
/// that two binaries (and their stripped copies) are told apart by their
/// sections; binutils' objcopy, beside the strip the role runs.
fn marked_copy(src: &Path, dst: &Path, name: &str) {
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    let note = dst.with_extension("note");
    std::fs::write(&note, name).unwrap();
    run_ok(
        Command::new("objcopy")
            .arg("--add-section")
            .arg(format!(".note.{name}={}", note.display()))
            .arg(src)
            .arg(dst),
    );
}

/// The `.note.np38*` sections of a shipped binary.
fn marks(path: &Path) -> Vec<String> {
    elf_sections(&std::fs::read(path).unwrap())
        .into_iter()
        .filter(|s| s.starts_with(".note.np38"))
        .collect()
}

/// What `numaprobe fleet --this-host` says with `env`: (host, machine id).
fn this_host(env: &[(&str, &str)]) -> (String, String) {
    let mut c = Command::new(bin());
    c.args(["--json", "fleet", "--this-host"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let v = json_of(&mut c);
    (v["host"].as_str().unwrap().to_string(), v["machine_id"].as_str().unwrap().to_string())
}

/// Issue 38, defects A to D, with the real ansible-playbook:
/// A: two groups with their own `numaprobe_binary` each get their own;
/// B: a binary given again with new content but an older time stamp (a
/// release tarball) is stripped and shipped anew, not the cached copy;
/// C: of two clones (one host name), the one whose run fails is listed
/// alone, with its machine id, and the other stays compared, so the group
/// keeps its peers; D: a host recorded under its own name
/// (`numaprobe_hostname=''`) whose run fails is listed under that name and
/// its earlier run is no longer compared.
#[test]
fn ansible_per_group_binaries_new_content_clones_and_own_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (bin_a, bin_b) = (d.join("bin-a/numaprobe"), d.join("bin-b/numaprobe"));
    marked_copy(&bin(), &bin_a, "np38a");
    marked_copy(&bin(), &bin_b, "np38b");
    let fails = "numaprobe_extra_args='[\"--only\", \"no-such-step\"]'";
    let inventory = |own_fails: bool| {
        let mut inv = String::from("[ga]\n");
        inv.push_str(&host_line(d, "np-a", ""));
        inv.push_str(&host_line(d, "clone-1", &format!("numaprobe_hostname=clone {fails}")));
        inv.push_str("[gb]\n");
        inv.push_str(&host_line(d, "np-b", ""));
        inv.push_str(&host_line(d, "clone-2", "numaprobe_hostname=clone"));
        let own = if own_fails { fails } else { "" };
        inv.push_str(&host_line(d, "np-own", &format!("numaprobe_hostname='' {own}")));
        inv.push_str(&format!("[ga:vars]\nnumaprobe_binary={}\n", bin_a.display()));
        inv.push_str(&format!("[gb:vars]\nnumaprobe_binary={}\n", bin_b.display()));
        inv.push_str("[fleet:children]\nga\ngb\n");
        inv.push_str(INVENTORY_VARS);
        inv.push_str(&format!("numaprobe_lock={}\n", d.join("measure.lock").display()));
        inv.push_str(&format!("numaprobe_controller_binary={}\n", bin().display()));
        inv
    };
    // No `-e numaprobe_binary`: extra variables would override the groups'.
    let (code, text) = ansible::playbook(&repo(), d, &inventory(false), &[]);
    assert_eq!(code, Some(2), "clone-1 fails: {text}");
    // A: each host got its group's binary.
    assert_eq!(marks(&d.join("np-a/numaprobe")), [".note.np38a"], "{text}");
    for h in ["np-b", "clone-2", "np-own"] {
        assert_eq!(marks(&d.join(h).join("numaprobe")), [".note.np38b"], "{h}: {text}");
    }
    let ctl = d.join("controller");
    let fleet = fleet_json(&ctl);
    let kernel_name =
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    // C: clone-2 compared, clone-1 listed with its own machine id.
    let mut expected = vec!["clone".to_string(), kernel_name.clone(), "np-a".into(), "np-b".into()];
    expected.sort();
    let hosts: Vec<String> = compared(&fleet).into_iter().map(|(h, _)| h).collect();
    assert_eq!(hosts, expected, "{fleet}");
    assert_eq!(fleet["groups"][0]["peers_missing"], false, "{fleet}");
    let (_, clone1) =
        this_host(&[("NUMAPROBE_HOSTNAME", "clone"), ("NUMAPROBE_MACHINE_ID", "clone-1")]);
    let (_, clone2) =
        this_host(&[("NUMAPROBE_HOSTNAME", "clone"), ("NUMAPROBE_MACHINE_ID", "clone-2")]);
    let un = &fleet["unmeasured"];
    assert_eq!(un.as_array().map(Vec::len), Some(1), "{fleet}");
    assert_eq!(
        (un[0]["host"].as_str(), un[0]["machine_id"].as_str()),
        (Some("clone"), Some(clone1.as_str()))
    );
    let clone = fleet["groups"][0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "clone")
        .unwrap();
    assert_eq!(clone["machine_id"].as_str(), Some(clone2.as_str()), "{clone}");
    let tsv = std::fs::read_to_string(ctl.join("unmeasured.tsv")).unwrap();
    assert!(
        tsv.contains("clone\tnumaprobe run exit status 2")
            && tsv.contains(&format!("\t{clone1}\n")),
        "{tsv}"
    );
    // B: the same path, new content, an older time stamp than the cached
    // stripped copy.
    let cached: Vec<PathBuf> =
        std::fs::read_dir(ctl.join("bin")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(cached.len(), 2, "one stripped copy per binary: {cached:?}");
    marked_copy(&bin(), &bin_b, "np38c");
    run_ok(Command::new("touch").args(["-d", "2000-01-01"]).arg(&bin_b));
    // D: np-own, recorded under this machine's name, now fails.
    let (code, text) =
        ansible::playbook(&repo(), d, &inventory(true), &["--limit".into(), "np-b,np-own".into()]);
    assert_eq!(code, Some(2), "np-own fails: {text}");
    assert_eq!(marks(&d.join("np-b/numaprobe")), [".note.np38c"], "the new content: {text}");
    let fleet = fleet_json(&ctl);
    let un = unmeasured(&fleet);
    assert_eq!(un.len(), 1, "{fleet}");
    assert_eq!(un[0].0, kernel_name, "under the name its runs have: {fleet}");
    assert!(un[0].1.contains("numaprobe run exit status 2"), "{un:?}");
    assert!(fleet["unmeasured"][0]["last_run"].is_object(), "its earlier run named: {fleet}");
    let hosts: Vec<String> = compared(&fleet).into_iter().map(|(h, _)| h).collect();
    assert_eq!(hosts, ["clone", "np-a", "np-b"], "its earlier run is not compared: {fleet}");
}

/// The section names of a 64-bit little-endian ELF file.
fn elf_sections(elf: &[u8]) -> Vec<String> {
    assert_eq!(&elf[..6], b"\x7fELF\x02\x01", "a 64-bit little-endian ELF file");
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
    let (shoff, shentsize, shnum, shstrndx) =
        (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    let header = |i: usize| shoff + i * shentsize;
    let names = u64_at(header(shstrndx) + 0x18);
    (0..shnum)
        .map(|i| {
            let start = names + u32_at(header(i));
            let end = start + elf[start..].iter().position(|b| *b == 0).unwrap();
            String::from_utf8_lossy(&elf[start..end]).into_owned()
        })
        .collect()
}

/// Issue 27: with `-e numaprobe_serial=1` a failing first host does not
/// stop the others, and the report is written; `--limit` measures one
/// host and still writes the report (over every host in the database).
#[test]
fn ansible_serial_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut inv = String::from("[fleet]\n");
    inv.push_str(&host_line(d, "np-bad", "numaprobe_extra_args='[\"--only\", \"no-such-step\"]'"));
    inv.push_str(&host_line(d, "np-a", ""));
    inv.push_str(&host_line(d, "np-b", ""));
    inv.push_str(INVENTORY_VARS);
    inv.push_str(&format!("numaprobe_lock={}\n", d.join("measure.lock").display()));
    let (code, text) = playbook(d, &inv, &["-e", "numaprobe_serial=1"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(recap(&text, "np-bad").contains("failed=1"), "{text}");
    for h in ["np-a", "np-b"] {
        assert!(recap(&text, h).contains("failed=0"), "{}", recap(&text, h));
    }
    let ctl = d.join("controller");
    let first = fleet_json(&ctl);
    let hosts: Vec<String> = compared(&first).into_iter().map(|(h, _)| h).collect();
    assert_eq!(hosts, ["np-a", "np-b"], "{first}");
    assert_eq!(unmeasured(&first)[0].0, "np-bad");
    // --limit np-a: np-a measured again; the report covers np-b too, from
    // the database, with its age.
    let (code, text) = playbook(d, &inv, &["--limit", "np-a"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("no hosts matched"), "{text}");
    let second = fleet_json(&ctl);
    let (before, after) = (compared(&first), compared(&second));
    assert_eq!(after.len(), 2, "{second}");
    assert_ne!(after[0].1, before[0].1, "np-a measured again");
    assert_eq!(after[1], before[1], "np-b as it was");
    assert!(unmeasured(&second).is_empty(), "{second}");
}

/// Runs `script` in a one-host Slurm cluster kept in `cluster`: its output.
fn in_cluster(cluster: &Path, shared: &Path, script: &str, env: &[(&str, &str)]) -> String {
    let mut c = Command::new(repo().join("scripts/slurm-cluster.sh"));
    c.arg(cluster)
        .args(["--", "bash", "-c", script])
        .current_dir(repo())
        .env("NUMAPROBE_SLURM_TIMEOUT", "400")
        .env("NUMAPROBE_SHARED", shared)
        .env("NUMAPROBE_BIN", bin())
        .env("NUMAPROBE_BUDGET", "quick")
        .env("NUMAPROBE_ARGS", "--only bw-local")
        .env("NUMAPROBE_LOCK", shared.join("measure.lock"));
    for (k, v) in env {
        c.env(k, v);
    }
    run_ok(&mut c)
}

/// Issue 27: the documented command, from the documented folder, measures
/// the whole node (--exclusive) and gathers in a dependent job; the cluster
/// folder can be used again; a restricted job records its restriction
/// without the node's name; a node whose run fails makes the round exit 1,
/// named, and is listed in the report.
#[test]
fn slurm_round_as_documented_restricted_and_failed() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(cpus >= 2, "this test needs 2 CPUs or more to show a restricted job (found {cpus})");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shared = d.join("shared");
    std::fs::create_dir(&shared).unwrap();
    let cluster = d.join("cluster");
    // docs/fleet.md, from the repository's folder.
    let text = in_cluster(&cluster, &shared, "deploy/slurm/submit.sh --wait --nodes=1", &[]);
    assert!(text.contains("submit: gather job"), "{text}");
    let db = shared.join("fleet.db");
    let run = json_of(np(&db).args(["--json", "show", "latest"]));
    assert_eq!(run["status"], "complete", "{text}");
    assert_eq!(run["config"]["cgroup_restriction"], "none", "--exclusive: the whole node");
    assert_eq!(run["topology"]["cgroup"]["restricts"], false);
    let fleet = fleet_json(&shared);
    // One node: measured and fresh, but without peers, so not judged.
    assert_eq!(
        (fleet["hosts"].as_u64(), fleet["healthy"].as_u64(), fleet["no_peers"].as_u64()),
        (Some(1), Some(0), Some(1)),
        "{fleet}"
    );
    for f in ["fleet.html", "fleet.md", "fleet.txt"] {
        assert!(shared.join(f).is_file(), "{f}");
    }
    // The same cluster folder again: a job given one CPU, then a per-node
    // round whose run fails.
    let node = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    let script = format!(
        "deploy/slurm/submit.sh --wait --oversubscribe --cpus-per-task=1; echo restricted-rc=$?; \
         NUMAPROBE_ARGS='--only no-such-step' deploy/slurm/submit.sh --wait --per-node {node}; \
         echo failed-rc=$?; cat \"$NUMAPROBE_SHARED\"/logs/numaprobe-gather-*.out"
    );
    let text = in_cluster(&cluster, &shared, &script, &[]);
    assert!(text.contains("restricted-rc=0"), "{text}");
    assert!(text.contains("failed-rc=1"), "a failed node is a failed round: {text}");
    assert!(
        text.contains(&format!("gather: {node}: job ")) && text.contains("run exit status 2"),
        "the failed node is named: {text}"
    );
    let runs = json_of(np(&db).args(["list", "--json"]));
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");
    let run = json_of(np(&db).args(["--json", "show", "latest"]));
    let cg = &run["topology"]["cgroup"];
    assert_eq!(cg["restricts"], true, "{cg}");
    assert_eq!(
        cg["affinity"].as_str().map(|a| a.contains(['-', ','])),
        Some(false),
        "one CPU: {cg}"
    );
    // In counts only: the same on every node of a job.
    assert_eq!(
        run["config"]["cgroup_restriction"],
        format!("1 of {cpus} CPUs, 1 of 1 memory nodes"),
        "{}",
        run["config"]
    );
    if text.contains("(task/cgroup") {
        assert!(cg["path"].as_str().unwrap_or("").contains("slurm"), "{cg}");
    }
    let fleet = fleet_json(&shared);
    let un = unmeasured(&fleet);
    assert_eq!(un.len(), 1, "{fleet}");
    assert_eq!(un[0].0, node);
    assert!(un[0].1.contains("run exit status 2"), "{un:?}");
    // Its earlier runs are not shown as this round's.
    assert_eq!(fleet["hosts"], 0, "{fleet}");
}

/// Issue 38 (E): Slurm job arrays are refused with a clear error, by
/// `submit.sh` before anything is submitted (exit 2) and by the job script
/// when submitted as an array by hand with the real sbatch (each task
/// exits 2, nothing measured); a shared folder that is the binary's own
/// folder is refused too.
#[test]
fn slurm_job_arrays_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shared = d.join("shared");
    std::fs::create_dir(&shared).unwrap();
    let script = "deploy/slurm/submit.sh --wait --array=0-1; echo array-rc=$?; \
        deploy/slurm/submit.sh --wait -a 0-1 --nodes=1; echo short-rc=$?; \
        sbatch --wait --array=0-1 --output=\"$NUMAPROBE_SHARED/arr-%A_%a.out\" \
          deploy/slurm/numaprobe.sbatch; echo sbatch-rc=$?; cat \"$NUMAPROBE_SHARED\"/arr-*.out; \
        NUMAPROBE_SHARED=$(dirname \"$NUMAPROBE_BIN\") deploy/slurm/submit.sh --nodes=1; \
        echo own-folder-rc=$?";
    let text = in_cluster(&d.join("cluster"), &shared, script, &[]);
    assert!(text.contains("array-rc=2") && text.contains("short-rc=2"), "{text}");
    assert!(text.contains("submit: job arrays are not supported (--array=0-1)"), "{text}");
    assert!(!text.contains("submit: measuring job"), "nothing submitted: {text}");
    assert!(text.contains("sbatch-rc=2"), "{text}");
    assert_eq!(
        text.matches("numaprobe.sbatch: job arrays are not supported (task ").count(),
        2,
        "each task refuses: {text}"
    );
    assert!(
        text.contains("own-folder-rc=2") && text.contains("is the folder of NUMAPROBE_BIN"),
        "{text}"
    );
    let exports = std::fs::read_dir(shared.join("exports")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(exports, 0, "nothing measured");
}

/// A free loopback port (bound, then released for the server).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    Some(body)
}

/// Stops the server when the test ends, whatever happens. The child is
/// `timeout`, which passes SIGTERM on to the server (SIGKILL would leave
/// the server running without its time limit).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.0.id().to_string()).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn prometheus_reads_the_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    let tf = d.join("textfile");
    std::fs::create_dir(&tf).unwrap();
    run_ok(
        np(&db)
            .env("NUMAPROBE_LOCK", d.join("measure.lock"))
            .args([
                "--quiet",
                "run",
                "--quick",
                "--only",
                "bw-local",
                "--label",
                "prom",
                "--textfile",
            ])
            .arg(&tf),
    );
    // promtool checks the textfile and the export of the same run.
    let prom = tf.join("numaprobe.prom");
    run_ok(
        Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&prom).unwrap()),
    );
    let export = d.join("export.prom");
    run_ok(np(&db).args(["export", "--format", "openmetrics", "latest", "-o"]).arg(&export));
    let checked = run_ok(
        Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&export).unwrap()),
    );
    assert!(!checked.contains("error"), "{checked}");
    // node_exporter's textfile collector serves numaprobe's series.
    let port = free_port();
    let server = Server(
        Command::new("timeout")
            .arg("120")
            .arg("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!("--collector.textfile.directory={}", tf.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let body = loop {
        if let Some(b) = http_get(port, "/metrics") {
            break b;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "node_exporter did not answer on 127.0.0.1:{port}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    drop(server);
    // Stopped: nothing answers on its port any more.
    assert!(http_get(port, "/metrics").is_none(), "node_exporter still answers on {port}");
    assert!(body.contains("numaprobe_bandwidth_bytes_per_second{"), "{body}");
    assert!(body.contains("numaprobe_run_info{"), "{body}");
    // The run is named on run_info alone: a new run continues the series.
    for l in body.lines().filter(|l| l.starts_with("numaprobe_")) {
        let per_run = l.contains("run_uuid=") || l.contains("label=\"prom\"");
        assert_eq!(per_run, l.starts_with("numaprobe_run_info{"), "{l}");
    }
    // The collector read our file without error.
    assert!(
        body.lines().any(|l| l.starts_with("node_textfile_scrape_error") && l.ends_with(" 0")),
        "{body}"
    );
}

/// deploy/prometheus's rules pass `promtool check rules` and their own
/// `promtool test rules` (a slow host, a slow-latency host, a model too
/// small to compare, a noisy model, a stale and an incomplete run).
#[test]
fn prometheus_rules_check_and_pass_their_tests() {
    let dir = repo().join("deploy/prometheus");
    let out = run_ok(
        Command::new("promtool").args(["check", "rules"]).arg(dir.join("numaprobe.rules.yml")),
    );
    assert!(out.contains("SUCCESS: 16 rules found"), "{out}");
    let out = run_ok(
        Command::new("promtool")
            .args(["test", "rules", "numaprobe.rules.test.yml"])
            .current_dir(&dir),
    );
    assert!(out.contains("SUCCESS"), "{out}");
}

/// An OpenMetrics exposition as promtool's input series (each sample held
/// for ten minutes).
fn input_series(exposition: &str) -> String {
    let mut y = String::from("    input_series:\n");
    for l in exposition.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (series, value) = l.rsplit_once(' ').unwrap();
        y.push_str(&format!(
            "      - series: '{}'\n        values: '{}x10'\n",
            series.replace('\'', "''"),
            value
        ));
    }
    y
}

/// The rules on what numaprobe really writes: five hosts made from one real
/// run of this machine (imported as five machines), one of them at 80 % of
/// the others' bandwidth, exported as OpenMetrics; promtool finds that
/// host, and only it, below its peers.
#[test]
fn prometheus_rules_find_the_slow_host_in_real_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("r.db");
    run_ok(
        np(&db)
            .env("NUMAPROBE_LOCK", d.join("measure.lock"))
            .args(["--quiet", "run", "--quick", "--only", "bw-local", "--label", "prom"]),
    );
    let export = d.join("run.json");
    run_ok(np(&db).args(["export", "latest", "-o"]).arg(&export));
    let base: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let fleet_db = d.join("fleet.db");
    for (i, scale) in [1.0, 1.01, 0.99, 1.005, 0.8].iter().enumerate() {
        let mut doc = base.clone();
        let run = &mut doc["runs"][0];
        run["uuid"] = format!("27272727-0000-4000-8000-{i:012}").into();
        run["machine"]["info"]["hostname"] = format!("h{i}").into();
        run["machine"]["info"]["machine_id"] = format!("{i:016x}").into();
        run["machine"]["fingerprint"] = format!("{:016x}", 0x2727_0000 + i).into();
        for r in run["results"].as_array_mut().unwrap() {
            for (k, v) in r["payload"].as_object_mut().unwrap() {
                if k.ends_with("_gbs") {
                    if let Some(x) = v.as_f64() {
                        *v = (x * scale).into();
                    }
                }
            }
        }
        let p = d.join(format!("h{i}.json"));
        std::fs::write(&p, doc.to_string()).unwrap();
        run_ok(np(&fleet_db).args(["--quiet", "import"]).arg(&p));
    }
    let ids: Vec<String> = (1..=5).map(|i| i.to_string()).collect();
    let prom = run_ok(np(&fleet_db).args(["export", "--format", "openmetrics"]).args(&ids));
    let prom = prom.split("\n# EOF").next().unwrap();
    assert_eq!(prom.matches("numaprobe_run_info{").count(), 5, "{prom}");
    let model = base["runs"][0]["machine"]["info"]["cpu_model"].as_str().unwrap_or("");
    assert!(prom.contains(&format!("model=\"{}", model.replace('"', "\\\""))), "{prom}");
    let info =
        prom.lines().find(|l| l.starts_with("numaprobe_run_info{") && l.contains("host=\"h4\""));
    let model_label = info
        .and_then(|l| l.split("model=\"").nth(1))
        .and_then(|r| r.split("\",").next())
        .unwrap()
        .to_string();
    let test = format!(
        "rule_files:\n  - {rules}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n{series}    \
         alert_rule_test:\n      - eval_time: 5m\n        alertname: NumaprobeBandwidthBelowPeers\n        \
         exp_alerts:\n          - exp_labels:\n              severity: warning\n              host: h4\n              machine_id: '0000000000000004'\n              \
         metric: local\n              model: '{model}'\n            exp_annotations:\n              \
         summary: \"h4: local bandwidth 80% of its peers' median\"\n              description: \"h4 ({model_dq}) is \
         more than 5% below the median of the hosts of its model, beyond their normal spread (numaprobe fleet's \
         method).\"\n",
        rules = repo().join("deploy/prometheus/numaprobe.rules.yml").display(),
        series = input_series(prom),
        model = model_label.replace('\'', "''"),
        model_dq = model_label.replace('"', "\\\""),
    );
    let file = d.join("real.test.yml");
    std::fs::write(&file, &test).unwrap();
    let out = Command::new("promtool").args(["test", "rules"]).arg(&file).output().unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("SUCCESS"), "{text}\n{test}");
}

/// Promtool's input series of expositions written one after another: each
/// sample of the `i`th exposition held for ten minutes from minute 10 × i,
/// missing (`_`) where that exposition has no such series.
fn input_series_in_turn(expositions: &[&str]) -> String {
    let mut values: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (i, e) in expositions.iter().enumerate() {
        for l in e.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
            let (series, value) = l.rsplit_once(' ').unwrap();
            let v = values
                .entry(series.to_string())
                .or_insert_with(|| vec!["_".into(); 10 * expositions.len()]);
            for x in &mut v[10 * i..10 * (i + 1)] {
                *x = value.to_string();
            }
        }
    }
    let mut y = String::from("    input_series:\n");
    for (series, v) in values {
        y.push_str(&format!(
            "      - series: '{}'\n        values: '{}'\n",
            series.replace('\'', "''"),
            v.join(" ")
        ));
    }
    y
}

/// Issue 38 (F, G) with the real promtool: two runs of one machine whose
/// load calibration differs (the spins per wait) write the same series
/// (Prometheus counts as many distinct series over both runs as in one:
/// the load is labelled by its nominal level, the calibrated spins are a
/// value), and two machines with one host name exported together are two
/// `run_info` series that the rules join without a many-to-many error.
/// The runs are the synthetic fixture's, their loaded-latency points
/// rewritten as runs record them now (an idle point, then waits asked in
/// ns): no loaded-latency measurement runs here.
#[test]
fn prometheus_series_stay_the_same_across_runs_and_clones_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fixture = repo().join("crates/report/tests/fixtures/synthetic-export.json");
    let base: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let db = d.join("fleet.db");
    let runs = [
        ("solo", "5010000000000001", "2026-11-02T11:00:00.000Z", 0.97),
        ("solo", "5010000000000001", "2026-11-09T11:00:00.000Z", 1.03),
        ("clone", "c100000000000001", "2026-11-09T11:00:00.000Z", 1.0),
        ("clone", "c100000000000002", "2026-11-09T11:00:00.000Z", 1.0),
    ];
    for (n, (host, id, started, ns_per_spin)) in runs.iter().enumerate() {
        let mut doc = base.clone();
        doc["runs"] = Value::Array(vec![doc["runs"][0].clone()]);
        let run = &mut doc["runs"][0];
        run["uuid"] = format!("38383838-0000-4000-8000-{n:012}").into();
        run["started"] = (*started).into();
        run["machine"]["fingerprint"] = format!("f{id}").into();
        run["machine"]["info"]["hostname"] = (*host).into();
        run["machine"]["info"]["machine_id"] = (*id).into();
        let mut i = 0u32;
        for r in run["results"].as_array_mut().unwrap() {
            let p = &mut r["payload"];
            if p["mode"] != "loaded" {
                continue;
            }
            p["idle"] = (i == 0).into();
            if i > 0 {
                let ns = 2000.0 / i as f64;
                p["delay_ns"] = ns.into();
                p["delay"] = ((ns / ns_per_spin).round() as u64).into();
            } else {
                p["delay"] = 0.into();
            }
            i += 1;
        }
        assert!(i > 2, "the fixture has a loaded-latency curve");
        let f = d.join(format!("run{n}.json"));
        std::fs::write(&f, doc.to_string()).unwrap();
        run_ok(np(&db).args(["--quiet", "import"]).arg(&f));
    }
    let export = |ids: &[&str]| -> String {
        let text = run_ok(np(&db).args(["--quiet", "export", "--format", "openmetrics"]).args(ids));
        let f = d.join("check.prom");
        std::fs::write(&f, &text).unwrap();
        run_ok(
            Command::new("promtool")
                .args(["check", "metrics"])
                .stdin(std::fs::File::open(&f).unwrap()),
        );
        text
    };
    let (first, second, clones) = (export(&["1"]), export(&["2"]), export(&["3", "4"]));
    let per_run = |t: &str| {
        t.lines()
            .filter(|l| l.starts_with("numaprobe_") && !l.starts_with("numaprobe_run_info{"))
            .count()
    };
    let series = per_run(&first);
    assert_eq!(series, per_run(&second));
    let bw_headlines = clones
        .lines()
        .filter(|l| l.starts_with("numaprobe_headline_bandwidth_bytes_per_second{"))
        .count();
    assert!(bw_headlines >= 2, "{clones}");
    // Per family (a range function drops the name): the distinct series
    // over both runs, as many as one run writes.
    let mut per_family = String::new();
    let (mut total, mut counts) = (0, Vec::new());
    for family in [
        "numaprobe_bandwidth_bytes_per_second",
        "numaprobe_latency_seconds",
        "numaprobe_loaded_latency_delay_iterations",
        "numaprobe_headline_bandwidth_bytes_per_second",
        "numaprobe_headline_latency_seconds",
        "numaprobe_run_timestamp_seconds",
    ] {
        let n = first.lines().filter(|l| l.starts_with(&format!("{family}{{"))).count();
        counts.push((family, n));
        total += n;
        per_family.push_str(&format!(
            "      - expr: count(count_over_time({family}{{host=\"solo\"}}[30m]))\n        \
             eval_time: 29m\n        exp_samples:\n          - labels: '{{}}'\n            value: {n}\n"
        ));
    }
    assert_eq!(total, series, "every family but run_info is checked");
    let test = format!(
        "rule_files:\n  - {rules}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n{input}    \
         promql_expr_test:\n{per_family}      \
         - expr: count(numaprobe_run_info{{host=\"clone\"}})\n        \
           eval_time: 25m\n        exp_samples:\n          - labels: '{{}}'\n            value: 2\n      \
         - expr: count(numaprobe:headline_bandwidth_bytes_per_second:model{{host=\"clone\"}})\n        \
           eval_time: 25m\n        exp_samples:\n          - labels: '{{}}'\n            value: {bw_headlines}\n",
        rules = repo().join("deploy/prometheus/numaprobe.rules.yml").display(),
        input = input_series_in_turn(&[&first, &second, &clones]),
    );
    let file = d.join("series.test.yml");
    std::fs::write(&file, &test).unwrap();
    let out = Command::new("promtool").args(["test", "rules"]).arg(&file).output().unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && said.contains("SUCCESS"), "{said}\n{test}");
    assert_eq!(clones.matches("numaprobe_run_info{").count(), 2, "{clones}");
    for (family, n) in counts {
        assert!(n > 0, "{family}: {first}");
    }
}

/// Five hosts made from the synthetic fixture's run, imported into
/// `d/fleet.db` (runs 1 to 5): `h0` to `h4`, each its own machine, `h4` at
/// 80 % of the others' bandwidth.
fn five_hosts(d: &Path) -> PathBuf {
    let fixture = repo().join("crates/report/tests/fixtures/synthetic-export.json");
    let base: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let db = d.join("fleet.db");
    for (i, scale) in [1.0, 1.01, 0.99, 1.005, 0.8].iter().enumerate() {
        let mut doc = base.clone();
        doc["runs"] = Value::Array(vec![doc["runs"][0].clone()]);
        let run = &mut doc["runs"][0];
        run["uuid"] = format!("38383838-0000-4000-8000-{i:012}").into();
        run["machine"]["info"]["hostname"] = format!("h{i}").into();
        run["machine"]["info"]["machine_id"] = format!("{i:016x}").into();
        run["machine"]["fingerprint"] = format!("{:016x}", 0x3838_0000 + i).into();
        for r in run["results"].as_array_mut().unwrap() {
            for (k, v) in r["payload"].as_object_mut().unwrap() {
                if k.ends_with("_gbs") {
                    if let Some(x) = v.as_f64() {
                        *v = (x * scale).into();
                    }
                }
            }
        }
        let f = d.join(format!("h{i}.json"));
        std::fs::write(&f, doc.to_string()).unwrap();
        run_ok(np(&db).args(["--quiet", "import"]).arg(&f));
    }
    db
}

/// The columns of the Parquet tables, as docs/fleet.md lists them.
const FIGURE_COLUMNS: [&str; 17] = [
    "machine_id",
    "host",
    "run_uuid",
    "started",
    "label",
    "config_hash",
    "kind",
    "metric_id",
    "relation",
    "scope",
    "cpu_node",
    "mem_node",
    "value",
    "unit",
    "higher_is_better",
    "stable",
    "schema_version",
];
const RUN_COLUMNS: [&str; 17] = [
    "run_uuid",
    "machine_id",
    "host",
    "model",
    "started",
    "finished",
    "status",
    "label",
    "config_hash",
    "machine_fingerprint",
    "tool_version",
    "figures",
    "run_id",
    "exec",
    "message",
    "settings",
    "schema_version",
];
const SETTING_COLUMNS: [&str; 4] = ["run_uuid", "setting", "value", "schema_version"];

/// `export --format parquet` of the fleet's runs: the figures file and the
/// runs and settings files beside it, read by an independent reader
/// (scripts/parquet-footer.py: the Thrift footer parsed with Python's
/// standard library): the magic, the documented columns, the row counts
/// `--json` reports, each run's figures adding up, the schema version in
/// each file's key-value metadata; without -o it is refused (exit 2).
/// DuckDB reads the same files in the DuckDB suite (`fleet_sql`).
#[test]
fn parquet_export_has_the_documented_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = five_hosts(dir.path());
    let out = dir.path().join("fleet.parquet");
    let said = json_of(
        np(&db)
            .args(["--json", "export", "--format", "parquet", "1", "2", "3", "4", "5", "-o"])
            .arg(&out),
    );
    assert_eq!(said["parquet_schema_version"], 2, "{said}");
    let footer = |p: &Path| -> Value {
        json_of(Command::new("python3").arg(repo().join("scripts/parquet-footer.py")).arg(p))
    };
    let columns = |v: &Value| -> Vec<String> {
        v["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect()
    };
    let figures = footer(&out);
    assert_eq!(columns(&figures), FIGURE_COLUMNS);
    let rows = figures["num_rows"].as_u64().unwrap();
    assert_eq!(Some(rows), said["figures"]["rows"].as_u64(), "{said}");
    let groups: u64 =
        figures["row_groups"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()).sum();
    assert_eq!(groups, rows);
    assert!(figures["created_by"].as_str().unwrap().starts_with("numaprobe "), "{figures}");
    let runs = footer(&dir.path().join("fleet.runs.parquet"));
    assert_eq!(runs["num_rows"], 5, "{runs}");
    assert_eq!(said["runs"]["rows"], 5);
    assert_eq!(columns(&runs), RUN_COLUMNS);
    let settings = footer(&dir.path().join("fleet.settings.parquet"));
    assert_eq!(columns(&settings), SETTING_COLUMNS);
    assert_eq!(settings["num_rows"], said["settings"]["rows"], "{said}");
    // The fixture's 9 configuration settings per run.
    assert_eq!(said["settings"]["rows"], 5 * 9, "{said}");
    for f in [&figures, &runs, &settings] {
        assert_eq!(f["key_value"]["numaprobe.schema_version"], "2", "{f}");
    }
    // Each run: the fleet's 7 figures, its catalogue metrics and its
    // results (the fixture's run holds 66 bandwidth and latency results).
    assert!(rows > 5 * (7 + 66), "{rows}");
    let o = np(&db).args(["export", "--format", "parquet", "1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("-o FILE.parquet"));
}

/// deploy/systemd as systemd reads it: `systemd-analyze verify` accepts the
/// service and the timer without a remark (the service's binary pointed at
/// this build, since /usr/bin/numaprobe exists only once a package put it
/// there), and rejects a timer with a broken schedule, so the check can
/// fail. The service runs `numaprobe run --wait --textfile` (the lock
/// waited for, the metrics for node_exporter).
#[test]
fn systemd_units_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let unit =
        |name: &str| std::fs::read_to_string(repo().join("deploy/systemd").join(name)).unwrap();
    let service = unit("numaprobe.service");
    let exec = service.lines().find(|l| l.starts_with("ExecStart=")).expect("ExecStart");
    for arg in ["/usr/bin/numaprobe run ", "--wait", "--textfile ${NUMAPROBE_TEXTFILE_DIR}"] {
        assert!(exec.contains(arg), "{exec}");
    }
    std::fs::write(
        d.join("numaprobe.service"),
        service.replace("/usr/bin/numaprobe", bin().to_str().unwrap()),
    )
    .unwrap();
    let timer = unit("numaprobe.timer");
    std::fs::write(d.join("numaprobe.timer"), &timer).unwrap();
    let verify = |files: &[&str]| {
        let out = Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .args(files.iter().map(|f| d.join(f)))
            .output()
            .expect("systemd-analyze (scripts/fleet-setup.sh installs it)");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    };
    let (ok, said) = verify(&["numaprobe.service", "numaprobe.timer"]);
    assert!(ok && said.trim().is_empty(), "systemd-analyze verify: {said}");
    // The same check on a broken schedule fails.
    std::fs::write(
        d.join("broken.timer"),
        timer.replace("OnCalendar=Sun *-*-* 03:00:00", "OnCalendar=Sun *-*-* 25:00:00"),
    )
    .unwrap();
    std::fs::copy(d.join("numaprobe.service"), d.join("broken.service")).unwrap();
    let (ok, said) = verify(&["broken.timer"]);
    assert!(!ok && said.contains("calendar"), "a broken timer passed: {said}");
}
