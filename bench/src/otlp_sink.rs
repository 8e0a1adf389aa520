//! A minimal OTLP/HTTP receiver, the export destination of the middleware benchmark
//! (`mcp-bench --middleware`): it accepts `POST /v1/traces` and `POST /v1/metrics`
//! (`application/x-protobuf`, HTTP/1.1 keep-alive, `Content-Length` or chunked bodies), answers
//! each with 200 and an empty protobuf message (an `Export…ServiceResponse` with no partial
//! success), and counts what it received: requests, bytes, and the spans of each service and
//! name (read from the protobuf by hand: `ExportTraceServiceRequest.resource_spans` (1) →
//! `ResourceSpans.resource` (1) → `Resource.attributes` (1), the `service.name` one; and
//! `ResourceSpans.scope_spans` (2) → `ScopeSpans.spans` (2) → `Span.name` (5)). It keeps nothing
//! else, so that what a real collector does with the data costs the server nothing here: what
//! is measured is the server's side of exporting.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What the sink has received so far.
#[derive(Clone, Default, Debug)]
pub struct Received {
    pub trace_posts: u64,
    pub trace_bytes: u64,
    /// Spans by service (`service.name`), then by name (`tools/call add`, `initialize`, …).
    pub spans: BTreeMap<String, BTreeMap<String, u64>>,
    pub metric_posts: u64,
    pub metric_bytes: u64,
    /// Requests to any other path, or that could not be read as OTLP protobuf.
    pub other: u64,
}

impl Received {
    /// How many spans of this service and name were received.
    pub fn spans_of(&self, service: &str, name: &str) -> u64 {
        self.spans.get(service).and_then(|names| names.get(name)).copied().unwrap_or(0)
    }

    /// What was received since `before`.
    pub fn since(&self, before: &Received) -> Received {
        let mut spans = self.spans.clone();
        for (service, names) in &before.spans {
            let Some(counts) = spans.get_mut(service) else { continue };
            for (name, n) in names {
                if let Some(count) = counts.get_mut(name) {
                    *count -= n;
                }
            }
            counts.retain(|_, n| *n > 0);
        }
        spans.retain(|_, names| !names.is_empty());
        Received {
            trace_posts: self.trace_posts - before.trace_posts,
            trace_bytes: self.trace_bytes - before.trace_bytes,
            spans,
            metric_posts: self.metric_posts - before.metric_posts,
            metric_bytes: self.metric_bytes - before.metric_bytes,
            other: self.other - before.other,
        }
    }
}

/// The receiver, listening on a free loopback port until the process ends.
pub struct Sink {
    endpoint: String,
    received: Arc<Mutex<Received>>,
}

impl Sink {
    pub fn start() -> Sink {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port for the OTLP sink");
        let endpoint = format!("http://{}", listener.local_addr().expect("its address"));
        let received = Arc::new(Mutex::new(Received::default()));
        let shared = received.clone();
        std::thread::Builder::new()
            .name("otlp-sink".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let received = shared.clone();
                    let _ = std::thread::Builder::new()
                        .name("otlp-sink-conn".into())
                        .spawn(move || serve(stream, &received));
                }
            })
            .expect("the sink's thread");
        Sink { endpoint, received }
    }

    /// `http://127.0.0.1:PORT`: what `OTEL_EXPORTER_OTLP_ENDPOINT` should say.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn received(&self) -> Received {
        self.received.lock().expect("the sink's counts").clone()
    }
}

