//! Broadcast messages: banners shown to every user between two times.

use crate::time::Millis;

/// A broadcast message.
#[derive(Debug, Clone)]
pub struct BroadcastMessage {
    /// Id.
    pub id: u64,
    /// Text.
    pub message: String,
    /// Start of display.
    pub starts_at: Millis,
    /// End of display.
    pub ends_at: Millis,
    /// Background colour, e.g. `#E75E40`.
    pub color: Option<String>,
    /// Font colour.
    pub font: Option<String>,
}

impl BroadcastMessage {
    /// Whether the message is shown at `now`.
    pub fn active_at(&self, now: Millis) -> bool {
        self.starts_at <= now && now < self.ends_at
    }
}
