//! Reference documentation.
//!
//! * [`tool_attribute`]: everything `#[tool]` accepts, and what it expands to.

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
/// | `crate = "path"` | Where `mcp_tools` is, for crates that re-export it (default `::mcp_tools`). |
/// | `widget = ...` | Reserved for MCP Apps views (`widget = "name"` or `widget(name = .., html = .., invoking = .., invoked = .., accessible = .., visibility = [..], csp(connect = [..], resources = [..]), prefers_border = ..)`). The grammar is parsed and checked; this version reports that views are not served yet. |
///
/// ## Parameters
///
/// Each parameter is one of:
///
/// * **An argument** (`name: Type`): a property of the input object schema, named after the
///   parameter (`r#type` is `type`; `#[tool(rename = "...")]` renames it). The type must implement
///   `serde::Deserialize` and `schemars::JsonSchema` and be owned (`String`, not `&str`).
///   Its `///` doc comment is the property's `description`. An `Option<T>` argument is optional
///   (not in `required`; a client may also send `null`). `#[tool(default = expr)]` makes it
///   optional with that default, shown in the schema when the value serializes.
/// * **A context parameter**, recognised by its type's name: [`Context`](crate::Context) (progress,
///   logging, cancellation, client info) or [`State<T>`](crate::State) (shared state registered
///   with [`ServerBuilder::state`](crate::ServerBuilder::state); a missing registration is a start-up
///   error naming the tool). Not part of the schema.
/// * **`Args<T>`**: one parameter whose struct is the whole argument object (its fields are the
///   properties; use serde and schemars attributes on them). It cannot be combined with other
///   arguments.
///
/// Arguments the tool does not declare are rejected (`additionalProperties: false`), so a
/// misspelt optional argument is reported instead of silently ignored. Invalid arguments never
/// reach the function: the model gets an `isError` result listing **every** problem with its JSON
/// path.
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
///     required_state: &[__mcp_state_3, __mcp_state_4],
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
