//! HTTP/1.1 on the accepted connections: reading requests, answering with the apiserver's
//! status bodies, and routing each request to discovery, get, list or watch.

use super::*;

pub(crate) fn accept_loop(listener: TcpListener, state: Arc<State>) {
    for stream in listener.incoming() {
        if state.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else {
            thread::sleep(Duration::from_millis(10));
            continue;
        };
        let conn_state = state.clone();
        // A connection whose thread cannot start is dropped (closed).
        let _ = thread::Builder::new()
            .name("test-apiserver-conn".into())
            .spawn(move || serve_connection(&conn_state, stream));
    }
}

/// A parsed request head.
pub(crate) struct Request {
    pub(crate) method: String,
    /// The request target as sent.
    pub(crate) target: String,
    /// The path, percent-decoded.
    pub(crate) path: String,
    pub(crate) raw_query: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) keep_alive: bool,
}

impl Request {
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub(crate) struct Conn {
    pub(crate) stream: TcpStream,
    pub(crate) buf: Vec<u8>,
}

/// What reading a request gave.
pub(crate) enum Incoming {
    Request(Request),
    /// The client closed the connection (or the server is stopping).
    Closed,
    /// A request the server cannot read: answer with this status and close.
    Bad(u16, String),
}

impl Conn {
    /// Reads until a request head is complete; `None`: closed or stopping.
    pub(crate) fn read_head(&mut self, stop: &AtomicBool) -> io::Result<Option<Vec<u8>>> {
        loop {
            // Empty lines before a request line are ignored (RFC 9112 §2.2).
            while self.buf.starts_with(b"\r\n") {
                self.buf.drain(..2);
            }
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                return Ok(Some(self.buf.drain(..end + 4).collect()));
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "request head too large"));
            }
            if !self.fill(stop)? {
                return Ok(None);
            }
        }
    }

    /// Reads more bytes into the buffer; `false` when the client closed or the server stops.
    pub(crate) fn fill(&mut self, stop: &AtomicBool) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(true);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads and drops `n` body bytes.
    pub(crate) fn discard(&mut self, mut n: usize, stop: &AtomicBool) -> io::Result<bool> {
        loop {
            let take = n.min(self.buf.len());
            self.buf.drain(..take);
            n -= take;
            if n == 0 {
                return Ok(true);
            }
            if !self.fill(stop)? {
                return Ok(false);
            }
        }
    }

    pub(crate) fn next_request(&mut self, stop: &AtomicBool) -> Incoming {
        let head = match self.read_head(stop) {
            Ok(Some(head)) => head,
            Ok(None) => return Incoming::Closed,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => return Incoming::Bad(431, e.to_string()),
            Err(_) => return Incoming::Closed,
        };
        let (request, body) = match parse_head(&head) {
            Ok(parsed) => parsed,
            Err(message) => return Incoming::Bad(400, message),
        };
        match body {
            Body::None => Incoming::Request(request),
            Body::Length(n) if n <= MAX_BODY_BYTES => match self.discard(n, stop) {
                Ok(true) => Incoming::Request(request),
                _ => Incoming::Closed,
            },
            Body::Length(_) => Incoming::Bad(413, "request body too large".into()),
            Body::Chunked => Incoming::Bad(
                if request.method == "GET" { 400 } else { 405 },
                "chunked request bodies are not accepted".into(),
            ),
        }
    }
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

pub(crate) enum Body {
    None,
    Length(usize),
    Chunked,
}

