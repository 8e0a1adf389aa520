//! Snapshot tests of the schema policy (`mcp_tools::schema`): what clients are shown for each
//! shape of Rust type. Review changes with `cargo insta review` (or delete the `.snap` file and
//! rerun to accept the new output when the change is intended).

use std::collections::{BTreeMap, HashMap};

use mcp_tools::schema::{OutputPlan, input_schema_for, output_schema_for};
use mcp_tools::{Server, State, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn input<T: JsonSchema>() -> Value {
    input_schema_for::<T>().expect("an object schema")
}

/// A point on a map.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Point {
    /// Degrees north.
    lat: f64,
    /// Degrees east.
    lon: f64,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Colour {
    Red,
    Green,
    /// The colour of the sky.
    Blue,
}

/// Everything a form might hold.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Form {
    /// Who is asking.
    name: String,
    /// Optional age in years.
    age: Option<u8>,
    /// Some labels.
    tags: Vec<String>,
    /// Free-form counters.
    counters: HashMap<String, i64>,
    /// Ordered settings.
    settings: BTreeMap<String, bool>,
    /// Where it happened (nested, inlined).
    place: Point,
    /// A second, optional place.
    other_place: Option<Point>,
    /// A favourite colour, if any.
    colour: Option<Colour>,
    /// Defaults to 3.
    #[serde(default = "three")]
    retries: u32,
    #[serde(rename = "type")]
    kind: String,
}

fn three() -> u32 {
    3
}

#[derive(Deserialize, Serialize, JsonSchema)]
enum ExternallyTagged {
    Nothing,
    Circle { radius: f64 },
    Label(String),
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind")]
enum InternallyTagged {
    Circle { radius: f64 },
    Rect { w: f64, h: f64 },
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum AdjacentlyTagged {
    Number(i32),
    Text(String),
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Id(u64),
    Name { first: String, last: String },
}

/// A tree of labels.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[derive(Deserialize, Serialize, JsonSchema)]
struct Everything {
    external: ExternallyTagged,
    internal: InternallyTagged,
    adjacent: AdjacentlyTagged,
    untagged: Untagged,
    maybe_internal: Option<InternallyTagged>,
}

#[test]
fn struct_with_options_collections_nesting_defaults_and_docs() {
    insta::assert_json_snapshot!(input::<Form>());
}

#[test]
fn enums_of_every_representation() {
    insta::assert_json_snapshot!(input::<Everything>());
}

#[test]
fn recursive_types_keep_their_definitions() {
    // At the root, the recursion points at the root itself.
    let schema = input::<Tree>();
    assert_eq!(schema["properties"]["children"]["items"], serde_json::json!({"$ref": "#"}));
    // Below the root (a tool parameter), it points into `$defs`, kept beside the properties.
    let server = Server::builder().state(Db).build().unwrap();
    let tool = server.tool("grow").unwrap();
    assert_eq!(
        tool.input_schema["properties"]["tree"]["properties"]["children"]["items"]["$ref"],
        "#/$defs/Tree"
    );
    assert!(tool.input_schema["$defs"]["Tree"].is_object());
    // A wrapped recursive output keeps resolving: `#` became `#/properties/result`.
    let (plan, output) = output_schema_for::<Expr>();
    assert_eq!(plan, OutputPlan::Structured { wrap: true });
    let output = output.unwrap();
    let add = &output["properties"]["result"]["oneOf"][1]["properties"]["Add"];
    assert_eq!(add["prefixItems"][0]["$ref"], "#/properties/result", "{output}");
    insta::assert_json_snapshot!(serde_json::json!({"grow": tool.input_schema, "expr": output}));
}

/// An arithmetic expression: not always an object (`"Zero"` is a string), so it is wrapped.
#[derive(Deserialize, Serialize, JsonSchema)]
enum Expr {
    Zero,
    Add(Box<Expr>, Box<Expr>),
}

/// Grow a tree.
#[tool]
async fn grow(tree: Tree) -> Tree {
    tree
}

#[test]
fn non_object_arguments_are_refused() {
    let err = input_schema_for::<Vec<String>>().unwrap_err();
    assert!(err.contains("not a JSON object"), "{err}");
}

#[test]
fn output_of_a_struct_is_its_object_schema() {
    let (plan, schema) = output_schema_for::<Point>();
    assert_eq!(plan, OutputPlan::Structured { wrap: false });
    insta::assert_json_snapshot!(schema);
}

#[test]
fn outputs_that_are_not_objects_are_wrapped() {
    let cases = [
        ("integer", output_schema_for::<i64>()),
        ("list", output_schema_for::<Vec<Point>>()),
        ("string enum", output_schema_for::<Colour>()),
        ("map", output_schema_for::<BTreeMap<String, u32>>()),
        ("option", output_schema_for::<Option<Point>>()),
        ("recursive list", output_schema_for::<Vec<Tree>>()),
    ];
    for (name, (plan, _)) in &cases {
        let expected = if *name == "map" {
            OutputPlan::Structured { wrap: false }
        } else {
            OutputPlan::Structured { wrap: true }
        };
        assert_eq!(*plan, expected, "{name}");
    }
    let schemas: BTreeMap<&str, Option<Value>> = cases.into_iter().map(|(n, (_, s))| (n, s)).collect();
    insta::assert_json_snapshot!(schemas);
}

#[test]
fn strings_and_unit_have_no_output_schema() {
    assert_eq!(output_schema_for::<String>(), (OutputPlan::Text, None));
    assert_eq!(output_schema_for::<&'static str>(), (OutputPlan::Text, None));
    assert_eq!(output_schema_for::<()>(), (OutputPlan::Empty, None));
    assert_eq!(output_schema_for::<mcp_tools::ToolResult>().1, None);
}

#[test]
fn internally_tagged_output_gets_an_object_root() {
    let (plan, schema) = output_schema_for::<InternallyTagged>();
    assert_eq!(plan, OutputPlan::Structured { wrap: false });
    insta::assert_json_snapshot!(schema);
}

struct Db;

/// Plan a trip.
///
/// Second paragraph: the model sees it too.
#[tool(annotations(read_only))]
async fn plan_trip(
    /// Where to start.
    from: Point,
    /// Where to go.
    to: Point,
    /// How to travel.
    #[tool(default = Colour::Green)]
    mode: Colour,
    /// Stops on the way.
    #[tool(default = Vec::new())]
    stops: Vec<Point>,
    /// Leave after this time (RFC 3339).
    after: Option<String>,
    r#type: Option<String>,
    #[tool(rename = "maxLegs", default = 4)] max_legs: u32,
    _db: State<Db>,
) -> Vec<Point> {
    let _ = (mode, stops, after, r#type, max_legs);
    vec![from, to]
}

/// Nothing to configure.
#[tool]
async fn no_parameters() {}

#[test]
fn a_tools_parameters_become_one_object_schema_in_declaration_order() {
    let server = Server::builder().state(Db).build().unwrap();
    let tool = server.tool("plan_trip").unwrap();
    assert_eq!(tool.description, "Plan a trip.\n\nSecond paragraph: the model sees it too.");
    assert_eq!(tool.summary, "Plan a trip.");
    insta::assert_json_snapshot!(serde_json::json!({
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
    }));
}

#[test]
fn a_tool_without_parameters_takes_an_empty_object() {
    let server = Server::builder().state(Db).build().unwrap();
    let tool = server.tool("no_parameters").unwrap();
    assert_eq!(
        tool.input_schema,
        serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(tool.output_schema, None);
}
