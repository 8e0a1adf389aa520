//! Ranking, threshold, tag filter, pagination and suggestions on small hand-made catalogs.

use std::sync::Arc;

use super::*;

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc::new(name, description)
}

fn tagged(name: &str, description: &str, tags: &[&str]) -> SearchDoc {
    SearchDoc { tags: tags.iter().map(|t| t.to_string()).collect(), ..doc(name, description) }
}

fn names(page: &SearchPage) -> Vec<&str> {
    page.hits.iter().map(|h| &*h.name).collect()
}

fn catalog() -> Vec<SearchDoc> {
    vec![
        doc("set_theme", "Set the theme of the editor: the colours and the fonts."),
        doc("get_weather", "Current weather for a city: temperature, wind and rain."),
        doc("weather_forecast", "Weather forecast for the next days in a city."),
        doc("forecast_sales", "Forecast next quarter's sales from past orders."),
        doc("paris_metro", "Metro lines and stations of Paris."),
        tagged("create_invoice", "Create an invoice for a customer.", &["billing"]),
        tagged("list_invoices", "List a customer's invoices.", &["billing", "read"]),
        tagged("send_email", "Send an email message to a recipient.", &["Mail"]),
    ]
}

fn index() -> SearchIndex {
    SearchIndex::build(catalog(), &Bm25fRanker::default())
}

#[test]
fn weather_outranks_the_theme() {
    let index = index();
    let page = index.search("the weather", None, 10, 0);
    assert_eq!(names(&page), ["weather_forecast", "get_weather"]);
    assert!(!names(&page).contains(&"set_theme"), "`the` is a stop word and never a substring");
    // A query of stop words only has no term: no result (not a listing).
    assert_eq!(index.search("the", None, 10, 0).total, 0);
}

#[test]
fn exact_name_match_comes_first() {
    let mut docs = catalog();
    docs.push(doc("weather_report", "Weather, weather, weather: get the weather report of the weather."));
    let index = SearchIndex::build(docs, &Bm25fRanker::default());
    for query in ["get_weather", "getWeather", "GET-WEATHER", "get weather"] {
        assert_eq!(names(&index.search(query, None, 10, 0))[0], "get_weather", "{query}");
    }
    assert_eq!(names(&index.search("weather_forecast", None, 10, 0))[0], "weather_forecast");
}

#[test]
fn stems_and_name_parts_match() {
    let index = index();
    assert_eq!(names(&index.search("forecasting", None, 1, 0)), ["weather_forecast"]);
    assert_eq!(names(&index.search("invoices for customers", None, 10, 0)).len(), 2);
    assert_eq!(names(&index.search("emails", None, 10, 0)), ["send_email"]);
}

#[test]
fn coverage_threshold_drops_one_word_matches() {
    let index = index();
    // Three terms: a result must contain two of them.
    let page = index.search("weather forecast paris", None, 10, 0);
    assert_eq!(names(&page), ["weather_forecast", "get_weather"][..1]);
    assert_eq!(page.total, 1);
    // Without the threshold the one-word matches pad the list.
    let loose = SearchIndex::with_options(catalog(), &Bm25fRanker::default(), SearchOptions::no_threshold());
    let padded = loose.search("weather forecast paris", None, 10, 0);
    assert_eq!(padded.total, 4, "{:?}", names(&padded));
    assert_eq!(names(&padded)[0], "weather_forecast");
    // Nothing matches well: no hits at all.
    let none = index.search("unicorn rainbow sparkles", None, 10, 0);
    assert_eq!((none.total, none.hits.len(), none.next_offset), (0, 0, None));
    assert_eq!(index.search("unicorn weather paris", None, 10, 0).total, 0);
}

#[test]
fn long_queries_keep_rare_one_word_matches_relative_to_the_best() {
    let mut docs = catalog();
    docs.push(doc("read_barometer", "Air pressure from the barometer."));
    let index = SearchIndex::build(docs.clone(), &Bm25fRanker::default());
    // Six terms: two are required, but `barometer` (one tool has it) covers enough of the query
    // next to the best result's four terms; `weather` alone (two tools) does not.
    let query = "what does the barometer say about the weather forecast for the next days";
    let page = index.search(query, None, 10, 0);
    assert_eq!(names(&page)[0], "weather_forecast");
    assert!(names(&page).contains(&"read_barometer"), "{:?}", names(&page));
    assert!(!names(&page).contains(&"get_weather"), "{:?}", names(&page));
    let strict = SearchOptions { relative: 0.0, ..SearchOptions::default() };
    let counted = SearchIndex::with_options(docs, &Bm25fRanker::default(), strict);
    assert!(!names(&counted.search(query, None, 10, 0)).contains(&"read_barometer"));
    // No result reaches the count: nothing, however rare the one word.
    assert_eq!(index.search("what does the barometer say about my trip tomorrow", None, 10, 0).total, 0);
    // Short queries keep the count (see `coverage_threshold_drops_one_word_matches`).
    assert!(!SearchOptions::default().is_long(4));
    assert!(SearchOptions::default().is_long(5));
}

#[test]
fn required_terms() {
    let options = SearchOptions::default();
    let required: Vec<usize> = (0..8).map(|n| options.required(n)).collect();
    assert_eq!(required, [0, 1, 1, 2, 2, 2, 2, 2]);
    let strict =
        SearchOptions { min_share: 0.5, max_required: usize::MAX, relative: 0.0, ..SearchOptions::default() };
    assert_eq!((1..8).map(|n| strict.required(n)).collect::<Vec<_>>(), [1, 1, 2, 2, 3, 3, 4]);
    assert_eq!(SearchOptions::no_threshold().required(5), 0);
}

