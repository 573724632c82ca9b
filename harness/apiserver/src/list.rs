//! Lists (with selectors and `limit`/`continue` pagination) and watches.

use super::*;

pub(crate) fn encode_continue(resource_version: u64, offset: usize) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": resource_version, "start": offset.to_string()});
    base64::engine::general_purpose::STANDARD.encode(token.to_string())
}

pub(crate) fn decode_continue(token: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(token).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    value["start"].as_str()?.parse().ok()
}

pub(crate) fn serve_list(
    state: &State,
    conn: &mut Conn,
    request: &Request,
    api_version: &str,
    kind: &str,
    objects: &[Stored],
    filter: &Filter,
) -> io::Result<bool> {
    let limit = match request.param("limit").map(str::parse::<usize>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            return simple(
                state,
                conn,
                request,
                Call::List,
                bad_request("limit: invalid value, expected a non-negative integer"),
            );
        }
    };
    let start = match request.param("continue").filter(|c| !c.is_empty()) {
        None => 0,
        Some(token) => match decode_continue(token) {
            Some(offset) => offset,
            None => {
                return simple(
                    state,
                    conn,
                    request,
                    Call::List,
                    bad_request("continue key is not valid: the token cannot be decoded"),
                );
            }
        },
    };
    let matching: Vec<&Stored> = objects.iter().filter(|o| filter.matches(o)).collect();
    let start = start.min(matching.len());
    let end = if limit == 0 { matching.len() } else { start.saturating_add(limit).min(matching.len()) };
    let page = &matching[start..end];
    let rv = state.store.resource_version;
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), Value::from(rv.to_string()));
    if end < matching.len() {
        metadata.insert("continue".into(), Value::from(encode_continue(rv, end)));
        metadata.insert("remainingItemCount".into(), Value::from(matching.len() - end));
    }
    let head = format!(
        "{{\"apiVersion\":{},\"kind\":{},\"metadata\":{},\"items\":[",
        Value::from(api_version),
        Value::from(format!("{kind}List")),
        Value::Object(metadata)
    );
    let item_head = item_head(api_version);
    let length = head.len() + page.iter().map(|o| o.size(&item_head)).sum::<usize>() + page.len().saturating_sub(1) + 2;
    state.record(request, Call::List, 200, length);
    let mut out = BufWriter::with_capacity(256 * 1024, &conn.stream);
    write_head(&mut out, 200, "application/json", length, request.keep_alive)?;
    out.write_all(head.as_bytes())?;
    for (i, object) in page.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        object.write_to(&mut out, &item_head)?;
    }
    out.write_all(b"]}")?;
    out.flush()?;
    Ok(true)
}

pub(crate) fn write_chunk(out: &mut impl Write, data: &[u8]) -> io::Result<()> {
    write!(out, "{:x}\r\n", data.len())?;
    out.write_all(data)?;
    out.write_all(b"\r\n")
}

pub(crate) fn serve_watch(
    state: &State,
    conn: &mut Conn,
    request: &Request,
    api_version: &str,
    kind: &str,
    objects: &[Stored],
    filter: &Filter,
) -> io::Result<bool> {
    let timeout = match request.param("timeoutSeconds").map(str::parse::<u64>) {
        None => MAX_WATCH_SECONDS,
        Some(Ok(n)) => n.min(MAX_WATCH_SECONDS),
        Some(Err(_)) => {
            return simple(
                state,
                conn,
                request,
                Call::Watch,
                bad_request("timeoutSeconds: invalid value, expected a non-negative integer"),
            );
        }
    };
    let send_initial = match request.param("sendInitialEvents").map(parse_bool) {
        None => false,
        Some(Some(b)) => b,
        Some(None) => {
            return simple(
                state,
                conn,
                request,
                Call::Watch,
                bad_request("sendInitialEvents: invalid value, expected a boolean"),
            );
        }
    };
    state.record(request, Call::Watch, 200, 0);
    let deadline = Instant::now() + Duration::from_secs(timeout);
    {
        let mut out = BufWriter::with_capacity(256 * 1024, &conn.stream);
        out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n\r\n")?;
        if send_initial {
            let item_head = item_head(api_version);
            for object in objects.iter().filter(|o| filter.matches(o)) {
                let mut event = Vec::with_capacity(object.size(&item_head) + 32);
                event.extend_from_slice(b"{\"type\":\"ADDED\",\"object\":");
                object.write_to(&mut event, &item_head)?;
                event.extend_from_slice(b"}\n");
                write_chunk(&mut out, &event)?;
            }
            let bookmark = json!({
                "type": "BOOKMARK",
                "object": {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {
                        "resourceVersion": state.store.resource_version.to_string(),
                        "annotations": {"k8s.io/initial-events-end": "true"}
                    }
                }
            });
            write_chunk(&mut out, format!("{bookmark}\n").as_bytes())?;
        }
        out.flush()?;
    }
    // Nothing ever changes: wait for the timeout, the client leaving or the server stopping.
    // `peek` blocks at most one read timeout (a tick) and reports a closed connection.
    let mut probe = [0u8; 1];
    loop {
        if state.stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let _ = conn.stream.set_read_timeout(Some(TICK.min(deadline - now).max(Duration::from_millis(1))));
        match conn.stream.peek(&mut probe) {
            Ok(0) => return Ok(false),
            // The client sent something while the watch runs: wait without spinning.
            Ok(_) => thread::sleep(TICK.min(deadline.saturating_duration_since(Instant::now()))),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return Ok(false),
        }
    }
    let _ = conn.stream.set_read_timeout(Some(TICK));
    let mut out = &conn.stream;
    out.write_all(b"0\r\n\r\n")?;
    out.flush()?;
    Ok(true)
}
