//! The search index: ranking, coverage threshold, tag filter, pagination, suggestions.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::corpus::{Corpus, SearchDoc};
use super::intent::asks_to_read;
use super::rank::{Candidate, Meaning, Ranker, Scorer};

/// How strict a search is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchOptions {
    /// The share of a query's distinct terms ([`Query::coverage_terms`](super::Query::coverage_terms))
    /// that a result must contain, rounded up: with 0.5, one of 1–2 terms, two of 3–4, three of
    /// 5–6 (up to [`max_required`](SearchOptions::max_required)). Results under it are dropped
    /// rather than padding the list; 0 keeps every candidate.
    pub min_share: f32,
    /// However long the query, no more than this many matching terms are required: a long
    /// sentence often names its tool with only a couple of its words. The default, 2, asks one
    /// matching term of a 1–2-term query and two of any longer one.
    pub max_required: usize,
    /// For a long query (one where [`max_required`](SearchOptions::max_required) caps the share),
    /// a result with fewer matching terms than required is kept when it covers at least this
    /// share of what the best-covering result covers, coverage being weighted by IDF
    /// ([`Candidate::coverage`](super::Candidate::coverage)): a request of ten words may name its
    /// tool with one rare word, while a match on one common word covers too little of it. Short
    /// queries keep the strict count, and no result is kept unless one result reaches the count.
    /// 0 turns it off.
    pub relative: f32,
    /// How much lower a result ranks when what it does, by its annotations
    /// ([`SearchDoc::read_only`]), is not what the request asks for ([`asks_to_read`]): a tool
    /// that changes things for a question (`was acme/web#77 merged?`), a read-only tool for a
    /// change (`add jdoe to acme/web`). Its score is multiplied by `1 − intent_penalty`; results
    /// whose annotations do not say, and requests that do not say, are left alone. Default 0.3;
    /// 0 turns it off.
    ///
    /// [`asks_to_read`]: super::asks_to_read
    pub intent_penalty: f32,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { min_share: 0.5, max_required: 2, relative: 0.3, intent_penalty: 0.3 }
    }
}

impl SearchOptions {
    /// No threshold: every candidate of the ranker is a result (ranked as by default).
    pub fn no_threshold() -> Self {
        SearchOptions { min_share: 0.0, max_required: 0, relative: 0.0, ..SearchOptions::default() }
    }

    /// The share of `terms` distinct query terms, rounded up, before the cap.
    fn share(&self, terms: usize) -> usize {
        (self.min_share.clamp(0.0, 1.0) * terms as f32 - 1e-4).ceil().max(0.0) as usize
    }

    /// Whether [`relative`](SearchOptions::relative) applies to a query of `terms` distinct
    /// terms: when [`max_required`](SearchOptions::max_required) caps the share.
    pub fn is_long(&self, terms: usize) -> bool {
        self.share(terms).min(terms) > self.max_required
    }

    /// How many of `terms` distinct query terms a result must contain.
    pub fn required(&self, terms: usize) -> usize {
        self.share(terms).min(self.max_required).min(terms)
    }
}

/// One result.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The document's position in the `docs` given to [`SearchIndex::build`].
    pub doc: usize,
    /// Its name.
    pub name: Arc<str>,
    /// Its score (0 when listing).
    pub score: f32,
}

/// One page of results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchPage {
    /// The hits of this page, best first (or in name order when listing).
    pub hits: Vec<Hit>,
    /// How many results there are over all pages.
    pub total: usize,
    /// The offset of the next page, if there are more results.
    pub next_offset: Option<usize>,
    /// The query as it was searched when misspelt words of it were corrected (`slap a label on
    /// #88` for `slap a lable on #88`; see [`Corpus::correct`]); `None` when it was searched as
    /// written.
    pub searched: Option<String>,
}

/// A searchable catalog of tools. Built once; a changed catalog builds a new index.
pub struct SearchIndex {
    corpus: Corpus,
    scorer: Box<dyn Scorer>,
    options: SearchOptions,
    names: Vec<Arc<str>>,
    /// Documents in name order, and each document's place in that order.
    by_name: Vec<u32>,
    name_rank: Vec<u32>,
    /// Documents by name key (lowercase parts joined by `_`), then name.
    by_key: Vec<u32>,
    tags: Vec<(String, usize)>,
    /// Whether any document's annotations say whether it only reads.
    annotated: bool,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("docs", &self.names.len())
            .field("options", &self.options)
            .finish()
    }
}

