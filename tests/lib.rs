//! Workspace-wide tests live in this package's test targets (`tidy.rs`, ...);
//! the library itself is empty.
