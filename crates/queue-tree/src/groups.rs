//! Group mapping: which groups a user belongs to (first is the primary group).
