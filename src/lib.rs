//! svcgate
