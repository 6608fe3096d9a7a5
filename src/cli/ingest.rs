//! The read–fingerprint–skip loop of the commands that take documents in (`build`, `add`,
//! `check`): inputs read and fingerprinted on every core, handed over in input order, with a
//! progress bar; skips, invalid UTF-8 and files not followed counted and reported alike.

use super::util;
use pocketdex::corpus::{Document, Item, Reader, SkipKind, Skipped, Source};
use pocketdex::fingerprint::Fingerprint;

/// What was read besides the documents handed over.
#[derive(Default)]
pub struct Summary {
    /// Documents handed over.
    pub docs: u64,
    /// Bytes of their text.
    pub bytes: u64,
    /// Inputs skipped (empty, binary, unreadable, bad JSON, over the size limit).
    pub skipped: Vec<Skipped>,
    /// Documents with invalid UTF-8, and the sequences replaced.
    pub invalid: (u64, u64),
    /// Symlinks and special files below input directories, not followed.
    pub non_regular: usize,
    /// Documents handed over from records without an id, named by their place (`FILE:LINE`,
    /// `FILE:ROW`).
    pub named_by_place: u64,
    /// JSON Lines files below input directories, each read as one document (a directory's
    /// files are documents; a `.jsonl` INPUT of its own is read record by record).
    pub jsonl_as_documents: u64,
}

impl Summary {
    /// Counts `doc`'s invalid UTF-8, if it had any.
    pub fn count_invalid(&mut self, doc: &Document) {
        if doc.invalid_utf8 > 0 {
            self.invalid.0 += 1;
            self.invalid.1 += doc.invalid_utf8 as u64;
        }
    }

    /// Warns of the documents with invalid UTF-8, if any.
    pub fn warn_invalid(&self) {
        if self.invalid.0 > 0 {
            eprintln!(
                "warning: {} had invalid UTF-8 ({} replaced by U+FFFD)",
                util::plural(self.invalid.0, "document"),
                util::plural(self.invalid.1, "sequence")
            );
        }
    }

    /// Reports skips and invalid UTF-8 on stderr (at most 10 skips unless `verbose`).
    pub fn report(&self, verbose: bool) {
        let shown = if verbose {
            self.skipped.len()
        } else {
            self.skipped.len().min(10)
        };
        for s in &self.skipped[..shown] {
            eprintln!("skipped {}: {}", util::printable(&s.id), s.reason);
        }
        if shown < self.skipped.len() {
            eprintln!(
                "… and {} more skipped (--verbose lists all)",
                self.skipped.len() - shown
            );
        }
        if self.skipped.iter().any(|s| s.kind == SkipKind::TooLarge) {
            eprintln!("note: documents over --max-doc-bytes were skipped; raise it to index them");
        }
        self.warn_invalid();
        if self.jsonl_as_documents > 0 {
            eprintln!(
                "note: {} below the input directories {}; give a .jsonl file as an INPUT of its own to read its records",
                util::plural(self.jsonl_as_documents, "JSON Lines file"),
                if self.jsonl_as_documents == 1 {
                    "was read as one document"
                } else {
                    "were read as one document each"
                }
            );
        }
        if self.non_regular > 0 {
            eprintln!(
                "note: {} not followed",
                util::plural_were(
                    self.non_regular as u64,
                    "symlink or special file",
                    "symlinks or special files"
                )
            );
        }
    }

