//! MCP Apps views: the `_meta` of tools with a widget, the view resources, and view results.

use mcp_tools::testing::TestClient;
use mcp_tools::{AppView, Server, Tool, ToolResult, Widget, tool};
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Serialize)]
struct Card {
    city: String,
    temp: f64,
}

/// Show the temperature card.
#[tool(
    widget(
        name = "temperature-chart",
        html = "examples/widgets/chart.html",
        invoked = "Card ready",
        csp(connect = ["https://api.weather.example"], resources = ["https://cdn.example"]),
        prefers_border = true,
        accessible = false
    ),
    meta = json!({"example.com/owner": "weather-team", "ui": {"prefersBorder": false}, "openai/widgetAccessible": true})
)]
async fn card(city: String) -> Widget<Card> {
    Widget::new(Card { city, temp: 21.5 })
}

/// Open the note form.
#[tool(widget = "note-form-short")]
async fn short_form() -> Widget<Value> {
    Widget::new(json!({"title": ""})).text("The form is open.")
}

/// Save from the form (the view calls it).
#[tool(widget(name = "note-form-short", html = "widgets/note-form-short.html", visibility = ["app"]))]
async fn save_from_form(title: String) -> String {
    format!("saved {title}")
}

fn server() -> Server {
    let view = AppView::new("runtime-view", "<!doctype html><html><body>runtime</body></html>")
        .visibility(["model", "app"]);
    let tool = Tool::new("runtime_tool", "Show the runtime view.", json!({"type": "object"}), |_, _| async {
        Ok(ToolResult::new().with_structured(json!({"n": 1})))
    })
    .meta("ui", json!({"extra": true}))
    .view(&view);
    Server::builder().app_view(view).tool(tool).build().unwrap()
}

async fn tool_meta(client: &TestClient, name: &str) -> Value {
    let tools = client.list_tools().await.unwrap();
    tools.iter().find(|t| t["name"] == name).unwrap()["_meta"].clone()
}

#[tokio::test]
async fn tool_meta_links_the_view_for_both_host_families_without_clobbering_user_keys() {
    let client = TestClient::connect(&server()).await;
    let card = tool_meta(&client, "card").await;
    insta::assert_json_snapshot!("card_meta", card);
    assert_eq!(card["example.com/owner"], "weather-team", "user keys kept");
    assert_eq!(card["ui"]["prefersBorder"], false, "a user `ui` key is merged, not overwritten");
    assert_eq!(card["ui"]["resourceUri"], "ui://widget/temperature-chart.html");
    assert_eq!(card["openai/widgetAccessible"], true, "the user's value wins");
    assert_eq!(card["openai/toolInvocation/invoking"], "Loading temperature-chart...", "default");
    assert_eq!(card["openai/toolInvocation/invoked"], "Card ready");

    let hidden = tool_meta(&client, "save_from_form").await;
    assert_eq!(hidden["ui"]["visibility"], json!(["app"]));

    let runtime = tool_meta(&client, "runtime_tool").await;
    assert_eq!(
        runtime["ui"],
        json!({"extra": true, "resourceUri": "ui://widget/runtime-view.html", "visibility": ["model", "app"]})
    );
}

#[tokio::test]
async fn views_are_served_as_resources() {
    let client = TestClient::connect(&server()).await;
    let init = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> =
        init["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    for uri in [
        "ui://widget/temperature-chart.html",
        "ui://widget/temperature-chart.skybridge.html",
        "ui://widget/note-form-short.html",
        "ui://widget/runtime-view.html",
    ] {
        assert!(uris.contains(&uri), "{uri} in {uris:?}");
    }
    let read =
        client.request("resources/read", json!({"uri": "ui://widget/temperature-chart.html"})).await.unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert!(contents["text"].as_str().unwrap().starts_with("<!doctype html>"), "the embedded file");
    insta::assert_json_snapshot!("chart_resource_meta", contents["_meta"]);

    let twin = client
        .request("resources/read", json!({"uri": "ui://widget/temperature-chart.skybridge.html"}))
        .await
        .unwrap();
    assert_eq!(twin["contents"][0]["mimeType"], "text/html+skybridge");
    insta::assert_json_snapshot!("chart_skybridge_meta", twin["contents"][0]["_meta"]);
}

#[tokio::test]
async fn view_results_carry_props_and_text_for_the_model() {
    let client = TestClient::connect(&server()).await;
    let card = client.call("card", json!({"city": "Oslo"})).await.unwrap();
    assert_eq!(card.structured(), Some(&json!({"city": "Oslo", "temp": 21.5})));
    assert_eq!(card.text(), "Displaying temperature-chart", "an empty text is backfilled");
    let form = client.call("short_form", json!({})).await.unwrap();
    assert_eq!(form.text(), "The form is open.");
    let runtime = client.call("runtime_tool", json!({})).await.unwrap();
    assert_eq!(runtime.text(), "Displaying runtime-view", "runtime tools linked to a view too");
    // App-only tools are still callable by the view (through the host).
    assert_eq!(client.call("save_from_form", json!({"title": "t"})).await.unwrap().text(), "saved t");
}

#[test]
fn two_different_views_with_one_name_are_a_start_up_error() {
    let clash = AppView::new("temperature-chart", "<!doctype html><html><body>other</body></html>");
    let err = Server::builder().app_view(clash).build().unwrap_err();
    assert!(err.problems()[0].contains("two different app views are named `temperature-chart`"), "{err}");
}
