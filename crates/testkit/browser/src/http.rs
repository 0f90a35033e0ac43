//! A minimal blocking HTTP/1.1 client for talking JSON to chromedriver on loopback.
//!
//! chromedriver only listens on `127.0.0.1`, answers one request per connection when asked
//! (`Connection: close`) and speaks plain JSON, so a few dozen lines over `TcpStream` are enough
//! and keep this test helper free of TLS and async dependencies.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::Error;

/// How long one WebDriver command may take before the request fails. Navigation and
/// screenshots of large pages are the slow ones.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// One HTTP response: status code and decoded body bytes.
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

/// Sends `method path` with an optional JSON body to `127.0.0.1:port` and reads the whole reply.
pub(crate) fn request(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> Result<Response, Error> {
    let payload = match body {
        Some(v) => serde_json::to_vec(v).map_err(|e| Error::new(format!("encode body: {e}")))?,
        None => Vec::new(),
    };
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| Error::new(format!("connect to chromedriver on port {port}: {e}")))?;
    let _ = stream.set_read_timeout(Some(REQUEST_TIMEOUT));
    let _ = stream.set_write_timeout(Some(REQUEST_TIMEOUT));
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        payload.len()
    );
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(&payload))
        .map_err(|e| Error::new(format!("{method} {path}: write: {e}")))?;
    let raw = read_message(&mut stream).map_err(|e| Error::new(format!("{method} {path}: read: {e}")))?;
    parse_response(&raw).ok_or_else(|| {
        Error::new(format!(
            "{method} {path}: malformed HTTP response ({} bytes)",
            raw.len()
        ))
    })
}

/// Reads one complete response. chromedriver keeps the connection open despite
/// `Connection: close`, so the end is found from `Content-Length` or the final chunk rather than
/// from end-of-stream.
fn read_message(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        if message_complete(&raw) {
            return Ok(raw);
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(raw);
        }
        raw.extend_from_slice(&buf[..n]);
    }
}

/// Returns true if and only if `raw` holds a whole response: headers plus the body announced
/// by `Content-Length`, or a chunked body through its last chunk.
fn message_complete(raw: &[u8]) -> bool {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let body = &raw[split + 4..];
    if head.contains("transfer-encoding: chunked") || head.contains("transfer-encoding:chunked") {
        return body.ends_with(b"0\r\n\r\n");
    }
    let length = head.lines().find_map(|l| {
        l.strip_prefix("content-length:")
            .and_then(|v| v.trim().parse::<usize>().ok())
    });
    match length {
        Some(n) => body.len() >= n,
        None => false,
    }
}

/// Splits a raw HTTP/1.1 response into status and body, undoing chunked transfer encoding.
fn parse_response(raw: &[u8]) -> Option<Response> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
            chunked = true;
        } else if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        }
    }
    let body = if chunked {
        dechunk(rest)?
    } else {
        let n = length.unwrap_or(rest.len()).min(rest.len());
        rest[..n].to_vec()
    };
    Some(Response { status, body })
}

/// Decodes a chunked body: `<hex len>\r\n<bytes>\r\n ... 0\r\n\r\n`.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..eol]).ok()?;
        let size_text = size_text.split(';').next()?.trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_length_body() {
        let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"{}");
    }

    #[test]
    fn parses_chunked_body() {
        let raw =
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let r = parse_response(raw).unwrap();
        assert_eq!(r.status, 404);
        assert_eq!(r.body, b"abcde");
    }

    #[test]
    fn knows_when_a_message_is_complete() {
        assert!(!message_complete(
            b"HTTP/1.1 200 OK\r\nContent-Length:4\r\n\r\n{}"
        ));
        assert!(message_complete(b"HTTP/1.1 200 OK\r\nContent-Length:2\r\n\r\n{}"));
        assert!(!message_complete(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n"
        ));
        assert!(message_complete(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        ));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_response(b"nonsense").is_none());
    }
}
