//! Spelling correction of a request's words before either ranker sees them (`slap a lable on
//! #88` → `slap a label on #88`, `what notifcations do i have` → `... notifications ...`).
//!
//! Only a word that neither the catalog nor a language's vocabulary knows is corrected: without
//! a vocabulary, every name and ordinary word the catalog happens to lack (`Plaza`, `still`)
//! would be "corrected" to a catalog word one letter away (`plazo`, `till`). The vocabulary is a
//! sentence-embedding model's ([`Embedder::vocabulary`](super::Embedder::vocabulary)), so the
//! words-only ranker corrects nothing.

use std::collections::{HashMap, HashSet};

use rust_stemmers::{Algorithm, Stemmer};

/// The whole words of a language a model knows, most common first, for spelling correction
/// (see [`Embedder::vocabulary`](super::Embedder::vocabulary)).
///
/// ```
/// use mcp_tools::deferred::Vocabulary;
///
/// let words = Vocabulary::new(["the", "umbrella", "cache", "##s", "Paris"]);
/// assert_eq!(words.rank("umbrella"), Some(1));
/// assert_eq!(words.rank("##s"), None); // not a whole word: word pieces and the like are left out
/// assert_eq!(words.len(), 3); // lowercase ASCII words of two letters or more
/// assert!(words.knows("cached")); // a word of the same stem
/// assert!(!words.knows("umbrela"));
/// ```
#[derive(Clone, Default)]
pub struct Vocabulary {
    ranks: HashMap<Box<str>, u32>,
    /// The words' English stems (about 12 ms for BERT's 21,700 words, made with the vocabulary).
    stems: HashSet<Box<str>>,
}

impl std::fmt::Debug for Vocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocabulary").field("words", &self.ranks.len()).finish_non_exhaustive()
    }
}

impl Vocabulary {
    /// The vocabulary of `words`, most common first. Only words of two or more lowercase ASCII
    /// letters are kept (the rest are word pieces, punctuation or names); a word given twice
    /// keeps its first rank. Their English stems are made here too (about 12 ms for BERT's
    /// 21,700 words; `SentenceEmbedder` makes its vocabulary while the weights load).
    pub fn new<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> Vocabulary {
        let mut ranks: HashMap<Box<str>, u32> = HashMap::new();
        for word in words {
            let word = word.as_ref();
            if word.len() >= 2 && word.bytes().all(|b| b.is_ascii_lowercase()) {
                let rank = ranks.len() as u32;
                ranks.entry(word.into()).or_insert(rank);
            }
        }
        let stemmer = Stemmer::create(Algorithm::English);
        let stems = ranks.keys().map(|w| Box::from(stemmer.stem(w))).collect();
        Vocabulary { ranks, stems }
    }

    /// The rank of `word` (0: the most common), or `None` when the vocabulary lacks it.
    pub fn rank(&self, word: &str) -> Option<u32> {
        self.ranks.get(word).copied()
    }

    /// Whether the vocabulary holds `word` (lowercase) or a word of the same English stem
    /// (`cached`, `decoding` when it holds `cache`, `decode`): a model's vocabulary lists few
    /// inflected forms.
    pub fn knows(&self, word: &str) -> bool {
        self.ranks.contains_key(word) || self.stems.contains(&*Stemmer::create(Algorithm::English).stem(word))
    }

    /// [`knows`](Vocabulary::knows) for a word whose English stem is already known.
    pub(crate) fn knows_stemmed(&self, word: &str, stem: &str) -> bool {
        self.ranks.contains_key(word) || self.stems.contains(stem)
    }

    /// How many words it holds.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Whether it holds no word.
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }
}

/// Words shorter than this are left alone: most four-letter strings are one edit from some word.
const MIN_LEN: usize = 5;
/// Nor are longer ones looked at (identifiers, run-together text).
const MAX_LEN: usize = 24;

/// `query` with each misspelt word replaced by its correction; `None` when nothing changes.
///
/// A word is looked at when it is of [`MIN_LEN`] to [`MAX_LEN`] lowercase ASCII letters and
/// stands alone (not part of an identifier, path, version or handle: `acme/lable`,
/// `lable-bot`, `@lable`), and `known` (the catalog's words and stems, the vocabulary's words
/// and their stems) does not know it. Its correction is the catalog word one edit away (a
/// letter deleted or inserted, or two neighbours swapped) that the most documents use
/// (`catalog`: the number of documents using a word, `None` for a word no document uses); a
/// word with no such neighbour stays.
pub(crate) fn correct(
    query: &str,
    known: impl Fn(&str) -> bool,
    catalog: impl Fn(&str) -> Option<usize>,
) -> Option<String> {
    let bytes = query.as_bytes();
    let attached =
        |b: Option<&u8>| b.is_some_and(|b| matches!(b, b'_' | b'-' | b'/' | b'.' | b'#' | b'@' | b'\\'));
    // A word: letters and digits, non-ASCII ones included (such a word is left alone).
    let in_word = |b: u8| b.is_ascii_alphanumeric() || !b.is_ascii();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !in_word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && in_word(bytes[i]) {
            i += 1;
        }
        let word = &query[start..i];
        let next_is_word = bytes.get(i + 1).is_some_and(|b| b.is_ascii_alphanumeric());
        if !(MIN_LEN..=MAX_LEN).contains(&word.len())
            || !word.bytes().all(|b| b.is_ascii_lowercase())
            || (start > 0 && attached(bytes.get(start - 1)))
            || (attached(bytes.get(i)) && next_is_word)
            || known(word)
        {
            continue;
        }
        if let Some(fix) = correction(word, &catalog) {
            out.push_str(&query[copied..start]);
            out.push_str(&fix);
            copied = i;
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&query[copied..]);
    Some(out)
}

