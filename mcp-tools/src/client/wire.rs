//! The wire under a [`Client`](super::Client): what carries its messages to a server and brings
//! the server's back. A line-delimited pipe ([`Pipe`]: a spawned stdio server, or a server in the
//! same process) or Streamable HTTP (`http.rs`). A wire sends each outgoing message and puts
//! every message it receives, in order, on the client's incoming queue.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

use super::error::ClientError;

/// What a message is, for a wire that treats them differently (HTTP: a request's answer comes
/// back on its own response).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    /// A request: its method, and the tool, prompt or resource it names (2026-07-28 headers).
    Request { method: String, name: Option<String> },
    /// A notification.
    Notification,
    /// The answer to a request of the server's.
    Response,
}

/// One message to send.
pub(crate) struct Outgoing {
    /// The JSON text, one line.
    pub bytes: Vec<u8>,
    pub kind: Kind,
    /// Headers a 2026-07-28 request mirrors its arguments in (`Mcp-Param-*`).
    pub param_headers: Vec<(String, String)>,
    /// HTTP: this request's `Authorization` value, in place of the client's credentials
    /// ([`CallOptions::authorization`](super::CallOptions::authorization)).
    pub authorization: Option<String>,
}

impl Outgoing {
    /// A message with no headers of its own.
    pub fn plain(bytes: Vec<u8>, kind: Kind) -> Outgoing {
        Outgoing { bytes, kind, param_headers: Vec::new(), authorization: None }
    }
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outgoing")
            .field("bytes", &String::from_utf8_lossy(&self.bytes))
            .field("kind", &self.kind)
            .field("param_headers", &self.param_headers)
            .field("authorization", &self.authorization.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// What a wire hands the client: a message, or the end of the connection (and why).
#[derive(Debug)]
pub(crate) enum Incoming {
    Message(Vec<u8>),
    /// A message that came in the course of one of the client's requests (HTTP: on its response
    /// stream): the message, and that request's id.
    Related(Vec<u8>, i64),
    /// A request could not be delivered (HTTP: a failed POST): its id, and why.
    Failed(serde_json::Value, ClientError),
    Closed(Option<String>),
}

/// What takes a wire's messages once the client is ready: whether it still wants them.
pub(crate) type IncomingHandler = Arc<dyn Fn(Incoming) -> bool + Send + Sync>;

/// Where a wire puts what it receives. Once the client is ready, a message is handed to it on
/// the wire's own task (an answer reaches its waiting request with no hop through a queue and
/// another task); what comes before waits, in order.
#[derive(Clone)]
pub(crate) struct IncomingTx(Arc<Mutex<Sink>>);

enum Sink {
    Early(Vec<Incoming>),
    Ready(IncomingHandler),
}

impl IncomingTx {
    pub fn new() -> IncomingTx {
        IncomingTx(Arc::new(Mutex::new(Sink::Early(Vec::new()))))
    }

    /// Hands `incoming` to the client; `Err` when it wants no more.
    pub fn send(&self, incoming: Incoming) -> Result<(), ()> {
        let handler = {
            let mut sink = self.0.lock().expect("incoming lock");
            match &mut *sink {
                Sink::Early(waiting) => {
                    waiting.push(incoming);
                    return Ok(());
                }
                Sink::Ready(handler) => handler.clone(),
            }
        };
        if handler(incoming) { Ok(()) } else { Err(()) }
    }

    /// The client is ready: what waited is handed to `handler`, then everything that comes.
    pub fn ready(&self, handler: IncomingHandler) {
        let mut sink = self.0.lock().expect("incoming lock");
        if let Sink::Early(waiting) = std::mem::replace(&mut *sink, Sink::Ready(handler.clone())) {
            for incoming in waiting {
                if !handler(incoming) {
                    break;
                }
            }
        }
    }
}

/// A connection's wire.
pub(crate) trait Wire: Send + Sync + 'static {
    /// Sends one message.
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), ClientError>>;
    /// The protocol revision the client now speaks (HTTP: the `MCP-Protocol-Version` header).
    fn set_protocol_version(&self, _version: &str) {}
    /// HTTP: forgets a 2025-11-25 session the server ended (it answered 404), so that the next
    /// `initialize` starts a new one; whether there was one.
    fn forget_ended_session(&self) -> bool {
        false
    }
    /// Ends the connection.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// A line-delimited JSON-RPC pipe: a spawned server's stdin and stdout, or an in-process server's
/// duplex stream. Messages are written by a task of the pipe's own, which writes every message
/// queued meanwhile with one flush: requests sent together (a gateway forwarding many calls
/// at once) reach the server in one write, not one system call and one wake-up each.
pub(crate) struct Pipe {
    /// The writing task's queue; `None` once closed.
    queue: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>>,
    /// The writing task, awaited on close (it flushes what was queued, then closes the input).
    writing: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The spawned server, killed when the client goes (if it has not exited).
    child: Mutex<Option<tokio::process::Child>>,
}

impl Pipe {
    /// A pipe over `reader` and `writer`; what the server writes goes to `incoming`, one message
    /// a line (lines over `max_bytes` are dropped and reported).
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        incoming: IncomingTx,
        max_bytes: usize,
    ) -> Pipe {
        tokio::spawn(read_lines(reader, incoming.clone(), max_bytes));
        let (queue, queued) = tokio::sync::mpsc::unbounded_channel();
        let writing = tokio::spawn(write_lines(writer, queued, incoming));
        Pipe { queue: Mutex::new(Some(queue)), writing: Mutex::new(Some(writing)), child: Mutex::new(None) }
    }

