//! Refusals written by the HTTP layer itself, given the service's error shape.
//!
//! hyper answers a request it cannot parse (a bad request line, a URI or header section over its limits) with
//! an empty body before svcgate sees the request: `400`, `414` or `431` with only `connection: close`,
//! `content-length: 0` and `date`. Clients of the service expect `{"message": "…"}` on every refusal, so [`RefusalBodies`] sits between
//! hyper and the client socket and rewrites exactly those responses. They are told apart without doubt: every
//! response svcgate's own handlers produce carries `x-request-id`, and hyper's refusals carry no other header
//! than those two. Every other write passes through untouched, at the cost of one prefix comparison.

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A client stream that gives hyper's own refusals a JSON body.
pub struct RefusalBodies<S> {
    inner: S,
    /// A rewritten refusal being written, and how much of it is written.
    rewriting: Option<(Vec<u8>, usize)>,
}

impl<S> RefusalBodies<S> {
    /// Wraps the client stream `inner`.
    pub fn new(inner: S) -> Self {
        RefusalBodies {
            inner,
            rewriting: None,
        }
    }
}

/// The statuses hyper answers by itself with an empty body.
const REFUSALS: [&str; 3] = ["400", "414", "431"];

/// The JSON refusal for a response head hyper wrote, when it is one of hyper's own empty refusals.
pub fn rewrite(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let head = text.strip_suffix("\r\n\r\n")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let status = status_line.strip_prefix("HTTP/1.1 ")?;
    let code = status.get(..3)?;
    if !REFUSALS.contains(&code) {
        return None;
    }
    let mut date = None;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" if value.trim() == "0" => {}
            "connection" if value.trim().eq_ignore_ascii_case("close") => {}
            "date" => date = Some(value.trim()),
            // Any other header: not hyper's bare refusal.
            _ => return None,
        }
    }
    let body = serde_json::json!({ "message": status }).to_string();
    let mut answer = format!(
        "{status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(date) = date {
        answer.push_str(&format!("date: {date}\r\n"));
    }
    answer.push_str("\r\n");
    answer.push_str(&body);
    Some(answer.into_bytes())
}

impl<S: AsyncWrite + Unpin> RefusalBodies<S> {
    /// Writes the pending rewritten refusal; ready once all of it is written, then reports `written` bytes of
    /// hyper's own as written.
    fn poll_rewriting(&mut self, cx: &mut Context<'_>, written: usize) -> Poll<std::io::Result<usize>> {
        while let Some((bytes, done)) = &mut self.rewriting {
            if *done == bytes.len() {
                self.rewriting = None;
                return Poll::Ready(Ok(written));
            }
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(count)) => *done += count,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(written))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for RefusalBodies<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for RefusalBodies<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if this.rewriting.is_some() {
            return this.poll_rewriting(cx, buf.len());
        }
        if buf.starts_with(b"HTTP/1.1 4") {
            if let Some(answer) = rewrite(buf) {
                this.rewriting = Some((answer, 0));
                return this.poll_rewriting(cx, buf.len());
            }
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let total: usize = bufs.iter().map(|buf| buf.len()).sum();
        if this.rewriting.is_some() {
            return this.poll_rewriting(cx, total);
        }
        // A bare refusal is a head alone: one non-empty slice.
        let mut filled = bufs.iter().filter(|buf| !buf.is_empty());
        if let (Some(first), None) = (filled.next(), filled.next()) {
            if first.starts_with(b"HTTP/1.1 4") {
                if let Some(answer) = rewrite(first) {
                    this.rewriting = Some((answer, 0));
                    return this.poll_rewriting(cx, total);
                }
            }
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.rewriting.is_some() {
            return this.poll_rewriting(cx, 0).map_ok(|_| ());
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.rewriting.is_some() && this.poll_rewriting(cx, 0).is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_bare_refusals_get_a_json_body_and_nothing_else_is_touched() {
        let head = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Tue, 24 Nov 2026 12:00:00 GMT\r\n\r\n";
        let answer = String::from_utf8(rewrite(head).unwrap_or_default()).unwrap_or_default();
        assert!(
            answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{answer}"
        );
        assert!(answer.contains("content-type: application/json\r\n"), "{answer}");
        assert!(
            answer.contains("date: Tue, 24 Nov 2026 12:00:00 GMT\r\n"),
            "{answer}"
        );
        assert!(
            answer.ends_with("\r\n\r\n{\"message\":\"431 Request Header Fields Too Large\"}"),
            "{answer}"
        );
        for untouched in [
            // svcgate's own answers carry x-request-id.
            &b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nx-request-id: 1\r\n\r\n"[..],
            // A body, another status, HTTP/1.0, a body already there.
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}",
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.0 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
        ] {
            assert!(
                rewrite(untouched).is_none(),
                "{}",
                String::from_utf8_lossy(untouched)
            );
        }
    }
}
