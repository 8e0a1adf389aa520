//! The BFCL pooled retrieval set (shared by `bench_retrieval` and `bench_sets`): the functions of
//! six `bfcl-eval` categories, deduplicated by name, each query answered by its ground-truth
//! function.

use std::collections::HashMap;
use std::path::Path;

use mcp_tools::deferred::SearchDoc;
use serde_json::Value;

pub const CATEGORIES: [&str; 6] =
    ["simple_python", "multiple", "live_simple", "live_multiple", "simple_java", "simple_javascript"];

#[allow(dead_code)] // `categories` is read by bench_retrieval only.
pub struct Dataset {
    pub functions: Vec<Value>,
    pub queries: Vec<(String, usize)>,
    /// Each query's category.
    pub categories: Vec<&'static str>,
}

fn read_lines(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{}: {e}", path.display())))
        .collect()
}

pub fn load(dir: &Path) -> Result<Dataset, String> {
    let mut functions = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut pending = Vec::new();
    let mut categories = Vec::new();
    for category in CATEGORIES {
        let questions = read_lines(&dir.join(format!("BFCL_v4_{category}.json")))?;
        let answers = read_lines(&dir.join(format!("possible_answer/BFCL_v4_{category}.json")))?;
        let answers: HashMap<&str, &Value> =
            answers.iter().filter_map(|a| Some((a["id"].as_str()?, a))).collect();
        for q in &questions {
            for f in q["function"].as_array().into_iter().flatten() {
                let name = f["name"].as_str().ok_or("a function without a name")?;
                if !by_name.contains_key(name) {
                    by_name.insert(name.to_owned(), functions.len());
                    functions.push(f.clone());
                }
            }
            let id = q["id"].as_str().ok_or("a question without an id")?;
            let answer = answers.get(id).ok_or_else(|| format!("no answer for {id}"))?;
            let truth =
                answer["ground_truth"][0].as_object().ok_or_else(|| format!("{id}: no ground truth"))?;
            let name = truth.keys().next().ok_or_else(|| format!("{id}: empty ground truth"))?.clone();
            let turns = q["question"][0].as_array().ok_or_else(|| format!("{id}: no question"))?;
            let text: Vec<&str> =
                turns.iter().filter(|t| t["role"] == "user").filter_map(|t| t["content"].as_str()).collect();
            pending.push((text.join(" "), name));
            categories.push(category);
        }
    }
    let queries = pending
        .into_iter()
        .map(|(text, name)| {
            let answer =
                *by_name.get(&name).ok_or_else(|| format!("answer {name} is not a pooled function"))?;
            Ok((text, answer))
        })
        .collect::<Result<_, String>>()?;
    Ok(Dataset { functions, queries, categories })
}

/// The summary a server derives: the description's first line, cut at 160 characters.
fn summary(description: &str) -> String {
    description.lines().next().unwrap_or("").chars().take(160).collect()
}

pub fn search_doc(f: &Value) -> SearchDoc {
    let description = f["description"].as_str().unwrap_or("");
    SearchDoc::from_schema(
        f["name"].as_str().unwrap_or(""),
        None,
        summary(description),
        description,
        Vec::new(),
        &f["parameters"],
    )
}
