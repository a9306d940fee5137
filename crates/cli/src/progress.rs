//! Progress bars of measurement events ([`console::progress`]).

pub use console::progress::Bars;
