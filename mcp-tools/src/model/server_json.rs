//! The server's entry in the [MCP registry](https://registry.modelcontextprotocol.io):
//! its `server.json`, which the command line's `server-json` subcommand prints (see the guide's
//! chapter "Publishing to the MCP registry").
//!
//! Most of it comes from what the binary knows: its name, version and description from Cargo
//! ([`cargo_package!`](crate::cargo_package!), which [`main!`](crate::main!) captures), the
//! transports it serves, its tools and their scopes. What it cannot know is configured here,
//! with [`ServerJson`] on the builder, or with the subcommand's options: its reverse-DNS name
//! in the registry, the packages clients install it from, the endpoints where it is hosted, the
//! environment variables it reads.
//!
//! ```
//! use mcp_tools::Server;
//! use mcp_tools::server_json::{EnvVar, Package, ServerJson};
//!
//! let server = Server::builder()
//!     .inventory(false)
//!     .cargo_package(mcp_tools::cargo_package!())
//!     .server_json(
//!         ServerJson::new()
//!             .name("io.github.example/notes")
//!             .description("Keep notes: create, search, list and delete them.")
//!             .package(Package::oci("ghcr.io/example/notes:{version}"))
//!             .env_var(EnvVar::new("NOTES_DIR", "Where the notes are kept").required()),
//!     )
//!     .build()
//!     .unwrap();
//! let entry = server.server_json().unwrap();
//! assert_eq!(entry["name"], "io.github.example/notes");
//! assert_eq!(entry["packages"][0]["identifier"], format!("ghcr.io/example/notes:{}", server.info().version));
//! ```
//!
//! crates.io is not among the package registries the MCP registry points to (npm, PyPI, NuGet,
//! OCI images, MCP bundles), so a crate is never listed as a package: publish the binary as an
//! MCP bundle ([`Package::mcpb`]) or a container image ([`Package::oci`]), or list where it is
//! hosted ([`ServerJson::remote`]).

use serde_json::{Map, Value, json};

use crate::protocol::Implementation;

/// The revision of the registry's schema that the entry follows (its `$schema`).
pub const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The `_meta` key the official registry keeps (every other key is dropped on publishing).
pub const PUBLISHER_META: &str = "io.modelcontextprotocol.registry/publisher-provided";

/// The registry keeps at most this many bytes of [`PUBLISHER_META`].
const PUBLISHER_META_LIMIT: usize = 4096;

/// The package registries the official MCP registry accepts in `registryType`.
pub const REGISTRY_TYPES: [&str; 5] = ["npm", "pypi", "nuget", "oci", "mcpb"];

/// What Cargo says of the server's crate, captured where the server is built by
/// [`cargo_package!`](crate::cargo_package!) (so these are the server's package's, not
/// mcp-tools'). Given to [`ServerBuilder::cargo_package`](crate::ServerBuilder::cargo_package).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CargoPackage {
    /// `CARGO_PKG_NAME`.
    pub name: String,
    /// `CARGO_PKG_VERSION`.
    pub version: String,
    /// `CARGO_PKG_DESCRIPTION` (empty when the manifest has none).
    pub description: String,
    /// `CARGO_PKG_REPOSITORY` (empty when the manifest has none).
    pub repository: String,
    /// `CARGO_PKG_HOMEPAGE` (empty when the manifest has none).
    pub homepage: String,
    /// `CARGO_PKG_LICENSE` (empty when the manifest has none).
    pub license: String,
}

impl CargoPackage {
    /// What [`cargo_package!`](crate::cargo_package!) expands to.
    #[doc(hidden)]
    pub fn __from_env(fields: [&str; 6]) -> Self {
        let [name, version, description, repository, homepage, license] = fields.map(str::to_owned);
        CargoPackage { name, version, description, repository, homepage, license }
    }
}

