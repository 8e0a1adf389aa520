//! One `tools/call`, top to bottom: check the arguments' shape, decode them (explaining every
//! problem when they are invalid), run the handler (a panic becomes an `isError` result), and
//! check structured output against a hand-written output schema.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt as _;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::__private::ArgumentError;
use crate::context::Context;
use crate::model::apps::backfill_text;
use crate::model::result::{OutputPlan, ToolResult};
use crate::protocol::Era;
use crate::registry::explain::{self, Checks};
use crate::registry::tools::{Handler, ToolEntry};

/// Runs one tool: decodes and checks its arguments, calls the handler (a panic becomes an
/// `isError` result), and checks structured output against a hand-written output schema.
pub(crate) async fn call_entry(entry: &ToolEntry, arguments: &RawValue, ctx: Context) -> ToolResult {
    let result = match entry.timeout {
        None => run_entry(entry, arguments, ctx).await,
        Some(limit) => {
            let cancel = ctx.cancellation_token();
            let run = run_entry(entry, arguments, ctx);
            tokio::time::timeout(limit, run).await.unwrap_or_else(|_| timed_out(&entry.name, limit, &cancel))
        }
    };
    match &entry.view {
        // A view's result always says something to the model.
        Some(view) => backfill_text(result, view),
        None => result,
    }
}

async fn run_entry(entry: &ToolEntry, arguments: &RawValue, ctx: Context) -> ToolResult {
    if !arguments.get().trim_start().starts_with('{') {
        return invalid_arguments(
            entry,
            vec![format!("(root): the arguments must be a JSON object, not {}", arguments.get())],
        );
    }
    match &entry.handler {
        Handler::Native(handler) => {
            match std::panic::catch_unwind(AssertUnwindSafe(|| handler(arguments, ctx))) {
                Ok(future) => {
                    AssertUnwindSafe(future).catch_unwind().await.unwrap_or_else(|p| panicked(entry, p))
                }
                Err(panic) => panicked(entry, panic),
            }
        }
        Handler::Static { handler, plan, checks, .. } => {
            // 2026-07-28 clients get a non-object output as it is, 2025-11-25 ones wrapped.
            let plan = match (ctx.era(), *plan) {
                (Era::Stateless, OutputPlan::Structured { .. }) => OutputPlan::Structured { wrap: false },
                (_, plan) => plan,
            };
            let future = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(arguments, ctx, plan))) {
                Err(panic) => return panicked(entry, panic),
                Ok(Err(error)) => {
                    return invalid_arguments(entry, explain_arguments(entry, arguments, Some(&error)));
                }
                Ok(Ok(future)) => future,
            };
            // What decoding does not check; the future has not run, and is dropped if refused.
            if let Some(problems) = unchecked_problems(entry, *checks, arguments) {
                return invalid_arguments(entry, problems);
            }
            AssertUnwindSafe(future).catch_unwind().await.unwrap_or_else(|p| panicked(entry, p))
        }
        Handler::Dynamic { handler, input_validator, output_validator } => {
            let value: Value = match serde_json::from_str(arguments.get()) {
                Ok(v) => v,
                Err(e) => return invalid_arguments(entry, vec![format!("(root): {e}")]),
            };
            if let Some(validator) = input_validator
                && !validator.is_valid(&value)
            {
                let problems =
                    explain::problems(Some(validator), &entry.input_schema, false, &value, None, false);
                return invalid_arguments(entry, problems);
            }
            let era = ctx.era();
            let future = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(value, ctx))) {
                Ok(f) => f,
                Err(panic) => return panicked(entry, panic),
            };
            let result = match AssertUnwindSafe(future).catch_unwind().await {
                Ok(Ok(result)) => result,
                Ok(Err(error)) => return ToolResult::from_error(error, &entry.name),
                Err(panic) => return panicked(entry, panic),
            };
            let result = match entry.output_schema_in(Era::Stateless) {
                Some(schema) if !result.is_error() => {
                    match output_validator
                        .get_or_init(|| jsonschema::validator_for(schema).map_err(|e| e.to_string()))
                    {
                        Ok(validator) => check_output(entry, validator, result),
                        Err(why) => {
                            tracing::error!(tool = %entry.name, %why, "the output schema does not compile");
                            ToolResult::error(format!(
                                "tool `{}` declares an output schema that cannot be used: {why}",
                                entry.name
                            ))
                        }
                    }
                }
                _ => result,
            };
            if era == Era::Handshake && entry.wraps_output() && !result.is_error() {
                result.wrap_structured()
            } else {
                result
            }
        }
    }
}

