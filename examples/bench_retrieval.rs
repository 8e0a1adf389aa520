//! Retrieval quality of deferred-mode search on the BFCL pooled set (see `bench/retrieval.md`).
//!
//! ```sh
//! bash scripts/bench-retrieval.sh        # downloads the data, runs this, writes bench/retrieval.md
//! cargo run --release --example bench_retrieval -- [--data DIR] [--set KEY=VALUE]...
//! ```
//!
//! `DIR` is `bfcl_eval/data` of the unpacked `bfcl-eval` wheel (default
//! `.cache/bench/bfcl-eval-2026.3.23/whl/bfcl_eval/data`, where the script puts it). The functions of six categories are pooled (deduplicated by
//! name, first definition kept); each query (the user turns of the conversation) has one answer,
//! its ground-truth function. Three rankers run through the same `SearchIndex`: the reference
//! TypeScript field-weight scan, plain BM25, and the default `Bm25fRanker`, followed by an
//! ablation of the default. With `--model DIR` (a sentence-transformers folder, see
//! `scripts/fetch-model.sh`; needs `--features embeddings`), the `HybridRanker` rows follow:
//! embeddings alone, the hybrid, and its parameters. `--set` overrides a parameter of the default ranker for tuning
//! (`k1`, `w.FIELD`, `b.FIELD`, `whole`, `coord`, `share`, `maxreq`, `relative`; FIELD is one of name, title,
//! summary, description, tags, pname, pdesc, value) and prints the result by category; `--dump`
//! prints each query's answer and top 5, for error analysis.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use mcp_tools::deferred::{
    Bm25fRanker, Candidate, Corpus, Field, Query, Ranker, Scorer, SearchDoc, SearchIndex, SearchOptions,
};
use serde_json::Value;

#[path = "support/bfcl.rs"]
mod bfcl;
use bfcl::{CATEGORIES, Dataset, load, search_doc};

// ---------------------------------------------------------------------------------------------
// The reference TypeScript scan: a query term scores the weight of the best field containing it
// (name 4, summary 3, tags 2, description 1; a prefix match half), no IDF, no length
// normalisation, the list always filled. Words are lowercase runs of letters and digits (names
// also split at camelCase); query words of one letter are skipped. The exact tokenisation of the
// original is not specified; this one lands closest to its published figures (see the notes).

struct FieldScan;

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

struct FieldScanScorer {
    /// Per document: the words of name, summary, tags, description.
    fields: Vec<[(f32, HashSet<String>); 4]>,
}

impl Ranker for FieldScan {
    fn prepare(&self, corpus: &Corpus) -> Box<dyn Scorer> {
        let fields = corpus
            .docs()
            .iter()
            .map(|d| {
                [
                    (4.0, plain_tokens(&d.name).into_iter().collect()),
                    (3.0, words(&d.summary).into_iter().collect()),
                    (2.0, d.tags.iter().flat_map(|t| words(t)).collect()),
                    (1.0, words(&d.description).into_iter().collect()),
                ]
            })
            .collect();
        Box::new(FieldScanScorer { fields })
    }
}

