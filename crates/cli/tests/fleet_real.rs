//! The fleet integrations against the real programs (feature `fleet-tests`,
//! run by `.ci/run` after `scripts/fleet-setup.sh` installed them):
//! Ansible (deploy/ansible on four "hosts" of this machine, one of which
//! fails), Slurm (deploy/slurm on a one-host cluster from
//! scripts/slurm-cluster.sh) and Prometheus (`promtool check metrics`, and
//! node_exporter's textfile collector scraped on a loopback port). Every
//! `numaprobe run` here is the smallest there is (`--quick --only
//! bw-local`, a few seconds). Servers listen on loopback only and are
//! stopped by the test and by a time limit of their own.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

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

/// The host names of the runs in a database (from each run's machine).
fn hosts_in(db: &Path) -> Vec<String> {
    let list = json_of(np(db).args(["list", "--json"]));
    let mut hosts: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let id = r["id"].as_i64().unwrap().to_string();
            let run = json_of(np(db).args(["show", "--json", &id]));
            run["machine_info"]["hostname"].as_str().unwrap_or("").to_string()
        })
        .collect();
    hosts.sort();
    hosts
}

#[test]
fn ansible_measures_every_host_and_a_failing_one_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut inv = String::from("[fleet]\n");
    for h in ["np-a", "np-b", "np-c"] {
        inv.push_str(&format!(
            "{h} numaprobe_remote_dir={} numaprobe_hostname={h} numaprobe_extra_args='[\"--only\", \"bw-local\"]'\n",
            d.join(h).display()
        ));
    }
    // This host's run is refused (an unknown step): exit status 2.
    inv.push_str(&format!(
        "np-bad numaprobe_remote_dir={} numaprobe_hostname=np-bad numaprobe_extra_args='[\"--only\", \"no-such-step\"]'\n",
        d.join("np-bad").display()
    ));
    inv.push_str(
        "[fleet:vars]\nansible_connection=local\nansible_python_interpreter=/usr/bin/python3\n",
    );
    std::fs::write(d.join("inventory.ini"), inv).unwrap();
    let ctl = d.join("controller");
    let out = Command::new("timeout")
        .arg("600")
        .arg("ansible-playbook")
        .arg("-i")
        .arg(d.join("inventory.ini"))
        .arg(repo().join("deploy/ansible/numaprobe.yml"))
        .arg("-e")
        .arg(format!("numaprobe_binary={}", bin().display()))
        .args(["-e", "numaprobe_budget=quick"])
        .arg("-e")
        .arg(format!("numaprobe_controller_dir={}", ctl.display()))
        .arg("-e")
        .arg(format!("numaprobe_lock={}", d.join("measure.lock").display()))
        .env("ANSIBLE_LOCAL_TEMP", d.join("ansible-tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // Ansible says 2: a host failed. The failing host is named with why.
    assert_eq!(out.status.code(), Some(2), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("numaprobe run failed on np-bad (exit status 2)"), "{text}");
    let recap = text.split("PLAY RECAP").nth(1).unwrap_or_default();
    for h in ["np-a", "np-b", "np-c", "localhost"] {
        let line =
            recap.lines().find(|l| l.starts_with(h)).unwrap_or_else(|| panic!("{h}: {recap}"));
        assert!(line.contains("failed=0"), "{line}");
    }
    assert!(recap.lines().any(|l| l.starts_with("np-bad") && l.contains("failed=1")), "{recap}");
    // The controller's database holds the three hosts' runs, one each.
    let db = ctl.join("fleet.db");
    assert_eq!(hosts_in(&db), ["np-a", "np-b", "np-c"]);
    let fleet: Value =
        serde_json::from_str(&std::fs::read_to_string(ctl.join("fleet.json")).unwrap()).unwrap();
    assert_eq!(fleet["hosts"], 3, "{fleet}");
    assert_eq!(fleet["groups"][0]["hosts"].as_array().unwrap().len(), 3);
    let html = std::fs::read_to_string(ctl.join("fleet.html")).unwrap();
    assert!(html.contains("Fleet report: 3 host(s)") && html.contains("np-b"));
    assert!(ctl.join("fleet.md").is_file());
}

#[test]
fn slurm_job_measures_restricted_and_is_gathered() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(cpus >= 2, "this test needs 2 CPUs or more to show a restricted job (found {cpus})");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shared = d.join("shared");
    std::fs::create_dir(&shared).unwrap();
    let script = format!(
        "cd {shared} && sbatch --wait --cpus-per-task=1 {sbatch} && NUMAPROBE_BIN={bin} {gather} {shared}",
        shared = shared.display(),
        sbatch = repo().join("deploy/slurm/numaprobe.sbatch").display(),
        bin = bin().display(),
        gather = repo().join("deploy/slurm/gather.sh").display(),
    );
    let text = run_ok(
        Command::new(repo().join("scripts/slurm-cluster.sh"))
            .arg(d.join("cluster"))
            .args(["--", "bash", "-c", &script])
            .env("NUMAPROBE_SLURM_TIMEOUT", "400")
            .env("NUMAPROBE_SHARED", &shared)
            .env("NUMAPROBE_BIN", bin())
            .env("NUMAPROBE_BUDGET", "quick")
            .env("NUMAPROBE_ARGS", "--only bw-local")
            .env("NUMAPROBE_LABEL", "slurm")
            .env("NUMAPROBE_LOCK", d.join("measure.lock")),
    );
    assert!(text.contains("Submitted batch job"), "{text}");
    let db = shared.join("fleet.db");
    let list = json_of(np(&db).args(["list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let run = json_of(np(&db).args(["show", "--json", "slurm"]));
    assert_eq!(run["status"], "complete");
    // The job ran on the one CPU Slurm gave it, and the run says so: in
    // Slurm's cpuset cgroup when the cluster could write one (task/cgroup),
    // else through the CPU affinity Slurm set (task/affinity).
    let restriction = run["config"]["cgroup_restriction"].as_str().unwrap_or("");
    assert!(
        !restriction.is_empty() && restriction != "none",
        "the run's settings say it was restricted: {restriction:?}"
    );
    let cg = &run["topology"]["cgroup"];
    assert_eq!(cg["restricts"], true, "{cg}");
    assert_eq!(
        cg["affinity"].as_str().map(|a| a.contains(['-', ','])),
        Some(false),
        "one CPU: {cg}"
    );
    if text.contains("(task/cgroup") {
        assert!(cg["path"].as_str().unwrap_or("").contains("slurm"), "{cg}");
    }
    assert!(shared.join("fleet.html").is_file());
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
    assert!(body.contains("label=\"prom\""), "{body}");
    // The collector read our file without error.
    assert!(
        body.lines().any(|l| l.starts_with("node_textfile_scrape_error") && l.ends_with(" 0")),
        "{body}"
    );
}
