//! The submission check, the one operation behind `pocketdex check`, the server's `/v1/check`
//! and the Python package: each document's near copies among an index's documents and those
//! checked before it, and, when adding, the new ones collected for one new segment.

use crate::builder::IndexBuilder;
use crate::error::Result;
use crate::fingerprint::{Fingerprint, Fingerprinter, Path, Resolution};
use crate::query::{score_collisions, serialize_score, QueryOptions};
use crate::set::{Change, IndexSet, SetWriter};
use memmap2::Mmap;
use std::collections::{HashMap, HashSet};

/// A near copy of a checked document.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Near {
    /// Its id.
    pub id: String,
    /// Estimated cosine similarity (four decimals when serialized).
    #[serde(serialize_with = "serialize_score")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub score: f32,
    /// Code groups that collided.
    pub codes: u16,
    /// The path that found it, or `submitted` for a document submitted earlier in the same
    /// check.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub path: &'static str,
}

/// What a checked document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// No near copy.
    New,
    /// At least one near copy.
    NearCopy,
    /// It could not be added (its id is taken or given twice).
    Error,
}

/// True for an id a front end can print on one line and a user delete by: not blank, no
/// control characters. A check that adds refuses other ids.
pub fn is_printable_id(id: &str) -> bool {
    !id.trim().is_empty() && !id.chars().any(char::is_control)
}

/// The verdict on one checked document.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Verdict {
    /// The document's id.
    pub doc: String,
    /// New, near copy, or error.
    pub status: Status,
    /// True when it is to be added (with the check's builder).
    pub added: bool,
    /// Its near copies, best first.
    pub hits: Vec<Near>,
    /// Why it is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A run of submission checks against one snapshot of an index (set): every document is
/// compared with the index and with the documents checked before it, and, when adding, each
/// new one goes into a builder whose documents become one segment ([`crate::SetWriter::add`]).
pub struct Check<'a> {
    set: &'a IndexSet<Mmap>,
    fingerprinter: Fingerprinter,
    builder: Option<IndexBuilder>,
    opts: QueryOptions,
    replace: bool,
    /// Whether a new document's id is checked as adding it would (given twice, held by the
    /// set): when adding, and in a dry run of adding ([`Check::with_id_checks`]).
    check_ids: bool,
    /// The new documents of this run (to be added, when adding): id and sketch.
    pending: Vec<(String, Vec<u64>)>,
    /// The codes of the `pending` documents: key → (document, path, code group). A later
    /// document's probes find its candidates among them as they would in an index of them,
    /// so that a batch answers as one document at a time would, in time linear in its size.
    pending_codes: HashMap<u64, Vec<(u32, Path, u16)>>,
    /// The resolution of the pending documents' codes: the set's.
    resolution: Resolution,
    ids: HashSet<String>,
    /// Ids the set holds that new documents of this run take (`replace`).
    replaced: HashSet<String>,
    /// Documents of this run that are errors: verdicts of [`Status::Error`] and
    /// [`Check::unchecked`] documents.
    errors: usize,
    /// Of the errors, documents whose id the set holds (which `replace` would have added).
    held_ids: usize,
}

