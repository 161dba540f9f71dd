//! Linux: futex waits (and, later, the signal and the system-call trampolines).

pub(crate) mod futex;
