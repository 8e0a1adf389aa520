//! Query rewriting from the catalog's own words, before either ranker sees the query: an
//! abbreviation in capitals is followed by the phrase it stands for in this catalog (`PR` →
//! `PR (pull request)`, `NY` → `NY (new york)`), so that the words and the embedding both see
//! what was meant. Everything is learned from the catalog (the phrase the documents using the
//! abbreviation also spell out), nothing from a vendor's vocabulary.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::analyze::is_stop_word;

/// The texts of one document, as [`Rewriter::new`] reads them.
pub(crate) struct Document<'a> {
    /// Where phrases are spelt out: title, summary, description, parameter descriptions.
    pub prose: Vec<&'a str>,
    /// Its other words: name, tags, parameter names, values.
    pub other: Vec<&'a str>,
}

/// Documents that must use both an abbreviation and its phrase.
const MIN_TOGETHER: u32 = 2;

/// A phrase, with the number of documents using both it and its abbreviation.
type Phrase = (Box<str>, u32);

/// What the catalog says about abbreviations: how many documents use each word of two or three
/// letters, and the phrase each such word stands for.
#[derive(Debug, Default)]
pub(crate) struct Rewriter {
    /// Words of two or three letters (as [`code`]s), with the number of documents using each.
    short: HashMap<u32, u32>,
    /// Initials (`pr`) → the phrase of two or three words with those initials most often
    /// written beside them (`pull request`), with the number of documents using both.
    phrases: HashMap<Box<str>, Phrase>,
}

/// Two or three lowercase ASCII letters as one number; `None` for anything else.
fn code(word: &[u8]) -> Option<u32> {
    if !(2..=3).contains(&word.len()) || !word.iter().all(u8::is_ascii_lowercase) {
        return None;
    }
    Some(word.iter().fold(word.len() as u32, |code, &b| code << 8 | u32::from(b)))
}

/// The words of one stretch of text: lowercase, in one buffer.
#[derive(Default)]
struct Stretch {
    text: String,
    /// Byte ranges of the words in `text`.
    words: Vec<(usize, usize)>,
}

impl Stretch {
    fn word(&self, i: usize) -> &str {
        let (a, b) = self.words[i];
        &self.text[a..b]
    }

    /// Ends the word being written: kept unless it is a stop word.
    fn end_word(&mut self, start: &mut usize) {
        if *start < self.text.len() && !is_stop_word(&self.text[*start..]) {
            self.words.push((*start, self.text.len()));
        } else {
            self.text.truncate(*start);
        }
        *start = self.text.len();
    }
}

/// Calls `f` with each stretch of `text`'s words (runs of ASCII letters, lowercase, split at
/// camelCase humps, stop words left out) between sentence punctuation, brackets, line breaks,
/// links and paths (a token with a `/`: `[docs](https://…)`), so that no phrase runs across one.
fn stretches(text: &str, stretch: &mut Stretch, mut f: impl FnMut(&Stretch)) {
    let mut flush = |stretch: &mut Stretch| {
        if !stretch.words.is_empty() {
            f(stretch);
        }
        stretch.text.clear();
        stretch.words.clear();
    };
    for line in text.lines() {
        for token in line.split_whitespace() {
            if token.contains('/') {
                flush(stretch);
                continue;
            }
            let mut start = stretch.text.len();
            let mut prev_lower = false;
            for c in token.chars() {
                if c.is_ascii_alphabetic() {
                    if c.is_ascii_uppercase() && prev_lower {
                        stretch.end_word(&mut start);
                    }
                    prev_lower = c.is_ascii_lowercase();
                    stretch.text.push(c.to_ascii_lowercase());
                } else {
                    stretch.end_word(&mut start);
                    prev_lower = false;
                    if matches!(c, '.' | ',' | ';' | ':' | '(' | ')' | '[' | ']' | '!' | '?') {
                        flush(stretch);
                        start = 0;
                    }
                }
            }
            stretch.end_word(&mut start);
        }
        flush(stretch);
    }
}