/// What the server's registry entry says beyond what the binary knows; given to
/// [`ServerBuilder::server_json`](crate::ServerBuilder::server_json). The `server-json`
/// subcommand's options override it: `--name`, `--description`, and `--package` or `--remote`
/// (which replace the packages, or the remotes, configured here).
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct ServerJson {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) website: Option<String>,
    pub(crate) repository: Option<String>,
    pub(crate) packages: Vec<Package>,
    pub(crate) remotes: Vec<String>,
    pub(crate) env: Vec<EnvVar>,
}

impl ServerJson {
    /// Nothing configured: the name is derived from a github.com repository, if there is one.
    pub fn new() -> Self {
        Self::default()
    }
    /// The server's name in the registry, reverse-DNS: `io.github.USER/SERVER` for a GitHub
    /// account (the registry checks it with a GitHub login), `com.example/SERVER` for a domain
    /// you own (checked by DNS or HTTP). Default: `io.github.OWNER/NAME` when Cargo's
    /// `repository` is on github.com (`NAME` is the server's `serverInfo` name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// The entry's description, at most 100 characters (default: Cargo's `description`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// The server's web page, `websiteUrl` (default: Cargo's `homepage`).
    pub fn website(mut self, url: impl Into<String>) -> Self {
        self.website = Some(url.into());
        self
    }
    /// Its source repository (default: Cargo's `repository`).
    pub fn repository(mut self, url: impl Into<String>) -> Self {
        self.repository = Some(url.into());
        self
    }
    /// A package clients can install and run it from (each served over stdio, or as the
    /// subcommand's `--http` says).
    pub fn package(mut self, package: Package) -> Self {
        self.packages.push(package);
        self
    }
    /// A Streamable HTTP endpoint where it is hosted (`https://…/mcp`), listed in `remotes`.
    pub fn remote(mut self, url: impl Into<String>) -> Self {
        self.remotes.push(url.into());
        self
    }
    /// An environment variable the server reads, listed with every package.
    pub fn env_var(mut self, var: EnvVar) -> Self {
        self.env.push(var);
        self
    }
}

/// A package the server can be installed from, in one of the registries the MCP registry
/// points to. `{version}` in an identifier stands for the server's version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    pub(crate) registry_type: String,
    pub(crate) identifier: String,
    pub(crate) sha256: Option<String>,
}

impl Package {
    fn of(registry_type: &str, identifier: impl Into<String>) -> Self {
        Package { registry_type: registry_type.to_owned(), identifier: identifier.into(), sha256: None }
    }
    /// An npm package (e.g. one that installs the binary), at the server's version.
    pub fn npm(name: impl Into<String>) -> Self {
        Self::of("npm", name)
    }
    /// A PyPI package, at the server's version.
    pub fn pypi(name: impl Into<String>) -> Self {
        Self::of("pypi", name)
    }
    /// A NuGet package, at the server's version.
    pub fn nuget(name: impl Into<String>) -> Self {
        Self::of("nuget", name)
    }
    /// A container image with its tag or digest, e.g. `ghcr.io/me/notes:{version}`: clients
    /// run it with `docker run -i`.
    pub fn oci(image: impl Into<String>) -> Self {
        Self::of("oci", image)
    }
    /// An MCP bundle (`.mcpb`) downloaded from a GitHub or GitLab release, with the file's
    /// SHA-256 (64 hexadecimal digits), which clients check.
    pub fn mcpb(url: impl Into<String>, sha256: impl Into<String>) -> Self {
        Package { sha256: Some(sha256.into()), ..Self::of("mcpb", url) }
    }
    /// `TYPE=IDENTIFIER`, the subcommand's `--package`.
    pub(crate) fn parse(text: &str) -> Result<Package, String> {
        let Some((registry_type, identifier)) = text.split_once('=') else {
            return Err(format!(
                "--package {text:?}: write TYPE=IDENTIFIER, e.g. oci=ghcr.io/me/server:{{version}} (TYPE is one of {})",
                REGISTRY_TYPES.join(", ")
            ));
        };
        Ok(Self::of(registry_type, identifier))
    }
}

/// An environment variable the server reads, as the registry lists it (`environmentVariables`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct EnvVar {
    name: String,
    description: String,
    required: bool,
    secret: bool,
    default: Option<String>,
}

