//! Progress bars of measurement events ([`report::console::progress`]).

pub use report::console::progress::Bars;