impl Rewriter {
    /// Learns from each document's prose (title, summary, description, parameter descriptions:
    /// where phrases are spelt out) and its other words (name, tags, parameter names, values).
    pub(crate) fn new<'a>(docs: impl IntoIterator<Item = Document<'a>>) -> Rewriter {
        let mut short: HashMap<u32, u32> = HashMap::default();
        // (initials, phrase) → documents using both.
        let mut together: HashMap<(u32, Box<str>), u32> = HashMap::default();
        let mut stretch = Stretch::default();
        let mut doc_short: Vec<u32> = Vec::new();
        let mut doc_phrases: Vec<(u32, String)> = Vec::new();
        for doc in docs {
            doc_short.clear();
            doc_phrases.clear();
            let prose = || doc.prose.iter().copied();
            let others = doc.other.iter().copied();
            for text in prose().chain(others) {
                stretches(text, &mut stretch, |s| {
                    doc_short.extend((0..s.words.len()).filter_map(|i| code(s.word(i).as_bytes())));
                });
            }
            if doc_short.is_empty() {
                continue;
            }
            doc_short.sort_unstable();
            doc_short.dedup();
            for &c in &doc_short {
                *short.entry(c).or_default() += 1;
            }
            // Phrases of two and three words whose initials the document also uses as a word.
            for text in prose() {
                stretches(text, &mut stretch, |s| {
                    for n in 2..=3 {
                        for start in 0..s.words.len().saturating_sub(n - 1) {
                            // The words are lowercase letters: their initials' code directly.
                            let c = (start..start + n)
                                .fold(n as u32, |c, i| c << 8 | u32::from(s.word(i).as_bytes()[0]));
                            if doc_short.binary_search(&c).is_ok() {
                                let phrase: Vec<&str> = (start..start + n).map(|i| s.word(i)).collect();
                                doc_phrases.push((c, phrase.join(" ")));
                            }
                        }
                    }
                });
            }
            doc_phrases.sort_unstable();
            doc_phrases.dedup();
            for (c, phrase) in doc_phrases.drain(..) {
                *together.entry((c, phrase.into())).or_default() += 1;
            }
        }
        let mut phrases: HashMap<Box<str>, Phrase> = HashMap::default();
        for ((c, phrase), count) in together {
            if count < MIN_TOGETHER {
                continue;
            }
            let initials: String = phrase.split(' ').filter_map(|w| w.chars().next()).collect();
            debug_assert_eq!(code(initials.as_bytes()), Some(c));
            // The phrase most often written beside the abbreviation (ties: alphabetical order).
            match phrases.entry(initials.into()) {
                Entry::Vacant(v) => {
                    v.insert((phrase, count));
                }
                Entry::Occupied(mut o) => {
                    let (best, best_count) = o.get();
                    if count > *best_count || (count == *best_count && phrase < *best) {
                        o.insert((phrase, count));
                    }
                }
            }
        }
        Rewriter { short, phrases }
    }

    fn df(&self, word: &str) -> u32 {
        code(word.as_bytes()).and_then(|c| self.short.get(&c)).copied().unwrap_or(0)
    }

    /// The phrase `initials` (lowercase) stands for: the one spelt out beside the abbreviation
    /// in at least two documents and in at least half of those using the abbreviation.
    fn expansion(&self, initials: &str) -> Option<&str> {
        if !(2..=3).contains(&initials.len()) || is_stop_word(initials) {
            return None;
        }
        let (phrase, together) = self.phrases.get(initials)?;
        (2 * together >= self.df(initials)).then_some(&**phrase)
    }
}