impl EnvVar {
    /// An optional variable.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        EnvVar {
            name: name.into(),
            description: description.into(),
            required: false,
            secret: false,
            default: None,
        }
    }
    /// The server does not run without it.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
    /// It holds a secret (a key, a token): clients keep it as one.
    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }
    /// The value it takes when unset.
    pub fn default(mut self, value: impl Into<String>) -> Self {
        self.default = Some(value.into());
        self
    }
    fn to_json(&self) -> Value {
        let mut out = json!({"name": self.name, "description": self.description});
        if self.required {
            out["isRequired"] = true.into();
        }
        if self.secret {
            out["isSecret"] = true.into();
        }
        if let Some(default) = &self.default {
            out["default"] = default.clone().into();
        }
        out
    }
}

/// Why no `server.json` could be written: every problem, each with its fix.
#[derive(Debug, thiserror::Error)]
#[error("cannot write server.json:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct ServerJsonError {
    problems: Vec<String>,
}

impl ServerJsonError {
    /// Each problem, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

/// How the packages are served, from the subcommand's options: over stdio, or with `--http ADDR`
/// and the HTTP options after it (auth options describe remotes too).
#[derive(Debug, Default)]
pub(crate) struct Serving {
    /// `--http ADDR`.
    pub http: Option<String>,
    /// The other serving options, in order, with their values.
    pub options: Vec<(String, Option<String>)>,
}

impl Serving {
    fn value(&self, flag: &str) -> Option<&str> {
        self.options.iter().rev().find(|(f, _)| f == flag).and_then(|(_, v)| v.as_deref())
    }
    fn has(&self, flag: &str) -> bool {
        self.options.iter().any(|(f, _)| f == flag)
    }
    fn any_auth(&self) -> bool {
        self.options.iter().any(|(f, _)| f.starts_with("--auth-"))
    }
}

/// What the running server knows of itself.
#[derive(Debug)]
pub(crate) struct Facts<'a> {
    pub info: &'a Implementation,
    pub cargo: Option<&'a CargoPackage>,
    /// Every tool's name, sorted.
    pub tools: Vec<String>,
    /// The scopes its tools need, sorted, without duplicates.
    pub scopes: Vec<String>,
}