#[test]
fn tag_filter() {
    let index = index();
    let billing = ["billing".to_owned()];
    let page = index.search("", Some(&billing), 10, 0);
    assert_eq!(names(&page), ["create_invoice", "list_invoices"]);
    assert_eq!(page.total, 2);
    let page = index.search("customer invoices", Some(&["READ".to_owned()]), 10, 0);
    assert_eq!(names(&page), ["list_invoices"]);
    assert_eq!(index.search("email", Some(&billing), 10, 0).total, 0);
    assert_eq!(
        names(&index.search("email", Some(&["mail".to_owned(), "x".to_owned()]), 10, 0)),
        ["send_email"]
    );
    // An empty tag list filters nothing.
    assert_eq!(index.search("", Some(&[]), 100, 0).total, 8);
    assert_eq!(index.tags(), [("Mail".to_owned(), 1), ("billing".to_owned(), 2), ("read".to_owned(), 1)]);
}

#[test]
fn empty_query_lists_everything_by_name() {
    let index = index();
    for blank in ["", "   ", " ?! "] {
        let page = index.search(blank, None, 100, 0);
        let mut sorted: Vec<String> = catalog().into_iter().map(|d| d.name).collect();
        sorted.sort();
        assert_eq!(names(&page), sorted);
        assert!(page.hits.iter().all(|h| h.score == 0.0));
    }
}

#[test]
fn pagination_and_deterministic_ties() {
    // 25 tools with the same description: every score ties, so the order is by name.
    let docs: Vec<SearchDoc> =
        (0..25).rev().map(|i| doc(&format!("tool_{i:02}"), "Produce the monthly report.")).collect();
    let index = SearchIndex::build(docs.clone(), &Bm25fRanker::default());
    let first = index.search("report", None, 10, 0);
    assert_eq!((first.total, first.hits.len(), first.next_offset), (25, 10, Some(10)));
    assert_eq!(names(&first)[..3], ["tool_00", "tool_01", "tool_02"]);
    let second = index.search("report", None, 10, 10);
    assert_eq!((second.hits.len(), second.next_offset), (10, Some(20)));
    let last = index.search("report", None, 10, 20);
    assert_eq!((last.hits.len(), last.next_offset), (5, None));
    assert_eq!(names(&last)[4], "tool_24");
    let past = index.search("report", None, 10, 30);
    assert_eq!((past.total, past.hits.len(), past.next_offset), (25, 0, None));
    assert!(index.search("report", None, 0, 0).hits.is_empty());
    // The pages, concatenated, are the whole list, in the same order whatever the input order.
    let all: Vec<&str> = [&first, &second, &last].into_iter().flat_map(names).collect();
    let mut reversed = docs;
    reversed.reverse();
    let other = SearchIndex::build(reversed, &Bm25fRanker::default());
    assert_eq!(all, names(&other.search("report", None, 100, 0)));
    // Listing pages too.
    let listed = index.search("", None, 20, 0);
    assert_eq!((listed.hits.len(), listed.next_offset), (20, Some(20)));
}

#[test]
fn hits_are_sorted_by_score_then_name() {
    let index = index();
    let page = index.search("weather forecast city", None, 10, 0);
    assert!(
        page.hits
            .windows(2)
            .all(|w| w[0].score > w[1].score || (w[0].score == w[1].score && w[0].name < w[1].name))
    );
    assert_eq!(page.hits.iter().find(|h| &*h.name == "get_weather").map(|h| h.doc), Some(1));
}

#[test]
fn suggestions() {
    let index = index();
    let suggest = |name: &str, k: usize| -> Vec<String> {
        index.suggest(name, k).into_iter().map(|n: Arc<str>| n.to_string()).collect()
    };
    assert_eq!(suggest("get_wether", 3)[0], "get_weather");
    assert_eq!(suggest("Get_Weather", 1), ["get_weather"]);
    assert_eq!(suggest("send_emial", 1), ["send_email"]);
    // Nothing close by spelling: the search for the name's words.
    assert_eq!(suggest("weather", 2), ["weather_forecast", "get_weather"]);
    assert_eq!(suggest("invoice_create", 1), ["create_invoice"]);
    assert!(suggest("zzzzzzzz", 3).is_empty());
    assert!(suggest("get_weather", 0).is_empty());
    // Up to k: the one close name, then the other search result.
    assert_eq!(suggest("list_invoice", 3), ["list_invoices", "create_invoice"]);
    assert!(!suggest("get_weather", 3).contains(&"get_weather".to_owned()));
}

#[test]
fn positions_and_docs() {
    let index = index();
    assert_eq!(index.len(), 8);
    assert_eq!(index.position("send_email"), Some(7));
    assert_eq!(index.position("nope"), None);
    assert_eq!(index.doc(1).name, "get_weather");
}

/// A ranker of its own: documents whose name starts with the query's first word, shortest
/// name first; it opts out of the coverage threshold.
struct PrefixRanker;

struct PrefixScorer;

impl Ranker for PrefixRanker {
    fn prepare(&self, _: &Corpus) -> Box<dyn Scorer> {
        Box::new(PrefixScorer)
    }
}

