//! What a model is told about invalid arguments (issue #44, points 2 to 4): unknown fields are
//! found in every serde enum representation, at their own path; one result lists every problem,
//! with enum tags named; and a `null` for an optional field is refused, as the advertised
//! schema (which leaves `null` out) says.

// The argument types' fields are read through their `Debug` output only.
#![allow(dead_code)]

use mcp_tools::testing::TestClient;
use mcp_tools::{Args, Server, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// One enum of each representation.

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Internal {
    Standard,
    Express { days: u32 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum External {
    Standard,
    Express { days: u32 },
    Pickup(Place),
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Place {
    town: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c", rename_all = "lowercase")]
enum Adjacent {
    Standard,
    Express { days: u32 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Count(u32),
    Name { first: String, last: String },
}

/// Ship with any representation of the options.
#[tool]
async fn ship(
    internal: Option<Internal>,
    external: Option<External>,
    adjacent: Option<Adjacent>,
    untagged: Option<Untagged>,
) -> String {
    format!("{internal:?} {external:?} {adjacent:?} {untagged:?}")
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Parcel {
    weight: u32,
    #[serde(flatten)]
    size: Size,
    #[serde(flatten)]
    speed: Internal,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Size {
    width: u32,
    height: u32,
}

/// A parcel whose size and speed are flattened into it.
#[tool]
async fn parcel(Args(parcel): Args<Parcel>) -> String {
    format!("{parcel:?}")
}

// ---------------------------------------------------------------------------------------------
// An order with every kind of problem.

#[derive(Debug, Deserialize, JsonSchema)]
struct Address {
    line: String,
    line2: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    /// The usual.
    Normal,
    High,
}

/// Place an order.
#[tool]
async fn order(
    quantity: u32,
    address: Address,
    shipping: Internal,
    priority: Option<Priority>,
    note: Option<String>,
    #[tool(default = 1)] copies: u32,
    counts: Option<Vec<Option<u32>>>,
) -> String {
    format!("{quantity} {address:?} {shipping:?} {priority:?} {note:?} {copies} {counts:?}")
}

async fn client() -> TestClient {
    TestClient::connect(&Server::builder().name("arguments").build().expect("builds")).await
}

/// The problem lines of a refused call.
async fn problems(c: &TestClient, tool: &str, arguments: Value) -> Vec<String> {
    let result = c.call(tool, arguments.clone()).await.unwrap();
    assert!(result.is_error(), "{tool} {arguments} was accepted: {}", result.text());
    let text = result.text();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(format!("Invalid arguments for tool `{tool}`:").as_str()), "{text}");
    assert_eq!(
        text.lines().last(),
        Some("Fix the arguments to match the tool's input schema and call it again."),
        "{text}"
    );
    lines.filter_map(|l| l.strip_prefix("- ")).map(str::to_owned).collect()
}

async fn accepted(c: &TestClient, tool: &str, arguments: Value) -> String {
    let result = c.call(tool, arguments.clone()).await.unwrap();
    assert!(!result.is_error(), "{tool} {arguments} was refused: {}", result.text());
    result.text().to_owned()
}

const UNKNOWN: &str = "unknown field: the tool's input schema has no such property";

// ---------------------------------------------------------------------------------------------
// Point 2: unknown fields in every enum representation, at their path in the arguments.

#[tokio::test]
async fn unknown_fields_inside_every_enum_representation_are_reported_at_their_path() {
    let c = client().await;
    let cases = [
        (json!({"internal": {"kind": "express", "days": 2, "urgent": true}}), "/internal/urgent"),
        (json!({"internal": {"kind": "standard", "urgent": true}}), "/internal/urgent"),
        (json!({"external": {"express": {"days": 2, "urgent": true}}}), "/external/express/urgent"),
        (json!({"external": {"pickup": {"town": "Ely", "urgent": true}}}), "/external/pickup/urgent"),
        (json!({"adjacent": {"t": "express", "c": {"days": 2, "urgent": true}}}), "/adjacent/c/urgent"),
        (json!({"adjacent": {"t": "express", "c": {"days": 2}, "urgent": true}}), "/adjacent/urgent"),
        (json!({"untagged": {"first": "Ada", "last": "Lovelace", "middle": "B"}}), "/untagged/middle"),
    ];
    for (arguments, path) in cases {
        assert_eq!(problems(&c, "ship", arguments).await, [format!("{path}: {UNKNOWN}")]);
    }
}

#[tokio::test]
async fn every_enum_representation_still_decodes_without_false_positives() {
    let c = client().await;
    let text = accepted(
        &c,
        "ship",
        json!({
            "internal": {"kind": "express", "days": 2},
            "external": {"pickup": {"town": "Ely"}},
            "adjacent": {"t": "express", "c": {"days": 3}},
            "untagged": {"first": "Ada", "last": "Lovelace"},
        }),
    )
    .await;
    assert_eq!(
        text,
        r#"Some(Express { days: 2 }) Some(Pickup(Place { town: "Ely" })) Some(Express { days: 3 }) Some(Name { first: "Ada", last: "Lovelace" })"#
    );
    let text = accepted(
        &c,
        "ship",
        json!({"internal": {"kind": "standard"}, "external": "standard", "adjacent": {"t": "standard"}, "untagged": 7}),
    )
    .await;
    assert_eq!(text, "Some(Standard) Some(Standard) Some(Standard) Some(Count(7))");
}

#[tokio::test]
async fn flattened_fields_are_known_and_unknown_ones_next_to_them_are_reported() {
    let c = client().await;
    let text =
        accepted(&c, "parcel", json!({"weight": 3, "width": 10, "height": 20, "kind": "express", "days": 1}))
            .await;
    assert_eq!(
        text,
        "Parcel { weight: 3, size: Size { width: 10, height: 20 }, speed: Express { days: 1 } }"
    );
    assert_eq!(
        problems(
            &c,
            "parcel",
            json!({"weight": 3, "width": 10, "height": 20, "kind": "standard", "depth": 5})
        )
        .await,
        [format!("/depth: {UNKNOWN}")]
    );
}

// ---------------------------------------------------------------------------------------------
// Point 3: every problem in one result, enum tags named.

#[tokio::test]
async fn one_result_lists_schema_problems_unknown_fields_and_enum_tags_together() {
    let c = client().await;
    let lines = problems(
        &c,
        "order",
        json!({
            "quantity": -1,
            "address": {"line": "1 Main St", "line_2": "Flat 2"},
            "shipping": {"kind": "expres", "days": 2},
        }),
    )
    .await;
    assert_eq!(
        lines,
        [
            "/quantity: -1 is less than the minimum of 0".to_owned(),
            format!("/address/line_2: {UNKNOWN}"),
            r#"/shipping/kind: "expres" is not one of "standard" or "express""#.to_owned(),
        ]
    );
}

#[tokio::test]
async fn enum_problems_name_the_allowed_values_or_the_closest_variants_own_problems() {
    let c = client().await;
    let order = |shipping: Value, priority: Value| json!({"quantity": 1, "address": {"line": "x"}, "shipping": shipping, "priority": priority});
    // A tagged variant whose tag is right: its own problems.
    assert_eq!(
        problems(&c, "order", order(json!({"kind": "express", "days": "two"}), json!("low"))).await,
        [r#"/shipping/days: "two" is not of type "integer""#]
    );
    // No tag at all.
    assert_eq!(
        problems(&c, "order", order(json!({"days": 2}), json!("low"))).await,
        [r#"/shipping: "kind" is a required property (one of "standard" or "express")"#]
    );
    // A unit-variant enum whose variants have docs (a `oneOf` of constants).
    assert_eq!(
        problems(&c, "order", order(json!({"kind": "standard"}), json!("urgent"))).await,
        [r#"/priority: "urgent" is not one of "low", "high" or "normal""#]
    );
    // An externally tagged enum: its unit variants as strings, the others as one-key objects.
    assert_eq!(
        problems(&c, "ship", json!({"external": "express"})).await,
        [r#"/external: "express" is not one of "standard", {"express": …} or {"pickup": …}"#]
    );
    assert_eq!(
        problems(&c, "ship", json!({"external": {"expres": {"days": 1}}})).await,
        [r#"/external: {"expres": …} is not one of "standard", {"express": …} or {"pickup": …}"#]
    );
    assert_eq!(
        problems(&c, "ship", json!({"external": {"express": {"days": -1}}})).await,
        ["/external/express/days: -1 is less than the minimum of 0"]
    );
    // An adjacently tagged one.
    assert_eq!(
        problems(&c, "ship", json!({"adjacent": {"t": "slow", "c": {}}})).await,
        [r#"/adjacent/t: "slow" is not one of "standard" or "express""#]
    );
    // Untagged: the closest variant's own problems, or the types none of them has.
    assert_eq!(
        problems(&c, "ship", json!({"untagged": {"first": "Ada"}})).await,
        [r#"/untagged: "last" is a required property"#]
    );
    assert_eq!(
        problems(&c, "ship", json!({"untagged": true})).await,
        [r#"/untagged: true is not of type "integer" or "object""#]
    );
}

// ---------------------------------------------------------------------------------------------
// Point 4: `null` where the advertised schema has no `null`.

#[tokio::test]
async fn null_for_an_optional_field_is_refused_as_the_advertised_schema_says() {
    let server = Server::builder().name("arguments").build().unwrap();
    let schema = server.tool("order").unwrap().input_schema;
    assert_eq!(schema["properties"]["note"], json!({"type": "string"}));
    assert_eq!(schema["properties"]["address"]["properties"]["line2"], json!({"type": "string"}));
    let c = TestClient::connect(&server).await;
    let omit = "null is not allowed: omit the field instead";
    let base = || json!({"quantity": 1, "address": {"line": "x"}, "shipping": {"kind": "standard"}});
    let with = |key: &str, value: Value| {
        let mut arguments = base();
        arguments[key] = value;
        arguments
    };
    // A top-level `Option<T>` argument, one with a default, a nested struct's optional field.
    assert_eq!(problems(&c, "order", with("note", Value::Null)).await, [format!("/note: {omit}")]);
    assert_eq!(problems(&c, "order", with("copies", Value::Null)).await, [format!("/copies: {omit}")]);
    assert_eq!(
        problems(&c, "order", with("address", json!({"line": "x", "line2": null}))).await,
        [format!("/address/line2: {omit}")]
    );
    // Together with the other problems of the call.
    assert_eq!(
        problems(&c, "order", json!({"quantity": null, "address": {"line": "x"}, "shipping": {"kind": "standard"}, "priority": null}))
            .await,
        [r#"/quantity: null is not of type "integer""#.to_owned(), format!("/priority: {omit}")]
    );
    // Where the schema allows `null`, it is accepted: a list's optional items.
    let text = accepted(&c, "order", with("counts", json!([1, null]))).await;
    assert!(text.ends_with("Some([Some(1), None])"), "{text}");
    // Omitting is how a client leaves it out.
    let text = accepted(&c, "order", base()).await;
    assert_eq!(text, r#"1 Address { line: "x", line2: None } Standard None None 1 None"#);
}

// ---------------------------------------------------------------------------------------------
// Recursive types (`$ref`s into `$defs`), closed structs, constraints, hand-written schemas.

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Node {
    Leaf { value: u32 },
    Branch { children: Vec<Node> },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Strict {
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Bounded {
    #[schemars(range(max = 10))]
    n: u32,
    #[schemars(length(min = 1, max = 8))]
    word: Option<String>,
}

/// Sum a tree.
#[tool]
async fn tree(node: Node, strict: Option<Strict>) -> String {
    format!("{node:?} {strict:?}")
}

/// Take a small number.
#[tool]
async fn bounded(Args(b): Args<Bounded>) -> String {
    format!("{b:?}")
}

#[tokio::test]
async fn recursive_enums_closed_structs_and_constraints_are_explained_the_same_way() {
    let c = client().await;
    let text = accepted(
        &c,
        "tree",
        json!({"node": {"kind": "branch", "children": [{"kind": "leaf", "value": 1}]}, "strict": {"name": "x"}}),
    )
    .await;
    assert_eq!(text, r#"Branch { children: [Leaf { value: 1 }] } Some(Strict { name: "x" })"#);
    assert_eq!(
        problems(
            &c,
            "tree",
            json!({
                "node": {"kind": "branch", "children": [
                    {"kind": "leaf", "value": 1, "colour": "red"},
                    {"kind": "lef", "value": 2},
                    {"kind": "branch", "children": [{"kind": "leaf", "value": "x"}]},
                ]},
                "strict": {"name": "x", "nmae": "y"},
            })
        )
        .await,
        [
            format!("/node/children/0/colour: {UNKNOWN}"),
            r#"/node/children/1/kind: "lef" is not one of "leaf" or "branch""#.to_owned(),
            r#"/node/children/2/children/0/value: "x" is not of type "integer""#.to_owned(),
            format!("/strict/nmae: {UNKNOWN}"),
        ]
    );
    // A constrained tool (validated before it runs): a `null` is refused with the rest.
    assert_eq!(
        problems(&c, "bounded", json!({"n": 11, "word": null})).await,
        [
            "/n: 11 is greater than the maximum of 10".to_owned(),
            "/word: null is not allowed: omit the field instead".to_owned()
        ]
    );
    assert_eq!(
        accepted(&c, "bounded", json!({"n": 1, "word": "ok"})).await,
        r#"Bounded { n: 1, word: Some("ok") }"#
    );
}

#[tokio::test]
async fn a_hand_written_schemas_variants_are_explained_too() {
    let schema = json!({
        "type": "object",
        "properties": {"shape": {"oneOf": [
            {"type": "object", "properties": {"type": {"const": "circle"}, "r": {"type": "number"}}, "required": ["type", "r"]},
            {"type": "object", "properties": {"type": {"const": "square"}, "side": {"type": "number"}}, "required": ["type", "side"]},
        ]}},
        "required": ["shape"],
        "additionalProperties": false,
    });
    let tool = mcp_tools::Tool::new("pick", "Pick a shape.", schema, |arguments, _| async move {
        Ok(mcp_tools::ToolResult::new().text(arguments.to_string()))
    });
    let server = Server::builder().name("arguments").tool(tool).build().unwrap();
    let c = TestClient::connect(&server).await;
    assert_eq!(
        problems(&c, "pick", json!({"shape": {"type": "triangle"}, "colour": 1})).await,
        [
            r#"/shape/type: "triangle" is not one of "circle" or "square""#.to_owned(),
            format!("/colour: {UNKNOWN}")
        ]
    );
    assert_eq!(
        problems(&c, "pick", json!({"shape": {"type": "square", "side": "big"}})).await,
        [r#"/shape/side: "big" is not of type "number""#]
    );
}