/// The `server.json` of a server, or every reason there is none; warnings beside it.
pub(crate) fn render(
    config: &ServerJson,
    facts: &Facts<'_>,
    serving: &Serving,
) -> Result<(Value, Vec<String>), ServerJsonError> {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let cargo = facts.cargo;
    let cargo_field =
        |get: fn(&CargoPackage) -> &String| cargo.map(get).filter(|v| !v.trim().is_empty()).cloned();
    let repository = config.repository.clone().or_else(|| cargo_field(|c| &c.repository));

    let name =
        config.name.clone().or_else(|| repository.as_deref().and_then(|r| github_name(r, &facts.info.name)));
    match &name {
        Some(name) => {
            if let Err(problem) = check_name(name) {
                problems.push(problem);
            }
        }
        None => problems.push(format!(
            "the server's name in the MCP registry is not set, and cannot be derived{}: pass --name \
             NAME (or ServerJson::name), reverse-DNS with one slash, `io.github.USER/{}` for a GitHub \
             account or `com.example/{}` for a domain you own",
            match &repository {
                Some(repository) => format!(
                    " from its repository {repository} (only a github.com one gives io.github.OWNER/…)"
                ),
                None if cargo.is_some() => " (Cargo.toml has no `repository`)".to_owned(),
                None =>
                    " (the server was given no Cargo package, whose `repository` on github.com gives one: \
                         `.cargo_package(mcp_tools::cargo_package!())`)"
                        .to_owned(),
            },
            facts.info.name,
            facts.info.name,
        )),
    }

    let description = config.description.clone().or_else(|| cargo_field(|c| &c.description));
    match description.as_deref().map(str::trim) {
        None | Some("") => problems.push(
            "no description: set `description` in the package's Cargo.toml (with `mcp_tools::main!()` or \
             `.cargo_package(mcp_tools::cargo_package!())`), or pass --description TEXT (or ServerJson::description)"
                .to_owned(),
        ),
        Some(text) if text.chars().count() > 100 => problems.push(format!(
            "the description has {} characters and the registry takes at most 100: pass a shorter one with \
             --description TEXT (or ServerJson::description)",
            text.chars().count()
        )),
        Some(_) => {}
    }

    let version = facts.info.version.trim();
    if version.is_empty()
        || version == "latest"
        || version.len() > 255
        || version.contains(['^', '~', '>', '<', '*', ' '])
    {
        problems.push(format!(
            "the version {version:?} is not one exact version (a range, `latest` or empty): set the server's \
             version (ServerBuilder::version, or Cargo's through cargo_package!)"
        ));
    }

    let mut out = Map::new();
    out.insert("$schema".into(), SCHEMA.into());
    out.insert("name".into(), name.clone().unwrap_or_default().into());
    if let Some(title) = &facts.info.title {
        if (1..=100).contains(&title.chars().count()) {
            out.insert("title".into(), title.clone().into());
        } else {
            warnings.push(format!(
                "the title has {} characters (the registry takes 1 to 100): left out",
                title.chars().count()
            ));
        }
    }
    out.insert("description".into(), description.unwrap_or_default().trim().into());
    out.insert("version".into(), version.into());
    if let Some(website) = config.website.clone().or_else(|| cargo_field(|c| &c.homepage)) {
        if is_http_url(&website) {
            out.insert("websiteUrl".into(), website.into());
        } else {
            problems.push(format!("the website {website:?} is not an http(s) URL"));
        }
    }
    if let Some(repository) = &repository {
        match repository_source(repository) {
            Some(source) => {
                out.insert(
                    "repository".into(),
                    json!({"url": repository.trim_end_matches('/').trim_end_matches(".git"), "source": source}),
                );
            }
            None => problems.push(format!("the repository {repository:?} is not an http(s) URL")),
        }
    }

    let env = environment(config);
    let packages: Vec<Value> = config
        .packages
        .iter()
        .filter_map(|package| match package_json(package, version, facts, serving, &env) {
            Ok(json) => Some(json),
            Err(problem) => {
                problems.push(problem);
                None
            }
        })
        .collect();
    if serving.any_auth() && !cfg!(feature = "auth") {
        problems.push("the --auth-* options need the `auth` feature of mcp-tools-rs (`features = [\"auth\"]` on its line in Cargo.toml)".to_owned());
    }
    if serving.http.is_none()
        && let Some((flag, _)) = serving.options.iter().find(|(f, _)| !f.starts_with("--auth-"))
    {
        problems.push(format!("{flag} describes packages served over HTTP: give --http ADDR before it"));
    }
    if !packages.is_empty() {
        out.insert("packages".into(), packages.into());
    }
    let remotes: Vec<Value> = config
        .remotes
        .iter()
        .filter_map(|url| match remote_json(url, serving) {
            Ok(json) => Some(json),
            Err(problem) => {
                problems.push(problem);
                None
            }
        })
        .collect();
    if !remotes.is_empty() {
        out.insert("remotes".into(), remotes.into());
    }
    if serving.http.is_some() && config.packages.is_empty() {
        warnings.push(
            "--http describes how the packages are run, and there is no --package: it changes nothing"
                .to_owned(),
        );
    }
    if config.packages.is_empty() && config.remotes.is_empty() {
        warnings.push(
            "the entry lists no package and no remote, so a client that finds it cannot run it: add --package \
             TYPE=ID (an MCP bundle or a container image; crates.io is not a registry the MCP registry points \
             to) or --remote URL"
                .to_owned(),
        );
    }

    let (meta, meta_warning) = publisher_meta(facts, cargo);
    warnings.extend(meta_warning);
    out.insert("_meta".into(), json!({ PUBLISHER_META: meta }));

    if problems.is_empty() { Ok((Value::Object(out), warnings)) } else { Err(ServerJsonError { problems }) }
}

