//! The stdio transport: newline-delimited JSON-RPC. One reader loop frames lines (bounded by the
//! server's message limit); one writer task drains the outbound queue, flushing once per burst.

use std::io;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use super::shutdown_signal;
use crate::context::peer::Queue;
use crate::dispatch::session::{Session, poll_once};
use crate::dispatch::{InlineSlot, Origin};
use crate::server::Server;

impl Server {
    /// Serves MCP over this process's stdin and stdout until stdin ends, or until SIGINT or
    /// SIGTERM (then running calls finish first).
    ///
    /// When stdin and stdout are pipes or Unix sockets (the way hosts start stdio servers),
    /// they are read and written through the async reactor; anything else (a terminal, a file)
    /// goes through Tokio's blocking `stdin()`/`stdout()`, which cost a thread hand-off per read.
    ///
    /// The serving loop runs as a task of the runtime, not on the thread that awaits this (the
    /// main thread under `#[tokio::main]`): a request read on a worker thread is then handled,
    /// answered and written on that same thread, with no cross-thread wake-up on the way.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        let server = self.clone();
        // Dropping this future still stops the serving.
        let serving = AbortOnDropHandle::new(tokio::spawn(async move {
            let (reader, writer) = streams::stdio();
            server.serve_until(reader, writer, shutdown_signal()).await
        }));
        match serving.await {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(io::Error::other(e)),
        }
    }

    /// Serves MCP as newline-delimited JSON-RPC over any reader and writer (a pipe, a socket,
    /// an in-memory duplex) until the reader ends. Installs no signal handler: see
    /// [`serve_until`](Self::serve_until) to stop on a signal of your own.
    pub async fn serve<R, W>(&self, reader: R, writer: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_until(reader, writer, std::future::pending()).await
    }

    /// Like [`serve`](Self::serve), also stopping (after running calls finish) when `shutdown`
    /// resolves.
    pub async fn serve_until<R, W>(
        &self,
        reader: R,
        writer: W,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let server = self;
        let (outbound, queue) = server.shared.outbound();
        let close = CancellationToken::new();
        // Over stdio, everything goes to the one output: answers, related and unrelated messages.
        let session = Session::new(server.shared.clone(), Some(outbound.clone()));
        let running = std::sync::Arc::downgrade(&session);
        let others_running = move || running.upgrade().is_some_and(|s| s.is_running());
        let mut writer_task = tokio::spawn(write_loop(writer, queue, close.clone(), others_running));
        session.forward_events();
        let mut inline = Inline::default();
        let origin = Origin { inline: Some(inline.slot.clone()), ..Origin::new(outbound) };
        let max = server.shared.limits.max_message_bytes;
        let mut reader = BufReader::with_capacity(64 * 1024, reader);
        let mut line = Vec::with_capacity(4096);
        tokio::pin!(shutdown);
        let read_result = loop {
            // Backpressure: a client that does not read its answers is not read from either; one
            // that reads nothing for the write timeout is disconnected.
            if !origin.reply.ready().await {
                break Err(io::Error::new(io::ErrorKind::TimedOut, "the client stopped reading its output"));
            }
            let frame = tokio::select! {
                frame = read_line(&mut reader, &mut line, max) => frame,
                _ = &mut shutdown => {
                    tracing::info!("shutdown signal: no new requests; finishing running calls");
                    break Ok(());
                }
            };
            match frame {
                Ok(Frame::End) => break Ok(()),
                Ok(Frame::TooLong(length)) => session.reject_oversized(&origin, length),
                Ok(Frame::Line) => {
                    let message = line.trim_ascii();
                    if !message.is_empty() {
                        session.handle_message(message, &origin);
                        inline.run().await;
                    }
                }
                Err(e) => break Err(e),
            }
        };
        tracing::debug!("input ended; finishing running calls");
        session.drain().await;
        session.close();
        close.cancel();
        // The writer flushes what is queued, unless the client has stopped reading.
        let write_result =
            match tokio::time::timeout(server.shared.limits.write_timeout, &mut writer_task).await {
                Ok(result) => result.unwrap_or_else(|e| Err(io::Error::other(e))),
                Err(_) => {
                    writer_task.abort();
                    Err(io::Error::new(io::ErrorKind::TimedOut, "the client stopped reading its output"))
                }
            };
        read_result.and(write_result)
    }
}

/// How the reader runs the request a message made. Most calls finish in their first poll (a
/// tool that computes and returns): the reader polls the request once itself, and answers it
/// with no task spawned and no other thread woken; a request that waits for something becomes
/// a task then. A first poll that keeps the reader longer than [`INLINE_POLL_BUDGET`] (a tool
/// computing at length before its first `.await`) makes the next requests tasks from the start
/// for [`INLINE_PAUSE`], so that such calls run beside the reader and each other, as all did
/// before, and a `ping` or a cancellation is read meanwhile.
#[derive(Default)]
struct Inline {
    slot: InlineSlot,
    /// Until when requests are spawned rather than polled here.
    paused_until: Option<Instant>,
}