impl Scorer for FieldScanScorer {
    fn rank(&self, _: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let mut terms = words(query.text());
        terms.sort();
        terms.dedup();
        // Query words of two letters or more.
        terms.retain(|t| t.chars().count() >= 2);
        for (doc, fields) in self.fields.iter().enumerate() {
            let mut score = 0.0;
            for term in &terms {
                let mut best: f32 = 0.0;
                for (weight, words) in fields {
                    if words.contains(term) {
                        best = best.max(*weight);
                    } else if words.iter().any(|w| w.starts_with(term.as_str())) {
                        best = best.max(weight / 2.0);
                    }
                }
                score += best;
            }
            // Always filled: every document is a result.
            out.push(Candidate {
                doc: doc as u32,
                score,
                matched: query.coverage_terms() as u32,
                coverage: 1.0,
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Plain BM25 (k1 1.2, b 0.75) over one text: name + description + parameter names and
// descriptions, lowercase words split at camelCase, no stemming, no stop words.

struct PlainBm25 {
    /// Each document's text, from the raw function definitions.
    texts: Vec<String>,
}

fn plain_tokens(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    for c in text.chars() {
        if c.is_ascii_uppercase() && prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit()) {
            spaced.push(' ');
        }
        spaced.push(c);
        prev = Some(c);
    }
    words(&spaced)
}

fn plain_text(f: &Value) -> String {
    fn params(props: &Value, depth: usize, out: &mut String) {
        for (name, p) in props.as_object().into_iter().flatten() {
            out.push(' ');
            out.push_str(name);
            out.push(' ');
            out.push_str(p["description"].as_str().unwrap_or(""));
            if depth == 0 && p.get("properties").is_some() {
                params(&p["properties"], 1, out);
            }
        }
    }
    let mut text =
        format!("{} {}", f["name"].as_str().unwrap_or(""), f["description"].as_str().unwrap_or(""));
    params(&f["parameters"]["properties"], 0, &mut text);
    text
}

struct PlainBm25Scorer {
    postings: HashMap<String, Vec<(u32, f32)>>,
}

impl Ranker for PlainBm25 {
    fn prepare(&self, _: &Corpus) -> Box<dyn Scorer> {
        let (k1, b) = (1.2f32, 0.75f32);
        let docs: Vec<Vec<String>> = self.texts.iter().map(|t| plain_tokens(t)).collect();
        let n = docs.len() as f32;
        let avg = docs.iter().map(Vec::len).sum::<usize>() as f32 / n;
        let mut tfs: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        for (d, tokens) in docs.iter().enumerate() {
            let mut counts: HashMap<&str, f32> = HashMap::new();
            for t in tokens {
                *counts.entry(t).or_default() += 1.0;
            }
            let norm = k1 * (1.0 - b + b * tokens.len() as f32 / avg);
            for (t, tf) in counts {
                tfs.entry(t.to_owned()).or_default().push((d as u32, tf * (k1 + 1.0) / (tf + norm)));
            }
        }
        for list in tfs.values_mut() {
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            list.iter_mut().for_each(|(_, w)| *w *= idf);
        }
        Box::new(PlainBm25Scorer { postings: tfs })
    }
}

impl Scorer for PlainBm25Scorer {
    fn rank(&self, corpus: &Corpus, query: &Query<'_>, out: &mut Vec<Candidate>) {
        let mut terms = plain_tokens(query.text());
        terms.sort();
        terms.dedup();
        let mut scores = vec![0f32; corpus.len()];
        for term in &terms {
            for &(d, w) in self.postings.get(term).into_iter().flatten() {
                scores[d as usize] += w;
            }
        }
        let all = query.coverage_terms() as u32;
        out.extend(scores.iter().enumerate().filter(|(_, s)| **s > 0.0).map(|(d, &score)| Candidate {
            doc: d as u32,
            score,
            matched: all,
            coverage: 1.0,
        }));
    }
}

// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Metrics {
    at1: usize,
    at5: usize,
    at10: usize,
    rr: f64,
    empty: usize,
    missing: usize,
    micros: f64,
    /// Each query's answer rank (0 = first), if listed.
    ranks: Vec<Option<usize>>,
}

fn evaluate(data: &Dataset, docs: &[SearchDoc], ranker: &dyn Ranker, options: SearchOptions) -> Metrics {
    let index = SearchIndex::with_options(docs.to_vec(), ranker, options);
    index.wait_ready();
    let mut m = Metrics::default();
    let start = Instant::now();
    for (text, answer) in &data.queries {
        let page = index.search(text, None, docs.len(), 0);
        if page.hits.is_empty() {
            m.empty += 1;
        }
        let rank = page.hits.iter().position(|h| h.doc == *answer);
        m.ranks.push(rank);
        match rank {
            Some(rank) => {
                m.at1 += usize::from(rank < 1);
                m.at5 += usize::from(rank < 5);
                m.at10 += usize::from(rank < 10);
                m.rr += 1.0 / (rank + 1) as f64;
            }
            None => m.missing += 1,
        }
    }
    m.micros = start.elapsed().as_secs_f64() * 1e6 / data.queries.len() as f64;
    m
}

fn row(name: &str, m: &Metrics, n: usize) -> String {
    let n = n as f64;
    format!(
        "| {name} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {:.0} |",
        m.at1 as f64 / n,
        m.at5 as f64 / n,
        m.at10 as f64 / n,
        m.rr / n,
        m.empty,
        m.missing,
        m.micros
    )
}

fn field(name: &str) -> Option<Field> {
    Some(match name {
        "name" => Field::Name,
        "title" => Field::Title,
        "summary" => Field::Summary,
        "description" => Field::Description,
        "tags" => Field::Tags,
        "pname" => Field::ParamName,
        "pdesc" => Field::ParamDescription,
        "value" => Field::ParamValue,
        _ => return None,
    })
}

fn apply(ranker: &mut Bm25fRanker, options: &mut SearchOptions, setting: &str) -> Result<(), String> {
    let (key, value) =
        setting.split_once('=').ok_or_else(|| format!("--set {setting}: expected KEY=VALUE"))?;
    let v: f32 = value.parse().map_err(|_| format!("--set {setting}: not a number"))?;
    match key {
        "k1" => ranker.k1 = v,
        "whole" => ranker.whole_weight = v,
        "coord" => ranker.coordination = v,
        "share" => options.min_share = v,
        "maxreq" => options.max_required = v as usize,
        "relative" => options.relative = v,
        _ => match key.split_once('.') {
            Some(("w", f)) => ranker.weights[field(f).ok_or("unknown field")? as usize] = v,
            Some(("b", f)) => ranker.b[field(f).ok_or("unknown field")? as usize] = v,
            _ => return Err(format!("--set {setting}: unknown key")),
        },
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_retrieval: {e}");
            ExitCode::FAILURE
        }
    }
}

fn per_category(data: &Dataset, m: &Metrics) {
    println!("| category | queries | recall@1 | recall@5 | MRR |");
    println!("|---|---|---|---|---|");
    for category in CATEGORIES {
        let ranks: Vec<Option<usize>> =
            m.ranks.iter().zip(&data.categories).filter(|(_, c)| **c == category).map(|(r, _)| *r).collect();
        let k = ranks.len() as f64;
        let at = |n: usize| ranks.iter().filter(|r| r.is_some_and(|r| r < n)).count() as f64 / k;
        let mrr = ranks.iter().map(|r| r.map_or(0.0, |r| 1.0 / (r + 1) as f64)).sum::<f64>() / k;
        println!("| {category} | {} | {:.3} | {:.3} | {mrr:.3} |", ranks.len(), at(1), at(5));
    }
}

const HEADER: &str = "| ranker | recall@1 | recall@5 | recall@10 | MRR | no result | answer not listed | µs/query |\n|---|---|---|---|---|---|---|---|";

const NOTES: &str = r#"## How to read this

* *recall@k*: the share of queries whose answer is among the first k results; *MRR*: the mean of
  1/rank of the answer (0 when it is not listed). Every ranker runs through the same
  `SearchIndex::search` (whole result list, no tag filter).
* *no result*: queries that got an empty list; *answer not listed*: queries whose answer is not in
  the list at all (not matched, or dropped by the coverage threshold).
* The rows "no threshold" measure ranking alone; the rows with the threshold are what
  `search_tools` returns (with `Bm25fRanker::default()`, the default, or with
  `HybridRanker`, the ranker by meaning as well, described above). The threshold exists for model-written keyword queries
  (`"weather forecast city"`), where a tool matching one word of three is noise that sends models
  into search loops; BFCL's queries are long user requests, where it costs some recall: a request
  that shares only one word with its tool's definition is dropped. `SearchOptions` makes it
  configurable (`min_share`, `max_required`, `relative`).

## The coverage threshold (the table above)

A result must contain half of the query's distinct terms, at most 2 (`min_share`, `max_required`).
For a long query (5 terms or more, where the cap applies), a result under that count is kept when
its IDF-weighted coverage (the IDF of the query terms it contains over that of all query terms)
is at least `relative` (0.3) of the best coverage among the results that reach the count. A long
request may name its tool with one rare word (`barometer`, `derivative`); a match on one common
word (`find`, `get`) covers too little of it next to the best result and is still dropped. Short
queries keep the strict count, and when no result reaches the count nothing is returned, so a
query sharing a stop word or one word with the catalog still gets no result.

Tried for the threshold: a share of the best *score* instead of the best coverage (0.2–0.7: within
±0.001 of the coverage variant; coverage is easier to reason about); the relative rule for every
query length (recall@5 0.883 at 0.3, but it pads three-keyword queries such as
`weather forecast paris` with one-word matches); counting only the query words the catalog knows
(words no tool contains are often argument values: names, places): recall@5 +0.002 to +0.006 and
28 instead of 55 empty results, but then `unicorn weather paris` returns one-word matches.

## The two reference rows

The design note `deferred.md` measured plain BM25 at recall@1 .602, recall@5 .828, MRR .705 on the same
pool; the re-implementation here lands within a point of each (same pooling, same counts). The
TypeScript scan was measured there at .405 / .650 / .515; its tokenisation is not specified, and
the variants tried bracket those figures: every query word, names split only at punctuation:
.394 / .574 / .477; names also split at camelCase and one-letter query words skipped (the row
above): .432 / .599 / .513; words of three letters or more: .452 / .660 / .547.

## What moved the numbers (the ablation above, top to bottom)

1. **Analysis** (name split at `_ . -`, camelCase and digits; stop words; Snowball stemming;
   separate fields, flat weights): most of the gain over plain BM25 comes from stemming
   (`forecasts`/`forecast`, `calculating`/`calculate`) and from splitting names.
2. **Whole forms** (`get_weather` as a term of its own, weighted 2 in queries): −0.002 here,
   where queries are prose and rarely name a tool; kept because a model often searches by a
   name it saw (`getWeather`, `get-weather`), and then the whole form is the decisive term.
3. **Field weights and per-field length normalisation** (tuned by a coordinate search on this
   benchmark): the name weighs 3 and the description 1; the parameter descriptions little (0.4)
   and with little length normalisation (b 0.35), because long parameter lists are not less
   relevant; the summary little (0.2), since by default it repeats the description's first line.
4. **Parameter values** (`enum`, `const` and `examples` strings as a field of their own, weight 3):
   the largest single gain after analysis. Queries name values (`"Psychologist"`, `"celsius"`,
   `"large"`) that appear nowhere else in a definition.
5. **Coordination** (score × (matched terms / query terms)^0.35): favours tools that match more of
   the query rather than one word many times.

Tried and left out, each measured against the default on this benchmark (no threshold):

* Bigram bonus (adjacent query terms adjacent in a field, top 100 re-ranked): MRR −0.002 to −0.04
  depending on weight; phrases in user requests rarely follow the definitions' wording.
* Bigrams of name parts as terms (`stock price` in `get_stock_price`): ±0.002.
* Name-coverage boost (share of a tool's name parts found in the query): MRR −0.003 to −0.05.
* Query-term weighting by "nameness" (how often a term appears in names rather than in prose):
  ±0.002.
* IDF powers 0.8–1.6: ≤ 0; saturating repeated query words (BM25 k3): −0.001 to −0.004.
* Dropping digits (`4 stars`, `Hotels_4_…`): +0.002, not worth losing `s3`/`ipv4`/`base64`.
* Conversational stop words (`want`, `need`, `tell`, `help`, …): −0.003.
* String `default` values as parameter values: ±0.
* IDF-weighted coordination (score × (IDF of matched terms / IDF of the query's known
  terms)^c, instead of or with the term-count coordination): c 0.2–0.6, MRR −0.001 to −0.005.
* The name saturated on its own (BM25 per field for the name, added to the BM25F of the other
  fields): MRR −0.001 to −0.01.
* Re-tuning under the new threshold (k1 1.2–3, coordination 0.5–0.6, name 2.5–4, summary 0–1.5,
  whole forms 1): at best +0.004 MRR (k1 2.2, coordination 0.5, whole 1), within what
  tuning on the benchmark itself can find by chance; left at the old values.
* Splitting joined words by the vocabulary (`geodistance` → geo distance): about 5 failing
  queries have a joined word on the tool's side; not implemented.
* Pseudo-relevance feedback (terms of the names and summaries of the top 3–10 results): recall@10
  +0.003, but MRR −0.005 to −0.025.

What remains is mostly vocabulary mismatch (`accommodations` for a hotel search, `psychologist`
for a therapist finder, shell requests for `cmd_controller.execute`) and near-duplicate
definitions from different BFCL categories (`calculate_BMI` and `calculate_bmi`,
three "Calculate the probability of an event." tools). The first needs meaning rather than
words: `HybridRanker` (the tables above) adds sentence embeddings to this ranker and gains about
three points of recall@5 and of MRR.
"#;

fn run() -> Result<(), String> {
    let mut dir = PathBuf::from(".cache/bench/bfcl-eval-2026.3.23/whl/bfcl_eval/data");
    let mut ranker = Bm25fRanker::default();
    let mut options = SearchOptions::default();
    let mut tuning = false;
    let mut dump = false;
    let mut model: Option<PathBuf> = None;
    let mut label = String::from("bfcl-eval");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => {
                println!(
                    "Retrieval quality of deferred search on a labelled benchmark (see bench/retrieval.md).\n\
                     usage: bench_retrieval [--data DIR] [--model DIR] [--label TEXT] [--set KEY=VALUE]... [--dump]"
                );
                return Ok(());
            }
            "--data" => dir = args.next().ok_or("--data needs a directory")?.into(),
            "--dump" => dump = true,
            "--model" => model = Some(args.next().ok_or("--model needs a directory")?.into()),
            "--label" => label = args.next().ok_or("--label needs a text")?,
            "--set" => {
                apply(&mut ranker, &mut options, &args.next().ok_or("--set needs KEY=VALUE")?)?;
                tuning = true;
            }
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    let data = load(&dir)?;
    let docs: Vec<SearchDoc> = data.functions.iter().map(search_doc).collect();
    let hybrid = match &model {
        Some(model) => Some(hybrid::Hybrid::load(model)?),
        None => None,
    };
    let n = data.queries.len();
    if dump {
        // Each query's answer, top 5 and text, tab-separated, for error analysis.
        let options = if tuning { options } else { SearchOptions::no_threshold() };
        let index = SearchIndex::with_options(docs.clone(), &ranker, options);
        for (text, answer) in &data.queries {
            let top: Vec<String> =
                index.search(text, None, 5, 0).hits.iter().map(|h| h.name.to_string()).collect();
            println!("{}\t{}\t{}", docs[*answer].name, top.join(" "), text.replace(['\n', '\t'], " "));
        }
        return Ok(());
    }
    if tuning {
        println!("{HEADER}");
        let m = evaluate(&data, &docs, &ranker, options);
        println!("{}", row("tuned, with the threshold", &m, n));
        let m = evaluate(&data, &docs, &ranker, SearchOptions::no_threshold());
        println!("{}", row("tuned, no threshold", &m, n));
        per_category(&data, &m);
        return Ok(());
    }

    println!("# Deferred search: retrieval quality on the BFCL pooled set\n");
    println!(
        "`bash scripts/bench-retrieval.sh` (downloads `bfcl-eval` into `.cache/bench` and the model into"
    );
    println!(
        "`.cache/models`, then `cargo run --release --features embeddings --example bench_retrieval`).\n"
    );
    println!(
        "Data: {label}, pooled from {}: {} functions (deduplicated by name, first definition kept), \
         {} queries (the user turns of each conversation), each answered by its ground-truth function.\n",
        CATEGORIES.map(|c| format!("`{c}`")).join(", "),
        data.functions.len(),
        n
    );
    println!("## The rankers\n");
    println!("{HEADER}");
    let scan = evaluate(&data, &docs, &FieldScan, SearchOptions::no_threshold());
    println!("{}", row("reference TypeScript field-weight scan (always filled)", &scan, n));
    let plain = PlainBm25 { texts: data.functions.iter().map(plain_text).collect() };
    let m = evaluate(&data, &docs, &plain, SearchOptions::no_threshold());
    println!("{}", row("plain BM25 (k1 1.2, b .75; name + description + parameters)", &m, n));
    let default = evaluate(&data, &docs, &ranker, SearchOptions::no_threshold());
    println!("{}", row("**`Bm25fRanker::default()`**, no threshold", &default, n));
    let m = evaluate(&data, &docs, &ranker, options);
    println!(
        "{}",
        row(
            &format!(
                "**`Bm25fRanker::default()`** with the default threshold (share {}, at most {} terms, relative {})",
                options.min_share, options.max_required, options.relative
            ),
            &m,
            n
        )
    );

    if let Some(hybrid) = &hybrid {
        hybrid.headline(&data, &docs, options);
    }

    println!("\n## The coverage threshold (`Bm25fRanker::default()`)\n");
    println!("{HEADER}");
    let variants = [
        ("term count only (relative 0; the default before)", SearchOptions { relative: 0.0, ..options }),
        ("relative 0.2", SearchOptions { relative: 0.2, ..options }),
        (&format!("**relative {} (default)**", options.relative) as &str, options),
        ("relative 0.5", SearchOptions { relative: 0.5, ..options }),
        ("term count only, at most 3 terms", SearchOptions { max_required: 3, relative: 0.0, ..options }),
        ("relative at most 3 terms", SearchOptions { max_required: 3, ..options }),
    ];
    for (label, o) in variants {
        let m = evaluate(&data, &docs, &ranker, o);
        println!("{}", row(label, &m, n));
    }

    println!("\n## Ablation of the default ranker (no threshold)\n");
    println!("{HEADER}");
    let flat = Bm25fRanker {
        k1: 1.2,
        weights: [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
        b: [0.75; Field::COUNT],
        whole_weight: 0.0,
        coordination: 0.0,
    };
    let value = Field::ParamValue as usize;
    let steps = [
        ("1. analysis: split names, stop words, stemming; fields at weight 1", flat.clone()),
        ("2. + whole forms (`get_weather`) weighted 2", Bm25fRanker { whole_weight: 2.0, ..flat.clone() }),
        ("3. + tuned field weights, per-field b, k1", {
            let mut r = Bm25fRanker { coordination: 0.0, ..Bm25fRanker::default() };
            r.weights[value] = 0.0;
            r
        }),
        (
            "4. + parameter values (`enum`, `const`, `examples`)",
            Bm25fRanker { coordination: 0.0, ..Bm25fRanker::default() },
        ),
        ("5. + coordination = `Bm25fRanker::default()`", Bm25fRanker::default()),
    ];
    for (label, r) in &steps {
        let m = evaluate(&data, &docs, r, SearchOptions::no_threshold());
        println!("{}", row(label, &m, n));
    }

    println!("\n## `Bm25fRanker::default()` by category (no threshold)\n");
    per_category(&data, &default);
    match &hybrid {
        Some(hybrid) => hybrid.details(&data, &docs, options),
        None => println!("\n(No `--model`: the `HybridRanker` rows are left out.)"),
    }
    println!("\n{NOTES}");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// `HybridRanker` with a sentence-transformers model (`--model DIR`, feature `embeddings`).

#[cfg(not(feature = "embeddings"))]
mod hybrid {
    use super::*;

    pub struct Hybrid;

    impl Hybrid {
        pub fn load(_: &Path) -> Result<Hybrid, String> {
            Err("--model needs the `embeddings` feature: cargo run --release --features embeddings --example bench_retrieval".into())
        }
        pub fn headline(&self, _: &Dataset, _: &[SearchDoc], _: SearchOptions) {}
        pub fn details(&self, _: &Dataset, _: &[SearchDoc], _: SearchOptions) {}
    }
}

#[cfg(feature = "embeddings")]
mod hybrid {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use mcp_tools::deferred::{
        EmbedError, Embedder, EmbeddingRanker, HybridRanker, SentenceEmbedder, Vocabulary,
    };

    use super::*;

    /// The model, with each text's vector kept: the variants below reuse the query vectors
    /// computed by the first row instead of running the model 2,061 times per row.
    struct Memo {
        model: SentenceEmbedder,
        /// By text, and whether it was embedded as a request (with the model's query prompt).
        vectors: Mutex<HashMap<(bool, String), Vec<f32>>>,
    }

    impl Memo {
        fn through(&self, query: bool, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            let key = |text: &str| (query, text.to_owned());
            let mut vectors = self.vectors.lock().unwrap();
            let missing: Vec<&str> =
                texts.iter().copied().filter(|t| !vectors.contains_key(&key(t))).collect();
            if !missing.is_empty() {
                let fresh =
                    if query { self.model.embed_queries(&missing)? } else { self.model.embed(&missing)? };
                for (text, vector) in missing.iter().zip(fresh) {
                    vectors.insert(key(text), vector);
                }
            }
            Ok(texts.iter().map(|t| vectors[&key(t)].clone()).collect())
        }
    }

    impl Embedder for Memo {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.through(false, texts)
        }

        fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.through(true, texts)
        }

        fn vocabulary(&self) -> Option<&Vocabulary> {
            self.model.vocabulary()
        }
    }

    pub struct Hybrid {
        name: String,
        memo: Arc<Memo>,
        ranker: HybridRanker,
    }

    impl Hybrid {
        pub fn load(dir: &Path) -> Result<Hybrid, String> {
            let model = SentenceEmbedder::from_dir(dir).map_err(|e| e.to_string())?;
            let memo = Arc::new(Memo { model, vectors: Mutex::default() });
            let name = dir.file_name().map_or("the model".into(), |n| n.to_string_lossy().into_owned());
            Ok(Hybrid { name, ranker: HybridRanker::new(memo.clone()), memo })
        }

        /// The rows of the main table: the hybrid with and without the threshold.
        pub fn headline(&self, data: &Dataset, docs: &[SearchDoc], options: SearchOptions) {
            // Measured first, so that its µs/query includes running the model on each query.
            let m = evaluate(data, docs, &self.ranker, options);
            println!(
                "{}",
                row(
                    &format!(
                        "**`HybridRanker::new({})`** with the default threshold (lexical weight {}, min similarity {})",
                        self.name, self.ranker.lexical_weight, self.ranker.min_similarity
                    ),
                    &m,
                    data.queries.len()
                )
            );
            let m = evaluate(data, docs, &self.ranker, SearchOptions::no_threshold());
            println!(
                "{}",
                row(&format!("`HybridRanker::new({})`, no threshold", self.name), &m, data.queries.len())
            );
        }

        pub fn details(&self, data: &Dataset, docs: &[SearchDoc], options: SearchOptions) {
            let n = data.queries.len();
            let start = Instant::now();
            let texts: Vec<String> = docs.iter().map(mcp_tools::deferred::embedding_text).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            self.memo.model.embed(&texts).expect("the catalog embeds");
            let catalog = start.elapsed();
            println!("\n## Ranking by meaning as well: `HybridRanker` ({})\n", self.name);
            println!(
                "Embedding the {} tools' texts (`embedding_text`) takes {:.1} s on this machine; a query takes one \
                 embedding (the µs/query of the first hybrid row above) and one dot product per tool. The rows \
                 below reuse the query vectors, so their µs/query is the ranking alone.\n",
                docs.len(),
                catalog.as_secs_f64()
            );
            println!("{HEADER}");
            let mut alone = EmbeddingRanker::new(self.memo.clone());
            alone.min_similarity = f32::MIN;
            let m = evaluate(data, docs, &alone, SearchOptions::no_threshold());
            println!("{}", row("embeddings alone (`EmbeddingRanker`, no floor)", &m, n));
            let default = evaluate(data, docs, &self.ranker, options);
            println!(
                "{}",
                row("**default** (lexical weight 0.25, min similarity 0.3), threshold", &default, n)
            );
            for weight in [0.15, 0.35, 0.5] {
                let mut r = self.ranker.clone();
                r.lexical_weight = weight;
                let m = evaluate(data, docs, &r, options);
                println!("{}", row(&format!("lexical weight {weight}, threshold"), &m, n));
            }
            for floor in [0.2, 0.4, 0.5] {
                let mut r = self.ranker.clone();
                r.min_similarity = floor;
                let m = evaluate(data, docs, &r, options);
                println!("{}", row(&format!("min similarity {floor}, threshold"), &m, n));
            }
            println!("\n### `HybridRanker` by category (default threshold)\n");
            per_category(data, &default);
            println!("\n{HYBRID_NOTES}");
        }
    }

    const HYBRID_NOTES: &str = r#"### How the hybrid ranks

Each candidate scores `lexical weight · bm25f / best bm25f + (1 − lexical weight) · cosine`: the
`Bm25fRanker` score scaled to the query's best, plus the cosine similarity of the query's and the
tool's sentence embeddings. The candidates are the lexical ones plus every tool at least `min
similarity` from the query; those are exempt from the coverage threshold, the others keep it, so
a one-word match unrelated in meaning is still dropped. The embedded text of a tool is
`embedding_text`: its name as words, title, the first sentence of its description, tags and its
parameters' names (the whole definition, `full_embedding_text`, ranks a little better on BFCL and
worse on the other sets: see the table at the top). A request of several steps is also embedded
step by step (`steps`); BFCL's requests are single steps, so this rarely applies here.

The two parameters were chosen on this benchmark (the rows above: flat within ±0.005 from 0.15
to 0.35 and from 0.2 to 0.4). Embeddings alone rank worse than the lexical ranker (exact names,
rare words and argument values are where words win) but fail on different queries: requests
that share no word with their tool (`accommodation` for `Hotels_4_SearchHotel`) or paraphrase
it. What is left is mostly near-duplicate tools from different BFCL categories, which no ranker
can tell apart from the request alone."#;
}