/// `io.github.OWNER/NAME` for a repository on github.com.
fn github_name(repository: &str, server: &str) -> Option<String> {
    let rest = repository.strip_prefix("https://").or_else(|| repository.strip_prefix("http://"))?;
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let owner = rest.strip_prefix("github.com/")?.split('/').next().filter(|o| !o.is_empty())?;
    let server: String = server
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' })
        .collect();
    Some(format!("io.github.{owner}/{server}"))
}

/// The registry's rules for a name: `NAMESPACE/SERVER`, the namespace reverse-DNS.
fn check_name(name: &str) -> Result<(), String> {
    let advice = "reverse-DNS with one slash: `io.github.USER/SERVER` for a GitHub account, `com.example/SERVER` for a domain you own";
    let Some((namespace, server)) = name.split_once('/') else {
        return Err(format!("the name {name:?} has no slash: the registry's names are {advice}"));
    };
    let namespace_ok =
        !namespace.is_empty() && namespace.chars().all(|c| c.is_ascii_alphanumeric() || ".-".contains(c));
    let server_ok =
        !server.is_empty() && server.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !namespace_ok || !server_ok {
        return Err(format!(
            "the name {name:?} has characters the registry refuses (letters, digits, `.` and `-` before the slash, \
             also `_` after it; one slash): the registry's names are {advice}"
        ));
    }
    if !namespace.contains('.') {
        return Err(format!(
            "the namespace {namespace:?} of {name:?} is not reverse-DNS: the registry's names are {advice}"
        ));
    }
    if !(3..=200).contains(&name.len()) {
        return Err(format!("the name {name:?} has {} characters: the registry takes 3 to 200", name.len()));
    }
    Ok(())
}

fn is_http_url(url: &str) -> bool {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|rest| !rest.is_empty() && !url.contains(char::is_whitespace))
}

/// The registry's `source` of a repository: the forge (`github`, `gitlab`, `bitbucket`), else
/// its host.
fn repository_source(url: &str) -> Option<String> {
    if !is_http_url(url) {
        return None;
    }
    let host = url.split("://").nth(1)?.split(['/', ':']).next()?.trim_start_matches("www.");
    Some(match host {
        "github.com" => "github".to_owned(),
        "gitlab.com" => "gitlab".to_owned(),
        "bitbucket.org" => "bitbucket".to_owned(),
        other => other.to_owned(),
    })
}

/// The variables every package lists: the author's, then the runtime's own (logs, telemetry).
fn environment(config: &ServerJson) -> Vec<Value> {
    let mut env: Vec<Value> = config.env.iter().map(EnvVar::to_json).collect();
    let mine = |name: &str| config.env.iter().any(|v| v.name == name);
    if !mine("RUST_LOG") {
        env.push(
            EnvVar::new("RUST_LOG", "What the server logs to stderr, as a tracing filter (e.g. info, debug)")
                .default("warn")
                .to_json(),
        );
    }
    if cfg!(feature = "otel") && !mine("OTEL_EXPORTER_OTLP_ENDPOINT") {
        env.push(
            EnvVar::new(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "OpenTelemetry: the OTLP/HTTP endpoint to export a span per request and metrics to (off when unset)",
            )
            .to_json(),
        );
    }
    env
}