impl Scorer for PrefixScorer {
    fn rank(&self, corpus: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let word = query.text().split_whitespace().next().unwrap_or("");
        for (i, doc) in corpus.docs().iter().enumerate() {
            if doc.name.starts_with(word) {
                let score = 1.0 / doc.name.len() as f32;
                let matched = query.coverage_terms() as u32;
                out.push(Candidate { doc: i as u32, score, matched, coverage: 1.0 });
            }
        }
    }
}

#[test]
fn rankers_plug_in() {
    let ranker: Arc<dyn Ranker> = Arc::new(PrefixRanker);
    let index = SearchIndex::build(catalog(), &*ranker);
    assert_eq!(names(&index.search("li", None, 10, 0)), ["list_invoices"]);
    assert_eq!(names(&index.search("se anything else", None, 10, 0)), ["set_theme", "send_email"]);
    // Rebuilding for a changed catalog prepares the same ranker again.
    let rebuilt = SearchIndex::build(vec![doc("lint", "")], &*ranker);
    assert_eq!(names(&rebuilt.search("li", None, 10, 0)), ["lint"]);
}

#[test]
fn index_is_shared_across_threads() {
    let index = Arc::new(index());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let index = index.clone();
            std::thread::spawn(move || names(&index.search("weather", None, 10, 0)).join(","))
        })
        .collect();
    let results: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    assert!(results[0].starts_with("get_weather") || results[0].starts_with("weather_forecast"));
}

// ---------------------------------------------------------------------------------------------
// Embeddings: `HybridRanker` and `EmbeddingRanker` over a toy embedder whose axes are concepts.

/// Embeds a text as counts of concepts (lodging, weather, mail, billing), so that synonyms land
/// together without sharing a word; other words count for nothing (a text of none of these
/// concepts is the zero vector, similar to nothing). Counts the texts it embeds.
#[derive(Default)]
struct Concepts {
    embedded: std::sync::atomic::AtomicUsize,
}

const CONCEPTS: [&[&str]; 4] = [
    &["hotel", "hotels", "accommodation", "lodging", "room", "rooms", "stay"],
    &["weather", "temperature", "rain", "wind"],
    &["email", "mail", "message", "send"],
    &["invoice", "invoices", "billing", "customer"],
];

impl Embedder for Concepts {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embedded.fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0f32; CONCEPTS.len()];
                for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                    let word = word.to_lowercase();
                    if let Some(axis) = CONCEPTS.iter().position(|c| c.contains(&word.as_str())) {
                        v[axis] += 1.0;
                    }
                }
                v
            })
            .collect())
    }
}

/// Fails every call.
struct Broken;

impl Embedder for Broken {
    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err("the model is not loaded".into())
    }
}

/// An index whose ranker has finished embedding the catalog (rankers by meaning embed it in the
/// background by default).
fn ready_index(docs: Vec<SearchDoc>, ranker: &dyn Ranker) -> SearchIndex {
    let index = SearchIndex::build(docs, ranker);
    index.wait_ready();
    assert!(index.is_ready());
    index
}

fn with_hotels() -> Vec<SearchDoc> {
    let mut docs = catalog();
    docs.push(doc("search_hotels", "Search hotels by city, with rooms and prices."));
    docs
}

#[test]
fn embedding_text_has_name_words_description_tags_and_parameters() {
    let doc = SearchDoc::from_schema(
        "getWeather",
        Some("Weather".into()),
        "Weather now.",
        "Weather now and later. Uses the national service; 3.5 km grid.\nSee the docs.",
        vec!["geo".into()],
        &serde_json::json!({"type": "object", "properties": {
            "city_name": {"type": "string", "description": "The city."},
            "unit": {"type": "string"}
        }}),
    );
    assert_eq!(
        full_embedding_text(&doc),
        "get weather: Weather: Weather now and later. Uses the national service; 3.5 km grid.\nSee the docs. \
         Tags: geo. Parameters: city name, unit. city name: The city."
    );
    // The default: the description's first sentence and the parameters' names.
    assert_eq!(
        embedding_text(&doc),
        "get weather: Weather: Weather now and later. Tags: geo. Parameters: city name, unit."
    );
    // No description: the summary stands in; a description of one line without a period is whole.
    let doc = SearchDoc { summary: "Only a summary.".into(), ..SearchDoc::new("ping", "") };
    assert_eq!(embedding_text(&doc), "ping: Only a summary.");
    assert_eq!(full_embedding_text(&doc), "ping: Only a summary.");
    assert_eq!(
        embedding_text(&SearchDoc::new("ping", "Check the server (v1.2)")),
        "ping: Check the server (v1.2)"
    );
    assert_eq!(
        embedding_text(&SearchDoc::new("ping", "  Éé ünïcode first.  Second.")),
        "ping: Éé ünïcode first."
    );
}

#[test]
fn hybrid_finds_a_tool_by_meaning_when_no_word_matches() {
    let lexical = ready_index(with_hotels(), &Bm25fRanker::default());
    assert_eq!(lexical.search("accommodation", None, 10, 0).total, 0);
    let hybrid = ready_index(with_hotels(), &HybridRanker::new(Concepts::default()));
    assert!(hybrid.is_blocking());
    assert_eq!(names(&hybrid.search("accommodation", None, 10, 0)), ["search_hotels"]);
    // The tools sharing words and meaning rank above the one sharing a word only.
    let page = hybrid.search("weather forecast", None, 10, 0);
    assert_eq!(names(&page), ["weather_forecast", "get_weather", "forecast_sales"]);
    let page = lexical.search("weather forecast", None, 10, 0);
    assert_eq!(names(&page), ["weather_forecast", "forecast_sales", "get_weather"]);
}

