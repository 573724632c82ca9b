//! A tiny HTTP client, for tests and the project's automation against local servers.

use super::*;

/// A minimal HTTP/1.1 client over std's TcpStream (`Connection: close`, `http://` only), for
/// talking to this server, to policy-server and to a local OCI registry in tests and in the
/// project's automation.
pub mod client {
    use std::io::{self, Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    fn invalid(message: String) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, message)
    }

    /// Splits `http://host:port/path?query` into (`host:port`, `/path?query`).
    fn split_url(url: &str) -> io::Result<(&str, &str)> {
        let rest = url.strip_prefix("http://").ok_or_else(|| invalid(format!("not an http:// URL: {url}")))?;
        Ok(match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        })
    }

    /// A whole answer: status, head fields (names in lower case) and body.
    pub struct Response {
        pub status: u16,
        pub headers: Vec<(String, String)>,
        pub body: Vec<u8>,
    }

    impl Response {
        /// The first value of head field `name` (lower case).
        pub fn header(&self, name: &str) -> Option<&str> {
            self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
        }
    }

    /// Sends one request with the given head fields and reads the whole answer. Chunked
    /// bodies are decoded.
    pub fn exchange(
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
        timeout: Duration,
    ) -> io::Result<Response> {
        let (authority, target) = split_url(url)?;
        let mut stream = TcpStream::connect(authority)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() || !matches!(method, "GET" | "HEAD") {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        stream.flush()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer)?;
        parse_full_response(&answer)
    }

    /// Sends one request and reads the whole answer: (status, body).
    pub fn request(
        method: &str,
        url: &str,
        content_type: Option<&str>,
        body: &[u8],
        timeout: Duration,
    ) -> io::Result<(u16, Vec<u8>)> {
        let mut headers = vec![("Accept", "application/json")];
        headers.extend(content_type.map(|ct| ("Content-Type", ct)));
        let r = exchange(method, url, &headers, body, timeout)?;
        Ok((r.status, r.body))
    }

    /// Parses a whole HTTP/1.1 response (read until the connection closed).
    pub fn parse_response(answer: &[u8]) -> io::Result<(u16, Vec<u8>)> {
        let r = parse_full_response(answer)?;
        Ok((r.status, r.body))
    }

    fn parse_full_response(answer: &[u8]) -> io::Result<Response> {
        let end = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| invalid("no end of the response head".into()))?;
        let head = std::str::from_utf8(&answer[..end]).map_err(|_| invalid("the response head is not UTF-8".into()))?;
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| invalid(format!("bad status line in {head:?}")))?;
        let headers: Vec<(String, String)> = head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let chunked =
            headers.iter().any(|(n, v)| n == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
        let body = &answer[end + 4..];
        Ok(Response { status, headers, body: if chunked { dechunk(body)? } else { body.to_vec() } })
    }

    /// Decodes a chunked body.
    pub fn dechunk(mut body: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let line_end =
                body.windows(2).position(|w| w == b"\r\n").ok_or_else(|| invalid("truncated chunk size".into()))?;
            let size_text = std::str::from_utf8(&body[..line_end]).map_err(|_| invalid("bad chunk size".into()))?;
            let size_text = size_text.split(';').next().unwrap_or_default().trim();
            let size =
                usize::from_str_radix(size_text, 16).map_err(|_| invalid(format!("bad chunk size {size_text:?}")))?;
            body = &body[line_end + 2..];
            if size == 0 {
                return Ok(out);
            }
            let chunk = body.get(..size).ok_or_else(|| invalid("truncated chunk".into()))?;
            out.extend_from_slice(chunk);
            body = body.get(size + 2..).ok_or_else(|| invalid("truncated chunk".into()))?;
        }
    }

    /// `GET url`: (status, body).
    pub fn get(url: &str) -> io::Result<(u16, Vec<u8>)> {
        request("GET", url, None, b"", Duration::from_secs(60))
    }

    /// `POST url` with a JSON body: (status, body).
    pub fn post_json(url: &str, body: &serde_json::Value) -> io::Result<(u16, Vec<u8>)> {
        request("POST", url, Some("application/json"), body.to_string().as_bytes(), Duration::from_secs(60))
    }
}

/// [`client::post_json`], the answer read as text.
pub fn http_post_json(url: &str, body: &Value) -> io::Result<(u16, String)> {
    let (status, body) = client::post_json(url, body)?;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}
