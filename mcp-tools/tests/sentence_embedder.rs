//! `SentenceEmbedder` with a real model (the `embeddings` feature): all-MiniLM-L6-v2, fetched by
//! `scripts/fetch-model.sh` into `.cache/models/all-MiniLM-L6-v2` (or the folder named by
//! `MCP_TOOLS_MODEL`). Run with `bash scripts/test-embeddings.sh`, which fetches the model first.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use mcp_tools::deferred::{
    Bm25fRanker, DeferredTools, Embedder, HybridRanker, SearchDoc, SearchIndex, SentenceEmbedder,
};
use mcp_tools::testing::TestClient;
use mcp_tools::{Server, Tool, ToolResult};
use serde_json::json;

fn model_dir() -> PathBuf {
    let dir = std::env::var_os("MCP_TOOLS_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.cache/models/all-MiniLM-L6-v2")
    });
    assert!(
        dir.join("model.safetensors").exists(),
        "no model in {}: run `bash scripts/fetch-model.sh` (or set MCP_TOOLS_MODEL)",
        dir.display()
    );
    dir
}

/// One model for every test (loading takes a moment), as it is, without the query adapter that
/// `scripts/fetch-model.sh` adds to its folder.
fn embedder() -> Arc<SentenceEmbedder> {
    static MODEL: OnceLock<Arc<SentenceEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            Arc::new(SentenceEmbedder::from_dir(model_dir()).expect("the model loads").no_query_adapter())
        })
        .clone()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn vectors_are_unit_length_and_independent_of_the_batch() {
    let texts = [
        "weather",
        "What will the weather be like in Paris tomorrow afternoon?",
        "Delete a file from the disk, after asking the user to confirm it, unless it is already gone.",
    ];
    let together = embedder().embed(&texts).unwrap();
    assert_eq!(together.len(), 3);
    for (text, vector) in texts.iter().zip(&together) {
        assert_eq!(vector.len(), 384);
        let norm = cosine(vector, vector).sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        // Alone (no padding) and in a batch with longer texts (padded): the same vector.
        let alone = embedder().embed(&[text]).unwrap().remove(0);
        assert!(cosine(&alone, vector) > 0.9999, "{text}: {}", cosine(&alone, vector));
    }
    assert!(embedder().embed(&[]).unwrap().is_empty());
}

/// The embedder's own encoder (fused attention and activation) against candle's reference BERT
/// (`SentenceEmbedder::reference`: `candle_transformers`' `BertModel` on the same weights,
/// tokenizer and pooling): texts of different lengths in one batch (so with padding),
/// mean-pooled. With f32 products the vectors are the reference's; with the int8 products used
/// by default on x86-64 CPUs with AVX2 and FMA, within a cosine of 0.998 of them.
/// (`deferred/encoder/fuzz.rs` does the same on random inputs and random models.)
#[test]
fn vectors_match_the_reference_bert_implementation() {
    let texts = [
        "weather",
        "What will the weather be like in Paris tomorrow afternoon?",
        "create_issue: Create an issue in a repository. owner repo title body labels assignees milestone",
        "Delete a file from the disk, after asking the user to confirm it, unless it is already gone.",
    ];
    let exact = SentenceEmbedder::from_dir(model_dir()).unwrap().exact().unwrap();
    assert!(!exact.is_int8());
    // AVX2 and FMA run the int8 kernel (every CPU with AVX-512 VNNI, whose kernel gives the
    // same numbers, has them too).
    #[cfg(target_arch = "x86_64")]
    let int8 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let int8 = false;
    assert_eq!(embedder().is_int8(), int8, "int8 products exactly where the CPU has AVX2 and FMA");
    let reference = SentenceEmbedder::from_dir(model_dir()).unwrap().no_query_adapter().reference().unwrap();
    assert!(!reference.is_int8());
    assert_eq!(reference.model_id(), exact.model_id(), "f32 vectors are cached under one key");
    let expected = reference.embed(&texts).unwrap();
    // The reference's vector of a text alone is the one it gives in the padded batch.
    for (text, vector) in texts.iter().zip(&expected) {
        let alone = reference.embed(&[text]).unwrap();
        assert!(cosine(&alone[0], vector) > 0.99999, "{text}: padding moved the reference's vector");
    }
    let defaults = embedder().embed(&texts).unwrap();
    let ours = exact.embed(&texts).unwrap();
    for (((text, ours), default), expected) in texts.iter().zip(&ours).zip(&defaults).zip(&expected) {
        let similarity = cosine(ours, expected);
        assert!(similarity > 0.99999, "{text}: cosine {similarity} with the reference");
        let similarity = cosine(default, expected);
        let floor = if int8 { 0.998 } else { 0.99999 };
        assert!(similarity > floor, "{text}: cosine {similarity} with the reference (int8: {int8})");
    }
}

