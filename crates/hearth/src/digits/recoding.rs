//! Koyama-Tsuruoka recoding and sliding windows (in progress).
