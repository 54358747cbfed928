//! Site settings: the `yarn.scheduler.*` properties of a Hadoop-style configuration file.