pub(crate) fn parse_head(head: &[u8]) -> Result<(Request, Body), String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_string())?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("malformed request line {request_line:?}"));
    };
    if method.is_empty() || !version.starts_with("HTTP/1.") {
        return Err(format!("malformed request line {request_line:?}"));
    }
    let mut keep_alive = version != "HTTP/1.0";
    let mut body = Body::None;
    for line in lines.filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else { return Err(format!("malformed header line {line:?}")) };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "connection" => {
                let tokens: Vec<String> = value.split(',').map(|t| t.trim().to_ascii_lowercase()).collect();
                if tokens.iter().any(|t| t == "close") {
                    keep_alive = false;
                } else if tokens.iter().any(|t| t == "keep-alive") {
                    keep_alive = true;
                }
            }
            "content-length" => {
                let n = value.parse::<usize>().map_err(|_| format!("bad Content-Length {value:?}"))?;
                if !matches!(body, Body::Chunked) && n > 0 {
                    body = Body::Length(n);
                }
            }
            "transfer-encoding" if !value.eq_ignore_ascii_case("identity") => body = Body::Chunked,
            _ => {}
        }
    }
    // An absolute-form target (as sent to a proxy) is read as its path.
    let origin = match target.strip_prefix("http://").or_else(|| target.strip_prefix("https://")) {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    let (raw_path, raw_query) = origin.split_once('?').unwrap_or((origin, ""));
    let path = percent_decode(raw_path, false).ok_or_else(|| format!("bad percent-encoding in {raw_path:?}"))?;
    let mut query = Vec::new();
    for pair in raw_query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = percent_decode(k, true).ok_or_else(|| format!("bad percent-encoding in {k:?}"))?;
        let v = percent_decode(v, true).ok_or_else(|| format!("bad percent-encoding in {v:?}"))?;
        query.push((k, v));
    }
    let request = Request {
        method: method.to_string(),
        target: target.to_string(),
        path,
        raw_query: raw_query.to_string(),
        query,
        keep_alive,
    };
    Ok((request, body))
}

/// Decodes `%XX` escapes (and, in query strings, `+` as a space); `None` when malformed or
/// not UTF-8.
pub(crate) fn percent_decode(s: &str, plus_is_space: bool) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

pub(crate) fn serve_connection(state: &State, stream: TcpStream) {
    if stream.set_read_timeout(Some(TICK)).is_err() {
        return;
    }
    let _ = stream.set_nodelay(true);
    let mut conn = Conn { stream, buf: Vec::new() };
    loop {
        match conn.next_request(&state.stop) {
            Incoming::Closed => break,
            Incoming::Bad(code, message) => {
                let body = status_body(code, reason_of(code), &message, json!({}));
                let _ = write_response(&conn.stream, code, "application/json", &body, false);
                break;
            }
            Incoming::Request(request) => match handle(state, &mut conn, &request) {
                Ok(true) if request.keep_alive && !state.stop.load(Ordering::SeqCst) => {}
                _ => break,
            },
        }
    }
    let _ = conn.stream.shutdown(Shutdown::Both);
}

pub(crate) fn reason_phrase(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    }
}

/// The `reason` of a Kubernetes Status for an HTTP status code.
pub(crate) fn reason_of(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        413 => "RequestEntityTooLarge",
        431 => "BadRequest",
        _ => "InternalError",
    }
}

/// A `meta/v1` Status object.
pub(crate) fn status_body(code: u16, reason: &str, message: &str, details: Value) -> Vec<u8> {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if details.as_object().is_some_and(|d| !d.is_empty()) || code == 404 {
        status["details"] = details;
    }
    status.to_string().into_bytes()
}

pub(crate) fn write_head(
    mut out: impl Write,
    code: u16,
    content_type: &str,
    length: usize,
    keep_alive: bool,
) -> io::Result<()> {
    let connection = if keep_alive { "keep-alive" } else { "close" };
    write!(
        out,
        "HTTP/1.1 {code} {}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\nCache-Control: no-cache, private\r\nConnection: {connection}\r\n\r\n",
        reason_phrase(code)
    )
}

pub(crate) fn write_response(
    stream: &TcpStream,
    code: u16,
    content_type: &str,
    body: &[u8],
    keep_alive: bool,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, stream);
    write_head(&mut out, code, content_type, body.len(), keep_alive)?;
    out.write_all(body)?;
    out.flush()
}

/// The Status answered for a path or group/version the server does not serve.
pub(crate) fn not_served() -> (u16, Vec<u8>) {
    (404, status_body(404, "NotFound", "the server could not find the requested resource", json!({})))
}

pub(crate) fn bad_request(message: &str) -> (u16, Vec<u8>) {
    (400, status_body(400, "BadRequest", message, json!({})))
}

