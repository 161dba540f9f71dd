//! Guides: how to move to thread-cancel, and what is safe to do with it.
//!
//! (Filled in by the guides work: one sub-module per guide.)