fn package_json(
    package: &Package,
    version: &str,
    facts: &Facts<'_>,
    serving: &Serving,
    env: &[Value],
) -> Result<Value, String> {
    let kind = package.registry_type.as_str();
    let identifier = package.identifier.replace("{version}", version);
    if matches!(kind, "cargo" | "crates" | "crates.io" | "crate") {
        return Err(format!(
            "--package {kind}={identifier}: crates.io is not a package registry the MCP registry points to (it takes {}). \
             Publish the binary as an MCP bundle on a GitHub or GitLab release (mcpb=URL with --sha256 HEX) or as a \
             container image (oci=IMAGE:TAG), or list where it is hosted with --remote URL; say `cargo install {}` in \
             the description or on the website",
            REGISTRY_TYPES.join(", "),
            facts.cargo.map_or(facts.info.name.as_str(), |c| c.name.as_str())
        ));
    }
    if !REGISTRY_TYPES.contains(&kind) {
        return Err(format!(
            "--package {kind}={identifier}: {kind:?} is not a registry type the MCP registry takes ({})",
            REGISTRY_TYPES.join(", ")
        ));
    }
    if identifier.trim().is_empty() {
        return Err(format!("--package {kind}=: the identifier is empty"));
    }
    let mut out = json!({"registryType": kind, "identifier": identifier});
    match kind {
        // The image reference carries its version.
        "oci" => {
            let last = identifier.rsplit('/').next().unwrap_or_default();
            if !last.contains(':') && !identifier.contains('@') {
                return Err(format!(
                    "--package oci={identifier}: name the image's tag or digest (e.g. {identifier}:{version}, or \
                     {identifier}:{{version}})"
                ));
            }
        }
        _ => out["version"] = version.into(),
    }
    match (&package.sha256, kind) {
        (Some(sha), _)
            if sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) =>
        {
            return Err(format!(
                "--package {kind}={identifier}: the SHA-256 {sha:?} is not 64 lowercase hexadecimal digits"
            ));
        }
        (Some(sha), _) => out["fileSha256"] = sha.clone().into(),
        (None, "mcpb") => {
            return Err(format!(
                "--package mcpb={identifier}: an MCP bundle needs its file's SHA-256: add --sha256 HEX after it \
                 (sha256sum FILE.mcpb), or Package::mcpb(url, sha256)"
            ));
        }
        (None, _) => {}
    }
    if kind == "mcpb" && !is_http_url(&identifier) {
        return Err(format!(
            "--package mcpb={identifier}: an MCP bundle is named by its download URL (https://…)"
        ));
    }
    match &serving.http {
        None => out["transport"] = json!({"type": "stdio"}),
        Some(addr) => {
            if !cfg!(feature = "http") {
                return Err(
                    "--http: this binary was built without the `http` feature of mcp-tools-rs (`features = [\"http\"]` on its line in Cargo.toml)".to_owned()
                );
            }
            let (transport, arguments) = http_package(addr, facts, serving)?;
            out["transport"] = transport;
            out["packageArguments"] = arguments.into();
        }
    }
    if !env.is_empty() {
        out["environmentVariables"] = env.to_vec().into();
    }
    Ok(out)
}

