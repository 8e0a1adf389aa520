//! Whether a request asks for information or for a change, read from its first words, to weigh
//! against what a tool's annotations say it does (`readOnlyHint`; see
//! [`SearchOptions::intent_penalty`](super::SearchOptions::intent_penalty)).

use super::dense::steps;

/// Words that, opening a step, ask for information.
const READ: [&str; 27] = [
    "what", "whats", "which", "who", "whom", "whose", "when", "where", "why", "is", "are", "was", "were",
    "does", "did", "has", "have", "any", "show", "list", "find", "search", "look", "see", "view", "display",
    "tell",
];

/// Words that, opening a step, ask for a change.
#[rustfmt::skip]
const CHANGE: [&str; 60] = [
    "add", "create", "make", "delete", "remove", "update", "set", "change", "rename", "move", "close",
    "reopen", "merge", "approve", "invite", "give", "assign", "unassign", "start", "stop", "cancel",
    "enable", "disable", "lock", "unlock", "archive", "upload", "send", "post", "publish", "kick",
    "transfer", "trigger", "pause", "resume", "apply", "mark", "star", "unstar", "fork", "block",
    "unblock", "mute", "schedule", "book", "write", "save", "edit", "replace", "revoke", "grant",
    "restore", "install", "uninstall", "deploy", "cut", "fire", "draft", "submit", "pin",
];

/// Politeness and the words that join steps (`…, then close it`), skipped before the verb.
#[rustfmt::skip]
const SKIP: [&str; 13] = [
    "please", "pls", "plz", "hey", "ok", "okay", "and", "then", "also", "finally", "after", "afterwards",
    "that",
];

/// What a request asks for, when its words say so: `Some(true)` for information (`what …`,
/// `which …`, `who …`, `is …`, `how many …`, `show …`, `list …`, `find …`), `Some(false)` for a
/// change (`add …`, `delete …`, `make …`, `invite …`), and `None` when it does not say
/// (`can you …`, `I want …`, `upload …` is a change but `download …` is not known) or asks for
/// both (`find the invoice, then send it to Ann`).
///
/// Each of the request's [`steps`] is read by its first word (politeness such as `please` or
/// `hey`, and the `then` that joins it, skipped; `what's` read as `what`), and every step must
/// say the same; a step that a bare `and` opens without a known verb (`… bug and triage to
/// #88`) is read as part of the step before.
///
/// ```
/// use mcp_tools::deferred::asks_to_read;
///
/// assert_eq!(asks_to_read("what's the overall status of abc1234?"), Some(true));
/// assert_eq!(asks_to_read("please add jdoe to acme/website"), Some(false));
/// assert_eq!(asks_to_read("list open issues, then close the stale ones"), None);
/// assert_eq!(asks_to_read("can you help with my repo"), None);
/// ```
pub fn asks_to_read(request: &str) -> Option<bool> {
    // A step that a bare `and` opens without a verb continues the one before (`add the labels
    // bug and triage to #88`): it says nothing of its own.
    let continues = |step: &&str| {
        let mut words = step.split_whitespace().map(plain);
        words.next().is_some_and(|w| w == "and")
            && words.next().is_some_and(|w| w != "then" && w != "also")
            && step_intent(step).is_none()
    };
    let mut intents = steps(request).into_iter().filter(|s| !continues(s)).map(step_intent);
    let first = intents.next()??;
    intents.all(|i| i == Some(first)).then_some(first)
}

/// What one step asks for, by its first word.
fn step_intent(step: &str) -> Option<bool> {
    let mut words = step.split_whitespace().map(plain).filter(|w| !w.is_empty());
    let first = words.find(|w| !SKIP.contains(&w.as_str()))?;
    if first == "how" {
        // `how many`, `how much`: a question of fact; `how do I …` asks for something else.
        let next = words.next()?;
        return ["many", "much", "often", "long"].contains(&next.as_str()).then_some(true);
    }
    if READ.contains(&first.as_str()) {
        Some(true)
    } else if CHANGE.contains(&first.as_str()) {
        Some(false)
    } else {
        None
    }
}

/// A word as it is compared: lowercase, without punctuation, cut at an apostrophe (`what's` is
/// `what`, `we're` is `we`).
fn plain(raw: &str) -> String {
    let word = raw.split(['\'', '’']).next().unwrap_or("");
    word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::asks_to_read;

    fn each_says(expected: Option<bool>, requests: &[&str]) {
        for request in requests {
            assert_eq!(asks_to_read(request), expected, "{request:?}");
        }
    }

    #[test]
    fn questions_and_listings_ask_for_information() {
        each_says(
            Some(true),
            &[
                "what's the overall commit status for abc1234 in acme/api?",
                "Which GitHub apps are installed in the acme org",
                "who am I logged in as",
                "was acme/web#77 ever merged or just closed?",
                "how many open issues does acme/api have",
                "hey, show me the failed runs",
                "list my repos",
                "whats in notes.txt in my projects folder",
                "what containers are running, and why does the api one keep restarting?",
            ],
        );
    }

    #[test]
    fn imperatives_ask_for_a_change() {
        each_says(
            Some(false),
            &[
                "add jdoe to acme/website with write access",
                "please delete the staging branch",
                "Pause the nightly workflow in acme/api for now",
                "invite alice@example.com to the acme org",
                "delete the staging branch and then archive the repo",
                "add the labels bug and triage to acme/api#88",
            ],
        );
    }

    #[test]
    fn requests_that_do_not_say_or_say_both_are_left_alone() {
        each_says(
            None,
            &[
                "",
                "   ",
                "can you help with my repo",
                "I want dependabot to open PRs fixing vulnerable deps",
                "we're getting brigaded on acme/site",
                "how do I rotate a key",
                "how",
                "list open issues, then close the stale ones",
                "What got finished in the Launch project? Put a short summary in the channel",
                "find the invoice. Send it to Ann.",
                "list the open issues and close the stale ones",
                "list the open issues and then triage them",
            ],
        );
    }
}