#[test]
fn hybrid_keeps_exact_names_first_and_drops_weak_matches() {
    let hybrid = ready_index(with_hotels(), &HybridRanker::new(Concepts::default()));
    assert_eq!(names(&hybrid.search("get_weather", None, 10, 0))[0], "get_weather");
    // Seven terms, two required, no tool has two: by words alone, nothing. By meaning the lodging
    // tool is kept; the invoices, sharing only `customer` and not the meaning, are still dropped.
    let query = "find lodging or accommodation, a room to stay tonight for a customer";
    assert_eq!(ready_index(with_hotels(), &Bm25fRanker::default()).search(query, None, 10, 0).total, 0);
    assert_eq!(names(&hybrid.search(query, None, 10, 0)), ["search_hotels"]);
    // Nothing close in meaning and no word in common: no result rather than padding.
    assert_eq!(hybrid.search("quantum chromodynamics", None, 10, 0).total, 0);
}

/// Embeds documents as [`Concepts`] does, and requests one concept over (a request about
/// lodging lands on the weather): which tools a search finds tells which of the two embedded it.
struct Shifted(Concepts);

impl Embedder for Shifted {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.0.embed(texts)
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = self.0.embed(texts)?;
        vectors.iter_mut().for_each(|v| v.rotate_right(1));
        Ok(vectors)
    }
}

#[test]
fn requests_are_embedded_as_queries_and_tools_as_documents() {
    // Documents through `embed`, requests through `embed_queries`, also behind an `Arc`.
    let weather = ["get_weather", "weather_forecast"];
    for ranker in [
        HybridRanker::new(Shifted(Concepts::default())),
        HybridRanker::new(Arc::new(Shifted(Concepts::default()))),
    ] {
        let index = ready_index(with_hotels(), &ranker);
        let page = index.search("accommodation", None, 10, 0);
        let mut found = names(&page);
        found.sort();
        assert_eq!(found, weather);
    }
    let index = ready_index(with_hotels(), &EmbeddingRanker::new(Shifted(Concepts::default())));
    let page = index.search("lodging", None, 10, 0);
    let mut found = names(&page);
    found.sort();
    assert_eq!(found, weather);
    // The default `embed_queries` is `embed`.
    let plain = Concepts::default();
    assert_eq!(plain.embed_queries(&["hotel rooms"]).unwrap(), plain.embed(&["hotel rooms"]).unwrap());
}

#[test]
fn embedding_ranker_alone_ranks_by_similarity() {
    let ranker = EmbeddingRanker::new(Concepts::default());
    let index = ready_index(with_hotels(), &ranker);
    assert_eq!(names(&index.search("lodging", None, 10, 0)), ["search_hotels"]);
    let page = index.search("mail", None, 10, 0);
    assert_eq!(names(&page), ["send_email"]);
    assert_eq!(index.search("quantum chromodynamics", None, 10, 0).total, 0);
}

#[test]
fn a_failing_embedder_falls_back_to_words() {
    let hybrid = ready_index(with_hotels(), &HybridRanker::new(Broken));
    assert!(!hybrid.is_blocking());
    let lexical = ready_index(with_hotels(), &Bm25fRanker::default());
    for query in ["weather forecast", "accommodation", "send an invoice to a customer"] {
        assert_eq!(
            names(&hybrid.search(query, None, 10, 0)),
            names(&lexical.search(query, None, 10, 0)),
            "{query}"
        );
    }
    // Vectors of different lengths are refused the same way.
    struct Ragged;
    impl Embedder for Ragged {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|t| vec![1.0; 1 + t.len() % 3]).collect())
        }
    }
    let ragged = ready_index(with_hotels(), &HybridRanker::new(Ragged));
    assert!(!ragged.is_blocking());
    let query = "weather forecast";
    assert_eq!(names(&ragged.search(query, None, 10, 0)), names(&lexical.search(query, None, 10, 0)));
}

#[test]
fn a_changed_catalog_embeds_only_its_new_tools() {
    let concepts = Arc::new(Concepts::default());
    let ranker = HybridRanker::new(concepts.clone());
    let count = || concepts.embedded.load(std::sync::atomic::Ordering::SeqCst);
    let index = ready_index(catalog(), &ranker);
    assert_eq!(count(), catalog().len());
    drop(index);
    let index = ready_index(with_hotels(), &ranker);
    assert_eq!(count(), catalog().len() + 1, "one new tool, one embedding");
    index.search("lodging", None, 10, 0);
    assert_eq!(count(), catalog().len() + 2, "and one per query");
    // Clones share the vectors.
    let _ = ready_index(with_hotels(), &ranker.clone());
    assert_eq!(count(), catalog().len() + 2);
}

/// `Concepts` under another model name.
struct Renamed(Arc<Concepts>);

impl Embedder for Renamed {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.0.embed(texts)
    }

    fn model_id(&self) -> String {
        "concepts v2".into()
    }
}