impl<'a> Check<'a> {
    /// A check against `set` keeping at most `top` near copies at a score of at least
    /// `threshold`. With a builder (from [`crate::SetWriter::builder`]), new documents are added
    /// to it; `replace` then lets a new document take the id of one the set holds.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] without a builder when `set` is no index set and holds no
    /// index to check against; what opening a set's schema returns.
    pub fn new(
        set: &'a IndexSet<Mmap>,
        builder: Option<IndexBuilder>,
        top: usize,
        threshold: f32,
        replace: bool,
    ) -> Result<Check<'a>> {
        let mut resolution = set.parts().first().map(|p| p.index.resolution());
        let fingerprinter = match (&builder, set.parts().first()) {
            (Some(b), _) => b.fingerprinter().clone(),
            (None, Some(p)) => p.index.fingerprinter().clone(),
            // A set without segments (new, or merged after every document was deleted): its
            // schema says how its documents are fingerprinted, and every one is new unless an
            // earlier one of the run is its near copy.
            (None, None) => match set.schema()? {
                Some(schema) => {
                    resolution = Some(schema.resolution());
                    schema.fingerprinter().clone()
                }
                None => {
                    return Err(crate::Error::Invalid(
                        "the index holds no documents to check against".into(),
                    ))
                }
            },
        };
        let resolution = fingerprinter
            .params()
            .resolution
            .or(resolution)
            .unwrap_or_else(|| Resolution::for_docs_within(1, fingerprinter.caps()));
        // The earlier new documents are found by their codes at the set's resolution, which
        // needs weighed fingerprints drawn for it: a builder of a set's ([`SetWriter::builder`])
        // or an index's own fingerprinter.
        if fingerprinter.idf().is_none() || !resolution.within(fingerprinter.caps()) {
            return Err(crate::Error::Invalid(
                "a check needs a builder of the set's (SetWriter::builder), with its idf table and resolution".into(),
            ));
        }
        Ok(Check {
            set,
            fingerprinter,
            pending_codes: HashMap::new(),
            resolution,
            check_ids: builder.is_some(),
            builder,
            opts: QueryOptions {
                top,
                threshold,
                ..QueryOptions::default()
            },
            replace,
            pending: Vec::new(),
            ids: HashSet::new(),
            replaced: HashSet::new(),
            errors: 0,
            held_ids: 0,
        })
    }

    /// Checks ids without adding, as adding would (an id given twice, or held by the set
    /// unless `replace`): a dry run of adding to a set says what adding would say.
    pub fn with_id_checks(mut self) -> Self {
        self.check_ids = true;
        self
    }

    /// The fingerprinter documents are checked with (for fingerprinting on other threads).
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Checks a document of this fingerprinter's and, when adding and it is new, adds it.
    ///
    /// # Errors
    /// As [`IndexSet::query_fingerprint`]: a damaged index, or a fingerprint of other
    /// parameters.
    pub fn check(&mut self, id: &str, title: Option<&str>, fp: Fingerprint) -> Result<Verdict> {
        let r = self.set.query_fingerprint(&fp, &self.opts)?;
        let mut near: Vec<Near> = r
            .hits
            .iter()
            .map(|h| {
                Ok(Near {
                    id: self
                        .set
                        .name(h.part, h.hit.doc)?
                        .unwrap_or_default()
                        .into_owned(),
                    score: h.hit.score,
                    codes: h.hit.codes,
                    path: h.hit.path.name(),
                })
            })
            .collect::<Result<_>>()?;
        if self.replace && self.check_ids {
            // The document this one replaces is going, as are those earlier documents of this
            // run replace: a revision of itself is no near copy, nor is a later document a
            // near copy of a text that one document at a time would have replaced already
            // (the text that replaced it is among the pending ones).
            near.retain(|n| n.id != id && !self.replaced.contains(&n.id));
        }
        if !self.pending.is_empty() {
            self.near_pending(&fp, &mut near)?;
        }
        // As a query orders its hits (score, then code groups): the index's before this run's
        // on a full tie (stable), as a later segment's documents would come.
        near.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.codes.cmp(&a.codes)));
        near.truncate(self.opts.top);
        let (mut message, mut added) = (None, false);
        // A run that adds nothing still compares each later document with the earlier new
        // ones, so that it says what adding them would.
        let mut keep = false;
        match self.check_ids {
            _ if !near.is_empty() => {}
            false => keep = true,
            true => {
                if !is_printable_id(id) {
                    message = Some(format!(
                        "id {id:?} is blank or holds control characters: give the document an id that prints on one line, which `delete` can then be given"
                    ));
                } else if !self.ids.insert(id.to_string()) {
                    message = Some(format!("id {id:?} is given twice"));
                } else if !self.replace && self.set.find(id)?.is_some() {
                    self.held_ids += 1;
                    message = Some(if id == "-" {
                        // Every document read from standard input as text is named "-".
                        "id \"-\" (standard input) is already in the set, from an earlier document on standard input: give this one an id (`--stdin-id ID`, or JSON Lines {\"id\": ..., \"text\": ...}) rather than replace that one".to_string()
                    } else {
                        format!("id {id:?} is already in the set (replace it, or give another id)")
                    });
                } else {
                    if self.replace && self.set.find(id)?.is_some() {
                        self.replaced.insert(id.to_string());
                    }
                    keep = true;
                }
            }
        }
        if keep {
            self.push_pending(id, &fp);
            if let Some(b) = self.builder.as_mut() {
                b.add_fingerprint(id, title, fp)?;
                added = true;
            }
        }
        let status = if message.is_some() {
            self.errors += 1;
            Status::Error
        } else if near.is_empty() {
            Status::New
        } else {
            Status::NearCopy
        };
        Ok(Verdict {
            doc: id.to_string(),
            status,
            added,
            hits: near,
            message,
        })
    }

    /// The earlier new documents of this run that `fp`'s probes find and whose sketches score
    /// at least the threshold, as an index of them would answer.
    fn near_pending(&self, fp: &Fingerprint, near: &mut Vec<Near>) -> Result<()> {
        let f = &self.fingerprinter;
        let p = f.params();
        let probes = f.query_probes(
            fp,
            self.resolution,
            p.probes.max(1),
            p.short_probes.max(1),
            None,
        );
        let mut found: Vec<(u32, Path, u16)> = Vec::new();
        for code in &probes {
            if let Some(docs) = self.pending_codes.get(&code.key) {
                found.extend(docs);
            }
        }
        found.sort_unstable();
        found.dedup();
        let (_, hits) = score_collisions(&found, fp.sketch(), self.opts.threshold, |doc| {
            Ok(Some(self.pending[doc as usize].1.iter().copied()))
        })?;
        near.extend(hits.into_iter().map(|h| Near {
            id: self.pending[h.doc as usize].0.clone(),
            score: h.score,
            codes: h.codes,
            path: "submitted",
        }));
        Ok(())
    }

    /// Keeps a new document of this run, its sketch and codes, for the later ones to meet.
    fn push_pending(&mut self, id: &str, fp: &Fingerprint) {
        let doc = self.pending.len() as u32;
        // The similar path's codes are never probed by a check.
        let codes = self.fingerprinter.codes(fp, self.resolution);
        for code in codes.into_iter().filter(|c| c.path != Path::Similar) {
            let docs = self.pending_codes.entry(code.key).or_default();
            let at = (doc, code.path, code.group);
            if docs.last() != Some(&at) {
                docs.push(at);
            }
        }
        self.pending.push((id.to_string(), fp.sketch().to_vec()));
    }

    /// The verdict of a document of this run that could not be checked at all (missing,
    /// unreadable, empty, not text), `why` saying so; counted as an error, so that nothing of
    /// the run is added, as with any verdict of [`Status::Error`].
    pub fn unchecked(&mut self, doc: impl Into<String>, why: impl Into<String>) -> Verdict {
        self.errors += 1;
        Verdict {
            doc: doc.into(),
            status: Status::Error,
            added: false,
            hits: Vec::new(),
            message: Some(why.into()),
        }
    }

    /// Documents of this run that are errors so far.
    pub fn errors(&self) -> usize {
        self.errors
    }

    /// Ends the run (and its borrow of the set): what is left to add.
    pub fn finish(self) -> Additions {
        Additions {
            builder: self.builder,
            errors: self.errors,
            held_ids: self.held_ids,
            replace: self.replace,
        }
    }
}