/// The catalog word one edit from `word` that the most documents use (ties: the first in
/// alphabetical order).
fn correction(word: &str, catalog: &impl Fn(&str) -> Option<usize>) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    edits(word, |candidate| {
        let Some(documents) = catalog(candidate).filter(|&d| d > 0) else { return };
        let better = best
            .as_ref()
            .is_none_or(|(d, known)| documents > *d || (documents == *d && candidate < known.as_str()));
        if better {
            best = Some((documents, candidate.to_owned()));
        }
    });
    best.map(|(_, word)| word)
}

/// Calls `f` with every string one edit from `word` (lowercase ASCII): each letter deleted,
/// each pair of neighbours swapped, and each letter inserted (a to z). Not a letter replaced:
/// most typing slips are one of these three (`notifcations`, `lable`, `limitted`), while a
/// replaced letter turns many real words the vocabulary lacks into others of the catalog
/// (`decoding` → `deciding`; on the retrieval sets, replacements lost more than they won).
fn edits(word: &str, mut f: impl FnMut(&str)) {
    let w = word.as_bytes();
    let mut buf: Vec<u8> = Vec::with_capacity(w.len() + 1);
    let mut emit = |buf: &[u8]| {
        // Only ASCII letters were put together: always UTF-8.
        if let Ok(s) = std::str::from_utf8(buf) {
            f(s);
        }
    };
    for i in 0..w.len() {
        buf.clear();
        buf.extend_from_slice(&w[..i]);
        buf.extend_from_slice(&w[i + 1..]);
        emit(&buf);
    }
    for i in 0..w.len().saturating_sub(1) {
        if w[i] != w[i + 1] {
            buf.clear();
            buf.extend_from_slice(w);
            buf.swap(i, i + 1);
            emit(&buf);
        }
    }
    for i in 0..=w.len() {
        for c in b'a'..=b'z' {
            buf.clear();
            buf.extend_from_slice(&w[..i]);
            buf.push(c);
            buf.extend_from_slice(&w[i..]);
            emit(&buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `correct` with a catalog of (word, documents) and a vocabulary of words.
    fn fix(query: &str, catalog: &[(&str, usize)], vocabulary: &[&str]) -> Option<String> {
        let catalog: HashMap<&str, usize> = catalog.iter().copied().collect();
        let vocabulary = Vocabulary::new(vocabulary);
        correct(query, |w| catalog.contains_key(w) || vocabulary.knows(w), |w| catalog.get(w).copied())
    }

    #[test]
    fn misspelt_words_become_the_catalog_word_one_edit_away() {
        let catalog = [("label", 40), ("table", 3), ("notifications", 5), ("squash", 2), ("workflow", 9)];
        let words = ["able", "cable", "slap", "what", "have", "the", "main"];
        // A swap, a deletion, an insertion; of two neighbours, the one more documents use.
        assert_eq!(fix("slap a lable on it", &catalog, &words).as_deref(), Some("slap a label on it"));
        assert_eq!(
            fix("what notifcations do i have", &catalog, &words).as_deref(),
            Some("what notifications do i have")
        );
        assert_eq!(
            fix("sqaush and run the wokflow", &catalog, &words).as_deref(),
            Some("squash and run the workflow")
        );
        // No catalog word one edit away: the word stays.
        assert_eq!(fix("do i need an umbrela", &catalog, &words), None);
    }

    #[test]
    fn known_words_names_and_identifiers_stay() {
        let catalog = [("label", 40), ("plazo", 2), ("till", 4), ("reds", 2)];
        let words = ["plaza", "still", "labels", "decode"];
        // Words the catalog or the language knows, by themselves or by their stem.
        assert_eq!(fix("labels still at the plaza", &catalog, &words), None);
        assert_eq!(fix("decoding", &catalog, &words), None);
        // Names with no neighbour, and those with one: the vocabulary does not know `redis`, but
        // this catalog has `reds` (a cost of correcting; `redis` in the catalog would be known).
        assert_eq!(fix("torvalds", &catalog, &words), None);
        assert_eq!(fix("redis", &catalog, &words).as_deref(), Some("reds"));
        // Capitals (names), short words, parts of identifiers, paths, handles and versions.
        assert_eq!(fix("Lable lbel acme/lable lable-bot @lable lable.v2 lable_x", &catalog, &words), None);
        // The end of a sentence is not an identifier.
        assert_eq!(fix("add a lable.", &catalog, &words).as_deref(), Some("add a label."));
        assert_eq!(fix("", &catalog, &words), None);
        assert_eq!(
            fix("ünïcode lable ✓ ülable", &catalog, &words).as_deref(),
            Some("ünïcode label ✓ ülable")
        );
    }

    #[test]
    fn every_edit_is_tried_once_per_place() {
        let mut seen = Vec::new();
        edits("ab", |e| seen.push(e.to_owned()));
        for expected in ["b", "a", "ba", "cab", "acb", "abc"] {
            assert!(seen.contains(&expected.to_owned()), "{expected} missing");
        }
        // 2 deletions, 1 swap, 3 × 26 insertions; no replacements (see `edits`).
        assert_eq!(seen.len(), 2 + 1 + 78);
        assert!(!seen.contains(&"zb".to_owned()));
    }
}