/// `query` with each abbreviation (see [`abbreviations`]) followed by its phrase in brackets,
/// unless the query already says it; `None` when nothing changes. `rewriter` is asked for only
/// when the query has a possible abbreviation (it is built at the first such query).
pub(crate) fn rewrite<'r>(query: &str, rewriter: impl Fn() -> &'r Rewriter) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    let mut lowered: Option<String> = None;
    abbreviations(query, |end, letters| {
        let Some(phrase) = rewriter().expansion(&letters.to_ascii_lowercase()) else { return };
        if lowered.get_or_insert_with(|| query.to_ascii_lowercase()).contains(phrase) {
            return;
        }
        out.push_str(&query[copied..end]);
        out.push_str(" (");
        out.push_str(phrase);
        out.push(')');
        copied = end;
    });
    if copied == 0 {
        return None;
    }
    out.push_str(&query[copied..]);
    Some(out)
}

/// Calls `f` with the end (a byte offset) and the letters of each possible abbreviation of
/// `query`: a word of two or three capitals, maybe with a plural `s` (`PR`, `PRs`), that is not
/// part of an identifier, path or version (`acme/PR-1`, `v1.RC`).
fn abbreviations(query: &str, mut f: impl FnMut(usize, &str)) {
    let bytes = query.as_bytes();
    let attached = |b: Option<&u8>| b.is_some_and(|b| matches!(b, b'_' | b'-' | b'/' | b'.' | b'#' | b'@'));
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word = &query[start..i];
        let letters = word.strip_suffix('s').filter(|l| l.len() >= 2).unwrap_or(word);
        let next_is_word = bytes.get(i + 1).is_some_and(u8::is_ascii_alphanumeric);
        if (2..=3).contains(&letters.len())
            && letters.bytes().all(|b| b.is_ascii_uppercase())
            && !(start > 0 && (attached(bytes.get(start - 1)) || !query.is_char_boundary(start - 1)))
            && !(attached(bytes.get(i)) && next_is_word)
        {
            f(i, letters);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Rewriter {
        fn rewrite(&self, query: &str) -> Option<String> {
            rewrite(query, || self)
        }
    }

    fn doc<'a>(name: &'a str, description: &'a str) -> Document<'a> {
        Document { prose: vec![description], other: vec![name] }
    }

    fn catalog() -> Rewriter {
        Rewriter::new([
            doc("pulls_create", "Create a pull request. Opens a new pull request."),
            doc("pulls_merge", "Merge a pull request into its base branch."),
            doc("fork_pr_approval", "Whether a fork PR needs approval: a pull request from a fork."),
            doc("pr_label", "Label a PR. The pull request gets the label."),
            doc(
                "list_private_repos",
                "List private repositories. See [pagination](https://docs.example/rest).",
            ),
        ])
    }

    #[test]
    fn abbreviations_get_the_phrase_the_catalog_spells_out() {
        let r = catalog();
        assert_eq!(r.rewrite("approve PR 88").as_deref(), Some("approve PR (pull request) 88"));
        assert_eq!(r.rewrite("merge my PRs").as_deref(), Some("merge my PRs (pull request)"));
        // Already said, lowercase, part of an identifier, or not an abbreviation of this catalog.
        assert_eq!(r.rewrite("approve the pull request (PR) 88"), None);
        assert_eq!(r.rewrite("approve pr 88"), None);
        assert_eq!(r.rewrite("open acme/PR-7 and v1.PR"), None);
        assert_eq!(r.rewrite("a PDF for NY"), None);
        assert_eq!(r.rewrite(""), None);
        assert_eq!(r.rewrite("ünïcode PR ✓").as_deref(), Some("ünïcode PR (pull request) ✓"));
    }

    #[test]
    fn links_and_rare_phrases_make_no_abbreviation() {
        // "private repositories" has the initials of `PR` in one document only, and a link's
        // words make no phrase.
        let r = Rewriter::new([
            doc("a", "List private repositories."),
            doc("b", "The PR tool. See [pagination](https://docs.example/rest) and pagination rest."),
            doc("c", "Another PR tool."),
            doc("d", "A PR tool too. Read [pagination rest](https://docs.example/pr/pagination-rest)."),
        ]);
        assert_eq!(r.rewrite("my PR"), None);
        assert!(r.phrases.is_empty(), "{:?}", r.phrases);
    }
}