/// The new documents of a finished [`Check`] run, and whether they may be added.
pub struct Additions {
    builder: Option<IndexBuilder>,
    errors: usize,
    held_ids: usize,
    replace: bool,
}

/// What [`Additions::commit`] did.
#[derive(Debug)]
pub enum Committed {
    /// The new documents are one new segment of the set.
    Added(Change),
    /// No document was new, or the run did not add: the set is unchanged.
    Nothing,
    /// Some documents were errors, so nothing was added: a corrected run adds them all, and a
    /// script never has to find out which half of a batch went in.
    Refused {
        /// How many.
        errors: usize,
        /// Of them, documents whose id the set holds (`replace` would add them).
        held_ids: usize,
    },
}

impl Additions {
    /// Adds the run's new documents to `writer`'s set in one step (with the `replace` the run
    /// was made with), or nothing when any document of the run was an error.
    ///
    /// # Errors
    /// As [`SetWriter::add`].
    pub fn commit(self, writer: &mut SetWriter) -> Result<Committed> {
        let mut committed = self.commit_unmerged(writer)?;
        if let Committed::Added(change) = &mut committed {
            writer.merge_as_policy_asks(change);
        }
        Ok(committed)
    }

    /// [`Additions::commit`] without the merge that may follow ([`SetWriter::add_unmerged`]):
    /// a front end answers first, then merges ([`SetWriter::merge_as_policy_asks`]).
    ///
    /// # Errors
    /// As [`SetWriter::add`].
    pub fn commit_unmerged(self, writer: &mut SetWriter) -> Result<Committed> {
        if self.errors > 0 {
            return Ok(Committed::Refused {
                errors: self.errors,
                held_ids: self.held_ids,
            });
        }
        match self.builder {
            Some(b) if !b.is_empty() => Ok(Committed::Added(writer.add_unmerged(b, self.replace)?)),
            _ => Ok(Committed::Nothing),
        }
    }
}
