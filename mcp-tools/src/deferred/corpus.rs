//! The documents of an index, analyzed once: vocabulary, per-field token sequences and lengths,
//! and posting lists. Every [`Ranker`](super::Ranker) reads the same [`Corpus`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use serde_json::Value;

use super::analyze::{Analyzer, Piece, Splitter};
use super::rewrite::{self, Rewriter};
use super::spell::{self, Vocabulary};

/// A term's number in the [`Corpus`] vocabulary.
pub type TermId = u32;

/// A fast, deterministic hasher for short strings (FxHash).
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        while bytes.len() >= 8 {
            self.add(u64::from_le_bytes(bytes[..8].try_into().unwrap()));
            bytes = &bytes[8..];
        }
        if bytes.len() >= 4 {
            self.add(u32::from_le_bytes(bytes[..4].try_into().unwrap()) as u64);
            bytes = &bytes[4..];
        }
        for &b in bytes {
            self.add(b as u64);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// What the index knows of one tool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchDoc {
    /// The tool's name (unique in a catalog).
    pub name: String,
    /// Its human-readable title.
    pub title: Option<String>,
    /// A one-line summary (often the description's first line).
    pub summary: String,
    /// The full description.
    pub description: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// `(name, description)` of each parameter; see [`SearchDoc::schema_params`].
    pub params: Vec<(String, String)>,
    /// The words parameters take (their `enum` values); see [`SearchDoc::schema_values`].
    pub values: Vec<String>,
    /// Whether the tool only reads, when its annotations say: its `readOnlyHint`, or `false` for
    /// a tool with a `destructiveHint` (a hint that only a tool that changes things carries);
    /// `None` when they do not say. A request that asks for the other kind ranks it lower (see
    /// [`SearchOptions::intent_penalty`](super::SearchOptions::intent_penalty)).
    pub read_only: Option<bool>,
}

impl SearchDoc {
    /// A document of a name and a description, with no summary, title, tags or parameters.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> SearchDoc {
        SearchDoc { name: name.into(), description: description.into(), ..SearchDoc::default() }
    }

    /// A document whose parameters and their values are read from a JSON input schema
    /// (see [`SearchDoc::schema_params`] and [`SearchDoc::schema_values`]).
    pub fn from_schema(
        name: impl Into<String>,
        title: Option<String>,
        summary: impl Into<String>,
        description: impl Into<String>,
        tags: Vec<String>,
        input_schema: &Value,
    ) -> SearchDoc {
        SearchDoc {
            name: name.into(),
            title,
            summary: summary.into(),
            description: description.into(),
            tags,
            params: SearchDoc::schema_params(input_schema),
            values: SearchDoc::schema_values(input_schema),
            read_only: None,
        }
    }

    /// The document a deferred server indexes for `tool` (its title, or its annotations' title if
    /// it has none, as clients show it; summary, which defaults to the description's first
    /// line; description, tags, input schema and annotations' `readOnlyHint` or
    /// `destructiveHint`): to evaluate a search over a catalog without serving it.
    pub fn from_tool(tool: &crate::model::tool::Tool) -> SearchDoc {
        SearchDoc::indexed(
            tool.name.clone(),
            tool.title.clone(),
            &tool.annotations,
            tool.summary.clone().unwrap_or_else(|| crate::registry::build::first_line(&tool.description)),
            tool.description.clone(),
            tool.tags.clone(),
            &tool.input_schema,
        )
    }

    /// The document of a tool as a deferred server indexes it (see [`from_tool`](Self::from_tool)).
    pub(crate) fn indexed(
        name: String,
        title: Option<String>,
        annotations: &crate::model::tool::Annotations,
        summary: String,
        description: String,
        tags: Vec<String>,
        input_schema: &Value,
    ) -> SearchDoc {
        let title = title.or_else(|| annotations.title.clone());
        SearchDoc {
            read_only: annotations.read_only_hint.or(annotations.destructive_hint.map(|_| false)),
            ..SearchDoc::from_schema(name, title, summary, description, tags, input_schema)
        }
    }

    /// The `(name, description)` pairs of a JSON schema's `properties`, at the root and one level
    /// down (properties of an object property, or of the items of an array property). A missing
    /// description is empty.
    pub fn schema_params(schema: &Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        walk_properties(schema, 0, &mut |name, prop| {
            let description = prop.get("description").and_then(Value::as_str).unwrap_or("");
            out.push((name.to_owned(), description.to_owned()));
        });
        out
    }

    /// The string values that the properties of [`schema_params`](SearchDoc::schema_params) may
    /// take, from `enum` and `const` (of the property or of its array items), and `examples`:
    /// words a query may use (`"celsius"`, `"psychologist"`).
    pub fn schema_values(schema: &Value) -> Vec<String> {
        let mut out = Vec::new();
        walk_properties(schema, 0, &mut |_, prop| {
            for p in [Some(prop), prop.get("items")].into_iter().flatten() {
                let listed = ["enum", "examples"].into_iter().filter_map(|k| p.get(k)?.as_array()).flatten();
                for v in listed.chain(p.get("const")) {
                    if let Some(v) = v.as_str() {
                        out.push(v.to_owned());
                    }
                }
            }
        });
        out
    }
}