/// The order of ranked results.
type Order<'a> = dyn Fn(&Ranked, &Ranked) -> Ordering + 'a;

struct Ranked {
    doc: u32,
    score: f32,
    exact: bool,
}

impl SearchIndex {
    /// Analyzes `docs` and prepares `ranker` for them, with the default [`SearchOptions`].
    pub fn build(docs: Vec<SearchDoc>, ranker: &dyn Ranker) -> SearchIndex {
        SearchIndex::with_options(docs, ranker, SearchOptions::default())
    }

    /// Analyzes `docs` and prepares `ranker` for them.
    pub fn with_options(docs: Vec<SearchDoc>, ranker: &dyn Ranker, options: SearchOptions) -> SearchIndex {
        let names: Vec<Arc<str>> = docs.iter().map(|d| Arc::from(d.name.as_str())).collect();
        let mut tag_counts: BTreeMap<&str, usize> = BTreeMap::new();
        for doc in &docs {
            for tag in &doc.tags {
                *tag_counts.entry(tag).or_default() += 1;
            }
        }
        let tags = tag_counts.into_iter().map(|(t, n)| (t.to_owned(), n)).collect();
        let annotated = docs.iter().any(|d| d.read_only.is_some());
        let corpus = Corpus::new(docs);
        let scorer = ranker.prepare(&corpus);
        let mut by_name: Vec<u32> = (0..names.len() as u32).collect();
        by_name.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize]).then(a.cmp(&b)));
        let mut name_rank = vec![0u32; names.len()];
        for (rank, &doc) in by_name.iter().enumerate() {
            name_rank[doc as usize] = rank as u32;
        }
        let mut by_key = by_name.clone();
        by_key.sort_by(|&a, &b| corpus.name_key(a as usize).cmp(corpus.name_key(b as usize)));
        SearchIndex { corpus, scorer, options, names, by_name, name_rank, by_key, tags, annotated }
    }

    /// The analyzed documents.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// How many documents there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there is no document.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// A document by position.
    pub fn doc(&self, doc: usize) -> &SearchDoc {
        &self.corpus.docs()[doc]
    }

    /// The position of the document of this exact name.
    pub fn position(&self, name: &str) -> Option<usize> {
        let i = self.by_name.partition_point(|&d| &*self.names[d as usize] < name);
        self.by_name.get(i).map(|&d| d as usize).filter(|&d| &*self.names[d] == name)
    }

    /// The documents whose name key is `key`, in name order.
    fn with_name_key(&self, key: &str) -> &[u32] {
        if key.is_empty() {
            return &[];
        }
        let start = self.by_key.partition_point(|&d| self.corpus.name_key(d as usize) < key);
        let len =
            self.by_key[start..].iter().take_while(|&&d| self.corpus.name_key(d as usize) == key).count();
        &self.by_key[start..start + len]
    }

    /// Every tag in use, sorted, with how many documents carry it.
    pub fn tags(&self) -> &[(String, usize)] {
        &self.tags
    }

    /// Whether searching runs a model ([`Scorer::is_blocking`]).
    pub fn is_blocking(&self) -> bool {
        self.scorer.is_blocking()
    }

    /// Whether the ranker is ready ([`Scorer::is_ready`]): `false` while a ranker by meaning
    /// embeds the catalog in the background, when searches rank by words alone (or, with a
    /// second text a tool, `HybridRanker::detail_weight`, by the first texts' vectors once they
    /// are embedded).
    pub fn is_ready(&self) -> bool {
        self.scorer.is_ready()
    }

    /// Blocks until the ranker is ready ([`Scorer::wait_ready`]), e.g. before measuring it.
    pub fn wait_ready(&self) {
        self.scorer.wait_ready();
    }

    /// Whether queries rank by meaning now ([`Scorer::meaning`]).
    pub fn meaning(&self) -> Meaning {
        self.scorer.meaning()
    }

    /// Waits at most `timeout` for a ranker by meaning's first vectors
    /// ([`Scorer::wait_for_meaning`]).
    pub fn wait_for_meaning(&self, timeout: std::time::Duration) -> Meaning {
        self.scorer.wait_for_meaning(timeout)
    }

    /// The options in force.
    pub fn options(&self) -> SearchOptions {
        self.options
    }

    fn has_tag(&self, doc: u32, tags: Option<&[String]>) -> bool {
        match tags {
            None | Some([]) => true,
            Some(wanted) => self.corpus.docs()[doc as usize]
                .tags
                .iter()
                .any(|t| wanted.iter().any(|w| w.eq_ignore_ascii_case(t))),
        }
    }

    /// Sorts the page `offset..offset + limit` of `ranked` into place and returns it.
    fn page(
        &self,
        mut ranked: Vec<Ranked>,
        limit: usize,
        offset: usize,
        order: Option<&Order<'_>>,
    ) -> SearchPage {
        let total = ranked.len();
        let end = offset.saturating_add(limit).min(total);
        if offset >= end {
            return SearchPage { hits: Vec::new(), total, next_offset: None, searched: None };
        }
        if let Some(order) = order {
            if end < total {
                ranked.select_nth_unstable_by(end - 1, order);
                ranked.truncate(end);
            }
            ranked.sort_unstable_by(order);
        }
        let hits = ranked[offset..end]
            .iter()
            .map(|r| Hit { doc: r.doc as usize, name: self.names[r.doc as usize].clone(), score: r.score })
            .collect();
        SearchPage { hits, total, next_offset: (end < total).then_some(end), searched: None }
    }

    /// Searches. A blank query (no word) lists every document, by name; otherwise documents are
    /// ranked, those containing too few of the query's terms (see [`SearchOptions`]) are dropped,
    /// and the rest come best first (an exact name match before all, then score descending, then
    /// name ascending). `tags`, when given and not empty, keeps documents carrying any of them
    /// (ignoring ASCII case). `offset` and `limit` select the page; `total` counts every result.
    pub fn search(&self, query: &str, tags: Option<&[String]>, limit: usize, offset: usize) -> SearchPage {
        self.search_visible(query, tags, limit, offset, None)
    }

    /// Like [`search`](Self::search), among the documents `visible` keeps (by index): the
    /// others are neither returned nor counted.
    pub fn search_visible(
        &self,
        query: &str,
        tags: Option<&[String]>,
        limit: usize,
        offset: usize,
        visible: Option<&dyn Fn(usize) -> bool>,
    ) -> SearchPage {
        let shown = |doc: u32| visible.is_none_or(|v| v(doc as usize));
        // Misspelt words corrected (`lable` → `label`) when the ranker has a vocabulary, then
        // abbreviations spelt out from the catalog's own phrases (`PR` → `PR (pull request)`).
        let corrected = self.scorer.vocabulary().and_then(|v| self.corpus.correct(query, v));
        let query = corrected.as_deref().unwrap_or(query);
        let rewritten = self.corpus.rewrite(query);
        let query = self.corpus.query(rewritten.as_deref().unwrap_or(query));
        if query.is_blank() {
            if matches!(tags, None | Some([])) && visible.is_none() {
                // Every document, by name: no need to collect them.
                let total = self.len();
                let end = offset.saturating_add(limit).min(total);
                let hits = self.by_name[offset.min(end)..end]
                    .iter()
                    .map(|&d| Hit { doc: d as usize, name: self.names[d as usize].clone(), score: 0.0 })
                    .collect();
                return SearchPage {
                    hits,
                    total,
                    next_offset: (end < total && offset < end).then_some(end),
                    searched: None,
                };
            }
            let ranked = self
                .by_name
                .iter()
                .filter(|&&d| self.has_tag(d, tags) && shown(d))
                .map(|&doc| Ranked { doc, score: 0.0, exact: false })
                .collect();
            return self.page(ranked, limit, offset, None);
        }
        let terms = query.coverage_terms();
        let required = self.options.required(terms) as u32;
        let mut candidates: Vec<Candidate> = Vec::new();
        self.scorer.rank(&self.corpus, &query, &mut candidates);
        let exact = self.with_name_key(query.name_key());
        // Long queries: the coverage a result under the count needs, as a share of the best
        // coverage of a result reaching the count (none reaching it: nothing is kept).
        let mut bar = f32::INFINITY;
        if self.options.relative > 0.0 && self.options.is_long(terms) {
            let best =
                candidates.iter().filter(|c| c.matched >= required).map(|c| c.coverage).reduce(f32::max);
            if let Some(best) = best {
                bar = self.options.relative * best;
            }
        }
        let keep = |c: &Candidate| c.matched >= required || (c.matched > 0 && c.coverage >= bar);
        // A question ranks tools that change things lower, a change read-only tools.
        let penalty = self.options.intent_penalty.clamp(0.0, 1.0);
        let intent = (penalty > 0.0 && self.annotated).then(|| asks_to_read(query.text())).flatten();
        let docs = self.corpus.docs();
        let mut ranked: Vec<Ranked> = Vec::with_capacity(candidates.len().min(1024));
        for c in &candidates {
            let is_exact = exact.contains(&c.doc);
            if (keep(c) || is_exact) && self.has_tag(c.doc, tags) && shown(c.doc) {
                let against =
                    intent.is_some_and(|read| docs[c.doc as usize].read_only.is_some_and(|r| r != read));
                let score = if against { c.score * (1.0 - penalty) } else { c.score };
                ranked.push(Ranked { doc: c.doc, score, exact: is_exact });
            }
        }
        for &doc in exact {
            if !candidates.iter().any(|c| c.doc == doc) && self.has_tag(doc, tags) && shown(doc) {
                ranked.push(Ranked { doc, score: 0.0, exact: true });
            }
        }
        let order = |a: &Ranked, b: &Ranked| -> Ordering {
            b.exact
                .cmp(&a.exact)
                .then(b.score.total_cmp(&a.score))
                .then(self.name_rank[a.doc as usize].cmp(&self.name_rank[b.doc as usize]))
        };
        let page = self.page(ranked, limit, offset, Some(&order));
        SearchPage { searched: corrected, ..page }
    }

    /// Up to `k` names close to `name`, for "did you mean": names within a small edit distance
    /// (ignoring case) first, nearest first, ties broken by search rank; then the best search
    /// results for `name` taken as a query.
    pub fn suggest(&self, name: &str, k: usize) -> Vec<Arc<str>> {
        if k == 0 || self.is_empty() {
            return Vec::new();
        }
        let results = self.search(name, None, self.len(), 0).hits;
        let mut search_rank = vec![u32::MAX; self.len()];
        for (rank, hit) in results.iter().enumerate() {
            search_rank[hit.doc] = rank as u32;
        }
        let wanted: Vec<char> = name.chars().flat_map(char::to_lowercase).collect();
        let bound = (wanted.len() / 3).clamp(1, 4);
        let mut close: Vec<(usize, u32, u32)> = Vec::new();
        let mut row = Vec::new();
        let mut other = Vec::new();
        for (doc, candidate) in self.names.iter().enumerate() {
            if &**candidate == name {
                continue;
            }
            other.clear();
            other.extend(candidate.chars().flat_map(char::to_lowercase));
            if let Some(distance) = bounded_levenshtein(&wanted, &other, bound, &mut row) {
                close.push((distance, search_rank[doc], self.name_rank[doc]));
            }
        }
        close.sort_unstable();
        let mut out: Vec<Arc<str>> = Vec::with_capacity(k);
        for (_, _, rank) in close.into_iter().take(k) {
            out.push(self.names[self.by_name[rank as usize] as usize].clone());
        }
        for hit in results {
            if out.len() >= k {
                break;
            }
            if &*hit.name != name && !out.contains(&hit.name) {
                out.push(hit.name);
            }
        }
        out
    }
}

/// The Levenshtein distance between `a` and `b` if it is at most `bound`.
fn bounded_levenshtein(a: &[char], b: &[char], bound: usize, row: &mut Vec<usize>) -> Option<usize> {
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    row.clear();
    row.extend(0..=b.len());
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        let mut best = row[0];
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            let value = if ca == cb { diagonal } else { 1 + diagonal.min(above).min(row[j]) };
            diagonal = above;
            row[j + 1] = value;
            best = best.min(value);
        }
        if best > bound {
            return None;
        }
    }
    let distance = row[b.len()];
    (distance <= bound).then_some(distance)
}