    /// Spawns `command` (its stdin and stdout the pipe; its stderr the client's) and a pipe to it.
    pub fn spawn(
        mut command: tokio::process::Command,
        incoming: IncomingTx,
        max_bytes: usize,
    ) -> Result<Pipe, ClientError> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        let mut child =
            command.spawn().map_err(|e| ClientError::Transport(format!("cannot start `{program}`: {e}")))?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let pipe = Pipe::new(stdout, stdin, incoming, max_bytes);
        *pipe.child.lock().expect("child lock") = Some(child);
        Ok(pipe)
    }
}

/// Reads the server's lines into `incoming` until the pipe ends.
async fn read_lines(reader: impl AsyncRead + Send + Unpin, incoming: IncomingTx, max_bytes: usize) {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bounded: a line longer than the limit is read through and dropped.
        let read = read_bounded_line(&mut reader, &mut line, max_bytes).await;
        match read {
            Ok(0) => {
                let _ = incoming.send(Incoming::Closed(None));
                return;
            }
            Ok(_) if line.len() > max_bytes => {
                tracing::warn!(
                    limit = max_bytes,
                    "the server sent a message over the client's limit; dropped"
                );
            }
            Ok(_) => {
                let text = line.trim_ascii();
                if !text.is_empty() && incoming.send(Incoming::Message(text.to_vec())).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = incoming.send(Incoming::Closed(Some(e.to_string())));
                return;
            }
        }
    }
}

/// Writes the queued messages, one a line, each burst with one flush, until the queue closes;
/// then closes the writer (a stdio server's input: it finishes). A failed write ends the
/// connection for the client (its requests fail rather than wait for answers never asked).
async fn write_lines(
    writer: impl AsyncWrite + Send + Unpin,
    mut queued: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    incoming: IncomingTx,
) {
    let mut writer = tokio::io::BufWriter::with_capacity(64 * 1024, writer);
    let mut burst = Vec::with_capacity(64);
    loop {
        burst.clear();
        if queued.recv_many(&mut burst, 256).await == 0 {
            break;
        }
        let written = async {
            for message in &burst {
                writer.write_all(message).await?;
            }
            writer.flush().await
        };
        if let Err(e) = written.await {
            let _ = incoming.send(Incoming::Closed(Some(format!("writing to the server failed: {e}"))));
            return;
        }
    }
    let _ = writer.shutdown().await;
}

/// Reads one line into `line`, keeping at most `max + 1` bytes of it (so a longer one is seen
/// as too long without being held whole); the bytes read, 0 at the end.
async fn read_bounded_line(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(total);
        }
        let (used, done) = match memchr::memchr(b'\n', buffer) {
            Some(end) => (end + 1, true),
            None => (buffer.len(), false),
        };
        let room = (max + 1).saturating_sub(line.len());
        line.extend_from_slice(&buffer[..used.min(room)]);
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

impl Wire for Pipe {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), ClientError>> {
        let mut bytes = message.bytes;
        bytes.push(b'\n');
        let sent = match &*self.queue.lock().expect("queue lock") {
            Some(queue) => queue.send(bytes).map_err(|_| ClientError::Closed),
            None => Err(ClientError::Closed),
        };
        Box::pin(std::future::ready(sent))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Closing its input asks a stdio server to finish (once what was queued is written);
            // it is killed if it lingers.
            drop(self.queue.lock().expect("queue lock").take());
            let writing = self.writing.lock().expect("writing lock").take();
            if let Some(writing) = writing {
                let _ = writing.await;
            }
            let child = self.child.lock().expect("child lock").take();
            if let Some(mut child) = child {
                let wait = tokio::time::timeout(std::time::Duration::from_secs(2), child.wait());
                if wait.await.is_err() {
                    let _ = child.kill().await;
                }
            }
        })
    }
}

/// A wire shared by the client and its router.
pub(crate) type SharedWire = Arc<dyn Wire>;

/// A header's text: as it is when it is plain ASCII, else `=?base64?…?=`.
pub(crate) fn header_text(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b)) && text.trim() == text;
    if plain {
        text.to_owned()
    } else {
        use base64::Engine as _;
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(text))
    }
}