    /// Why inputs were skipped, by kind, most frequent first: "2 empty, 1 binary".
    pub fn why_skipped(&self) -> String {
        let mut kinds: Vec<(&'static str, usize)> = Vec::new();
        for s in &self.skipped {
            let why = match s.kind {
                SkipKind::Unreadable(_) => "unreadable",
                SkipKind::Empty => "empty",
                SkipKind::Binary => "binary",
                SkipKind::NoText => "no text once markup is removed",
                SkipKind::InvalidJson => "invalid JSON",
                SkipKind::WrongType => "with a field of the wrong type",
                SkipKind::NoTextField => "without text (no text field, or null)",
                SkipKind::TooLarge => "over --max-doc-bytes",
                SkipKind::UnprintableId => "with an id that is blank or holds control characters",
            };
            match kinds.iter_mut().find(|k| k.0 == why) {
                Some(k) => k.1 += 1,
                None => kinds.push((why, 1)),
            }
        }
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        kinds
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Why nothing was read: for the error of a command that got no document.
    pub fn nothing_read(&self) -> String {
        match self.skipped.len() {
            0 => "the inputs hold no documents".into(),
            1 => format!(
                "the one document read was skipped ({}: {})",
                util::printable(&self.skipped[0].id),
                self.skipped[0].reason
            ),
            n => format!(
                "all {n} documents read were skipped ({}; listed above)",
                self.why_skipped()
            ),
        }
    }

    /// Refuses a record key for ids (`--id-key`, not the default) that no record had: every
    /// document would be named by its place, and a misspelt key should not rename a collection.
    pub fn check_id_key(&self, input: &util::InputArgs) -> anyhow::Result<()> {
        check_id_key(&input.id_key, self.docs, self.named_by_place)
    }

    /// True when an input could not be read at all (not merely empty or binary).
    pub fn had_errors(&self) -> bool {
        self.skipped.iter().any(|s| s.kind.is_error())
    }
}

/// [`Summary::check_id_key`] for `docs` documents read with the id key `key`, `by_place` of
/// them named by their place.
pub fn check_id_key(key: &str, docs: u64, by_place: u64) -> anyhow::Result<()> {
    if key != "id" && docs > 0 && by_place == docs {
        anyhow::bail!(
            "no record has a field {key:?} (--id-key): every document would be named by its place (FILE:LINE); check the key's spelling, or leave --id-key out to name records so"
        );
    }
    Ok(())
}

/// Tells whether an id is a record's place, `NAME:NUMBER` (`FILE:LINE`, `FILE:ROW`), given to a
/// record without an id, in the JSON Lines and Parquet `sources`; only for an `--id-key` of the
/// user's (for `check_id_key`): with the default key, always false.
pub fn by_place(reader: &Reader, sources: &[Source]) -> impl Fn(&str) -> bool + use<> {
    let places: std::collections::HashSet<String> = if reader.keys.id == "id" {
        Default::default()
    } else {
        sources
            .iter()
            .filter_map(|s| match s {
                Source::Jsonl(p) | Source::Parquet(p) => Some(p.display().to_string()),
                Source::Stdin => Some("stdin".to_string()),
                _ => None,
            })
            .collect()
    };
    move |id: &str| {
        !places.is_empty()
            && id.rsplit_once(':').is_some_and(|(name, n)| {
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && places.contains(name)
            })
    }
}

/// Reads `sources` (directories, files, `.jsonl`, `.parquet`, stdin) with `reader`, fingerprints each
/// document's text with `fingerprint` on every core, and calls `each` with them in input
/// order. The documents handed over have no text (it is let go once fingerprinted, so that a
/// batch holds no texts); `Summary::bytes` counts it. With `named`, the documents will be
/// named by their ids in an index: a record whose id is blank or holds control characters is
/// skipped as an error (`SkipKind::UnprintableId`), since no one could print or delete it.
pub fn fingerprinted(
    reader: &Reader,
    sources: &[Source],
    named: bool,
    fingerprint: impl Fn(&str) -> Fingerprint + Sync,
    quiet: bool,
    what: &str,
    mut each: impl FnMut(Document, Fingerprint) -> pocketdex::Result<()>,
) -> anyhow::Result<Summary> {
    let bar = util::input_progress(sources, quiet, what);
    let mut summary = Summary::default();
    // The names a record without an id gets, `NAME:NUMBER`, counted only for an --id-key of
    // the user's (`Summary::check_id_key`).
    let by_place = by_place(reader, sources);
    // A `.jsonl` file below an input directory, read as one document: its id is its path
    // there (a record's id that merely ends so names no such file).
    let dirs: Vec<&std::path::Path> = sources
        .iter()
        .filter_map(|s| match s {
            Source::Dir(d) => Some(d.as_path()),
            _ => None,
        })
        .collect();
    // Runs for every document: no allocation before the extension matches.
    let ends_with = |id: &str, ext: &str| {
        id.len() >= ext.len()
            && id.as_bytes()[id.len() - ext.len()..].eq_ignore_ascii_case(ext.as_bytes())
    };
    let jsonl_in_dir = |id: &str| {
        !dirs.is_empty()
            && (ends_with(id, ".jsonl") || ends_with(id, ".ndjson"))
            && dirs
                .iter()
                .any(|d| d.join(pocketdex::corpus::path_of_id(id)).is_file())
    };
    summary.non_regular = reader.for_each_batch(
        sources,
        512,
        |item| match item {
            Item::Doc(d) if named && !pocketdex::check::is_printable_id(&d.id) => Err(Skipped {
                reason: "its id is blank or holds control characters: give it an id that prints on one line (or none, to name it by its place)".into(),
                id: d.id,
                kind: SkipKind::UnprintableId,
            }),
            Item::Doc(mut d) => {
                let fp = fingerprint(&d.text);
                let bytes = d.text.len();
                d.text = String::new();
                Ok((d, fp, bytes))
            }
            Item::Skipped(s) => Err(s),
        },
        |n| {
            if bar.length().is_some() {
                bar.inc_length(n)
            }
        },
        |batch: Vec<Result<(Document, Fingerprint, usize), Skipped>>| {
            for item in batch {
                bar.inc(1);
                match item {
                    Ok((d, fp, bytes)) => {
                        summary.count_invalid(&d);
                        summary.docs += 1;
                        summary.named_by_place += by_place(&d.id) as u64;
                        summary.jsonl_as_documents += jsonl_in_dir(&d.id) as u64;
                        summary.bytes += bytes as u64;
                        each(d, fp)?;
                    }
                    Err(s) => summary.skipped.push(s),
                }
            }
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    Ok(summary)
}
