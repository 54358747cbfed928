//! Hadoop ComputeFairShares: splitting a total among weighted schedulables with min and max shares.
