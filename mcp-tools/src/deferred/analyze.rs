//! Text analysis: words, identifier parts, stop words and stems.
//!
//! A *word* is a run of letters, digits and the connectors `_`, `.`, `-` (so `math.factorial`,
//! `get_user` and `x-coordinate` are one word each). A word is split into lowercase *parts* at
//! connectors, at camelCase humps (`getUserByID2` → get, user, by, id, 2, `HTTPServer` → http,
//! server) and between letters and digits. Each part that is not a stop word becomes a term
//! through the Snowball English stemmer; a word of several parts also yields its *whole* form, the
//! parts joined by `_` (`get_user_by_id_2`), so a query naming a tool exactly finds it whatever
//! its naming convention. Nothing matches by substring: `the` never matches `theme`.

use std::borrow::Cow;

use rust_stemmers::{Algorithm, Stemmer};

/// One piece of analyzed text, before stop words and stemming.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// One lowercase part of a word.
    Part(&'a str),
    /// A word of several parts, joined by `_` (emitted after its parts).
    Whole(&'a str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Connector,
    Separator,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        match c {
            'a'..='z' => Class::Lower,
            'A'..='Z' => Class::Upper,
            '0'..='9' => Class::Digit,
            '_' | '.' | '-' => Class::Connector,
            _ => Class::Separator,
        }
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_alphabetic() {
        Class::Lower
    } else if c.is_numeric() {
        Class::Digit
    } else {
        Class::Separator
    }
}

/// Reusable buffers of [`Splitter::split`].
#[derive(Default)]
pub(crate) struct Splitter {
    part: String,
    whole: String,
    parts: usize,
    /// ASCII text: where the open part starts, if one is open.
    open: Option<usize>,
    /// ASCII text: whether the open part has capitals (then it is lowercased into `part`).
    upper: bool,
    /// ASCII text: the first part of the current word, until a second one makes a whole.
    first: std::ops::Range<usize>,
}

impl Splitter {
    fn end_part(&mut self, f: &mut impl FnMut(Piece<'_>)) {
        if self.part.is_empty() {
            return;
        }
        f(Piece::Part(&self.part));
        if !self.whole.is_empty() {
            self.whole.push('_');
        }
        self.whole.push_str(&self.part);
        self.parts += 1;
        self.part.clear();
    }

    fn end_word(&mut self, f: &mut impl FnMut(Piece<'_>)) {
        self.end_part(f);
        if self.parts > 1 {
            f(Piece::Whole(&self.whole));
        }
        self.whole.clear();
        self.parts = 0;
    }

    fn push(&mut self, c: char) {
        if c.is_ascii() {
            self.part.push(c.to_ascii_lowercase());
        } else {
            self.part.extend(c.to_lowercase());
        }
    }

    /// Splits `text` into parts and wholes, in order.
    pub(crate) fn split(&mut self, text: &str, mut f: impl FnMut(Piece<'_>)) {
        // ASCII text (the common case) is split by byte positions: a lowercase part is handed
        // out as a slice of `text`, not copied character by character.
        if text.is_ascii() {
            self.split_ascii(text, &mut f);
        } else {
            self.split_chars(text.chars(), &mut f);
        }
    }

    /// [`split_chars`](Self::split_chars) for ASCII text, with the same parts and wholes.
    fn split_ascii(&mut self, text: &str, f: &mut impl FnMut(Piece<'_>)) {
        let bytes = text.as_bytes();
        let mut prev = Class::Separator;
        for (i, &b) in bytes.iter().enumerate() {
            let cls = class(char::from(b));
            match cls {
                Class::Separator => self.end_ascii_word(text, i, f),
                Class::Connector => self.end_ascii_part(text, i, f),
                Class::Upper => {
                    let acronym_end =
                        prev == Class::Upper && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
                    if prev == Class::Lower || prev == Class::Digit || acronym_end {
                        self.end_ascii_part(text, i, f);
                    }
                    self.open.get_or_insert(i);
                    self.upper = true;
                }
                Class::Lower | Class::Digit => {
                    let boundary = if cls == Class::Lower {
                        prev == Class::Digit
                    } else {
                        prev == Class::Lower || prev == Class::Upper
                    };
                    if boundary {
                        self.end_ascii_part(text, i, f);
                    }
                    self.open.get_or_insert(i);
                }
            }
            prev = cls;
        }
        self.end_ascii_word(text, bytes.len(), f);
    }

    /// Ends the part open in ASCII `text` at `end`: hands it out, and keeps it for the whole.
    fn end_ascii_part(&mut self, text: &str, end: usize, f: &mut impl FnMut(Piece<'_>)) {
        let Some(start) = self.open.take() else { return };
        let lower = |out: &mut String, range: std::ops::Range<usize>| {
            let from = out.len();
            out.push_str(&text[range]);
            out[from..].make_ascii_lowercase();
        };
        if std::mem::take(&mut self.upper) {
            self.part.clear();
            lower(&mut self.part, start..end);
            f(Piece::Part(&self.part));
        } else {
            f(Piece::Part(&text[start..end]));
        }
        if self.parts == 0 {
            self.first = start..end;
        } else {
            if self.parts == 1 {
                self.whole.clear();
                lower(&mut self.whole, self.first.clone());
            }
            self.whole.push('_');
            lower(&mut self.whole, start..end);
        }
        self.parts += 1;
    }

    /// Ends the word of ASCII `text` at `end`: its last part, then its whole if it has several.
    fn end_ascii_word(&mut self, text: &str, end: usize, f: &mut impl FnMut(Piece<'_>)) {
        self.end_ascii_part(text, end, f);
        if self.parts > 1 {
            f(Piece::Whole(&self.whole));
        }
        self.parts = 0;
    }

    fn split_chars(&mut self, chars: impl Iterator<Item = char>, f: &mut impl FnMut(Piece<'_>)) {
        let mut prev = Class::Separator;
        let mut chars = chars.peekable();
        while let Some(c) = chars.next() {
            let cls = class(c);
            match cls {
                Class::Separator => self.end_word(f),
                Class::Connector => self.end_part(f),
                Class::Upper => {
                    let acronym_end =
                        prev == Class::Upper && chars.peek().is_some_and(|&n| class(n) == Class::Lower);
                    if prev == Class::Lower || prev == Class::Digit || acronym_end {
                        self.end_part(f);
                    }
                    self.push(c);
                }
                Class::Lower => {
                    if prev == Class::Digit {
                        self.end_part(f);
                    }
                    self.push(c);
                }
                Class::Digit => {
                    if prev == Class::Lower || prev == Class::Upper {
                        self.end_part(f);
                    }
                    self.push(c);
                }
            }
            prev = cls;
        }
        self.end_word(f);
    }
}

/// English stop words (lowercase, sorted): articles, pronouns, auxiliaries, conjunctions, most
/// prepositions, and a few conversational fillers. Words that tell tools apart (`off`, `up`/`down`,
/// `out`, `all`, `new`, `before`/`after`) are kept.
const STOP_WORDS: &[&str] = &[
    "a", "about", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by",
    "can", "could", "d", "did", "do", "does", "doing", "e", "each", "eg", "etc", "for", "from", "g", "had",
    "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "ie", "if", "in", "into",
    "is", "it", "its", "itself", "just", "ll", "m", "may", "me", "might", "my", "myself", "of", "on", "or",
    "our", "ours", "please", "re", "s", "shall", "she", "should", "so", "such", "t", "than", "that", "the",
    "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "to", "too", "us", "ve",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why",
    "will", "with", "would", "you", "your", "yours",
];

/// Whether `word` (lowercase) is a stop word.
pub(crate) fn is_stop_word(word: &str) -> bool {
    // No stop word is longer (checked by a test): most words skip the search.
    word.len() <= LONGEST_STOP_WORD && STOP_WORDS.binary_search(&word).is_ok()
}

/// The length of the longest of [`STOP_WORDS`].
const LONGEST_STOP_WORD: usize = 6;

/// Stop words and the stemmer.
pub(crate) struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer { stemmer: Stemmer::create(Algorithm::English) }
    }
}

impl Analyzer {
    /// The term of one part, or `None` for a stop word.
    pub(crate) fn part_term<'a>(&self, part: &'a str) -> Option<Cow<'a, str>> {
        if is_stop_word(part) {
            return None;
        }
        // The stemmer only knows English words; digits and mixed parts stay as they are.
        if part.bytes().all(|b| b.is_ascii_lowercase()) && part.len() > 2 {
            Some(self.stemmer.stem(part))
        } else {
            Some(Cow::Borrowed(part))
        }
    }
}

/// The terms of `text`, in order, as the index sees them: stems of the parts that are not stop
/// words, each word of several parts followed by its whole form (`parts_joined_by_underscores`).
///
/// ```
/// use mcp_tools::deferred::terms;
///
/// assert_eq!(terms("getUserByID2"), ["get", "user", "id", "2", "get_user_by_id_2"]);
/// assert_eq!(terms("Find the cheapest flights"), ["find", "cheapest", "flight"]);
/// ```
pub fn terms(text: &str) -> Vec<String> {
    let analyzer = Analyzer::default();
    let mut out = Vec::new();
    Splitter::default().split(text, |piece| match piece {
        Piece::Part(p) => {
            if let Some(t) = analyzer.part_term(p) {
                out.push(t.into_owned());
            }
        }
        Piece::Whole(w) => out.push(w.to_owned()),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Splitter::default().split(text, |p| {
            out.push(match p {
                Piece::Part(p) => p.to_owned(),
                Piece::Whole(w) => format!("[{w}]"),
            })
        });
        out
    }

    /// The pieces the general (character) path gives.
    fn char_pieces(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Splitter::default().split_chars(text.chars(), &mut |p: Piece<'_>| {
            out.push(match p {
                Piece::Part(p) => p.to_owned(),
                Piece::Whole(w) => format!("[{w}]"),
            })
        });
        out
    }

    #[test]
    fn ascii_text_splits_as_the_general_path_does() {
        let texts = [
            "getUserByID2 HTTPServer base64Encode ChaDri.change_drink __init__ x-coordinate",
            "Get the WEATHER for NYC in 2024, v1.2.0-rc3; ABCdef aB Ab AB a1B2c3 9lives IPv4Address",
            "  leading and trailing  ",
            "a_B-c.D e__f--g..h _ - . ABC_DEF Zz9Z",
            "s3://bucket/key?x=1&y=2 user@example.com #88 acme/api#88 'quoted' \"double\"",
            "",
            "X",
            "already lowercase words only",
        ];
        let mut splitter = Splitter::default();
        for text in texts {
            // One splitter for every text: nothing is left over from the text before.
            let mut fast = Vec::new();
            splitter.split(text, |p| {
                fast.push(match p {
                    Piece::Part(p) => p.to_owned(),
                    Piece::Whole(w) => format!("[{w}]"),
                })
            });
            assert_eq!(fast, char_pieces(text), "{text:?}");
        }
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(STOP_WORDS.iter().map(|w| w.len()).max(), Some(LONGEST_STOP_WORD));
    }

    #[test]
    fn camel_case_acronyms_and_digits() {
        assert_eq!(pieces("getUserByID2"), ["get", "user", "by", "id", "2", "[get_user_by_id_2]"]);
        assert_eq!(pieces("HTTPServer"), ["http", "server", "[http_server]"]);
        assert_eq!(pieces("base64Encode"), ["base", "64", "encode", "[base_64_encode]"]);
        assert_eq!(
            pieces("ChaDri.change_drink"),
            ["cha", "dri", "change", "drink", "[cha_dri_change_drink]"]
        );
    }

    #[test]
    fn snake_dots_and_dashes() {
        assert_eq!(pieces("get_weather"), ["get", "weather", "[get_weather]"]);
        assert_eq!(pieces("math.factorial"), ["math", "factorial", "[math_factorial]"]);
        assert_eq!(pieces("x-coordinate"), ["x", "coordinate", "[x_coordinate]"]);
        assert_eq!(pieces("__init__"), ["init"]);
    }

    #[test]
    fn words_of_text() {
        assert_eq!(pieces("Hello, world! (twice)"), ["hello", "world", "twice"]);
        assert_eq!(pieces("the end."), ["the", "end"]);
        assert_eq!(pieces("Größe ÄNDERN"), ["größe", "ändern"]);
        assert_eq!(pieces(""), Vec::<String>::new());
    }

    #[test]
    fn stop_words_go_and_stems_stay() {
        assert_eq!(terms("the user's name"), ["user", "name"]);
        assert_eq!(terms("Searching flights to Paris"), ["search", "flight", "pari"]);
        assert_eq!(terms("turn the lights off"), ["turn", "light", "off"]);
        assert_eq!(terms("listUsers"), ["list", "user", "list_users"]);
        // Stemming makes inflections meet.
        assert_eq!(terms("forecasts"), terms("forecast"));
        assert_eq!(terms("calculating"), terms("calculate"));
    }

    #[test]
    fn no_substrings() {
        assert_eq!(terms("the theme"), ["theme"]);
        assert!(!terms("theme").contains(&"the".to_owned()));
    }
}
