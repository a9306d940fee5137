//! What `numaprobe study` says: its progress, plan and ending as text
//! ([`text`]) and its `--json` documents ([`doc`]). The study itself is
//! the `vary` crate's; `compare`'s table of a study is [`crate::study_text`].

pub mod child;
pub mod doc;
pub mod refusal;
pub mod text;
