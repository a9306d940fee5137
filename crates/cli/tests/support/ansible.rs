//! Shared by the suites that run deploy/ansible/numaprobe.yml with the real
//! ansible-playbook (fleet_real, packages): running the playbook on an
//! inventory of "hosts" of this machine, and reading what it said and wrote.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// One inventory line: a "host" of this machine with its own folder, its
/// own machine identity and the smallest run there is.
pub fn host_line(d: &Path, name: &str, extra: &str) -> String {
    format!(
        "{name} numaprobe_remote_dir={dir} numaprobe_extra_args='[\"--only\", \"bw-local\"]' \
         numaprobe_environment='{{\"NUMAPROBE_MACHINE_ID\": \"{name}\"}}' {extra}\n",
        dir = d.join(name).display()
    )
}

pub const INVENTORY_VARS: &str = "[fleet:vars]\nansible_connection=local\n\
    ansible_python_interpreter=/usr/bin/python3\nnumaprobe_poll=1\n";

/// Runs deploy/ansible/numaprobe.yml (below `repo`) on `inventory`, written
/// to `d/inventory.ini`, the controller's files in `d/controller`, with
/// `args` added: its exit status and output (stdout then stderr).
pub fn playbook(repo: &Path, d: &Path, inventory: &str, args: &[String]) -> (Option<i32>, String) {
    let inv = d.join("inventory.ini");
    std::fs::write(&inv, inventory).unwrap();
    let out = Command::new("timeout")
        .arg("600")
        .arg("ansible-playbook")
        .arg("-i")
        .arg(&inv)
        .arg(repo.join("deploy/ansible/numaprobe.yml"))
        .args(["-e", "numaprobe_budget=quick"])
        .arg("-e")
        .arg(format!("numaprobe_controller_dir={}", d.join("controller").display()))
        .args(args)
        .env("ANSIBLE_LOCAL_TEMP", d.join("ansible-tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        .output()
        .unwrap_or_else(|e| {
            panic!("ansible-playbook: {e} (scripts/fleet-setup.sh installs ansible-core)")
        });
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

/// The PLAY RECAP line of a host.
pub fn recap<'a>(text: &'a str, host: &str) -> &'a str {
    let recap = text.split("PLAY RECAP").nth(1).unwrap_or_default();
    recap
        .lines()
        .find(|l| l.split_whitespace().next() == Some(host))
        .unwrap_or_else(|| panic!("{host} not in the recap:\n{text}"))
}

/// How the role's task named `task` ended on `host` in each play of
/// `text`, in order: `ok`, `changed`, `skipping`, `fatal`...
#[allow(dead_code)]
pub fn task_results(text: &str, task: &str, host: &str) -> Vec<String> {
    let header = format!("TASK [numaprobe : {task}]");
    let (tag, delegated) = (format!("[{host}]"), format!("[{host} -> "));
    text.split(&header)
        .skip(1)
        .map(|after| {
            after
                .lines()
                .skip(1)
                .take_while(|l| !l.starts_with("TASK [") && !l.starts_with("PLAY "))
                .find(|l| l.contains(&tag) || l.contains(&delegated))
                .and_then(|l| l.split(':').next())
                .unwrap_or_else(|| panic!("{task}: no result for {host}:\n{text}"))
                .to_string()
        })
        .collect()
}

pub fn fleet_json(ctl: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(ctl.join("fleet.json")).unwrap()).unwrap()
}

/// (host, run uuid) of every host compared in a fleet.
pub fn compared(fleet: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = fleet["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hosts"].as_array().unwrap())
        .map(|h| (h["host"].as_str().unwrap().into(), h["run_uuid"].as_str().unwrap().into()))
        .collect();
    v.sort();
    v
}

/// (host, error) of every host the fleet lists as not measured.
pub fn unmeasured(fleet: &Value) -> Vec<(String, String)> {
    fleet["unmeasured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["host"].as_str().unwrap().into(), u["error"].as_str().unwrap().into()))
        .collect()
}
