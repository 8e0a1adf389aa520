//! Reference documentation.
//!
//! * [`tool_attribute`]: everything `#[tool]` accepts, and what it expands to.
//! * [`resource_attribute`]: the same for `#[resource]` (resources and resource templates).
//! * [`prompt_attribute`]: the same for `#[prompt]`.

/// # The `#[tool]` attribute
///
/// ```
/// use mcp_tools::{tool, Context, State, ToolError};
/// # #[derive(Default)] struct Db;
/// # #[derive(serde::Serialize, schemars::JsonSchema)] struct Page { rows: Vec<String> }
///
/// /// Query the database.
/// ///
/// /// Returns at most `limit` rows.
/// #[tool(
///     name = "db.query",
///     title = "Query the database",
///     summary = "Run a read-only SQL query",
///     tags = ["database", "sql"],
///     annotations(read_only, idempotent, open_world = false),
///     meta = serde_json::json!({"example.com/owner": "data-team"}),
/// )]
/// async fn query(
///     /// The SQL text.
///     sql: String,
///     /// Rows per page.
///     #[tool(default = 50)]
///     limit: u32,
///     /// Where to start (absent = the beginning).
///     cursor: Option<String>,
///     db: State<Db>,
///     ctx: Context,
/// ) -> Result<Page, ToolError> {
///     # let _ = (sql, limit, cursor, db, ctx);
///     Ok(Page { rows: vec![] })
/// }
/// ```
///
/// ## Arguments of the attribute (all optional)
///
/// | argument | meaning |
/// |---|---|
/// | `name = "..."` | The tool's name (default: the function's name, without `r#`). Checked at compile time: 1–128 characters of `A-Z a-z 0-9 _ . -`. |
/// | `title = "..."` | Display title (`title` on `tools/list`). |
/// | `description = "..."` | The description the model reads. Default: the function's doc comment, paragraphs kept (`#[doc = include_str!("..")]` works). A tool with neither is a compile error: clients require one. |
/// | `summary = "..."` | One line for catalog search. Default: the description's first line (cut at 160 characters). |
/// | `tags = ["...", ...]` | Groups for catalog search. Not sent on `tools/list`. |
/// | `annotations(...)` | The MCP hints: `read_only`, `destructive`, `idempotent`, `open_world` (each alone means `true`, or `= true/false`) and `title = "..."`. Only hints you set are sent. `read_only` together with `destructive` is a compile error. |
/// | `meta = expr` | Extra `_meta` keys, sent verbatim: any expression that converts `Into<serde_json::Value>` (an object; anything else is sent as `{"value": …}`). Evaluated once at start-up. |
/// | `icons = ["https://…/icon.png", ...]` | Icons for clients that show them (MIME type guessed from the extension). |
/// | `defer = false` | When the server defers its catalog ([`ServerBuilder::defer_tools`](crate::ServerBuilder::defer_tools)), keep this tool listed (marked `_meta["anthropic/alwaysLoad"]`) instead of only searchable. `defer` alone means `true`, the default. |
/// | `task = "optional"` or `task = "required"` | The tool may (`optional`) or must (`required`) run as a task for 2026-07-28 clients that declare the tasks extension: see [`TaskSupport`](crate::TaskSupport). Default: never a task. |
/// | `timeout = "30s"` | How long a call may run (a [humantime](https://docs.rs/humantime) duration: `"500ms"`, `"2m"`…; checked at compile time). After that the handler's future is dropped, its [`Context`](crate::Context) cancellation fires, and the model gets an `isError` result saying the tool timed out. Default: the server's [`Limits::request_timeout`](crate::Limits::request_timeout), if any. |
/// | `scopes = ["notes:write", ...]` | OAuth scopes a caller needs, enforced over HTTP with authorization (feature `auth`, `HttpOptions::authorization`): a caller whose token lacks them does not see the tool (on `tools/list` nor in deferred search) and calling it is answered 403 with the step-up challenge naming them. Over stdio (the process owner) and HTTP without authorization they are not enforced. Checked at compile time: scope tokens without spaces, `"` or `\`. |
/// | `crate = "path"` | Where `mcp_tools` is, for crates that re-export it (default `::mcp_tools`). |
/// | `widget = "name"` or `widget(name = "..", html = "..", invoking = "..", invoked = "..", accessible = bool, visibility = ["model", "app"], csp(connect = [..], resources = [..]), prefers_border = bool)` | Links the tool to an MCP Apps view. The HTML file (default `widgets/{name}.html`, relative to the crate root) is embedded at compile time; a missing file is a compile error at the attribute. The view is served as `ui://widget/{name}.html` (`text/html;profile=mcp-app`, plus a `text/html+skybridge` twin), and the tool's `_meta` gets `ui.resourceUri` (and `ui.visibility`), `ui/resourceUri` and the `openai/*` keys, merged under your own `meta` keys. `visibility = ["app"]` makes a tool only the view calls: hidden from the model and from deferred search. Return a [`Widget`](crate::Widget) (props for the view, text for the model; an empty text becomes `Displaying {name}`). |
///
/// ## Parameters
///
/// Each parameter is one of:
///
/// * **An argument** (`name: Type`): a property of the input object schema, named after the
///   parameter (`r#type` is `type`; `#[tool(rename = "...")]` renames it). The type must implement
///   `serde::Deserialize` and `schemars::JsonSchema` and be owned (`String`, not `&str`).
///   Its `///` doc comment is the property's `description`. An `Option<T>` argument is optional
///   (not in `required`, and advertised as `T`'s schema: a client leaves it out, and a `null` for
///   it is refused, as for an optional field of a struct). `#[tool(default = expr)]` makes it
///   optional with that default, shown in the schema when the value serializes.
/// * **A context parameter**, recognised by its type's name: [`Context`](crate::Context) (progress,
///   logging, cancellation, client info) or [`State<T>`](crate::State) (shared state registered
///   with [`ServerBuilder::state`](crate::ServerBuilder::state); a missing registration is a start-up
///   error naming the tool) or [`Auth`](crate::Auth) (the caller's verified identity, over HTTP
///   with authorization). Not part of the schema.
/// * **`Args<T>`**: one parameter whose struct is the whole argument object (its fields are the
///   properties; use serde and schemars attributes on them). It cannot be combined with other
///   arguments.
///
/// Arguments the tool does not declare are rejected (`additionalProperties: false`), and so are
/// fields its types do not have at any depth, inside enums of every serde representation too,
/// so a misspelt optional argument is reported instead of silently ignored. Invalid arguments
/// never reach the function: the model gets an `isError` result listing **every** problem with
/// its JSON path (schema problems, unknown fields and decoding errors together; a wrong enum tag
/// names the tags allowed).
///
/// ## Return types
///
/// | return type | result |
/// |---|---|
/// | `String`, `&'static str` (any type whose schema is a plain string) | one text block; no `outputSchema` |
/// | `()` (or no return type) | empty content |
/// | `T: Serialize + JsonSchema` | `structuredContent` plus the same JSON as text, and `outputSchema` derived from `T` (for serialization). A `T` that is not a JSON object (a number, a list, an enum of strings…) is wrapped as `{"result": …}` with a matching object schema. |
/// | [`ToolResult`](crate::ToolResult) | exactly that result (mixed content: text, images, audio, resources, links, `_meta`) |
/// | `Result<T, E>` (any type named `Result`, e.g. `io::Result<T>`) | `Ok(T)` as above; `Err(e)` an `isError: true` result whose text is the error's message. `E` is [`ToolError`](crate::ToolError) or any `std::error::Error + Send + Sync + 'static`. |
///
/// A panic in the function becomes an `isError` result; the server keeps serving.
/// `async fn` and plain `fn` are both accepted; a plain `fn` runs on the async runtime, so it
/// should not block.
///
/// ## Mistakes caught at compile time
///
/// Unknown or repeated attribute arguments (with a "did you mean" hint), values of the wrong
/// kind, invalid names, a missing description, contradictory annotations, `self`, generics,
/// `unsafe`/`const`/`extern` functions, patterns instead of names, borrowed or `impl Trait`
/// argument types, `impl Trait` return types, two `Args<T>` or `Args<T>` with other arguments,
/// two arguments with one name, argument types that are not `Deserialize + JsonSchema`, return
/// types that are not `Serialize + JsonSchema`, error types that do not convert into
/// `ToolError`, `async fn`s whose future is not `Send`. Each is reported on the token
/// to fix. All mistakes of one attribute are reported together, and the function is still
/// emitted so the rest of the crate type-checks.
///
/// Start-up (when the server is built) catches what one attribute cannot see: two tools with
/// the same name (both source locations are named) and `State<T>` without registered state.
///
/// ## What it expands to
///
/// The function is emitted as written (minus the attributes on its parameters). Beside it, in an
/// anonymous `const _: () = { ... };` block so nothing leaks into your namespace:
///
/// ```text
/// // One check per parameter and return type, spanned on the type you wrote: a type mistake is
/// // reported there, once, with a message that says what to derive or use instead.
/// const _: () = assert_arg::<String>();          // Deserialize + JsonSchema
/// const _: () = assert_from_context::<State<Db>>();
/// const _: () = assert_result::<Result<Page, ToolError>>();
/// const _: () = assert_output::<<Result<Page, ToolError> as IsResult>::Ok>();   // on `Page`
/// const _: () = assert_error::<<Result<Page, ToolError> as IsResult>::Err>();   // on `ToolError`
/// …
/// // Everything below uses the types through `Check::<T>`, which adds no second error.
/// struct __McpArgs { __mcp_arg_0: String, __mcp_arg_1: u32, __mcp_arg_2: Option<String> }
/// impl Deserialize for __McpArgs { … }        // a visitor: rejects unknown and repeated
///                                             // arguments, applies defaults and Option
/// fn __mcp_default_1() -> u32 { 50 }
///
/// fn __mcp_input_schema(gen) -> Schema {      // one property per argument, in order
///     let mut s = ObjectSchema::new();
///     Check::<String>::new().property(&mut s, gen, "sql", Some("The SQL text."), None);
///     Check::<u32>::new().property(&mut s, gen, "limit", Some("Rows per page."), Some(Some(json!(50))));
///     …
///     s.finish()
/// }
/// fn __mcp_output_schema(gen) -> Option<Schema> {
///     Check::<Result<Page, ToolError>>::new().output_schema_of_result(gen)
/// }
/// fn __mcp_state_3() -> Option<(TypeId, &'static str)> { Check::<State<Db>>::new().required_state() }
/// fn __mcp_state_4() -> Option<(TypeId, &'static str)> { Check::<Context>::new().required_state() }
/// // Whether a parameter can reach the client (ask it for input): a 2026-07-28 call of a tool
/// // that cannot skips what a question's answer needs.
/// fn __mcp_reaches_client() -> bool {
///     false || Check::<State<Db>>::new().reaches_client() || Check::<Context>::new().reaches_client()
/// }
///
/// fn __mcp_handler(arguments: &RawValue, ctx: Context, plan: OutputPlan)
///     -> Result<BoxFuture<'static, ToolResult>, ArgumentError>
/// {
///     let __McpArgs { __mcp_arg_0, __mcp_arg_1, __mcp_arg_2 } = decode(arguments)?;
///     Ok(Box::pin(async move {
///         let __mcp_arg_3 = Check::<State<Db>>::new().extract(&ctx);
///         let __mcp_arg_4 = Check::<Context>::new().extract(&ctx);
///         let future = query(__mcp_arg_0, __mcp_arg_1, __mcp_arg_2, __mcp_arg_3, __mcp_arg_4);
///         assert_send(&future);                   // spanned on the function's name
///         let result = SendFuture(future).into_send().await;
///         Check::<Result<Page, ToolError>>::new().finish_result(result, plan, "db.query")
///     }))
/// }
///
/// inventory::submit! { ToolRegistration {
///     name: "db.query", title: Some("Query the database"), description: "Query the database.\n\n…",
///     summary: Some("Run a read-only SQL query"), tags: &["database", "sql"],
///     annotations: StaticAnnotations { read_only: Some(true), idempotent: Some(true), … },
///     input_schema: __mcp_input_schema, output_schema: __mcp_output_schema,
///     required_state: &[__mcp_state_3, __mcp_state_4], reaches_client: __mcp_reaches_client,
///     handler: __mcp_handler, file: file!(), line: line!(), …
/// } }
/// ```
///
/// Every path in the generated code is absolute (`::mcp_tools::__private::…`), so your crate
/// needs neither `inventory`, `serde_json` nor `schemars` for the macro's sake, and local items
/// named `Result`, `Option` or `serde` do not interfere. The registration holds only `const` data
/// (strings and function pointers); schemas are generated, checked and cached once when the
/// server is built, never per request.
pub mod tool_attribute {}

