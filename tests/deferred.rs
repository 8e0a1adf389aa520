//! Deferred mode end to end over stdio: the catalog example serves tests/data/catalog.json
//! behind the search / describe / call meta-tools.

use harness::{StdioServer, example_binary};
use serde_json::{Value, json};

fn catalog() -> StdioServer {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/catalog.json");
    let mut server = StdioServer::spawn(&example_binary("catalog"), &[file]);
    server.initialize();
    server
}

fn call(server: &mut StdioServer, name: &str, arguments: Value) -> Value {
    let (answer, _) = server.request("tools/call", json!({"name": name, "arguments": arguments}));
    answer["result"].clone()
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn names(found: &Value) -> Vec<&str> {
    found["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[test]
fn tools_list_shows_the_meta_tools_pinned_tools_and_view_tools() {
    let mut server = catalog();
    let (answer, _) = server.request("tools/list", json!({}));
    let tools = answer["result"]["tools"].as_array().unwrap();
    let listed: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        listed,
        ["search_tools", "describe_tools", "call_tool", "call_read_only_tool", "chart_refresh", "get_status"]
    );
    let by_name = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap();
    assert_eq!(by_name("get_status")["_meta"]["anthropic/alwaysLoad"], true, "pinned");
    assert!(by_name("chart_refresh")["_meta"].get("anthropic/alwaysLoad").is_none(), "listed for its view");
    let search = by_name("search_tools");
    assert_eq!(search["annotations"]["readOnlyHint"], true);
    assert!(search["description"].as_str().unwrap().contains("8 tools"), "the app-only tool is not counted");
    assert!(search["description"].as_str().unwrap().contains("Tags: editor, email, finance, weather"));
    assert_eq!(search["outputSchema"]["type"], "object");
    assert_eq!(by_name("describe_tools")["annotations"]["readOnlyHint"], true);
    assert_eq!(by_name("call_read_only_tool")["annotations"]["readOnlyHint"], true);
    assert!(by_name("call_tool")["annotations"].get("readOnlyHint").is_none(), "may change things");
}

#[test]
fn search_ranks_filters_pages_and_does_not_pad() {
    let mut server = catalog();
    let found = call(&mut server, "search_tools", json!({"query": "weather forecast for tomorrow"}));
    assert_eq!(names(&found["structuredContent"])[0], "get_forecast");
    assert_eq!(
        serde_json::from_str::<Value>(&text(&found)).unwrap(),
        found["structuredContent"],
        "same JSON as text"
    );

    let found = call(&mut server, "search_tools", json!({"query": "the"}));
    assert_eq!(found["structuredContent"]["total"], 0, "no padding with stop words (not even `theme`)");
    assert!(found["structuredContent"]["hint"].as_str().unwrap().contains("Try other words"));

    let all = call(&mut server, "search_tools", json!({"query": "", "limit": 3}));
    let page = &all["structuredContent"];
    assert_eq!(page["total"], 8);
    assert_eq!(names(page), ["convert_currency", "delete_email", "get_forecast"], "empty query: by name");
    let next =
        call(&mut server, "search_tools", json!({"query": "", "limit": 3, "cursor": page["nextCursor"]}));
    assert_eq!(names(&next["structuredContent"]), ["get_status", "get_weather", "list_inbox"]);

    let email = call(&mut server, "search_tools", json!({"query": "", "tags": ["email"]}));
    assert_eq!(names(&email["structuredContent"]), ["delete_email", "list_inbox", "send_email"]);

    let bad = call(&mut server, "search_tools", json!({"query": "x", "colour": 1}));
    assert_eq!(bad["isError"], true);
    assert!(text(&bad).contains("input schema"), "{}", text(&bad));
}

#[test]
fn app_only_tools_never_appear_and_cannot_be_called_through_the_meta_tools() {
    let mut server = catalog();
    let found = call(&mut server, "search_tools", json!({"query": "refresh weather chart view"}));
    assert!(!names(&found["structuredContent"]).contains(&"chart_refresh"));
    let refused = call(&mut server, "call_tool", json!({"name": "chart_refresh", "arguments": {}}));
    assert_eq!(refused["isError"], true);
    let described = call(&mut server, "describe_tools", json!({"names": ["chart_refresh"]}));
    assert_eq!(described["isError"], true);
}

#[test]
fn describe_gives_full_definitions_and_suggestions() {
    let mut server = catalog();
    let described = call(&mut server, "describe_tools", json!({"names": ["get_weather", "get_wether"]}));
    let result = &described["structuredContent"];
    assert!(described.get("isError").is_none());
    let tool = &result["tools"][0];
    assert_eq!(tool["name"], "get_weather");
    assert_eq!(tool["title"], "Current weather");
    assert_eq!(tool["inputSchema"]["required"], json!(["city"]));
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    assert_eq!(result["unknown"][0]["name"], "get_wether");
    assert_eq!(result["unknown"][0]["suggestions"][0], "get_weather");
}

#[test]
fn call_runs_the_tool_and_explains_failures() {
    let mut server = catalog();
    let ok = call(
        &mut server,
        "call_read_only_tool",
        json!({"name": "get_weather", "arguments": {"city": "Paris"}}),
    );
    assert!(ok.get("isError").is_none(), "{ok}");
    assert_eq!(ok["structuredContent"], json!({"city": "Paris"}), "the catalog's tools echo their arguments");

    let invalid = call(&mut server, "call_tool", json!({"name": "get_forecast", "arguments": {"city": 3}}));
    assert_eq!(invalid["isError"], true);
    let message = text(&invalid);
    assert!(message.contains("/city") && message.contains("days"), "every problem: {message}");
    assert!(message.contains("input schema of `get_forecast`"), "the schema to retry with: {message}");

    let refused =
        call(&mut server, "call_read_only_tool", json!({"name": "delete_email", "arguments": {"id": "1"}}));
    assert_eq!(refused["isError"], true);
    assert!(text(&refused).contains("not a read-only tool"));
    let done = call(&mut server, "call_tool", json!({"name": "delete_email", "arguments": {"id": "1"}}));
    assert!(done.get("isError").is_none());

    let unknown = call(&mut server, "call_tool", json!({"name": "send_mail", "arguments": {}}));
    assert_eq!(unknown["isError"], true);
    assert!(text(&unknown).contains("send_email"), "a suggestion: {}", text(&unknown));

    // Pinned tools and deferred tools are also callable by name directly.
    let direct = call(&mut server, "get_status", json!({}));
    assert!(direct.get("isError").is_none());
}

#[test]
fn catalog_model_option_explains_what_is_missing() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/catalog.json");
    let run =
        |args: &[&str]| std::process::Command::new(example_binary("catalog")).args(args).output().unwrap();
    let out = run(&[file, "--model", "/nowhere/model", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    #[cfg(not(feature = "embeddings"))]
    assert!(stderr.contains("--model /nowhere/model: build with `--features embeddings`"), "{stderr}");
    #[cfg(feature = "embeddings")]
    assert!(stderr.contains("--model: /nowhere/model/config.json"), "{stderr}");
    let out = run(&[file, "--model"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--model needs a directory"));
    // Without the option: the lexical ranker, and the rest of the command line as before.
    let out = run(&[file, "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("search_tools"));
}

mod in_process {
    use mcp_tools::deferred::{DeferredTools, EmbedError, Embedder, HybridRanker, Vocabulary};
    use mcp_tools::testing::TestClient;
    use mcp_tools::{Annotations, Server, Tool, ToolResult, tool};
    use serde_json::json;

    /// Translate a sentence into French.
    #[tool(defer = false)]
    async fn translate(text: String) -> String {
        format!("(fr) {text}")
    }

    /// Count the words of a text.
    #[tool(annotations(read_only))]
    async fn word_count(text: String) -> usize {
        text.split_whitespace().count()
    }

    #[tokio::test]
    async fn defer_false_stays_listed_and_runtime_changes_reach_the_index() {
        let server = Server::builder().defer_tools(DeferredTools::new().search_limit(5)).build().unwrap();
        let client = TestClient::connect(&server).await;
        let listed = client.list_tools().await.unwrap();
        let translate = listed.iter().find(|t| t["name"] == "translate").expect("`defer = false` is listed");
        assert_eq!(translate["_meta"]["anthropic/alwaysLoad"], true);
        assert!(listed.iter().all(|t| t["name"] != "word_count"), "deferred");

        let counted = client
            .call("call_read_only_tool", json!({"name": "word_count", "arguments": {"text": "a b c"}}))
            .await
            .unwrap();
        assert_eq!(counted.structured(), Some(&json!({"result": 3})), "the real handler's result");

        server
            .add_tool(Tool::new(
                "summarise_text",
                "Summarise a long text in one line.",
                json!({"type": "object"}),
                |_, _| async { Ok(ToolResult::new().text("short")) },
            ))
            .unwrap();
        let found = client.call("search_tools", json!({"query": "summarise a text"})).await.unwrap();
        assert_eq!(
            found.structured().unwrap()["tools"][0]["name"],
            "summarise_text",
            "the index was rebuilt"
        );
    }

    #[tokio::test]
    async fn search_weighs_what_a_request_asks_for_against_what_tools_do() {
        // The same words; the annotations say which one only reads.
        let labels = |name: &str, annotations: Annotations| {
            Tool::new(
                name,
                "Labels of an issue: bug, triage, feature.",
                json!({"type": "object"}),
                |_, _| async { Ok(ToolResult::new()) },
            )
            .annotations(annotations)
        };
        let server = Server::builder()
            .defer_tools(DeferredTools::new())
            .tool(labels("issue_labels_x", Annotations::new().destructive(false)))
            .tool(labels("issue_labels_y", Annotations::new().read_only(true)))
            .build()
            .unwrap();
        let client = TestClient::connect(&server).await;
        let first = async |query: &str| {
            let found = client.call("search_tools", json!({"query": query})).await.unwrap();
            let found = found.structured().unwrap()["tools"].clone();
            assert_eq!(found.as_array().unwrap().len(), 2, "lower, not left out: {found}");
            found[0]["name"].as_str().unwrap().to_owned()
        };
        assert_eq!(first("which labels does issue 88 have?").await, "issue_labels_y");
        assert_eq!(first("add the labels bug and triage to issue 88").await, "issue_labels_x");
    }

    /// A toy embedder: the vector of a text counts its lodging words and its other words.
    /// Panics on the word `boom`, to show that a failing model costs only the meaning.
    struct Lodging;

    impl Embedder for Lodging {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            assert!(!texts.iter().any(|t| t.contains("boom")), "the model crashed");
            Ok(texts
                .iter()
                .map(|t| {
                    let words = t.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
                    let lodging = words
                        .clone()
                        .filter(|w| ["hotel", "hotels", "accommodation", "stay"].contains(w))
                        .count();
                    vec![lodging as f32, 0.1 * words.count() as f32]
                })
                .collect())
        }
    }

    /// A deferred server of one tool, `find_hotels`, searched with `ranker`.
    fn hotel_server(ranker: HybridRanker) -> Server {
        hotel_server_with(DeferredTools::new().ranker(ranker))
    }

    fn hotel_server_with(deferred: DeferredTools) -> Server {
        Server::builder()
            .defer_tools(deferred)
            .tool(Tool::new(
                "find_hotels",
                "Find hotels in a city.",
                json!({"type": "object"}),
                |_, _| async { Ok(ToolResult::new().text("found")) },
            ))
            .build()
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_hybrid_ranker_searches_by_meaning_and_survives_its_model() {
        let server = hotel_server(HybridRanker::new(Lodging).background(false));
        let client = TestClient::connect(&server).await;
        let search = |query: &'static str| {
            let client = &client;
            async move { client.call("search_tools", json!({"query": query})).await.unwrap() }
        };
        // No word in common with `find_hotels`; found by meaning (on a blocking thread).
        let found = search("accommodation in rome").await;
        assert_eq!(found.structured().unwrap()["tools"][0]["name"], "find_hotels", "{}", found.text());
        // The model panics on this query: the search answers by words alone, and goes on serving.
        let found = search("boom hotels").await;
        assert!(!found.is_error(), "{}", found.text());
        assert_eq!(found.structured().unwrap()["tools"][0]["name"], "find_hotels");
        let found = search("boom accommodation").await;
        assert_eq!(found.structured().unwrap()["tools"], json!([]), "no word matches, no meaning to match");
        let found = search("accommodation").await;
        assert_eq!(found.structured().unwrap()["tools"][0]["name"], "find_hotels");
    }

    /// [`Lodging`] behind a gate: embedding waits until the test opens it, as a model still
    /// busy with a first start's catalog; or fails, as a model that cannot run.
    #[derive(Default)]
    struct Gate {
        open: std::sync::Mutex<bool>,
        opened: std::sync::Condvar,
        fail: bool,
    }

    impl Gate {
        fn open(&self) {
            *self.open.lock().unwrap() = true;
            self.opened.notify_all();
        }
    }

    impl Embedder for Gate {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            if self.fail {
                return Err("the model cannot run here".into());
            }
            let mut open = self.open.lock().unwrap();
            while !*open {
                open = self.opened.wait(open).unwrap();
            }
            drop(open);
            Lodging.embed(texts)
        }
    }

    /// A deferred hotel server whose ranker by meaning is still embedding (or failed), searches
    /// waiting at most `wait` for it.
    fn gated_server(gate: &std::sync::Arc<Gate>, wait: std::time::Duration) -> Server {
        Server::builder()
            .defer_tools(
                DeferredTools::new()
                    .ranker(HybridRanker::new(gate.clone()).no_cache_file())
                    .meaning_wait(wait),
            )
            .tool(Tool::new(
                "find_hotels",
                "Find hotels in a city.",
                json!({"type": "object"}),
                |_, _| async { Ok(ToolResult::new().text("found")) },
            ))
            .build()
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_search_during_a_first_start_waits_for_the_meaning() {
        let gate = std::sync::Arc::new(Gate::default());
        let server = gated_server(&gate, std::time::Duration::from_secs(60));
        let client = TestClient::connect(&server).await;
        let opener = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                gate.open();
            })
        };
        // No word in common with `find_hotels`: found once the vectors exist, by meaning.
        let found = client.call("search_tools", json!({"query": "accommodation in rome"})).await.unwrap();
        let page = found.structured().unwrap();
        assert_eq!(page["tools"][0]["name"], "find_hotels", "{page}");
        assert!(page.get("rankedBy").is_none() && page.get("hint").is_none(), "{page}");
        opener.join().unwrap();
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_search_that_cannot_wait_says_it_ranked_by_words() {
        let gate = std::sync::Arc::new(Gate::default());
        let server = gated_server(&gate, std::time::Duration::from_millis(100));
        let client = TestClient::connect(&server).await;
        let search = async |query: &str| {
            client.call("search_tools", json!({"query": query})).await.unwrap().structured().unwrap().clone()
        };
        let page = search("accommodation in rome").await;
        assert_eq!((&page["tools"], &page["rankedBy"]), (&json!([]), &json!("words")), "{page}");
        let hint = page["hint"].as_str().unwrap();
        assert!(hint.contains("still being indexed by meaning") && hint.contains("search again"), "{hint}");
        let page = search("hotels").await;
        assert_eq!((&page["tools"][0]["name"], &page["rankedBy"]), (&json!("find_hotels"), &json!("words")));
        // An empty query lists; there is nothing to rank, and nothing to say.
        let page = search("").await;
        assert!(page.get("rankedBy").is_none(), "{page}");
        // Once the vectors exist, by meaning, and no word of it.
        gate.open();
        let page = loop {
            let page = search("accommodation in rome").await;
            if page.get("rankedBy").is_none() {
                break page;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        assert_eq!(page["tools"][0]["name"], "find_hotels", "{page}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_search_whose_model_failed_says_it_ranked_by_words() {
        let gate = std::sync::Arc::new(Gate { fail: true, ..Gate::default() });
        let server = gated_server(&gate, std::time::Duration::from_secs(60));
        let client = TestClient::connect(&server).await;
        let found = client.call("search_tools", json!({"query": "hotels in rome"})).await.unwrap();
        let page = found.structured().unwrap();
        assert_eq!((&page["tools"][0]["name"], &page["rankedBy"]), (&json!("find_hotels"), &json!("words")));
        assert!(page["hint"].as_str().unwrap().contains("unavailable"), "{page}");
        // A server ranking by words by design says nothing of it.
        let words = Server::builder()
            .defer_tools(DeferredTools::new())
            .tool(Tool::new(
                "find_hotels",
                "Find hotels in a city.",
                json!({"type": "object"}),
                |_, _| async { Ok(ToolResult::new().text("found")) },
            ))
            .build()
            .unwrap();
        let client = TestClient::connect(&words).await;
        let found = client.call("search_tools", json!({"query": "hotels in rome"})).await.unwrap();
        assert!(found.structured().unwrap().get("rankedBy").is_none(), "{}", found.text());
    }

    /// [`Lodging`] with a vocabulary of a few English words, for spelling correction.
    struct Speller(Vocabulary);

    impl Embedder for Speller {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Lodging.embed(texts)
        }

        fn vocabulary(&self) -> Option<&Vocabulary> {
            Some(&self.0)
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn search_tools_says_how_a_misspelt_query_was_searched() {
        let words = Vocabulary::new(["find", "in", "rome", "cheap"]);
        let server = hotel_server(HybridRanker::new(Speller(words)).background(false).no_cache_file());
        let client = TestClient::connect(&server).await;
        let found = client.call("search_tools", json!({"query": "find cheap hoetls in rome"})).await.unwrap();
        let page = found.structured().unwrap();
        assert_eq!(page["tools"][0]["name"], "find_hotels", "{}", found.text());
        assert_eq!(page["searchedAs"], "find cheap hotels in rome");
        // Written right: no `searchedAs`.
        let found = client.call("search_tools", json!({"query": "find cheap hotels in rome"})).await.unwrap();
        assert_eq!(found.structured().unwrap().get("searchedAs"), None, "{}", found.text());
    }

    /// [`Lodging`], once released: holds the catalog's embedding until then.
    struct Held(std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>);

    impl Embedder for Held {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            let (released, signal) = &*self.0;
            let mut released = released.lock().unwrap();
            while !*released {
                released = signal.wait(released).unwrap();
            }
            Lodging.embed(texts)
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_server_answers_while_its_catalog_is_being_embedded() {
        let gate = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        // A search waits this long for the meaning before it answers by words (5 s by default).
        let wait = std::time::Duration::from_millis(200);
        let server = hotel_server_with(
            DeferredTools::new().ranker(HybridRanker::new(Held(gate.clone()))).meaning_wait(wait),
        );
        // The model holds the catalog: the handshake and searches by words go on regardless.
        let client = TestClient::connect(&server).await;
        let search = |query: &'static str| {
            let client = &client;
            async move { client.call("search_tools", json!({"query": query})).await.unwrap() }
        };
        let found = search("hotels").await;
        assert_eq!(found.structured().unwrap()["tools"][0]["name"], "find_hotels");
        let found = search("accommodation in rome").await;
        assert_eq!(found.structured().unwrap()["total"], 0, "by words alone while the model is busy");
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while search("accommodation in rome").await.structured().unwrap()["total"] == 0 {
            assert!(std::time::Instant::now() < deadline, "the vectors never came");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let found = search("accommodation in rome").await;
        assert_eq!(found.structured().unwrap()["tools"][0]["name"], "find_hotels", "by meaning now");
    }
}

#[test]
fn search_queries_are_bounded_in_length() {
    let mut server = catalog();
    let search =
        |server: &mut StdioServer, query: String| call(server, "search_tools", json!({"query": query}));
    let long = search(&mut server, "weather ".repeat(2000));
    assert_eq!(long["isError"], true);
    assert!(text(&long).contains("queries of at most 1024 bytes"), "{}", text(&long));
    // At the limit, a query of one term repeated is answered (terms are counted once).
    let repeated = search(&mut server, "weather ".repeat(128).trim_end().to_owned());
    assert_ne!(repeated["isError"], true, "{}", text(&repeated));
    assert!(!names(&repeated["structuredContent"]).is_empty());
}

#[test]
fn a_title_given_only_in_the_annotations_is_searched() {
    // Many servers give a tool's display title only as `annotations.title`.
    let file = std::env::temp_dir().join(format!("mcp-tools-annotated-title-{}.json", std::process::id()));
    let catalog = json!({"tools": [
        {"name": "xq_17", "description": "Runs the job.", "annotations": {"title": "Zebra crossing finder"}},
        {"name": "xq_18", "description": "Runs the other job.", "title": "Tide tables",
         "annotations": {"title": "Zebra stripes"}}
    ]});
    std::fs::write(&file, catalog.to_string()).unwrap();
    let mut server = StdioServer::spawn(&example_binary("catalog"), &[file.to_str().unwrap()]);
    server.initialize();
    let found = call(&mut server, "search_tools", json!({"query": "zebra crossing"}));
    // xq_18's own title wins over its annotations' title, which is not searched.
    assert_eq!(names(&found["structuredContent"]), ["xq_17"], "{found}");
    let found = call(&mut server, "search_tools", json!({"query": "tide tables"}));
    assert_eq!(names(&found["structuredContent"]), ["xq_18"], "{found}");
    std::fs::remove_file(&file).unwrap();
}
