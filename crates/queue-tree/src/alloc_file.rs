//! Parsing and validation of `fair-scheduler.xml` into an `AllocConfig`.
