//! HTML markup removal with a WHATWG-compliant tokenizer (html5gum): text content and entity
//! decoding as a browser tokenizes them, script and style bodies dropped, block tags as breaks.

use html5gum::{DefaultEmitter, Token, Tokenizer};

/// True when a text looks like HTML: a doctype, or an `<html`, `<head`, `<body`, `<p>`, `<div`,
/// `<br` or `<table` tag near its start (case-insensitive).
pub fn looks_like_html(text: &str) -> bool {
    let mut end = text.len().min(4096);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // Every sign below starts with `<`: most plain text is told apart without a lower-cased copy.
    if !text[..end].contains('<') {
        return false;
    }
    let head = text[..end].to_ascii_lowercase();
    let t = head.trim_start();
    t.starts_with("<!doctype html")
        || t.starts_with("<?xml") && head.contains("<html")
        || [
            "<html", "<head", "<body", "<p>", "<div", "<br", "<table", "<title",
        ]
        .iter()
        .any(|tag| head.contains(tag))
}

/// Elements whose content is not visible text.
const INVISIBLE: &[&[u8]] = &[b"script", b"style", b"noscript", b"template", b"head"];

/// Elements that separate words even when no space is written between them.
fn is_break(name: &[u8]) -> bool {
    matches!(
        name,
        b"p" | b"br"
            | b"div"
            | b"li"
            | b"tr"
            | b"td"
            | b"th"
            | b"h1"
            | b"h2"
            | b"h3"
            | b"h4"
            | b"h5"
            | b"h6"
            | b"title"
            | b"section"
            | b"article"
            | b"blockquote"
            | b"pre"
            | b"hr"
            | b"dt"
            | b"dd"
            | b"option"
    )
}

/// The visible text of an HTML document: tags and comments removed, entities decoded, the
/// contents of `script`, `style`, `noscript`, `template` and `head` (except `title`) dropped.
pub fn strip_html(html: &str) -> String {
    let mut emitter = DefaultEmitter::default();
    // Switch into RAWTEXT/script states after <script>, <style>… so their bodies are not parsed
    // as markup: what a browser's tree builder would do.
    emitter.naively_switch_states(true);
    let mut out = String::with_capacity(html.len() / 2);
    // Depth of open invisible elements; `title` inside `head` is visible.
    let mut hidden: usize = 0;
    let mut in_title = false;
    for token in Tokenizer::new_with_emitter(html, emitter).flatten() {
        match token {
            Token::StartTag(tag) => {
                let name = tag.name.as_slice();
                if name == b"title" {
                    in_title = true;
                } else if name == b"body" {
                    // A body closes an unclosed head.
                    hidden = 0;
                } else if INVISIBLE.contains(&name) && !tag.self_closing {
                    hidden += 1;
                }
                if is_break(name) {
                    out.push('\n');
                }
            }
            Token::EndTag(tag) => {
                let name = tag.name.as_slice();
                if name == b"title" {
                    in_title = false;
                } else if INVISIBLE.contains(&name) {
                    hidden = hidden.saturating_sub(1);
                }
                if is_break(name) {
                    out.push('\n');
                }
            }
            Token::String(s) if hidden == 0 || in_title => {
                out.push_str(&String::from_utf8_lossy(&s.value));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_markup_scripts_and_decodes_entities() {
        let html = "<!DOCTYPE html><html><head><title>Caf&eacute; list</title>\
            <style>p { color: red }</style><script>if (a < b) { x = \"<p>\"; }</script></head>\
            <body><p>Fish&amp;chips<br>and <b>bold</b> tea</p><!-- hidden --></body></html>";
        let text = strip_html(html);
        let words: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(words, ["Café", "list", "Fish&chips", "and", "bold", "tea"]);
        assert!(looks_like_html(html));
        assert!(!looks_like_html("a < b and c > d in plain text"));
    }
}