/// Calls `f` with each property of `schema`, at the root and one level down.
fn walk_properties(schema: &Value, depth: usize, f: &mut dyn FnMut(&str, &Value)) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, prop) in props {
        f(name, prop);
        if depth == 0 {
            if prop.get("properties").is_some() {
                walk_properties(prop, 1, f);
            } else if let Some(items) = prop.get("items") {
                walk_properties(items, 1, f);
            }
        }
    }
}

/// The fields of a document, each weighted and length-normalised on its own by rankers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The tool's name, split into parts (plus its whole form).
    Name,
    /// The title.
    Title,
    /// The summary.
    Summary,
    /// The description.
    Description,
    /// The tags.
    Tags,
    /// The parameters' names.
    ParamName,
    /// The parameters' descriptions.
    ParamDescription,
    /// The values parameters take (`enum`, `const`, `examples`).
    ParamValue,
}

impl Field {
    /// How many fields there are.
    pub const COUNT: usize = 8;
    /// Every field, in order (`field as usize` is its position).
    pub const ALL: [Field; Field::COUNT] = [
        Field::Name,
        Field::Title,
        Field::Summary,
        Field::Description,
        Field::Tags,
        Field::ParamName,
        Field::ParamDescription,
        Field::ParamValue,
    ];
}

/// One document containing one term: the document and the term's count in each field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    /// The document's position in [`Corpus::docs`].
    pub doc: u32,
    /// The term's count in each field (saturating at 255), by `Field as usize`.
    pub tf: [u8; Field::COUNT],
}

const STOP: TermId = TermId::MAX;

/// The analyzed documents of an index, shared by every ranker.
pub struct Corpus {
    docs: Vec<SearchDoc>,
    analyzer: Analyzer,
    /// Term text → id; `terms[id]` is the text.
    vocab: FxMap<Box<str>, TermId>,
    terms: Vec<Box<str>>,
    /// Lowercase word part → its term (or `STOP`), so that each distinct part is stemmed once.
    parts: FxMap<Box<str>, TermId>,
    /// Postings of term `t`: `postings[offsets[t]..offsets[t + 1]]`, by ascending document.
    offsets: Vec<u32>,
    postings: Vec<Posting>,
    /// The part terms of each document field, in order (no stop words, no whole forms):
    /// field `f` of document `d` is `sequence[spans[d * COUNT + f]..spans[d * COUNT + f + 1]]`.
    spans: Vec<u32>,
    sequence: Vec<TermId>,
    /// Each document's field lengths (part terms plus whole forms).
    lengths: Vec<[u16; Field::COUNT]>,
    avg_lengths: [f32; Field::COUNT],
    /// Each document's name, normalised as a whole form (`get_user_by_id`).
    name_keys: Vec<Box<str>>,
    /// Built at the first query with a possible abbreviation.
    rewriter: OnceLock<Rewriter>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("docs", &self.docs.len())
            .field("terms", &self.terms.len())
            .field("postings", &self.postings.len())
            .finish_non_exhaustive()
    }
}