#[test]
fn a_cache_file_spares_a_restarted_server_the_embedding() {
    let dir = std::env::temp_dir().join(format!(
        "mcp-tools-cache-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("vectors.bin");
    let concepts = Arc::new(Concepts::default());
    let count = || concepts.embedded.load(std::sync::atomic::Ordering::SeqCst);
    let query = "lodging for tonight";

    // First start: everything embedded, the file written.
    let first = ready_index(with_hotels(), &HybridRanker::new(concepts.clone()).cache_file(&file));
    let expected = names(&first.search(query, None, 10, 0)).join(" ");
    assert_eq!(expected, "search_hotels");
    assert_eq!(count(), with_hotels().len() + 1);
    assert!(file.exists());

    // A restart (a new ranker): nothing embedded but the query, the same results.
    let second = ready_index(with_hotels(), &HybridRanker::new(concepts.clone()).cache_file(&file));
    assert_eq!(count(), with_hotels().len() + 1);
    assert_eq!(names(&second.search(query, None, 10, 0)).join(" "), expected);

    // A restart with one more tool: one embedding.
    let mut more = with_hotels();
    more.push(doc("book_room", "Book a hotel room."));
    let _ = ready_index(more, &HybridRanker::new(concepts.clone()).cache_file(&file));
    assert_eq!(count(), with_hotels().len() + 3);

    // Another model ignores the file (and replaces it).
    let other = HybridRanker::new(Renamed(concepts.clone())).cache_file(&file);
    let _ = ready_index(with_hotels(), &other);
    assert_eq!(count(), 2 * with_hotels().len() + 3);
    let again = HybridRanker::new(Renamed(concepts.clone())).cache_file(&file);
    let _ = ready_index(with_hotels(), &again);
    assert_eq!(count(), 2 * with_hotels().len() + 3, "the file is now the new model's");

    // A corrupt file is ignored: the search still works, and the file is rewritten.
    std::fs::write(&file, b"mcp-tools embedding cache 1\n\xff\xff").unwrap();
    let index = ready_index(with_hotels(), &HybridRanker::new(concepts.clone()).cache_file(&file));
    assert_eq!(names(&index.search(query, None, 10, 0)).join(" "), expected);
    let rewritten = ready_index(with_hotels(), &HybridRanker::new(concepts.clone()).cache_file(&file));
    let before = count();
    assert_eq!(names(&rewritten.search(query, None, 10, 0)).join(" "), expected);
    assert_eq!(count(), before + 1, "only the query was embedded");

    // A file of vectors of another length under the same (empty) model id: stale, replaced.
    struct Short;
    impl Embedder for Short {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|t| vec![1.0, t.len() as f32]).collect())
        }
    }
    let _ = ready_index(with_hotels(), &HybridRanker::new(concepts.clone()).cache_file(&file));
    let mut more = with_hotels();
    more.push(doc("book_room", "Book a hotel room."));
    let short = ready_index(more, &HybridRanker::new(Short).cache_file(&file));
    assert!(short.is_blocking(), "embedded anew rather than given up");
    let again = ready_index(with_hotels(), &HybridRanker::new(Broken).cache_file(&file));
    assert!(again.is_blocking(), "the file now holds the short vectors, every one needed");

    // An unwritable place (under a file) is no obstacle to searching; a missing folder is made.
    let nowhere = HybridRanker::new(concepts.clone()).cache_file(file.join("vectors.bin"));
    let index = ready_index(with_hotels(), &nowhere);
    assert_eq!(names(&index.search(query, None, 10, 0)).join(" "), expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dot_products_of_any_length() {
    for n in [0, 1, 7, 8, 9, 384, 385] {
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32 * 0.25).collect();
        let expected: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
        let got = super::dense::dot(&a, &b);
        assert!(
            (f64::from(got) - expected).abs() <= 1e-4 * expected.abs().max(1.0),
            "{n}: {got} vs {expected}"
        );
    }
}

/// Embeds like [`Concepts`] once its gate opens; counts its calls.
#[derive(Default)]
struct Gated {
    concepts: Concepts,
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
    calls: std::sync::atomic::AtomicUsize,
}

impl Gated {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl Embedder for Gated {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
        drop(open);
        self.concepts.embed(texts)
    }
}

#[test]
fn a_hybrid_index_answers_by_words_until_its_vectors_are_ready() {
    let gated = Arc::new(Gated::default());
    let index = SearchIndex::build(with_hotels(), &HybridRanker::new(gated.clone()));
    // Built at once; the model is still busy with the catalog.
    assert!(!index.is_ready());
    assert!(!index.is_blocking(), "searching by words meanwhile, on the async workers");
    assert_eq!(index.search("accommodation", None, 10, 0).total, 0, "no word matches yet");
    assert_eq!(names(&index.search("hotels", None, 10, 0)), ["search_hotels"]);
    gated.open();
    index.wait_ready();
    assert!(index.is_ready() && index.is_blocking());
    assert_eq!(names(&index.search("accommodation", None, 10, 0)), ["search_hotels"]);

    // Not in the background: ready when built.
    let now = SearchIndex::build(with_hotels(), &HybridRanker::new(Concepts::default()).background(false));
    assert!(now.is_ready());
    assert_eq!(names(&now.search("accommodation", None, 10, 0)), ["search_hotels"]);
}

#[test]
fn a_dropped_index_stops_embedding_its_catalog() {
    let gated = Arc::new(Gated::default());
    let many: Vec<SearchDoc> =
        (0..1000).map(|i| doc(&format!("tool_{i}"), &format!("Tool number {i}."))).collect();
    let index = SearchIndex::build(many, &HybridRanker::new(gated.clone()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while gated.calls.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "the background thread never embedded");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(index);
    gated.open();
    // The thread finishes its chunk, sees the index gone, and embeds no further chunk.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(gated.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn the_default_cache_file_is_per_model_in_the_user_cache_folder() {
    assert_eq!(super::dense::default_cache_file(""), None, "no model id, no shared file");
    if let Some(file) = super::dense::default_cache_file("bert 1234 abcd") {
        let name = file.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with("embeddings-") && name.ends_with(".bin") && name.len() == 31, "{name}");
        assert_eq!(file.parent().unwrap().file_name().unwrap(), "mcp-tools");
        assert_ne!(Some(file), super::dense::default_cache_file("bert 1234 abce"));
    }
}