#[test]
fn close_meanings_are_close() {
    let v = embedder()
        .embed(&[
            "Is it going to rain in Paris tomorrow?",
            "get weather forecast: The weather forecast for a city.",
            "delete file: Remove a file from the disk.",
            "I need somewhere to sleep in Rome next week",
            "search hotels: Find hotels and their room prices in a city.",
        ])
        .unwrap();
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.2, "rain/forecast vs file");
    assert!(cosine(&v[3], &v[4]) > cosine(&v[3], &v[1]) + 0.1, "sleep/hotels vs forecast");
}

fn catalog() -> Vec<SearchDoc> {
    vec![
        SearchDoc::new("search_hotels", "Find hotels and their room prices in a city."),
        SearchDoc::new("get_weather_forecast", "The weather forecast for a city."),
        SearchDoc::new("delete_file", "Remove a file from the disk."),
        SearchDoc::new("send_email", "Send an email to a recipient."),
        SearchDoc::new("book_flight", "Book a seat on a flight between two airports."),
    ]
}

#[test]
fn the_hybrid_ranker_finds_tools_that_share_no_word_with_the_request() {
    let query = "I need somewhere to sleep in Rome next week";
    let lexical = SearchIndex::build(catalog(), &Bm25fRanker::default());
    assert_eq!(lexical.search(query, None, 5, 0).total, 0, "no word in common");
    let hybrid =
        SearchIndex::build(catalog(), &HybridRanker::new(embedder()).no_cache_file().background(false));
    let page = hybrid.search(query, None, 5, 0);
    assert_eq!(page.hits.first().map(|h| &*h.name), Some("search_hotels"));
    // The words still decide when a request names its tool.
    assert_eq!(&*hybrid.search("delete_file", None, 5, 0).hits[0].name, "delete_file");
    // Nothing near in meaning or in words: no result.
    assert_eq!(hybrid.search("chromodynamics of quarks", None, 5, 0).total, 0);
}

#[test]
fn the_model_vocabulary_corrects_misspelt_requests() {
    let embedder = embedder();
    let vocabulary = embedder.vocabulary().expect("a WordPiece tokenizer has a vocabulary");
    // BERT's whole words (about 21,700 of its 30,522 tokens), common ones first.
    assert!(vocabulary.len() > 20_000, "{}", vocabulary.len());
    assert!(vocabulary.rank("the") < vocabulary.rank("umbrella"));
    assert!(vocabulary.knows("label") && vocabulary.knows("cached") && vocabulary.knows("still"));
    assert!(!vocabulary.knows("lable") && !vocabulary.knows("notifcations"));
    assert_eq!(vocabulary.rank("##s"), None);

    let mut docs = catalog();
    docs.push(SearchDoc::new("list_notifications", "List the notifications of the signed-in user."));
    let ranker = HybridRanker::new(embedder).no_cache_file().background(false);
    let index = SearchIndex::build(docs.clone(), &ranker);
    let page = index.search("what notifcations do i have", None, 5, 0);
    assert_eq!(page.hits.first().map(|h| &*h.name), Some("list_notifications"), "{:?}", page.hits);
    let mut as_written = ranker;
    as_written.correct_spelling = false;
    // As written, no word matches and the misspelt word's pieces mean nothing close: no result.
    let page = SearchIndex::build(docs, &as_written).search("what notifcations do i have", None, 5, 0);
    assert_eq!(page.total, 0, "{:?}", page.hits);
}

