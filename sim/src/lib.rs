//! svc-sim