impl Corpus {
    /// Analyzes `docs`.
    pub fn new(docs: Vec<SearchDoc>) -> Corpus {
        let mut builder = Builder::default();
        let mut spans = Vec::with_capacity(docs.len() * Field::COUNT + 1);
        let mut lengths = Vec::with_capacity(docs.len());
        let mut name_keys = Vec::with_capacity(docs.len());
        spans.push(0);
        for (d, doc) in docs.iter().enumerate() {
            builder.doc = d as u32;
            builder.length = [0; Field::COUNT];
            for field in Field::ALL {
                let mut add = |text: &str| builder.add(text, field);
                match field {
                    Field::Name => add(&doc.name),
                    Field::Title => add(doc.title.as_deref().unwrap_or("")),
                    Field::Summary => add(&doc.summary),
                    Field::Description => add(&doc.description),
                    Field::Tags => doc.tags.iter().for_each(|t| add(t)),
                    Field::ParamName => doc.params.iter().for_each(|(n, _)| add(n)),
                    Field::ParamDescription => doc.params.iter().for_each(|(_, t)| add(t)),
                    Field::ParamValue => doc.values.iter().for_each(|v| add(v)),
                }
                spans.push(builder.sequence.len() as u32);
            }
            lengths.push(builder.length);
            name_keys.push(Box::from(builder.name_key.as_str()));
            builder.name_key.clear();
        }
        // Postings by term: a counting sort of the (term, posting) records, which are in document
        // order, so each term's postings stay in document order.
        let vocabulary = builder.terms.len();
        let mut offsets = vec![0u32; vocabulary + 1];
        for (term, _) in &builder.records {
            offsets[*term as usize + 1] += 1;
        }
        for t in 0..vocabulary {
            offsets[t + 1] += offsets[t];
        }
        let mut next: Vec<u32> = offsets[..vocabulary].to_vec();
        let mut postings = vec![Posting { doc: 0, tf: [0; Field::COUNT] }; builder.records.len()];
        for (term, posting) in &builder.records {
            let slot = &mut next[*term as usize];
            postings[*slot as usize] = *posting;
            *slot += 1;
        }
        let mut avg_lengths = [0f32; Field::COUNT];
        if !docs.is_empty() {
            for (f, avg) in avg_lengths.iter_mut().enumerate() {
                let sum: f64 = lengths.iter().map(|l| l[f] as f64).sum();
                *avg = (sum / docs.len() as f64) as f32;
            }
        }
        Corpus {
            rewriter: OnceLock::new(),
            docs,
            analyzer: builder.analyzer,
            vocab: builder.vocab,
            terms: builder.terms,
            parts: builder.parts,
            offsets,
            postings,
            spans,
            sequence: builder.sequence,
            lengths,
            avg_lengths,
            name_keys,
        }
    }

    /// The documents, in the order given to the index.
    pub fn docs(&self) -> &[SearchDoc] {
        &self.docs
    }

    /// How many documents there are.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether there is no document.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// How many distinct terms there are; term ids are `0..vocabulary_len()`.
    pub fn vocabulary_len(&self) -> usize {
        self.terms.len()
    }

    /// The id of an analyzed term (a stem, or a whole form).
    pub fn term_id(&self, term: &str) -> Option<TermId> {
        self.vocab.get(term).copied()
    }

    /// The text of a term.
    pub fn term(&self, id: TermId) -> &str {
        &self.terms[id as usize]
    }