/// A package run as `BIN --http ADDR [OPTIONS]`: its transport and its arguments.
fn http_package(addr: &str, facts: &Facts<'_>, serving: &Serving) -> Result<(Value, Vec<Value>), String> {
    let path = serving.value("--path").unwrap_or("/mcp");
    let mut arguments = vec![json!({"type": "positional", "value": "--http"})];
    let url = if let Ok(port) = addr.parse::<u16>() {
        arguments.push(json!({
            "type": "positional",
            "valueHint": "port",
            "description": "The port it serves MCP on, on 127.0.0.1",
            "format": "number",
            "isRequired": true,
            "default": port.to_string(),
        }));
        format!("http://127.0.0.1:{{port}}{path}")
    } else {
        let Ok(socket) = addr.parse::<std::net::SocketAddr>() else {
            return Err(format!(
                "--http {addr:?} is not an address (HOST:PORT, e.g. 0.0.0.0:8080) or a port"
            ));
        };
        arguments.push(json!({"type": "positional", "value": addr}));
        let host = match socket.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        format!("http://{host}:{}{path}", socket.port())
    };
    if serving.any_auth() && !cfg!(feature = "auth") {
        return Err("the --auth-* options need the `auth` feature of mcp-tools-rs (`features = [\"auth\"]` on its line in Cargo.toml)".to_owned());
    }
    // Tools with scopes mean little without authorization: ask for it (a binary without the
    // `auth` feature cannot verify tokens, and serves them to anyone).
    let protected = cfg!(feature = "auth") && (!facts.scopes.is_empty() || serving.any_auth());
    for (flag, value) in &serving.options {
        if flag.starts_with("--auth-") && value.is_some() {
            continue; // below, as inputs
        }
        arguments.push(match value {
            None => json!({"type": "positional", "value": flag}),
            Some(value) => json!({"type": "named", "name": flag, "value": value}),
        });
    }
    if protected {
        let audience = format!(
            "The server's canonical URI, which access tokens must be issued for (e.g. {})",
            url.replace("{port}", "8080")
        );
        let inputs: [(&str, String, bool, Option<&str>); 4] = [
            ("--auth-audience", audience, true, None),
            (
                "--auth-issuer",
                "The OAuth authorization server whose JWT access tokens it accepts (its keys found through its metadata); or give --auth-token-file".to_owned(),
                false,
                None,
            ),
            (
                "--auth-token-file",
                "A file of static access tokens, one a line: TOKEN SUBJECT [SCOPE ...]; or give --auth-issuer".to_owned(),
                false,
                Some("filepath"),
            ),
            ("--auth-scopes", "Scopes every request needs, comma-separated".to_owned(), false, None),
        ];
        for (flag, description, required, format) in inputs {
            let mut argument = json!({"type": "named", "name": flag, "description": description});
            if required {
                argument["isRequired"] = true.into();
            }
            if let Some(format) = format {
                argument["format"] = format.into();
            }
            if let Some(given) = serving.value(flag) {
                argument["default"] = given.into();
            }
            arguments.push(argument);
        }
    }
    Ok((json!({"type": "streamable-http", "url": url}), arguments))
}

/// A hosted endpoint; one served with static tokens asks for one as a header.
fn remote_json(url: &str, serving: &Serving) -> Result<Value, String> {
    if !cfg!(feature = "http") {
        return Err(format!(
            "--remote {url}: this binary was built without the `http` feature of mcp-tools-rs (`features = [\"http\"]` on its line in Cargo.toml)"
        ));
    }
    if !is_http_url(url) {
        return Err(format!("--remote {url:?}: the endpoint's URL must be http(s)://…"));
    }
    let mut out = json!({"type": "streamable-http", "url": url});
    if serving.has("--auth-token-file") {
        out["headers"] = json!([{
            "name": "Authorization",
            "description": "A static access token the server was given (its --auth-token-file)",
            "isRequired": true,
            "isSecret": true,
            "value": "Bearer {token}",
            "variables": {"token": {"description": "The access token", "isRequired": true, "isSecret": true}},
        }]);
    }
    Ok(out)
}

/// What the registry keeps for the publisher: the runtime, the transports, the tools (their
/// names while the whole fits the registry's 4 KB), the scopes.
fn publisher_meta(facts: &Facts<'_>, cargo: Option<&CargoPackage>) -> (Value, Option<String>) {
    let mut transports = vec!["stdio"];
    if cfg!(feature = "http") {
        transports.push("streamable-http");
    }
    let mut meta = json!({
        "generator": {"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")},
        "serverInfo": {"name": facts.info.name, "version": facts.info.version},
        "transports": transports,
        "tools": {"count": facts.tools.len(), "names": facts.tools},
    });
    if let Some(cargo) = cargo {
        let mut krate = json!({"name": cargo.name, "version": cargo.version});
        if !cargo.license.is_empty() {
            krate["license"] = cargo.license.clone().into();
        }
        meta["crate"] = krate;
    }
    if !facts.scopes.is_empty() {
        meta["scopes"] = facts.scopes.clone().into();
    }
    let size = serde_json::to_vec(&meta).map_or(0, |bytes| bytes.len());
    if size <= PUBLISHER_META_LIMIT {
        return (meta, None);
    }
    meta["tools"] = json!({"count": facts.tools.len(), "namesOmitted": true});
    let warning = format!(
        "the {} tools' names make {PUBLISHER_META} {size} bytes, over the registry's {PUBLISHER_META_LIMIT}: only their count is listed",
        facts.tools.len()
    );
    (meta, Some(warning))
}