/// # The `#[resource]` attribute
///
/// ```
/// use mcp_tools::{resource, Context, State, ToolError};
/// # struct Notes;
/// # impl Notes { fn get(&self, _: u32) -> Option<String> { None } }
///
/// /// The README, in Markdown.
/// #[resource(uri = "docs://readme", title = "README", mime_type = "text/markdown")]
/// async fn readme() -> &'static str {
///     "# My server"
/// }
///
/// /// One note, by its number.
/// #[resource(uri = "notes://{id}", name = "note", mime_type = "text/plain")]
/// async fn note(id: u32, notes: State<Notes>, ctx: Context) -> Result<String, ToolError> {
///     # let _ = ctx;
///     notes.get(id).ok_or_else(|| ToolError::new(format!("no note {id}")))
/// }
/// ```
///
/// ## Arguments of the attribute
///
/// | argument | meaning |
/// |---|---|
/// | `uri = "..."` | **Required.** The URI clients read the resource by: a scheme (`file:`, `https:`, `myapp:` …) and the rest. With `{variables}` (`notes://{id}`, `db://{table}/{row}`) it is a **resource template**, listed on `resources/templates/list` instead of `resources/list`. Checked at compile time: not empty, a scheme, balanced braces, variables that are identifiers, each once, never two in a row. A `{name}` variable matches one path segment (never a `/`); a `{+name}` variable (RFC 6570 reserved expansion), as in `files://{+path}`, matches several (`a/b/c.txt`). Neither matches an empty, `.` or `..` segment, so a URI cannot lead a handler outside the place it maps to. |
/// | `name = "..."` | The resource's name (default: the function's name, without `r#`). |
/// | `title = "..."` | Display title. |
/// | `description = "..."` | Default: the function's doc comment, paragraphs kept. Optional for resources. |
/// | `mime_type = "..."` | The MIME type (`type/subtype`), listed and set on the contents returned as `String` or `Vec<u8>`. |
/// | `scopes = ["...", ...]` | OAuth scopes a caller needs (see `#[tool]`): without them the resource is not listed and reading it is answered with the 403 step-up. |
/// | `crate = "path"` | Where `mcp_tools` is, for crates that re-export it (default `::mcp_tools`). |
///
/// ## Parameters
///
/// * **A URI variable** (`id: u32` for `{id}`): every variable of the template is exactly one
///   parameter of that name (`#[resource(rename = "userId")]` on the parameter receives `{userId}`).
///   The type is `String` or any `T: FromStr`: a value that does not parse answers `resources/read`
///   with a JSON-RPC "invalid params" error naming the variable and the value. A variable matches
///   one or more characters other than `/` (the last one, anything to the end).
/// * **A context parameter**, as in `#[tool]`: [`Context`](crate::Context),
///   [`State<T>`](crate::State) (a missing registration is a start-up error naming the resource)
///   or [`Auth`](crate::Auth).
///
/// A fixed resource (no variables) takes context parameters only.
///
/// ## Return types
///
/// | return type | contents |
/// |---|---|
/// | `String`, `&'static str` | one text item (`mime_type`, else `text/plain`) |
/// | `Vec<u8>` | one base64 `blob` item (`mime_type`, else `application/octet-stream`) |
/// | [`ResourceContents`](crate::ResourceContents), `Vec<ResourceContents>` | exactly those |
/// | `Result<T, E>` of one of these | `Err(e)` is a JSON-RPC error whose message is the error's; `E` converts into [`ToolError`](crate::ToolError) |
///
/// ## Mistakes caught at compile time
///
/// A missing or malformed `uri`, unknown or repeated arguments, a bad `mime_type`, a template
/// variable without a parameter (reported on the URI) and a parameter that is not a variable
/// (reported on the parameter, with a "did you mean"), borrowed or `impl Trait` variable types,
/// variable types that are not `FromStr`, no return type, return types that are not contents,
/// error types that do not convert into `ToolError`, and the function-level mistakes of `#[tool]`
/// (`self`, generics, `unsafe`/`const`/`extern`, a non-`Send` future). All at once, each on its
/// token; the function is still emitted.
///
/// ## What it expands to
///
/// The function as written, and beside it, in a `const _: () = { ... };` block:
///
/// ```text
/// const _: () = assert_variable::<u32>();                       // FromStr, on `u32`
/// const _: () = assert_resource_context::<State<Notes>>();
/// const _: () = { assert_resource_result::<Result<String, ToolError>>();
///                 assert_contents::<…::Ok>();                  // on `String`
///                 assert_resource_error::<…::Err>(); };        // on `ToolError`
/// fn __mcp_state_1() -> Option<(TypeId, &'static str)> { Check::<State<Notes>>::new().required_state() }
///
/// fn __mcp_read(request: ResourceRequest, ctx: Context)
///     -> BoxFuture<'static, Result<Vec<ResourceContents>, ToolError>>
/// {
///     Box::pin(async move {
///         let __mcp_arg_0 = Check::<u32>::new().variable(&request, "id")?;
///         let __mcp_arg_1 = Check::<State<Notes>>::new().extract(&ctx);
///         let __mcp_arg_2 = Check::<Context>::new().extract(&ctx);
///         let result = note(__mcp_arg_0, __mcp_arg_1, __mcp_arg_2).await;   // Send-checked
///         Check::<Result<String, ToolError>>::new().contents_of_result(result, &request.uri, Some("text/plain"))
///     })
/// }
///
/// inventory::submit! { ResourceRegistration {
///     uri: "notes://{id}", name: "note", title: None, description: Some("One note, by its number."),
///     mime_type: Some("text/plain"), handler: __mcp_read,
///     required_state: &[__mcp_state_1, __mcp_state_2], file: file!(), line: line!(),
/// } }
/// ```
///
/// At start-up the server adds every registration to its catalog (a URI with `{` is a
/// template); two resources with one URI are a start-up error naming both source locations.
/// Runtime [`Resource`](crate::Resource)s and [`ResourceTemplate`](crate::ResourceTemplate)s
/// with the same URI replace them.
pub mod resource_attribute {}

