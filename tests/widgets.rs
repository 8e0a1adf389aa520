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

#[tokio::test]
async fn a_server_with_views_declares_mcp_apps_and_a_tool_reads_whether_its_host_renders_them() {
    let views = |ctx: mcp_tools::Context| {
        let ui = ctx
            .client_extension(mcp_tools::extensions::UI)
            .and_then(|ui| ui["mimeTypes"].as_array().cloned());
        let renders = ui.is_some_and(|types| types.iter().any(|t| t == mcp_tools::APP_MIME_TYPE));
        async move { Ok(ToolResult::new().text(if renders { "a view" } else { "text only" })) }
    };
    let probe = Tool::new(
        "probe",
        "Says whether the host renders views.",
        json!({"type": "object"}),
        move |_, ctx| views(ctx),
    );
    let view = AppView::new("probe-view", "<!doctype html><html><body>probe</body></html>");
    let server = Server::builder().app_view(view).tool(probe).build().unwrap();
    let host =
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [mcp_tools::APP_MIME_TYPE]}}});
    let session = TestClient::connect_with(&server, host.clone(), |_, _| unreachable!()).await;
    let stateless = TestClient::connect_stateless_with(&server, host, |_, _| unreachable!());
    for client in [&session, &stateless] {
        assert_eq!(client.call("probe", json!({})).await.unwrap().text(), "a view", "{:?}", client.era());
    }
    assert_eq!(
        TestClient::connect(&server).await.call("probe", json!({})).await.unwrap().text(),
        "text only"
    );
    // The extension is declared in both eras, beside the tasks' in 2026-07-28.
    let initialize = TestClient::connect_uninitialized(&server)
        .request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}))
        .await
        .unwrap();
    assert_eq!(initialize["capabilities"]["extensions"], json!({"io.modelcontextprotocol/ui": {}}));
    let discover = stateless.request("server/discover", json!({})).await.unwrap();
    assert_eq!(
        discover["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}, "io.modelcontextprotocol/ui": {}})
    );
}