/// The longest first poll that keeps requests running in the reader.
const INLINE_POLL_BUDGET: Duration = Duration::from_micros(500);
/// How long requests are tasks from the start after a longer first poll.
const INLINE_PAUSE: Duration = Duration::from_secs(1);

impl Inline {
    /// Runs the request the last message left in the slot, if any (see [`Inline`]).
    async fn run(&mut self) {
        let Some(mut call) = self.slot.lock().expect("inline slot lock").take() else { return };
        let started = Instant::now();
        if self.paused_until.is_some_and(|until| started < until) {
            drop(tokio::spawn(call));
            return;
        }
        self.paused_until = None;
        let done = poll_once(&mut call).await.is_some();
        if started.elapsed() > INLINE_POLL_BUDGET {
            tracing::debug!("a request's first poll took long: spawning requests for a while");
            self.paused_until = Some(Instant::now() + INLINE_PAUSE);
        }
        if !done {
            drop(tokio::spawn(call));
        }
    }
}

mod streams {
    //! This process's stdin and stdout as async streams that need no thread hand-off when they
    //! are pipes (FIFOs) or Unix sockets. A pipe is reopened through `/proc/self/fd` (Linux), so
    //! that non-blocking mode is set on an open file description of its own and the host's end,
    //! or a child inheriting the descriptor, keeps blocking I/O. A socket (Node.js hosts start
    //! servers on socket pairs) cannot be reopened: its duplicate shares the description, which
    //! only this process uses once the host has closed its copy.

    use tokio::io::{AsyncRead, AsyncWrite};

    pub type Reader = Box<dyn AsyncRead + Unpin + Send>;
    pub type Writer = Box<dyn AsyncWrite + Unpin + Send>;

    pub fn stdio() -> (Reader, Writer) {
        let reader = input().unwrap_or_else(|| Box::new(tokio::io::stdin()));
        let writer = output().unwrap_or_else(|| Box::new(tokio::io::stdout()));
        (reader, writer)
    }

    #[cfg(unix)]
    fn input() -> Option<Reader> {
        match kind(0)? {
            Kind::Fifo => fifo(0).and_then(|path| {
                let receiver = tokio::net::unix::pipe::OpenOptions::new().open_receiver(path).ok()?;
                Some(Box::new(receiver) as Reader)
            }),
            Kind::Socket => socket(std::io::stdin()).map(|s| Box::new(s) as Reader),
        }
    }

    #[cfg(unix)]
    fn output() -> Option<Writer> {
        match kind(1)? {
            Kind::Fifo => fifo(1).and_then(|path| {
                let sender = tokio::net::unix::pipe::OpenOptions::new().open_sender(path).ok()?;
                enlarge(&sender);
                Some(Box::new(sender) as Writer)
            }),
            Kind::Socket => socket(std::io::stdout()).map(|s| Box::new(s) as Writer),
        }
    }

    #[cfg(not(unix))]
    fn input() -> Option<Reader> {
        None
    }

    #[cfg(not(unix))]
    fn output() -> Option<Writer> {
        None
    }

    #[cfg(unix)]
    enum Kind {
        Fifo,
        Socket,
    }

    /// What descriptor `fd` (0 or 1) is, when it is something the reactor can drive.
    #[cfg(unix)]
    fn kind(fd: i32) -> Option<Kind> {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        let owned = match fd {
            0 => std::io::stdin().as_fd().try_clone_to_owned(),
            _ => std::io::stdout().as_fd().try_clone_to_owned(),
        }
        .ok()?;
        let kind = std::fs::File::from(owned).metadata().ok()?.file_type();
        if kind.is_fifo() {
            Some(Kind::Fifo)
        } else if kind.is_socket() {
            Some(Kind::Socket)
        } else {
            None
        }
    }

    /// The path that reopens pipe `fd` with a description of its own.
    #[cfg(unix)]
    fn fifo(fd: i32) -> Option<std::path::PathBuf> {
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{fd}"));
        (cfg!(target_os = "linux") && path.exists()).then_some(path)
    }

    /// Asks for a 1 MiB pipe buffer (Linux's default limit for unprivileged processes) instead
    /// of 64 KiB: a non-blocking writer otherwise writes a large answer (a `tools/list` page of
    /// a thousand tools is 300 KB) a few kilobytes at a time as the host reads, with a wake-up
    /// between each; a blocking writer hands the kernel the whole of it at once. Best effort.
    #[cfg(target_os = "linux")]
    fn enlarge(pipe: &impl std::os::fd::AsRawFd) {
        // SAFETY: fcntl on a descriptor this process owns; F_SETPIPE_SZ takes an int and
        // touches no memory of ours. Failure (a lower limit) leaves the pipe as it was.
        unsafe {
            libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
        }
    }