/// # The `#[prompt]` attribute
///
/// ```
/// use mcp_tools::{prompt, Context, PromptMessage, ToolError};
///
/// /// Ask for a code review.
/// ///
/// /// The model is asked to be concise.
/// #[prompt(name = "code_review", title = "Code review")]
/// async fn review(
///     /// The code to review.
///     code: String,
///     /// The language (default: guess).
///     language: Option<String>,
///     /// At most this many remarks.
///     #[prompt(rename = "maxRemarks")]
///     max_remarks: Option<u8>,
///     ctx: Context,
/// ) -> Result<Vec<PromptMessage>, ToolError> {
///     # let _ = ctx;
///     let language = language.unwrap_or_else(|| "the language it is written in".to_owned());
///     let limit = max_remarks.map(|n| format!(" Make at most {n} remarks.")).unwrap_or_default();
///     Ok(vec![PromptMessage::user(format!("Review this code as {language}.{limit}\n\n{code}"))])
/// }
/// ```
///
/// ## Arguments of the attribute
///
/// | argument | meaning |
/// |---|---|
/// | `name = "..."` | The prompt's name (default: the function's name, without `r#`). |
/// | `title = "..."` | Display title. |
/// | `description = "..."` | Default: the function's doc comment, paragraphs kept. A prompt with neither is a compile error: clients require one. |
/// | `scopes = ["...", ...]` | OAuth scopes a caller needs (see `#[tool]`): without them the prompt is not listed and getting it is answered with the 403 step-up. |
/// | `crate = "path"` | Where `mcp_tools` is, for crates that re-export it (default `::mcp_tools`). |
///
/// ## Parameters
///
/// * **A prompt argument** (`name: Type`), named after the parameter (`r#type` is `type`;
///   `#[prompt(rename = "...")]` renames it), described by its `///` doc comment. Prompt
///   arguments are text: `String` is a required argument, `Option<String>` an optional one, and
///   any other `T: FromStr` (or `Option<T>`) is parsed from the text; a value that does not parse
///   answers `prompts/get` with a JSON-RPC "invalid params" error naming the argument and the
///   value. `prompts/get` without a required argument is refused before the function runs.
/// * **A context parameter**, as in `#[tool]`: [`Context`](crate::Context),
///   [`State<T>`](crate::State) or [`Auth`](crate::Auth).
///
/// ## Return types
///
/// | return type | messages |
/// |---|---|
/// | `String`, `&'static str` | one user message with that text |
/// | [`PromptMessage`](crate::PromptMessage), `Vec<PromptMessage>` | those messages (text, images, audio, embedded resources) |
/// | [`PromptResult`](crate::PromptResult) | exactly that result (messages and a description) |
/// | `Result<T, E>` of one of these | `Err(e)` is a JSON-RPC error whose message is the error's; `E` converts into [`ToolError`](crate::ToolError) |
///
/// ## Mistakes caught at compile time
///
/// A missing or blank description, unknown or repeated arguments, an empty name, `default` on a
/// parameter (prompt arguments have none), two arguments with one name, borrowed or
/// `impl Trait` argument types, argument types that are not `FromStr`, a user type named
/// `Option`, no return type, return types that are not messages, error types that do not
/// convert into `ToolError`, and the function-level mistakes of `#[tool]`. All at once, each on
/// its token; the function is still emitted.
///
/// ## What it expands to
///
/// The function as written, and beside it, in a `const _: () = { ... };` block:
///
/// ```text
/// const _: () = assert_prompt_arg::<String>();                  // FromStr, on `String`
/// const _: () = assert_option::<Option<String>>();              // std's Option
/// const _: () = assert_prompt_arg::<String>();                  // on the `String` inside
/// …
/// fn __mcp_get(mut args: HashMap<String, String>, ctx: Context)
///     -> BoxFuture<'static, Result<PromptResult, ToolError>>
/// {
///     Box::pin(async move {
///         let __mcp_arg_0 = Check::<String>::new().prompt_arg(&mut args, "code")?;
///         let __mcp_arg_1 = Check::<Option<String>>::new().optional_prompt_arg(&mut args, "language")?;
///         …
///         let result = review(__mcp_arg_0, __mcp_arg_1, __mcp_arg_2, __mcp_arg_3).await;
///         Check::<Result<Vec<PromptMessage>, ToolError>>::new().messages_of_result(result)
///     })
/// }
///
/// inventory::submit! { PromptRegistration {
///     name: "code_review", title: Some("Code review"), description: "Ask for a code review.\n\n…",
///     arguments: &[
///         StaticPromptArgument { name: "code", description: Some("The code to review."), required: true },
///         StaticPromptArgument { name: "language", description: Some("The language (default: guess)."), required: false },
///         StaticPromptArgument { name: "maxRemarks", description: Some("At most this many remarks."), required: false },
///     ],
///     handler: __mcp_get, required_state: &[__mcp_state_3], file: file!(), line: line!(),
/// } }
/// ```
///
/// Two prompts with one name are a start-up error naming both source locations; a runtime
/// [`Prompt`](crate::Prompt) with the same name replaces the function.
pub mod prompt_attribute {}