#[test]
fn requests_split_into_their_steps() {
    assert_eq!(
        steps(
            "Find the cheapest flight to Oslo next Friday, then put it in my calendar and email the itinerary to Anna."
        ),
        [
            "Find the cheapest flight to Oslo next Friday",
            "then put it in my calendar",
            "and email the itinerary to Anna."
        ]
    );
    assert_eq!(
        steps("read the README of kvn/dotfiles. Fix the typo; commit it. Also open a PR"),
        ["read the README of kvn/dotfiles.", "Fix the typo", "commit it.", "Also open a PR"]
    );
    assert_eq!(
        steps("look up the weather in Paris, and book a table for two"),
        ["look up the weather in Paris", "and book a table for two"]
    );
    assert_eq!(
        steps("I need the top trending repositories on GitHub and any news articles about AI"),
        ["I need the top trending repositories on GitHub", "and any news articles about AI"]
    );
    assert_eq!(
        steps("suggest jobs in Lisbon, as well as cheap hotels there"),
        ["suggest jobs in Lisbon", "as well as cheap hotels there"]
    );
    // A bare `and` with one word after it joins its step; `and then` splits as `then` does.
    assert_eq!(steps("a cartoon with Tom and Jerry"), ["a cartoon with Tom and Jerry"]);
    assert_eq!(steps("build it and then ship"), ["build it", "and then ship"]);
    // Quoted text is a value, whatever it says.
    assert_eq!(
        steps("send the text 'hotel rooms and a stay. Then lunch' to Ann, then book it"),
        ["send the text 'hotel rooms and a stay. Then lunch' to Ann", "then book it"]
    );
    // One step: nothing to split (`then` inside a word, `3.5`, a short tail joins its step).
    assert_eq!(steps("weather in Athens"), ["weather in Athens"]);
    assert_eq!(steps("convert 3.5 miles to km"), ["convert 3.5 miles to km"]);
    assert_eq!(steps("who starred octocat/hello-world? thanks"), ["who starred octocat/hello-world? thanks"]);
    assert!(steps("").is_empty());
    assert!(steps("   ").is_empty());
    // Bounded, and whatever the text.
    assert_eq!(steps(&"do this. ".repeat(50)).len(), 6);
    assert_eq!(steps("ünïcödé wörds. then ✓ done ok").len(), 2);
}

#[test]
fn each_step_of_a_request_is_matched_on_its_own() {
    let docs = || {
        vec![
            doc("search_hotels", "Search hotels by city, with rooms and prices."),
            doc("send_mail", "Send an email message."),
        ]
    };
    let query = "book a hotel room in Rome, then send an email to Anna";
    let score = |split: bool| {
        let mut ranker = HybridRanker::new(Concepts::default()).background(false);
        ranker.split_steps = split;
        let index = SearchIndex::build(docs(), &ranker);
        let page = index.search(query, None, 10, 0);
        assert_eq!(page.total, 2, "both steps' tools, either way");
        let score = |name: &str| page.hits.iter().find(|h| &*h.name == name).unwrap().score;
        (score("search_hotels"), score("send_mail"))
    };
    let (whole_hotels, whole_mail) = score(false);
    let (step_hotels, step_mail) = score(true);
    // Against the whole request, each tool shares half its meaning; against its own step, all.
    assert!(step_hotels > whole_hotels + 0.1, "{step_hotels} vs {whole_hotels}");
    assert!(step_mail > whole_mail + 0.1, "{step_mail} vs {whole_mail}");
}