    /// The documents containing a term, by ascending document.
    pub fn postings(&self, id: TermId) -> &[Posting] {
        let t = id as usize;
        &self.postings[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }

    /// The number of postings over all terms.
    pub fn postings_len(&self) -> usize {
        self.postings.len()
    }

    /// How many documents contain a term.
    pub fn doc_freq(&self, id: TermId) -> usize {
        let t = id as usize;
        (self.offsets[t + 1] - self.offsets[t]) as usize
    }

    /// The part terms of a document's field, in order (stop words and whole forms left out).
    pub fn field_terms(&self, doc: usize, field: Field) -> &[TermId] {
        let i = doc * Field::COUNT + field as usize;
        &self.sequence[self.spans[i] as usize..self.spans[i + 1] as usize]
    }

    /// The number of terms (part terms and whole forms) in a document's field.
    pub fn field_len(&self, doc: usize, field: Field) -> usize {
        self.lengths[doc][field as usize] as usize
    }

    /// The average of [`field_len`](Corpus::field_len) over the documents.
    pub fn avg_field_len(&self, field: Field) -> f32 {
        self.avg_lengths[field as usize]
    }

    /// A document's name as a whole form: lowercase parts joined by `_`.
    pub fn name_key(&self, doc: usize) -> &str {
        &self.name_keys[doc]
    }

    /// `text` with each abbreviation in capitals followed by the phrase it stands for in this
    /// catalog (`approve PR 88` → `approve PR (pull request) 88`): two or three capitals (maybe
    /// with a plural `s`) whose phrase of as many words is spelt out beside them in at least two
    /// documents, and in at least half of the documents that use the abbreviation. `None` when
    /// nothing changes. [`SearchIndex`](super::SearchIndex) searches the rewritten query, so both
    /// the words and the embedding see the phrase. What the catalog spells out is learned at the
    /// first query with a possible abbreviation.
    pub fn rewrite(&self, text: &str) -> Option<String> {
        rewrite::rewrite(text, || {
            self.rewriter.get_or_init(|| {
                Rewriter::new(self.docs.iter().map(|d| {
                    rewrite::Document {
                        prose: [d.title.as_deref().unwrap_or(""), &d.summary, &d.description]
                            .into_iter()
                            .chain(d.params.iter().map(|(_, t)| t.as_str()))
                            .collect(),
                        other: [d.name.as_str()]
                            .into_iter()
                            .chain(d.tags.iter().chain(&d.values).map(String::as_str))
                            .chain(d.params.iter().map(|(n, _)| n.as_str()))
                            .collect(),
                    }
                }))
            })
        })
    }

    /// `text` with each misspelt word replaced by the word one edit away (a letter deleted or
    /// inserted, or two neighbours swapped: `lable` → `label`, `notifcations` →
    /// `notifications`); `None` when nothing changes. A word is corrected only when it is of 5
    /// to 24 lowercase ASCII letters, stands alone (not part of an identifier, path or handle:
    /// `acme/lable`, `lable-bot`), and neither this catalog nor `vocabulary` knows it or a word
    /// of its stem (`cached` is known when either has `cache`); it becomes the catalog word one
    /// edit away that the most documents use. Names (capitalised, or with no catalog word one
    /// edit away) stay.
    /// [`SearchIndex`](super::SearchIndex) searches the corrected query when its ranker has a
    /// vocabulary ([`Scorer::vocabulary`](super::Scorer::vocabulary)), before spelling out
    /// abbreviations ([`rewrite`](Corpus::rewrite)).
    pub fn correct(&self, text: &str, vocabulary: &Vocabulary) -> Option<String> {
        spell::correct(
            text,
            |word| {
                if self.parts.contains_key(word) {
                    return true;
                }
                // A word of 5 letters or more: `part_term` is its stem, or `None` for a stop word.
                match self.analyzer.part_term(word) {
                    Some(stem) => self.term_id(&stem).is_some() || vocabulary.knows_stemmed(word, &stem),
                    None => vocabulary.knows(word),
                }
            },
            |word| match self.parts.get(word) {
                Some(&STOP) | None => None,
                Some(&id) => Some(self.doc_freq(id)),
            },
        )
    }

    /// Analyzes a query against this corpus.
    pub fn query<'q>(&self, text: &'q str) -> Query<'q> {
        let mut terms: Vec<QueryTerm> = Vec::new();
        // Where each term is in `terms`: a query with many distinct words stays linear.
        let mut positions: FxMap<String, usize> = FxMap::default();
        let mut sequence = Vec::new();
        let mut words = 0usize;
        let mut splitter = Splitter::default();
        let mut add =
            |text: Cow<'_, str>, id: Option<TermId>, whole: bool, terms: &mut Vec<QueryTerm>| match positions
                .get(&*text)
            {
                Some(&p) => {
                    terms[p].count += 1;
                    p
                }
                None => {
                    positions.insert(text.to_string(), terms.len());
                    terms.push(QueryTerm { id, text: text.into_owned(), whole, count: 1 });
                    terms.len() - 1
                }
            };
        splitter.split(text, |piece| match piece {
            Piece::Part(part) => {
                words += 1;
                let (stem, id) = match self.parts.get(part) {
                    Some(&STOP) => return,
                    Some(&id) => (Cow::Borrowed(self.term(id)), Some(id)),
                    None => match self.analyzer.part_term(part) {
                        None => return,
                        Some(stem) => {
                            let id = self.term_id(&stem);
                            (stem, id)
                        }
                    },
                };
                let position = add(stem, id, false, &mut terms);
                sequence.push(position);
            }
            Piece::Whole(whole) => {
                let id = self.term_id(whole);
                add(Cow::Borrowed(whole), id, true, &mut terms);
            }
        });
        let name_key = name_key(text.trim());
        Query { text, terms, sequence, name_key, words }
    }
}

