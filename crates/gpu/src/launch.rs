//! Finds and runs the GPU helper for the (static) `numaprobe` binary, and
//! collects its messages.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};

use crate::protocol::{Message, Plan, Point, Probe};
use crate::GpuError;

/// The helper's file name, looked for beside the running binary.
pub const HELPER_NAME: &str = "numaprobe-gpu";

/// The oldest glibc the released helper runs on (scripts/release.sh
/// checks that it needs no newer symbol).
pub const MIN_GLIBC: &str = "2.34";

/// The longest line the helper may write (a point's JSON is far smaller).
const MAX_LINE: u64 = 1 << 20;

/// Where the helper is looked for, relative to the running binary's
/// folder: beside it (the release archive, a build tree), then the
/// packages' place (`/usr/bin/numaprobe` -> `/usr/libexec/numaprobe/`).
pub const HELPER_PLACES: [&str; 2] = [HELPER_NAME, "../libexec/numaprobe/numaprobe-gpu"];

/// The helper to run: `NUMAPROBE_GPU_HELPER` when set, else the first of
/// [`HELPER_PLACES`] that exists. Missing: an error naming every place.
pub fn helper_path() -> Result<PathBuf, GpuError> {
    if let Some(p) = std::env::var_os("NUMAPROBE_GPU_HELPER") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            return Err(GpuError::Helper(format!(
                "the GPU helper {} (NUMAPROBE_GPU_HELPER) is missing",
                p.display()
            )));
        }
        return Ok(p);
    }
    let exe = std::env::current_exe()
        .map_err(|e| GpuError::Helper(format!("cannot find the running binary: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let places: Vec<PathBuf> = HELPER_PLACES.iter().map(|p| dir.join(p)).collect();
    places.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        let list: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
        GpuError::Helper(format!(
            "the GPU helper is missing: looked for {} (the release archive and packages ship it; or set NUMAPROBE_GPU_HELPER)",
            list.join(" and ")
        ))
    })
}

/// What a helper run gave, kept even when it stopped early.
#[derive(Debug, Default)]
pub struct Session {
    pub probe: Option<Probe>,
    pub points: Vec<Point>,
    pub warnings: Vec<String>,
    /// Why the helper stopped early (its `failed` message, or its exit).
    pub stopped: Option<String>,
}

/// Runs `numaprobe-gpu ARG`, feeding `plan` on stdin, and hands every
/// message to `each` as it arrives (progress).
pub fn run(
    arg: &str,
    plan: Option<&Plan>,
    mut each: impl FnMut(&Message),
) -> Result<Session, GpuError> {
    let input = plan.map(|p| serde_json::to_vec(p).expect("a plan serialises"));
    drive(arg, input, false, |m, _| each(m))
}

/// Runs `numaprobe-gpu stream` with `plan`: once the helper says the GPUs
/// are copying, runs `during` (the CPU measurement), then closes the
/// helper's stdin, which stops the copies, and collects what they moved.
/// `during` does not run when the helper stops before streaming.
pub fn stream<T>(
    plan: &Plan,
    during: impl FnOnce() -> T,
) -> Result<(Session, Option<T>), GpuError> {
    let mut line = serde_json::to_vec(plan).expect("a plan serialises");
    line.push(b'\n');
    let mut during = Some(during);
    let mut got = None;
    let s = drive("stream", Some(line), true, |m, stdin| {
        if matches!(m, Message::Streaming) {
            if let Some(f) = during.take() {
                got = Some(f());
            }
            // Closing stdin is the signal to stop.
            stdin.take();
        }
    })?;
    Ok((s, got))
}

fn drive(
    arg: &str,
    input: Option<Vec<u8>>,
    keep_open: bool,
    mut each: impl FnMut(&Message, &mut Option<ChildStdin>),
) -> Result<Session, GpuError> {
    let path = helper_path()?;
    let mut child = Command::new(&path)
        .arg(arg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            GpuError::Helper(format!("cannot run the GPU helper {}: {e}", path.display()))
        })?;
    let mut stdin = child.stdin.take();
    if let (Some(text), Some(pipe)) = (input, stdin.as_mut()) {
        // A helper that died at once shows in its exit status below.
        let _ = pipe.write_all(&text).and_then(|_| pipe.flush());
    }
    if !keep_open {
        stdin.take();
    }
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut s = Session::default();
    let mut done = false;
    loop {
        let mut line = String::new();
        match (&mut out).take(MAX_LINE).read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                s.stopped = Some(format!("reading the GPU helper's output: {e}"));
                break;
            }
        }
        let msg: Message = match serde_json::from_str(line.trim_end()) {
            Ok(m) => m,
            Err(e) => {
                s.stopped = Some(format!("the GPU helper wrote a line numaprobe cannot read ({e}): is it from another release?"));
                break;
            }
        };
        each(&msg, &mut stdin);
        match msg {
            Message::Probe(p) => s.probe = Some(p),
            Message::Point(p) => s.points.push(p),
            Message::Warning { text } => s.warnings.push(text),
            Message::Failed { text } => s.stopped = Some(text),
            Message::Streaming => {}
            Message::Done => done = true,
        }
    }
    // A helper still waiting for the word to stop gets it (its stdout
    // closed early: it ends at its next write).
    drop(stdin);
    let status =
        child.wait().map_err(|e| GpuError::Helper(format!("waiting for the GPU helper: {e}")))?;
    if !done && s.stopped.is_none() {
        s.stopped = Some(match status.code() {
            // The dynamic loader's status: a library or symbol version is
            // missing (its message is on stderr above this one).
            Some(127) => format!(
                "the GPU helper {} could not start (status 127, the loader's message is above): it needs glibc {MIN_GLIBC} or newer (EL9, Debian 12, Ubuntu 22.04)",
                path.display()
            ),
            Some(c) => format!("the GPU helper exited with status {c} before finishing"),
            None => "the GPU helper was killed by a signal before finishing".to_string(),
        });
    }
    Ok(s)
}