/// Answers one request; `Ok(false)` when the connection must close.
pub(crate) fn handle(state: &State, conn: &mut Conn, request: &Request) -> io::Result<bool> {
    if request.method != "GET" {
        let body = status_body(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            json!({}),
        );
        state.record(request, Call::Other, 405, body.len());
        write_response(&conn.stream, 405, "application/json", &body, request.keep_alive)?;
        return Ok(true);
    }
    let segments: Vec<&str> = request.path.split('/').filter(|s| !s.is_empty()).collect();
    let (api_version, rest) = match segments.as_slice() {
        ["version"] => return simple(state, conn, request, Call::Discovery, (200, version_info())),
        ["healthz" | "readyz" | "livez"] => {
            state.record(request, Call::Other, 200, 2);
            write_response(&conn.stream, 200, "text/plain; charset=utf-8", b"ok", request.keep_alive)?;
            return Ok(true);
        }
        ["api"] => return simple(state, conn, request, Call::Discovery, (200, api_versions(state.addr))),
        ["apis"] => return simple(state, conn, request, Call::Discovery, (200, api_group_list(&state.store))),
        ["apis", group] => return simple(state, conn, request, Call::Discovery, api_group(&state.store, group)),
        ["api", version, rest @ ..] => (version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
        _ => return simple(state, conn, request, Call::Other, not_served()),
    };
    let Some(resources) = state.store.resources.get(&api_version) else {
        let call = if rest.is_empty() { Call::Discovery } else { Call::Other };
        return simple(state, conn, request, call, not_served());
    };
    // (namespace, plural, name)
    let (namespace, plural, name) = match rest {
        [] => return simple(state, conn, request, Call::Discovery, (200, api_resource_list(&api_version, resources))),
        ["namespaces", ns, plural] => (Some(*ns), *plural, None),
        ["namespaces", ns, plural, name] => (Some(*ns), *plural, Some(*name)),
        [plural] => (None, *plural, None),
        [plural, name] => (None, *plural, Some(*name)),
        _ => return simple(state, conn, request, Call::Other, not_served()),
    };
    let Some(resource) = state.store.resource(&api_version, plural) else {
        return simple(state, conn, request, Call::Other, not_served());
    };
    // A namespaced path to a cluster-scoped resource, or a get of a namespaced one without
    // its namespace, is not routed by the apiserver.
    if (namespace.is_some() && !resource.namespaced) || (namespace.is_none() && name.is_some() && resource.namespaced) {
        return simple(state, conn, request, Call::Other, not_served());
    }
    let watch = match request.param("watch").map(parse_bool) {
        None => false,
        Some(Some(w)) => w,
        Some(None) => {
            return simple(state, conn, request, Call::Other, bad_request("watch: invalid value, expected a boolean"));
        }
    };
    if let (Some(name), false) = (name, watch) {
        let found = state
            .store
            .objects(&api_version, &resource.kind)
            .iter()
            .find(|o| o.name == name && o.namespace.as_deref() == namespace);
        let answer = match found {
            Some(object) => {
                let mut body = Vec::with_capacity(object.tail.len() + 64);
                object.write_to(&mut body, &item_head(&api_version))?;
                (200, body)
            }
            None => not_found(&api_version, &resource.plural, name),
        };
        return simple(state, conn, request, Call::Get, answer);
    }
    let call = if watch { Call::Watch } else { Call::List };
    let mut filter = match Filter::from_request(request) {
        Ok(filter) => filter,
        Err(message) => return simple(state, conn, request, call, bad_request(&message)),
    };
    filter.namespace = namespace.map(str::to_string);
    filter.name = name.map(str::to_string);
    let objects = state.store.objects(&api_version, &resource.kind);
    if watch {
        return serve_watch(state, conn, request, &api_version, &resource.kind, objects, &filter);
    }
    serve_list(state, conn, request, &api_version, &resource.kind, objects, &filter)
}

/// Writes a small answer and records it.
pub(crate) fn simple(
    state: &State,
    conn: &mut Conn,
    request: &Request,
    call: Call,
    (code, body): (u16, Vec<u8>),
) -> io::Result<bool> {
    state.record(request, call, code, body.len());
    write_response(&conn.stream, code, "application/json", &body, request.keep_alive)?;
    Ok(true)
}

/// Go's `strconv.ParseBool`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" | "" => Some(false),
        _ => None,
    }
}

pub(crate) fn not_found(api_version: &str, plural: &str, name: &str) -> (u16, Vec<u8>) {
    let group = group_of(api_version);
    let (message, details) = if group.is_empty() {
        (format!("{plural} {name:?} not found"), json!({"name": name, "kind": plural}))
    } else {
        (format!("{plural}.{group} {name:?} not found"), json!({"name": name, "group": group, "kind": plural}))
    };
    (404, status_body(404, "NotFound", &message, details))
}
