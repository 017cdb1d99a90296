//! Free-doubling addition-subtraction chains (in progress).