#[test]
fn errors_name_the_file_at_fault() {
    let missing = SentenceEmbedder::from_dir("/nonexistent/model").unwrap_err().to_string();
    assert!(missing.contains("/nonexistent/model/config.json"), "{missing}");

    let dir = std::env::temp_dir().join(format!("mcp-tools-model-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(model_dir().join(file), dir.join(file)).unwrap();
    }
    let no_weights = SentenceEmbedder::from_dir(&dir).unwrap_err().to_string();
    assert!(no_weights.contains("model.safetensors"), "{no_weights}");
    std::fs::write(dir.join("1_Pooling/config.json"), r#"{"pooling_mode_max_tokens": true}"#).unwrap();
    let pooling = SentenceEmbedder::from_dir(&dir).unwrap_err().to_string();
    assert!(pooling.contains("only mean and CLS pooling"), "{pooling}");
    std::fs::write(dir.join("config.json"), "{").unwrap();
    let config = SentenceEmbedder::from_dir(&dir).unwrap_err().to_string();
    assert!(config.contains("config.json"), "{config}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The model's folder again, under a new name, with `config_sentence_transformers.json` and
/// `1_Pooling/config.json` as given.
fn model_with(name: &str, sentence_transformers: &str, pooling: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-tools-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors", "sentence_bert_config.json"] {
        std::os::unix::fs::symlink(model_dir().join(file), dir.join(file)).unwrap();
    }
    let pooling = match pooling {
        Some(text) => text.to_owned(),
        None => std::fs::read_to_string(model_dir().join("1_Pooling/config.json")).unwrap(),
    };
    std::fs::write(dir.join("1_Pooling/config.json"), pooling).unwrap();
    std::fs::write(dir.join("config_sentence_transformers.json"), sentence_transformers).unwrap();
    dir
}

#[test]
fn a_model_folder_names_its_own_weights() {
    let plain = HybridRanker::from_model(model_dir()).unwrap();
    assert_eq!((plain.lexical_weight, plain.min_similarity), (0.2, 0.25), "the defaults");
    assert_eq!(plain.detail_weight, HybridRanker::MODEL_DETAIL_WEIGHT, "two texts a tool");
    assert_eq!(HybridRanker::new(embedder()).detail_weight, 0.0, "one text a tool unless asked");

    let dir = model_with("settings", "{}", None);
    let settings = dir.join(HybridRanker::SETTINGS_FILE);
    std::fs::write(&settings, r#"{"lexical_weight": 0.3, "min_similarity": 0.32, "detail_weight": 0}"#)
        .unwrap();
    let tuned = HybridRanker::from_model(&dir).unwrap();
    assert_eq!((tuned.lexical_weight, tuned.min_similarity, tuned.detail_weight), (0.3, 0.32, 0.0));
    let applied = plain.model_settings(&dir).unwrap();
    assert_eq!((applied.lexical_weight, applied.min_similarity), (0.3, 0.32), "to a ranker built otherwise");
    std::fs::write(&settings, r#"{"min_similarity": 0.35}"#).unwrap();
    let floor = HybridRanker::from_model(&dir).unwrap();
    assert_eq!((floor.lexical_weight, floor.min_similarity), (0.2, 0.35), "a key left out keeps its default");
    // What `scripts/fetch-model.sh --tuned` writes: the model searched as the published one.
    std::fs::write(&settings, "{}").unwrap();
    let empty = HybridRanker::from_model(&dir).unwrap();
    assert_eq!(
        (empty.lexical_weight, empty.min_similarity, empty.detail_weight),
        (0.2, 0.25, HybridRanker::MODEL_DETAIL_WEIGHT),
        "an empty file keeps every default"
    );

    for (text, says) in [
        (r#"{"lexical_weight": 1.5}"#, "lexical_weight must be from 0 to 1"),
        (r#"{"min_similarity": -2}"#, "min_similarity must be from -1 to 1"),
        (r#"{"detail_weight": 2}"#, "detail_weight must be from 0 to 1"),
        (r#"{"lexical_weigth": 0.3}"#, "unknown field"),
        (r#"{"lexical_weight": "high"}"#, "invalid type"),
        ("{", "EOF"),
    ] {
        std::fs::write(&settings, text).unwrap();
        let error = HybridRanker::from_model(&dir).unwrap_err().to_string();
        assert!(error.contains(HybridRanker::SETTINGS_FILE) && error.contains(says), "{text}: {error}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn prompts_of_the_model_go_before_requests_and_tools_texts() {
    let plain = embedder();
    let same = |a: &[f32], b: &[f32]| cosine(a, b) > 0.9999;
    let (request, tool) = ("somewhere to sleep in Rome", "search hotels: Find hotel rooms in a city.");
    // No prompts (all-MiniLM-L6-v2): requests and tools are embedded alike.
    assert!(same(&plain.embed_queries(&[request]).unwrap()[0], &plain.embed(&[request]).unwrap()[0]));

    // e5's style: `query: ` and `passage: `.
    let dir = model_with("prompts", r#"{"prompts": {"query": "query: ", "passage": "passage: "}}"#, None);
    let prompted = SentenceEmbedder::from_dir(&dir).unwrap();
    let query = prompted.embed_queries(&[request]).unwrap().remove(0);
    assert!(same(&query, &plain.embed(&[&format!("query: {request}")]).unwrap()[0]));
    assert!(!same(&query, &plain.embed(&[request]).unwrap()[0]));
    let document = prompted.embed(&[tool]).unwrap().remove(0);
    assert!(same(&document, &plain.embed(&[&format!("passage: {tool}")]).unwrap()[0]));
    // Their vectors are cached apart from the plain model's.
    assert_ne!(prompted.model_id(), plain.model_id());
    assert!(prompted.model_id().contains("prompts"), "{}", prompted.model_id());
    std::fs::remove_dir_all(&dir).unwrap();

    // A default prompt stands for both; `document` comes before `passage`.
    let dir = model_with(
        "default-prompt",
        r#"{"prompts": {"search": "search: ", "document": "doc: ", "passage": "passage: "}, "default_prompt_name": "search"}"#,
        None,
    );
    let prompted = SentenceEmbedder::from_dir(&dir).unwrap();
    let query = prompted.embed_queries(&[request]).unwrap().remove(0);
    assert!(same(&query, &plain.embed(&[&format!("search: {request}")]).unwrap()[0]));
    let document = prompted.embed(&[tool]).unwrap().remove(0);
    assert!(same(&document, &plain.embed(&[&format!("doc: {tool}")]).unwrap()[0]));
    std::fs::remove_dir_all(&dir).unwrap();

    // Pooling that leaves the prompt out is refused, naming the file; so are malformed prompts.
    let dir = model_with(
        "include-prompt",
        r#"{"prompts": {"query": "query: "}}"#,
        Some(r#"{"pooling_mode_mean_tokens": true, "include_prompt": false}"#),
    );
    let error = SentenceEmbedder::from_dir(&dir).unwrap_err().to_string();
    assert!(error.contains("1_Pooling/config.json") && error.contains("include_prompt"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
    let dir = model_with("bad-prompts", r#"{"prompts": ["query: "]}"#, None);
    let error = SentenceEmbedder::from_dir(&dir).unwrap_err().to_string();
    assert!(error.contains("config_sentence_transformers.json"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn search_tools_ranks_with_the_model_over_the_protocol() {
    // `from_model`, the guide's one line (but a cache file of the test's own), embedding in the
    // background: the server answers at once, the search turns semantic when the vectors are in.
    let file = std::env::temp_dir().join(format!("mcp-tools-served-{}.bin", std::process::id()));
    let mut builder = Server::builder().defer_tools(
        DeferredTools::new().ranker(HybridRanker::from_model(model_dir()).unwrap().cache_file(&file)),
    );
    for doc in catalog() {
        let name = doc.name.clone();
        builder =
            builder.tool(Tool::new(doc.name, doc.description, json!({"type": "object"}), move |_, _| {
                let name = name.clone();
                async move { Ok(ToolResult::new().text(format!("{name} ran"))) }
            }));
    }
    let server = builder.build().unwrap();
    let client = TestClient::connect(&server).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let found = client
            .call("search_tools", json!({"query": "I need somewhere to sleep in Rome next week"}))
            .await
            .unwrap();
        assert!(!found.is_error(), "{}", found.text());
        if found.structured().unwrap()["tools"][0]["name"] == "search_hotels" {
            break;
        }
        assert_eq!(found.structured().unwrap()["total"], 0, "by words meanwhile: nothing in common");
        assert!(std::time::Instant::now() < deadline, "the vectors never came");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(file.exists(), "the vectors were saved");
    std::fs::remove_file(&file).unwrap();
    let called = client.call("call_tool", json!({"name": "search_hotels", "arguments": {}})).await.unwrap();
    assert_eq!(called.text(), "search_hotels ran");
}

#[test]
fn weights_changed_anywhere_are_another_model() {
    // Two fine-tunings of one model may differ only in some tensors; the id (and so the cache
    // file's vectors) must follow any change. Here: the lowest bit of the weights file's last
    // value, far from its middle.
    let config = std::fs::read_to_string(model_dir().join("config_sentence_transformers.json")).unwrap();
    let dir = model_with("changed-weights", &config, None);
    let mut weights = std::fs::read(model_dir().join("model.safetensors")).unwrap();
    let last = weights.len() - 4;
    weights[last] ^= 1;
    std::fs::remove_file(dir.join("model.safetensors")).unwrap();
    std::fs::write(dir.join("model.safetensors"), &weights).unwrap();
    let changed = SentenceEmbedder::from_dir(&dir).unwrap();
    assert_ne!(changed.model_id(), embedder().model_id());
    let same = model_with("same-weights", &config, None);
    assert_eq!(SentenceEmbedder::from_dir(&same).unwrap().model_id(), embedder().model_id());
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&same).unwrap();
}

#[test]
fn a_cache_file_is_reused_by_the_same_model_only() {
    let model = embedder();
    assert!(model.model_id().starts_with("bert "), "{}", model.model_id());
    assert_eq!(SentenceEmbedder::from_dir(model_dir()).unwrap().model_id(), model.model_id(), "stable");
    let exact = SentenceEmbedder::from_dir(model_dir()).unwrap().exact().unwrap();
    assert_eq!(
        exact.model_id() != model.model_id(),
        model.is_int8(),
        "int8 vectors are cached apart from f32 ones: {} / {}",
        exact.model_id(),
        model.model_id()
    );
    let cut = SentenceEmbedder::from_dir(model_dir()).unwrap().max_tokens(64).unwrap().exact().unwrap();
    assert!(cut.model_id().contains(" max 64 "), "f32 products keep the cut: {}", cut.model_id());
    assert_eq!(cut.model_id(), exact.model_id().replacen(" max 256 ", " max 64 ", 1));
    let file = std::env::temp_dir().join(format!("mcp-tools-vectors-{}.bin", std::process::id()));
    let query = "I need somewhere to sleep in Rome next week";
    let first =
        SearchIndex::build(catalog(), &HybridRanker::new(model.clone()).cache_file(&file).background(false));
    let saved = std::fs::read(&file).unwrap();
    assert!(saved.windows(model.model_id().len()).any(|w| w == model.model_id().as_bytes()));
    let second = SearchIndex::build(catalog(), &HybridRanker::new(model).cache_file(&file));
    second.wait_ready();
    assert_eq!(first.search(query, None, 5, 0), second.search(query, None, 5, 0));
    assert_eq!(std::fs::read(&file).unwrap(), saved, "nothing changed, nothing rewritten");
    std::fs::remove_file(&file).unwrap();
}

/// A query adapter file: `weight` (`width` × `width` values, row-major) for the weights whose
/// SHA-256 is `base` (no metadata when `None`).
fn adapter_file(path: &std::path::Path, width: usize, weight: &[f32], base: Option<&str>) {
    let bytes: Vec<u8> = weight.iter().flat_map(|x| x.to_le_bytes()).collect();
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![width, width], &bytes).unwrap();
    let metadata =
        base.map(|b| std::collections::HashMap::from([("base_model_sha256".to_owned(), b.to_owned())]));
    std::fs::write(path, safetensors::serialize([("weight", view)], metadata).unwrap()).unwrap();
}

fn sha256(path: &std::path::Path) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_query_adapter_moves_requests_and_leaves_tools_as_they_are() {
    // The folder scripts/fetch-model.sh made names the adapter trained for this very model.
    let fetched = SentenceEmbedder::from_dir(model_dir()).unwrap();
    assert!(
        fetched.has_query_adapter(),
        "scripts/fetch-model.sh puts models/all-MiniLM-L6-v2/query-adapter.safetensors in"
    );
    assert!(!embedder().has_query_adapter());
    let plain = embedder();
    let (request, tool) = ("find the open bugs of acme/api", "list issues for repo: List repository issues.");
    // Tools' vectors (and so the cache's key) are the model's own.
    assert_eq!(fetched.embed(&[tool]).unwrap(), plain.embed(&[tool]).unwrap());
    assert_eq!(fetched.model_id(), plain.model_id());
    // Requests' vectors are W·q, made unit vectors again.
    let moved = fetched.embed_queries(&[request]).unwrap().remove(0);
    let q = plain.embed_queries(&[request]).unwrap().remove(0);
    assert!((cosine(&moved, &moved) - 1.0).abs() < 1e-5);
    let similarity = cosine(&moved, &q);
    assert!(similarity < 0.9999 && similarity > 0.5, "moved, not far: {similarity}");
    let file = std::fs::read(model_dir().join("query-adapter.safetensors")).unwrap();
    let file = safetensors::SafeTensors::deserialize(&file).unwrap();
    let weight: Vec<f32> = file
        .tensor("weight")
        .unwrap()
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let product: Vec<f32> = weight.chunks_exact(q.len()).map(|row| cosine(row, &q)).collect();
    let norm = cosine(&product, &product).sqrt();
    assert!(product.iter().zip(&moved).all(|(p, m)| (p / norm - m).abs() < 1e-5));

    // An identity adapter changes nothing; another model's adapter, or a malformed one, is an
    // error that names the file.
    let dir = model_with("adapter", "{}", None);
    let path = dir.join("query-adapter.safetensors");
    let width = q.len();
    let identity: Vec<f32> = (0..width * width).map(|i| f32::from(u8::from(i % (width + 1) == 0))).collect();
    let digest = sha256(&model_dir().join("model.safetensors"));
    adapter_file(&path, width, &identity, Some(&digest));
    let same = SentenceEmbedder::from_dir(&dir).unwrap().no_query_adapter().query_adapter(&path).unwrap();
    assert!(same.has_query_adapter());
    assert!(cosine(&same.embed_queries(&[request]).unwrap()[0], &q) > 0.99999);
    std::fs::write(
        dir.join(HybridRanker::SETTINGS_FILE),
        r#"{"query_adapter": "query-adapter.safetensors"}"#,
    )
    .unwrap();
    assert!(SentenceEmbedder::from_dir(&dir).unwrap().has_query_adapter(), "named in the folder's settings");
    assert!(HybridRanker::from_model(&dir).is_ok());

    let other = "0".repeat(64);
    for (write, says) in [
        (
            Box::new(|p: &std::path::Path| adapter_file(p, width, &identity, Some(&other)))
                as Box<dyn Fn(&std::path::Path)>,
            "trained for the model whose weights' SHA-256 is 0000",
        ),
        (Box::new(|p: &std::path::Path| adapter_file(p, width, &identity, None)), "no `base_model_sha256`"),
        (
            Box::new(|p: &std::path::Path| adapter_file(p, 2, &[1.0, 0.0, 0.0, 1.0], Some(&digest))),
            "shape [384, 384]",
        ),
        (
            Box::new(|p: &std::path::Path| std::fs::write(p, b"not safetensors").unwrap()),
            "query-adapter.safetensors",
        ),
        (Box::new(|p: &std::path::Path| std::fs::remove_file(p).unwrap()), "No such file"),
    ] {
        write(&path);
        let error = SentenceEmbedder::from_dir(&dir).unwrap_err().to_string();
        assert!(error.contains("query-adapter.safetensors") && error.contains(says), "{says}: {error}");
    }
    for name in ["../model.safetensors", "", "/etc/passwd", ".hidden"] {
        std::fs::write(dir.join(HybridRanker::SETTINGS_FILE), json!({"query_adapter": name}).to_string())
            .unwrap();
        let error = SentenceEmbedder::from_dir(&dir).unwrap_err().to_string();
        assert!(error.contains("must name a file in the model's folder"), "{name}: {error}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