/// `name` as a whole form: its lowercase parts joined by `_`.
fn name_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    let mut splitter = Splitter::default();
    splitter.split(name, |piece| {
        if let Piece::Part(p) = piece {
            if !key.is_empty() {
                key.push('_');
            }
            key.push_str(p);
        }
    });
    key
}

#[derive(Default)]
struct Builder {
    analyzer: Analyzer,
    splitter: Splitter,
    vocab: FxMap<Box<str>, TermId>,
    terms: Vec<Box<str>>,
    parts: FxMap<Box<str>, TermId>,
    sequence: Vec<TermId>,
    /// The document being added, its field lengths and its name key.
    doc: u32,
    length: [u16; Field::COUNT],
    name_key: String,
    /// One record per (term, document), in document order.
    records: Vec<(TermId, Posting)>,
    /// Per term: `(document + 1, index in records)` of its latest record.
    latest: Vec<(u32, u32)>,
}

impl Builder {
    fn intern(vocab: &mut FxMap<Box<str>, TermId>, terms: &mut Vec<Box<str>>, term: &str) -> TermId {
        if let Some(&id) = vocab.get(term) {
            return id;
        }
        let id = terms.len() as TermId;
        terms.push(term.into());
        vocab.insert(term.into(), id);
        id
    }

    fn add(&mut self, text: &str, field: Field) {
        let Builder {
            analyzer,
            splitter,
            vocab,
            terms,
            parts,
            sequence,
            doc,
            length,
            name_key,
            records,
            latest,
        } = self;
        let f = field as usize;
        let mut count = |id: TermId| {
            let t = id as usize;
            if latest.len() <= t {
                latest.resize(t + 1, (0, 0));
            }
            let (seen, index) = &mut latest[t];
            if *seen != *doc + 1 {
                *seen = *doc + 1;
                *index = records.len() as u32;
                records.push((id, Posting { doc: *doc, tf: [0; Field::COUNT] }));
            }
            let tf = &mut records[*index as usize].1.tf[f];
            *tf = tf.saturating_add(1);
            length[f] = length[f].saturating_add(1);
        };
        splitter.split(text, |piece| match piece {
            Piece::Part(part) => {
                if field == Field::Name {
                    if !name_key.is_empty() {
                        name_key.push('_');
                    }
                    name_key.push_str(part);
                }
                let id = match parts.get(part) {
                    Some(&id) => id,
                    None => {
                        let id = match analyzer.part_term(part) {
                            None => STOP,
                            Some(stem) => Builder::intern(vocab, terms, &stem),
                        };
                        parts.insert(part.into(), id);
                        id
                    }
                };
                if id != STOP {
                    sequence.push(id);
                    count(id);
                }
            }
            Piece::Whole(whole) => count(Builder::intern(vocab, terms, whole)),
        });
    }
}