#[test]
fn a_tool_is_indexed_as_a_deferred_server_indexes_it() {
    let tool = crate::Tool::new(
        "get_weather",
        "Weather of a city.\nMore detail on a second line.",
        serde_json::json!({"type": "object", "properties": {
            "city": {"type": "string", "description": "The city."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        }}),
        |_, _| async { Ok(crate::ToolResult::new()) },
    )
    .title("Weather")
    .tags(["geo"]);
    let doc = SearchDoc::from_tool(&tool);
    assert_eq!(doc.name, "get_weather");
    assert_eq!(doc.title.as_deref(), Some("Weather"));
    assert_eq!(doc.summary, "Weather of a city.", "the description's first line by default");
    assert_eq!(doc.tags, ["geo"]);
    assert_eq!(doc.params, [("city".to_owned(), "The city.".to_owned()), ("unit".to_owned(), String::new())]);
    assert_eq!(doc.values, ["celsius", "fahrenheit"]);
    assert_eq!(doc.read_only, None, "no annotations: not known");
    let doc = SearchDoc::from_tool(&tool.clone().summary("Forecasts."));
    assert_eq!(doc.summary, "Forecasts.", "a summary of its own wins");
    let annotated = |a: crate::Annotations| SearchDoc::from_tool(&tool.clone().annotations(a)).read_only;
    assert_eq!(annotated(crate::Annotations::new().read_only(true)), Some(true));
    assert_eq!(annotated(crate::Annotations::new().read_only(false)), Some(false));
    assert_eq!(
        annotated(crate::Annotations::new().destructive(false)),
        Some(false),
        "only a tool that changes things is destructive or not"
    );
    assert_eq!(annotated(crate::Annotations::new().idempotent(true)), None);
    // A title given only in the annotations (as many servers give it) is the tool's title.
    let mut untitled = tool.clone().annotations(crate::Annotations::new().title("Forecast"));
    untitled.title = None;
    assert_eq!(SearchDoc::from_tool(&untitled).title.as_deref(), Some("Forecast"));
    let both = tool.clone().annotations(crate::Annotations::new().title("Forecast"));
    assert_eq!(SearchDoc::from_tool(&both).title.as_deref(), Some("Weather"), "the tool's own title wins");
}

#[test]
fn a_question_ranks_tools_that_change_things_lower_and_a_change_read_only_ones() {
    // The same words: only what the tools do, by their annotations, tells them apart (a tie
    // otherwise goes to the first name).
    let labels = |name: &str, read_only: Option<bool>| SearchDoc {
        read_only,
        ..doc(name, "Labels of an issue: bug, triage, feature.")
    };
    let index = |options: SearchOptions, first: Option<bool>, second: Option<bool>| {
        SearchIndex::with_options(
            vec![labels("issue_labels_x", first), labels("issue_labels_y", second)],
            &Bm25fRanker::default(),
            options,
        )
    };
    let first = |options, a, b, query| names(&index(options, a, b).search(query, None, 10, 0))[0].to_owned();
    let on = SearchOptions::default();
    let off = SearchOptions { intent_penalty: 0.0, ..on };
    let (reads, changes) = (Some(true), Some(false));
    let question = "which labels does issue 88 have?";
    let unsaid = "can you sort out the labels of issue 88";
    assert_eq!(first(on, changes, reads, question), "issue_labels_y");
    assert_eq!(first(on, reads, changes, question), "issue_labels_x");
    assert_eq!(first(on, reads, changes, "add the labels bug and triage to issue 88"), "issue_labels_y");
    assert_eq!(first(off, changes, reads, question), "issue_labels_x", "0 turns it off");
    // A request that does not say, or tools whose annotations do not, keep the tie's order.
    assert_eq!(first(on, changes, reads, unsaid), "issue_labels_x");
    assert_eq!(first(on, changes, None, question), "issue_labels_y");
    assert_eq!(first(on, None, changes, question), "issue_labels_x");
    // Lower, not dropped: both are still results, with the score lowered by the penalty.
    let page = index(on, changes, reads).search(question, None, 10, 0);
    assert_eq!(page.total, 2);
    assert!((page.hits[1].score - 0.7 * page.hits[0].score).abs() < 1e-5, "{:?}", page.hits);
}

#[test]
fn values_are_left_out_of_the_embedded_request() {
    let docs = || {
        vec![
            doc("search_hotels", "Search hotels by city, with rooms and prices."),
            doc("send_mail", "Send an email message."),
        ]
    };
    // The quoted text is what to send; it is about hotels, the request is not.
    let query = "send the text 'hotel room, rooms, lodging and a stay' to anna@example.com";
    let first = |drop_values: bool| {
        let mut ranker = HybridRanker::new(Concepts::default()).background(false);
        ranker.drop_values = drop_values;
        let index = SearchIndex::build(docs(), &ranker);
        index.search(query, None, 10, 0).hits[0].name.to_string()
    };
    assert_eq!(first(true), "send_mail");
    assert_eq!(first(false), "search_hotels", "the values pull the whole request towards hotels");
}

#[test]
fn what_counts_as_a_value() {
    let cases = [
        ("close #42 in acme/api, it's fixed", "close in it's fixed"),
        ("email bob@example.com about v1.2.0 and commit abc1234", "email about and commit"),
        ("run deploy.yml with env=staging on the my_branch branch", "run deploy.yml with on the branch"),
        ("say \u{201c}hello there\u{201d} twice", "say twice"),
        ("add the todo \"buy milk\" and 'call mum.'", "add the todo and"),
        // Numbers (with a short unit) and apostrophes stay; an unclosed quote drops nothing.
        ("a triangle of base 5m, 22nd of May, 52 cards", "a triangle of base 5m, 22nd of May, 52 cards"),
        ("it's alice's 'draft", "it's alice's 'draft"),
        // Nothing but values: the request whole.
        ("acme/api#88", "acme/api#88"),
        ("", ""),
    ];
    for (request, kept) in cases {
        assert_eq!(without_values(request), kept, "{request}");
    }
}

#[test]
fn abbreviations_are_searched_as_the_catalog_spells_them() {
    let index = SearchIndex::build(
        vec![
            doc("pulls_create_review", "Create a review for a pull request."),
            doc("pulls_merge", "Merge a pull request."),
            doc("pr_stack", "Group a PR with others: each pull request in order."),
            doc("fork_pr_policy", "Whether a fork PR runs workflows: a pull request from a fork."),
            doc("issues_create", "Create an issue."),
        ],
        &Bm25fRanker::default(),
    );
    let page = index.search("review PR 12", None, 10, 0);
    assert_eq!(&*page.hits[0].name, "pulls_create_review", "{:?}", page.hits);
}

/// [`Concepts`] with a language's vocabulary, as a WordPiece model has.
struct Speller(Concepts, Vocabulary);

impl Embedder for Speller {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.0.embed(texts)
    }

    fn vocabulary(&self) -> Option<&Vocabulary> {
        Some(&self.1)
    }
}