/// Serves one connection until its client closes it.
fn serve(stream: TcpStream, received: &Mutex<Received>) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::with_capacity(256 * 1024, stream);
    let mut line = String::new();
    let mut body = Vec::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut words = line.split_whitespace();
        let (method, path) = (words.next().unwrap_or("").to_owned(), words.next().unwrap_or("").to_owned());
        let (mut length, mut chunked, mut close) = (0usize, false, false);
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else { continue };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().unwrap_or(0),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                _ => {}
            }
        }
        body.clear();
        if chunked {
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let size =
                    usize::from_str_radix(line.trim_end().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
                let start = body.len();
                body.resize(start + size, 0);
                if reader.read_exact(&mut body[start..]).is_err() {
                    return;
                }
                line.clear();
                let _ = reader.read_line(&mut line);
                if size == 0 {
                    break;
                }
            }
        } else {
            body.resize(length, 0);
            if reader.read_exact(&mut body).is_err() {
                return;
            }
        }
        let status = {
            let mut received = received.lock().expect("the sink's counts");
            match (method.as_str(), path.as_str()) {
                ("POST", "/v1/traces") => match span_names(&body) {
                    Some(names) => {
                        received.trace_posts += 1;
                        received.trace_bytes += body.len() as u64;
                        for (service, name) in names {
                            *received.spans.entry(service).or_default().entry(name).or_default() += 1;
                        }
                        "200 OK"
                    }
                    None => {
                        received.other += 1;
                        "400 Bad Request"
                    }
                },
                ("POST", "/v1/metrics") => {
                    received.metric_posts += 1;
                    received.metric_bytes += body.len() as u64;
                    "200 OK"
                }
                _ => {
                    received.other += 1;
                    "404 Not Found"
                }
            }
        };
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n{}\r\n",
            if close { "Connection: close\r\n" } else { "" }
        );
        if writer.write_all(answer.as_bytes()).is_err() || close {
            return;
        }
    }
}

/// The service and name of each span of an `ExportTraceServiceRequest`, or `None` if it is not
/// one.
fn span_names(message: &[u8]) -> Option<Vec<(String, String)>> {
    let mut names = Vec::new();
    for (field, resource_spans) in fields(message)? {
        if field != 1 {
            continue;
        }
        let resource_spans = fields(resource_spans)?;
        let mut service = String::new();
        for (_, resource) in resource_spans.iter().filter(|(field, _)| *field == 1) {
            for (_, attribute) in fields(resource)?.into_iter().filter(|(field, _)| *field == 1) {
                let attribute = fields(attribute)?;
                let key = attribute.iter().find(|(field, _)| *field == 1).map(|(_, key)| *key);
                let value = attribute.iter().find(|(field, _)| *field == 2).map(|(_, value)| *value);
                if let (Some(b"service.name"), Some(value)) = (key, value) {
                    // AnyValue.string_value (1)
                    let text = fields(value)?.into_iter().find(|(field, _)| *field == 1).map(|(_, t)| t);
                    service = String::from_utf8_lossy(text.unwrap_or_default()).into_owned();
                }
            }
        }
        for (field, scope_spans) in resource_spans {
            if field != 2 {
                continue;
            }
            for (field, span) in fields(scope_spans)? {
                if field != 2 {
                    continue;
                }
                let name = fields(span)?.into_iter().find(|(field, _)| *field == 5).map(|(_, name)| name);
                names.push((service.clone(), String::from_utf8_lossy(name.unwrap_or_default()).into_owned()));
            }
        }
    }
    Some(names)
}

/// The length-delimited fields of a protobuf message, as (field number, bytes); the others are
/// skipped. `None` if the message is malformed.
fn fields(mut message: &[u8]) -> Option<Vec<(u64, &[u8])>> {
    let mut out = Vec::new();
    while !message.is_empty() {
        let key = varint(&mut message)?;
        let (field, wire_type) = (key >> 3, key & 7);
        match wire_type {
            0 => {
                varint(&mut message)?;
            }
            1 => message = message.get(8..)?,
            2 => {
                let length = usize::try_from(varint(&mut message)?).ok()?;
                out.push((field, message.get(..length)?));
                message = &message[length..];
            }
            5 => message = message.get(4..)?,
            _ => return None,
        }
    }
    Some(out)
}

fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}