/// One distinct term of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryTerm {
    /// Its id, or `None` when no document contains it.
    pub id: Option<TermId>,
    /// The analyzed term (a stem, or a whole form).
    pub text: String,
    /// Whether it is the whole form of a word of several parts (`get_weather`), which counts as a
    /// bonus rather than towards coverage.
    pub whole: bool,
    /// How many times it occurs in the query.
    pub count: u32,
}

/// A query, analyzed like the documents.
#[derive(Clone, Debug)]
pub struct Query<'q> {
    text: &'q str,
    terms: Vec<QueryTerm>,
    /// Part terms in query order, as positions in `terms`.
    sequence: Vec<usize>,
    name_key: String,
    words: usize,
}

impl<'q> Query<'q> {
    /// The query as given.
    pub fn text(&self) -> &'q str {
        self.text
    }

    /// Its distinct terms, in order of first occurrence.
    pub fn terms(&self) -> &[QueryTerm] {
        &self.terms
    }

    /// Its part terms in query order (repeats included), as indices into [`terms`](Query::terms).
    pub fn sequence(&self) -> &[usize] {
        &self.sequence
    }

    /// How many distinct part terms (not whole forms) it has: what coverage is measured against.
    pub fn coverage_terms(&self) -> usize {
        self.terms.iter().filter(|t| !t.whole).count()
    }

    /// The query as a whole form (lowercase parts joined by `_`), compared with
    /// [`Corpus::name_key`] for exact name matches.
    pub fn name_key(&self) -> &str {
        &self.name_key
    }

    /// Whether the query had no word at all (only spaces and punctuation).
    pub fn is_blank(&self) -> bool {
        self.words == 0
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn params_from_schema_root_and_one_level() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city"},
                "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "filter": {
                    "type": "object",
                    "properties": {
                        "since": {"type": "string", "description": "Start date"},
                        "deep": {"type": "object", "properties": {"hidden": {"type": "string"}}}
                    }
                },
                "tags": {"type": "array", "items": {"type": "object", "properties": {"label": {}}}}
            }
        });
        let params = SearchDoc::schema_params(&schema);
        let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["city", "units", "filter", "since", "deep", "tags", "label"]);
        assert_eq!(params[0].1, "The city");
        assert_eq!(params[1].1, "");
        assert_eq!(SearchDoc::schema_values(&schema), ["celsius", "fahrenheit"]);
        assert!(SearchDoc::schema_params(&json!({"type": "object"})).is_empty());
    }

    #[test]
    fn corpus_fields_and_postings() {
        let corpus = Corpus::new(vec![
            SearchDoc::new("get_weather", "Current weather of a city."),
            SearchDoc { tags: vec!["geo".into()], ..SearchDoc::new("geocode", "Coordinates of a place.") },
        ]);
        let weather = corpus.term_id("weather").unwrap();
        assert_eq!(corpus.postings(weather).len(), 1);
        let p = corpus.postings(weather)[0];
        assert_eq!((p.doc, p.tf[Field::Name as usize], p.tf[Field::Description as usize]), (0, 1, 1));
        assert!(corpus.term_id("get_weather").is_some());
        assert_eq!(corpus.field_terms(0, Field::Description).len(), 3); // current weather city
        assert_eq!(corpus.field_len(0, Field::Name), 3); // get weather get_weather
        assert_eq!(corpus.avg_field_len(Field::Tags), 0.5);
        assert_eq!(corpus.name_key(0), "get_weather");
        let q = corpus.query("What's the weather in getWeather?");
        let texts: Vec<&str> = q.terms().iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["weather", "get", "get_weather"]);
        assert_eq!(q.terms()[0].count, 2);
        assert_eq!(q.coverage_terms(), 2);
        assert!(corpus.query(" ?! ").is_blank());
        assert!(!corpus.query("the").is_blank());
    }
}
