//! Which attribute is being expanded. The stages are shared; this says what differs between
//! `#[tool]`, `#[resource]` and `#[prompt]`: their keywords and the words of their messages.

use crate::symbol::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Resource,
    Prompt,
}

impl Kind {
    /// The attribute's name, which is also the name of its parameter attributes.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
        }
    }

    /// `#[tool]`, as messages write it.
    pub fn attr(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool]",
            Kind::Resource => "#[resource]",
            Kind::Prompt => "#[prompt]",
        }
    }

    /// The arguments of the attribute on a parameter.
    pub fn param_args(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => PARAM_ARGS,
            Kind::Resource | Kind::Prompt => &[RENAME],
        }
    }

    /// What a description says, for messages: "say what the tool does".
    pub fn purpose(self) -> &'static str {
        match self {
            Kind::Tool => "what the tool does",
            Kind::Resource => "what the resource holds",
            Kind::Prompt => "what the prompt is for",
        }
    }

    /// The function's non-context parameters, for messages.
    pub fn parameters(self) -> &'static str {
        match self {
            Kind::Tool | Kind::Prompt => "arguments",
            Kind::Resource => "parameters",
        }
    }

    /// What the function's non-context parameters are, for messages: "#[tool] arguments".
    pub fn inputs(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool] arguments",
            Kind::Resource => "#[resource] URI variables",
            Kind::Prompt => "#[prompt] arguments",
        }
    }

    /// How an input's value is made: arguments are decoded from JSON, the others parsed from text.
    pub fn made(self) -> &'static str {
        match self {
            Kind::Tool => "decoded",
            Kind::Resource | Kind::Prompt => "parsed",
        }
    }

    /// A plain-name parameter of this kind, for messages: "`query: String`".
    pub fn param_example(self) -> &'static str {
        match self {
            Kind::Tool => {
                "a #[tool] argument must be a plain name (e.g. `query: String`); its name is the argument's name in the schema"
            }
            Kind::Resource => {
                "a #[resource] parameter must be a plain name (e.g. `id: String` for `{id}`); its name is the URI variable it receives"
            }
            Kind::Prompt => {
                "a #[prompt] argument must be a plain name (e.g. `topic: String`); its name is the prompt argument's name"
            }
        }
    }

    /// What a function of this kind returns, for messages.
    pub fn returns(self) -> &'static str {
        match self {
            Kind::Tool => "`String`, a struct deriving `Serialize` and `JsonSchema`, or `ToolResult`",
            Kind::Resource => "`String`, `Vec<u8>` or `ResourceContents`",
            Kind::Prompt => "`String`, `Vec<PromptMessage>` or `PromptResult`",
        }
    }

    /// Why the function cannot be generic, and the fix.
    pub fn why_concrete(self) -> &'static str {
        match self {
            Kind::Tool => {
                "the schemas are derived from concrete types; remove the parameters and name the types"
            }
            Kind::Resource | Kind::Prompt => {
                "it is registered as one handler of concrete types; remove the type parameters and name the types"
            }
        }
    }

    /// The item's example form, for "goes on a function" messages.
    pub fn example(self) -> &'static str {
        match self {
            Kind::Tool => "`async fn name(arg: Type, ...) -> Output { ... }`",
            Kind::Resource => "`#[resource(uri = \"...\")] async fn name() -> String { ... }`",
            Kind::Prompt => "`async fn name(argument: String, ...) -> Vec<PromptMessage> { ... }`",
        }
    }
}