fn labels() -> Vec<SearchDoc> {
    vec![
        doc("issues_add_labels", "Add a label to an issue."),
        doc("list_notifications", "List your notifications."),
        doc("send_email", "Send an email message."),
        doc("get_weather", "Current weather for a city."),
    ]
}

#[test]
fn misspelt_words_are_searched_as_the_catalog_word_one_edit_away() {
    let vocabulary = Vocabulary::new(["the", "on", "what", "do", "have", "slap", "plaza", "still"]);
    let speller = || HybridRanker::new(Speller(Concepts::default(), vocabulary.clone())).no_cache_file();
    let index = ready_index(labels(), &speller());
    assert_eq!(names(&index.search("slap a lable on the issue", None, 10, 0))[0], "issues_add_labels");
    let page = index.search("what notifcations do i have", None, 10, 0);
    assert_eq!(names(&page), ["list_notifications"]);
    assert_eq!(page.searched.as_deref(), Some("what notifications do i have"));
    assert_eq!(index.search("list notifications", None, 10, 0).searched, None);
    // A swap of neighbours, in a word the vocabulary does not know either.
    assert_eq!(names(&index.search("emial", None, 10, 0)), ["send_email"]);
    // Known words, names and identifiers are searched as written.
    assert_eq!(index.search("weather at the plaza", None, 10, 0).total, 1);
    assert_eq!(index.search("acme/lable", None, 10, 0).total, 0);
    assert_eq!(index.search("Lable", None, 10, 0).total, 0);
    // Without a vocabulary (the words-only ranker, an embedder without one) or with correction
    // off, nothing is corrected: a word the catalog lacks may be a name or a word of the language.
    assert_eq!(
        ready_index(labels(), &Bm25fRanker::default()).search("what notifcations", None, 10, 0).total,
        0
    );
    let plain = HybridRanker::new(Concepts::default()).no_cache_file();
    assert_eq!(ready_index(labels(), &plain).search("what notifcations", None, 10, 0).total, 0);
    let mut off = speller();
    off.correct_spelling = false;
    assert_eq!(ready_index(labels(), &off).search("what notifcations", None, 10, 0).total, 0);
}

/// Holds back the texts that contain `held` (a tool's second text) until opened, or fails them.
#[derive(Default)]
struct HoldsSecond {
    concepts: Concepts,
    held: &'static str,
    fail: bool,
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl HoldsSecond {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl Embedder for HoldsSecond {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.iter().any(|t| t.contains(self.held)) {
            if self.fail {
                return Err("the second texts do not embed".into());
            }
            let mut open = self.open.lock().unwrap();
            while !*open {
                open = self.opened.wait(open).unwrap();
            }
        }
        self.concepts.embed(texts)
    }
}

/// `book_alpha`: its short text says room (a hotel), its whole definition also email (the
/// catalog's email tool left out).
fn with_detail() -> Vec<SearchDoc> {
    let mut docs: Vec<SearchDoc> = catalog().into_iter().filter(|d| d.name != "send_email").collect();
    docs.push(SearchDoc {
        params: vec![("note".into(), "Sends an email to the guest.".into())],
        ..doc("book_alpha", "Book a room.")
    });
    docs
}

/// Waits until the index ranks by its first vectors.
fn wait_blocking(index: &SearchIndex) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !index.is_blocking() {
        assert!(std::time::Instant::now() < deadline, "the first texts were never embedded");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn a_tools_second_text_refines_its_vector_once_embedded() {
    let held = Arc::new(HoldsSecond { held: "guest", ..HoldsSecond::default() });
    let mut ranker = HybridRanker::new(held.clone()).no_cache_file();
    ranker.detail_weight = 0.5;
    let index = SearchIndex::build(with_detail(), &ranker);
    wait_blocking(&index);
    // By meaning already (`lodging` is nowhere in the catalog), by the short text alone.
    assert!(!index.is_ready(), "the second texts are held");
    assert_eq!(names(&index.search("lodging", None, 10, 0)), ["book_alpha"]);
    assert_eq!(index.search("mail", None, 10, 0).total, 0, "the short text says nothing of mail");
    held.open();
    index.wait_ready();
    assert!(index.is_ready());
    // (0.5 · room + 0.5 · (room + email)) made a unit vector: a cosine of 0.38 with `mail`.
    assert_eq!(names(&index.search("mail", None, 10, 0)), ["book_alpha"]);
    assert_eq!(names(&index.search("lodging", None, 10, 0)), ["book_alpha"]);

    // Without a second text (the default of `new`), nothing of it is embedded or mixed.
    let plain =
        HybridRanker::new(Arc::new(HoldsSecond { held: "guest", fail: true, ..HoldsSecond::default() }));
    let index = ready_index(with_detail(), &plain.no_cache_file());
    assert_eq!(index.search("mail", None, 10, 0).total, 0);
}

#[test]
fn a_failing_second_text_leaves_the_first_vectors() {
    let failing = HoldsSecond { held: "guest", fail: true, ..HoldsSecond::default() };
    let mut ranker = HybridRanker::new(failing).no_cache_file();
    ranker.detail_weight = 0.5;
    for background in [true, false] {
        let index = ready_index(with_detail(), &ranker.clone().background(background));
        assert!(index.is_blocking(), "still ranking by meaning");
        assert_eq!(names(&index.search("lodging", None, 10, 0)), ["book_alpha"]);
        assert_eq!(index.search("mail", None, 10, 0).total, 0);
    }
}