/// Every problem of arguments that did not decode (or decoded with fields the types do not
/// have): the schema's, the fields no type has, and decoding's own.
fn explain_arguments(
    entry: &ToolEntry,
    arguments: &RawValue,
    decoding: Option<&ArgumentError>,
) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(arguments.get()) else {
        return decoding.map(ArgumentError::problems).unwrap_or_default();
    };
    explain_value(entry, &value, decoding)
}

fn explain_value(entry: &ToolEntry, value: &Value, decoding: Option<&ArgumentError>) -> Vec<String> {
    let derived = matches!(entry.handler, Handler::Static { .. });
    // serde loses the variant of an externally tagged enum from an unknown field's path: where
    // the schema has variants, the walk's paths are the ones to report.
    let trust_ignored = match &entry.handler {
        Handler::Static { checks, .. } => !checks.walk,
        _ => true,
    };
    explain::problems(
        entry.explaining_validator(),
        &entry.input_schema,
        derived,
        value,
        decoding,
        trust_ignored,
    )
}

/// The problems of decoded arguments that decoding does not see: constraints (ranges, lengths,
/// patterns), unknown fields inside enums and flattened fields (serde reads those through a
/// buffer), and `null`s the advertised schema does not allow. Each check runs only for tools
/// that need it, and the `null` one only for arguments that contain `null`.
fn unchecked_problems(entry: &ToolEntry, checks: Checks, arguments: &RawValue) -> Option<Vec<String>> {
    static NULL: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"null"));
    let nulls = checks.nulls && NULL.find(arguments.get().as_bytes()).is_some();
    if !(checks.constrained || checks.walk || nulls) {
        return None;
    }
    let value: Value = serde_json::from_str(arguments.get()).ok()?;
    let invalid = (checks.constrained && entry.explaining_validator().is_some_and(|v| !v.is_valid(&value)))
        || ((checks.walk || nulls) && !explain::walk(&entry.input_schema, &value, checks.walk).is_empty());
    invalid.then(|| explain_value(entry, &value, None)).filter(|problems| !problems.is_empty())
}

fn display_path(pointer: &str) -> &str {
    if pointer.is_empty() { "(root)" } else { pointer }
}

fn invalid_arguments(entry: &ToolEntry, problems: Vec<String>) -> ToolResult {
    tracing::debug!(tool = %entry.name, ?problems, "invalid arguments");
    let mut text = format!("Invalid arguments for tool `{}`:\n", entry.name);
    for problem in &problems {
        text.push_str("- ");
        text.push_str(problem);
        text.push('\n');
    }
    text.push_str("Fix the arguments to match the tool's input schema and call it again.");
    ToolResult::error(text)
}

fn check_output(entry: &ToolEntry, validator: &jsonschema::Validator, result: ToolResult) -> ToolResult {
    let Some(value) = result.structured_value() else {
        tracing::error!(tool = %entry.name, "tool declares an outputSchema but returned no structuredContent");
        return ToolResult::error(format!(
            "tool `{}` declares an output schema but returned no structured content",
            entry.name
        ));
    };
    let problems: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{}: {}", display_path(e.instance_path().as_str()), e))
        .collect();
    if problems.is_empty() {
        return result;
    }
    tracing::error!(tool = %entry.name, ?problems, "structured output does not match the output schema");
    ToolResult::error(format!(
        "tool `{}` produced output that does not match its output schema:\n- {}",
        entry.name,
        problems.join("\n- ")
    ))
}

/// The result of a call that ran out of time: its handler's future was dropped (and its
/// cancellation token fired, for work it started elsewhere).
pub(crate) fn timed_out(tool: &str, limit: Duration, cancel: &CancellationToken) -> ToolResult {
    cancel.cancel();
    tracing::warn!(tool, ?limit, "tool call timed out and was cancelled");
    ToolResult::error(format!(
        "tool `{tool}` did not finish within {} and was cancelled; try again, perhaps with a smaller request",
        humantime::format_duration(limit)
    ))
}

/// The message of a caught panic.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

fn panicked(entry: &ToolEntry, panic: Box<dyn std::any::Any + Send>) -> ToolResult {
    let message = panic_message(&*panic);
    tracing::error!(tool = %entry.name, panic = %message, "tool handler panicked");
    ToolResult::from_panic(format!(
        "tool `{}` failed: its handler panicked (details are in the server's log)",
        entry.name
    ))
}