    #[cfg(all(unix, not(target_os = "linux")))]
    fn enlarge(_pipe: &impl std::os::fd::AsRawFd) {}

    /// A Unix socket on `stdio`'s descriptor, non-blocking and registered with the reactor.
    #[cfg(unix)]
    fn socket(stdio: impl std::os::fd::AsFd) -> Option<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(stdio.as_fd().try_clone_to_owned().ok()?);
        // getsockname: a TCP socket (inetd-style) is left to the blocking path.
        stream.local_addr().ok()?;
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    }
}

pub(crate) enum Frame {
    Line,
    TooLong(usize),
    End,
}

/// Reads one line into `buf` (without its newline). A line longer than `max` is consumed and
/// reported with its length, never buffered whole. (Also the `dev` proxy's reading.)
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Frame> {
    buf.clear();
    let mut length = 0usize;
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (length, too_long) {
                (0, _) => Frame::End,
                (_, true) => Frame::TooLong(length),
                _ => Frame::Line,
            });
        }
        let (chunk, used, complete) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        length += chunk.len();
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
                buf.shrink_to(64 * 1024);
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if complete {
            return Ok(if too_long { Frame::TooLong(length) } else { Frame::Line });
        }
    }
}

/// Writes the queue's messages, one a line, flushing once per burst. (Also the `dev` proxy's
/// writing to its host.)
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut queue: Queue,
    close: CancellationToken,
    others_running: impl Fn() -> bool,
) -> io::Result<()> {
    let mut writer = BufWriter::with_capacity(64 * 1024, writer);
    loop {
        let message = tokio::select! {
            biased;
            message = queue.recv() => message,
            _ = close.cancelled() => None,
        };
        let Some(message) = message else { break };
        // Requests running together (a client that pipelines) answer together: while others
        // are running, they get one turn to queue their answers, so that one write carries them
        // all. A lone request's answer is written at once.
        if others_running() {
            tokio::task::yield_now().await;
        }
        write_message(&mut writer, &message).await?;
        while let Some(message) = queue.try_recv() {
            write_message(&mut writer, &message).await?;
        }
        writer.flush().await?;
    }
    while let Some(message) = queue.try_recv() {
        write_message(&mut writer, &message).await?;
    }
    writer.flush().await
}

async fn write_message<W: AsyncWrite + Unpin>(writer: &mut W, message: &[u8]) -> io::Result<()> {
    writer.write_all(message).await?;
    writer.write_all(b"\n").await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Result<String, usize>> {
        let mut reader = BufReader::with_capacity(8, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut buf, max).await.unwrap() {
                Frame::End => return out,
                Frame::TooLong(n) => out.push(Err(n)),
                Frame::Line => out.push(Ok(String::from_utf8(buf.clone()).unwrap())),
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_across_small_buffers() {
        let got = frames(b"{\"a\":1}\n{\"bb\":22}\nlast", 100).await;
        assert_eq!(got, vec![Ok("{\"a\":1}".into()), Ok("{\"bb\":22}".into()), Ok("last".into())]);
    }

    #[tokio::test]
    async fn oversized_line_is_reported_and_skipped() {
        let got = frames(b"0123456789abcdef\nok\n", 10).await;
        assert_eq!(got, vec![Err(16), Ok("ok".into())]);
    }

    /// An output that records the size of every write it is given.
    struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<usize>>>);

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<io::Result<usize>> {
            self.0.lock().unwrap().push(buf.len());
            std::task::Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn answers_of_requests_running_together_go_out_in_one_write() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (outbound, queue) =
            crate::context::peer::Outbound::channel(1 << 20, std::time::Duration::from_secs(5));
        let writes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let running = Arc::new(AtomicUsize::new(3));
        let close = CancellationToken::new();
        let still_running = running.clone();
        let writer = tokio::spawn(write_loop(Recorder(writes.clone()), queue, close.clone(), move || {
            still_running.load(Ordering::SeqCst) > 0
        }));
        // Three requests end one after the other, each queueing its answer as it ends: the
        // first, then (in a task it starts, which runs after the writer it woke) the other two.
        let answers = tokio::spawn(async move {
            let answer = move |i: usize| {
                running.fetch_sub(1, Ordering::SeqCst);
                outbound.send(format!("{{\"id\":{i}}}").into_bytes());
            };
            answer(0);
            tokio::spawn(async move {
                answer(1);
                answer(2);
            })
            .await
            .unwrap();
        });
        answers.await.unwrap();
        tokio::task::yield_now().await;
        close.cancel();
        writer.await.unwrap().unwrap();
        let expected = 3 * r#"{"id":0}"#.len() + 3;
        assert_eq!(*writes.lock().unwrap(), vec![expected], "one write for the three answers");
    }
}
