//! Index sets and shards against their oracle, one index built from all their live documents:
//! grown in 1, 2 and 7 random batches, built as separate shards, with deletions and merges, a
//! set answers every query with exactly that index's hits, scores and order.

use crate::common;

use common::{edit_words, samples, Rng};
use pocketdex::fingerprint::Resolution;
use pocketdex::sketch::Idf;
use pocketdex::{Index, IndexBuilder, IndexSet, Lang, Params, QueryOptions, SetWriter};

/// What a hit list says, by document name: (name, score bits, code groups, path).
type Answer = Vec<(String, u32, u16, String)>;

fn params(docs: u64) -> Params {
    Params {
        resolution: Some(Resolution::for_docs(docs)),
        ..Params::default()
    }
}

fn builder(p: &Params) -> IndexBuilder {
    IndexBuilder::for_lang(Lang::En, p.clone())
        .unwrap()
        .with_idf(Idf::builtin(Lang::En))
}

/// One index of `docs`, the oracle.
fn single(p: &Params, docs: &[(String, String)]) -> Index<Vec<u8>> {
    let mut b = builder(p);
    for (n, t) in docs {
        b.add(n, None, t);
    }
    let mut out = Vec::new();
    b.finish(&mut out).unwrap();
    Index::open(out).unwrap()
}

/// Every sample and an edited copy of every fifth one.
fn queries(docs: &[(String, String)]) -> Vec<String> {
    let mut rng = Rng::new(11);
    let mut q: Vec<String> = docs.iter().map(|d| d.1.clone()).collect();
    for (i, d) in docs.iter().enumerate().step_by(5) {
        q.push(edit_words(&d.1, &docs[(i + 1) % docs.len()].1, 6, &mut rng));
    }
    q
}

fn opts() -> QueryOptions {
    QueryOptions {
        threshold: 0.3,
        top: 20,
        ..QueryOptions::default()
    }
}

fn answer_of_index(index: &Index<Vec<u8>>, q: &str) -> Answer {
    index
        .query(q, &opts())
        .unwrap()
        .hits
        .iter()
        .map(|h| {
            let name = index.name(h.doc).unwrap().unwrap().into_owned();
            (name, h.score.to_bits(), h.codes, h.path.name().to_string())
        })
        .collect()
}

fn answer_of_set<D: AsRef<[u8]>>(set: &IndexSet<D>, q: &str) -> Answer {
    set.query(q, &opts())
        .unwrap()
        .hits
        .iter()
        .map(|h| {
            let name = set.name(h.part, h.hit.doc).unwrap().unwrap().into_owned();
            (
                name,
                h.hit.score.to_bits(),
                h.hit.codes,
                h.hit.path.name().to_string(),
            )
        })
        .collect()
}

/// Asserts that `set` answers every query exactly as `oracle` does; returns the hits compared.
fn same_answers<D: AsRef<[u8]>>(
    set: &IndexSet<D>,
    oracle: &Index<Vec<u8>>,
    qs: &[String],
) -> usize {
    let mut hits = 0;
    for (i, q) in qs.iter().enumerate() {
        let want = answer_of_index(oracle, q);
        assert_eq!(answer_of_set(set, q), want, "query {i}");
        hits += want.len();
    }
    hits
}

/// `n` batches: cut points drawn at random.
fn batches(docs: &[(String, String)], n: usize, rng: &mut Rng) -> Vec<Vec<(String, String)>> {
    let mut cuts: Vec<usize> = (0..n - 1).map(|_| 1 + rng.below(docs.len() - 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut at = 0;
    for c in cuts.into_iter().chain([docs.len()]) {
        out.push(docs[at..c].to_vec());
        at = c;
    }
    out
}

fn add_batch(w: &mut SetWriter, batch: &[(String, String)]) {
    let mut b = w.builder();
    for (n, t) in batch {
        b.add(n, None, t);
    }
    w.add(b, false).unwrap();
}

#[test]
fn a_set_grown_in_batches_answers_as_one_index() {
    let docs = samples();
    let qs = queries(&docs);
    let mut rng = Rng::new(7);
    // A small collection's resolution and a large one's (samples in the codes).
    for p in [params(300), params(1_000_000)] {
        let oracle = single(&p, &docs);
        for n in [1, 2, 7] {
            let dir = tempfile::tempdir().unwrap();
            let set_dir = dir.path().join("set");
            let mut w = SetWriter::create(&set_dir, builder(&p)).unwrap();
            for b in batches(&docs, n, &mut rng) {
                add_batch(&mut w, &b);
            }
            drop(w);
            let set = IndexSet::open(&set_dir).unwrap();
            set.verify().unwrap();
            assert_eq!(set.live_docs(), docs.len() as u64);
            let hits = same_answers(&set, &oracle, &qs);
            assert!(
                hits >= qs.len(),
                "queries find their originals ({hits} hits)"
            );
        }
    }
}

#[test]
fn shards_built_separately_answer_as_one_index() {
    let docs = samples();
    let qs = queries(&docs);
    let p = params(1_000_000);
    let oracle = single(&p, &docs);
    let mut rng = Rng::new(3);
    let shards: Vec<(String, Index<Vec<u8>>)> = batches(&docs, 4, &mut rng)
        .into_iter()
        .enumerate()
        .map(|(i, b)| (format!("shard{i}"), single(&p, &b)))
        .collect();
    // Codes made for a million documents: each shard, and the oracle, has a FILTER, which a
    // query on four shards consults four times.
    let has_filter = |i: &Index<Vec<u8>>| i.sections().iter().any(|s| s.name == "FILTER");
    assert!(has_filter(&oracle) && shards.iter().all(|s| has_filter(&s.1)));
    let set = IndexSet::from_indexes(shards);
    same_answers(&set, &oracle, &qs);
}

#[test]
fn shards_adopted_by_a_set_answer_as_one_index_and_bad_ones_change_nothing() {
    let docs = samples();
    let qs = queries(&docs);
    let p = params(1_000_000);
    let oracle = single(&p, &docs);
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("set");
    let mut w = SetWriter::create(&set_dir, builder(&p)).unwrap();
    // Shards built apart from the set's schema, as a Spark partition builds one.
    let mut files = Vec::new();
    for (i, b) in batches(&docs, 3, &mut Rng::new(5)).into_iter().enumerate() {
        let mut shard = IndexBuilder::like(w.schema()).with_set_sections();
        for (n, t) in &b {
            shard.add(n, None, t);
        }
        let path = dir.path().join(format!("shard{i}.pdx"));
        shard.write_to_path(&path).unwrap();
        files.push(path);
    }
    // A plain index (no set sections), one of other parameters, and an id the set holds are
    // each refused, and the set stays empty.
    let plain = dir.path().join("plain.pdx");
    let mut b = IndexBuilder::like(w.schema());
    b.add("x", None, &docs[0].1);
    b.write_to_path(&plain).unwrap();
    let other = dir.path().join("other.pdx");
    let mut b = builder(&params(300)).with_set_sections();
    b.add("y", None, &docs[0].1);
    b.write_to_path(&other).unwrap();
    for (bad, why) in [(&plain, "not a segment"), (&other, "other parameters")] {
        let err = w.adopt(&[files[0].clone(), bad.clone()]).unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
        assert_eq!(w.set().live_docs(), 0);
    }
    let err = w.adopt(&[files[0].clone(), files[0].clone()]).unwrap_err();
    assert!(err.to_string().contains("given twice"), "{err}");
    // Writing the second segment fails (its name is taken by a directory): the first one,
    // already written, is removed with the error, and the set is unchanged.
    let listing = |d: &std::path::Path| {
        let mut l: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        l.sort();
        l
    };
    let before = listing(&set_dir);
    let blocker = set_dir.join("seg-00000002.pdx");
    std::fs::create_dir_all(blocker.join("x")).unwrap();
    assert!(w.adopt(&files).is_err());
    std::fs::remove_dir_all(&blocker).unwrap();
    assert_eq!(listing(&set_dir), before);
    assert_eq!(w.set().live_docs(), 0);
    let change = w.adopt(&files).unwrap();
    assert_eq!(
        (change.added, change.live_docs),
        (docs.len() as u64, docs.len() as u64)
    );
    assert_eq!(change.segments, files.len() as u64);
    assert!(matches!(
        w.adopt(&files[..1]).unwrap_err(),
        pocketdex::Error::DuplicateId { .. }
    ));
    drop(w);
    let set = IndexSet::open(&set_dir).unwrap();
    set.verify().unwrap();
    same_answers(&set, &oracle, &qs);
}

#[test]
fn deleted_documents_never_appear_and_merges_keep_the_answers() {
    let docs = samples();
    let qs = queries(&docs);
    let p = params(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("set");
    let mut w = SetWriter::create(&set_dir, builder(&p)).unwrap();
    let mut rng = Rng::new(5);
    for b in batches(&docs, 5, &mut rng) {
        add_batch(&mut w, &b);
    }
    // Every seventh document deleted (and one id that is not there).
    let gone: Vec<String> = docs.iter().step_by(7).map(|d| d.0.clone()).collect();
    let mut ids = gone.clone();
    ids.push("no such document".into());
    let (found, change) = w.delete(&ids).unwrap();
    assert_eq!(found.iter().filter(|&&f| f).count(), gone.len());
    assert!(!found[found.len() - 1]);
    assert_eq!(change.deleted, gone.len() as u64);
    let live: Vec<(String, String)> = docs
        .iter()
        .filter(|d| !gone.contains(&d.0))
        .cloned()
        .collect();
    let oracle = single(&p, &live);
    same_answers(w.set(), &oracle, &qs);
    // Deleting again finds nothing.
    assert_eq!(w.delete(&gone[..1]).unwrap().0, vec![false]);

    // A full merge: one segment, the same answers; the exported file is `build`'s, byte for byte.
    w.merge_all().unwrap();
    assert_eq!(w.set().parts().len(), 1);
    same_answers(w.set(), &oracle, &qs);
    let shipped = dir.path().join("shipped.pdx");
    w.export(&shipped).unwrap();
    let mut b = builder(&p);
    for (n, t) in &live {
        b.add(n, None, t);
    }
    let mut want = Vec::new();
    b.finish(&mut want).unwrap();
    assert!(
        std::fs::read(&shipped).unwrap() == want,
        "export differs from build"
    );
    // The same without the writer's lock (which `w` holds): the snapshot is exported.
    let unlocked = dir.path().join("unlocked.pdx");
    pocketdex::export_set(&set_dir, &unlocked).unwrap();
    assert!(
        std::fs::read(&unlocked).unwrap() == want,
        "a snapshot's export differs from build"
    );
    // Only the manifest, the schema, the lock and the live segment remain.
    let mut files: Vec<String> = std::fs::read_dir(&set_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "{files:?}");
}

#[test]
fn ids_are_unique_unless_replaced() {
    let docs = samples();
    let p = params(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("set");
    let mut w = SetWriter::create(&set_dir, builder(&p)).unwrap();
    add_batch(&mut w, &docs[..50]);
    // An id already in the set is refused, and nothing changes.
    let mut b = w.builder();
    b.add(&docs[60].0, None, &docs[60].1);
    b.add(&docs[3].0, None, &docs[10].1);
    let err = w.add(b, false).unwrap_err();
    assert!(
        matches!(err, pocketdex::Error::DuplicateId { ref id, file: None, more: 0, .. } if id == &docs[3].0),
        "{err}"
    );
    assert_eq!(w.set().live_docs(), 50);
    // Every held id of a batch is counted in the one refusal, the first few named.
    let mut b = w.builder();
    for d in &docs[3..9] {
        b.add(&d.0, None, &docs[60].1);
    }
    let err = w.add(b, false).unwrap_err();
    assert!(
        matches!(err, pocketdex::Error::DuplicateId { ref id, more: 5, ref others, .. } if id == &docs[3].0 && others.len() == 3),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "(and 5 more: {:?}, {:?}, {:?}, …)",
            docs[4].0, docs[5].0, docs[6].0
        )),
        "{message}"
    );
    assert_eq!(w.set().live_docs(), 50);
    // Twice in one batch: refused.
    let mut b = w.builder();
    b.add("x", None, &docs[60].1);
    b.add("x", None, &docs[61].1);
    assert!(w.add(b, true).is_err());
    // Replaced: the id now finds the new text.
    let mut b = w.builder();
    b.add(&docs[3].0, None, &docs[10].1);
    let change = w.add(b, true).unwrap();
    assert_eq!((change.added, change.deleted, change.live_docs), (1, 1, 50));
    let hits = w.set().query(&docs[10].1, &opts()).unwrap().hits;
    let names: Vec<String> = hits
        .iter()
        .map(|h| {
            w.set()
                .name(h.part, h.hit.doc)
                .unwrap()
                .unwrap()
                .into_owned()
        })
        .collect();
    assert!(
        names.contains(&docs[3].0) && names.contains(&docs[10].0),
        "{names:?}"
    );
    let old = w.set().query(&docs[3].1, &opts()).unwrap().hits;
    assert!(old
        .iter()
        .all(|h| w.set().name(h.part, h.hit.doc).unwrap().unwrap() != docs[3].0));
}

#[test]
fn a_second_writer_is_refused_and_single_adds_leave_few_segments() {
    let docs = samples();
    let p = params(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("set");
    let mut w = SetWriter::create(&set_dir, builder(&p)).unwrap();
    let err = SetWriter::open(&set_dir, false).err().expect("locked");
    assert!(matches!(err, pocketdex::Error::Busy { .. }), "{err}");
    // The policy as it was written first, pair by pair: merge the two newest segments while
    // the older holds at most twice the newer's live documents (at least 1 each).
    let pairwise = |mut lives: Vec<u64>| {
        let mut merged = 0;
        while let [.., older, newer] = lives[..] {
            if older.max(1) > 2 * newer.max(1) {
                break;
            }
            lives.pop();
            *lives.last_mut().unwrap() += newer;
            merged += 1;
        }
        (lives, merged)
    };
    let lives =
        |w: &SetWriter| -> Vec<u64> { w.set().parts().iter().map(|p| p.live_docs()).collect() };
    let mut most = 0;
    let mut add_one = |w: &mut SetWriter, d: &(String, String)| {
        let mut want = lives(w);
        want.push(1);
        let (want, merged) = pairwise(want);
        let mut b = w.builder();
        b.add(&d.0, None, &d.1);
        let change = w.add(b, false).unwrap();
        assert_eq!((lives(w), change.merged), (want, merged), "adding {}", d.0);
        most = most.max(w.set().parts().len());
    };
    for d in &docs[..200] {
        add_one(&mut w, d);
    }
    // With deleted documents, down to segments with none live.
    let gone: Vec<&str> = docs[..200]
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0 || *i >= 190)
        .map(|(_, d)| d.0.as_str())
        .collect();
    w.delete(&gone).unwrap();
    assert!(lives(&w).contains(&0), "{:?}", lives(&w));
    for d in &docs[200..240] {
        add_one(&mut w, d);
    }
    assert_eq!(w.set().live_docs(), 240 - gone.len() as u64);
    // The merge policy keeps about log2(n) segments at most.
    assert!(most <= 9, "{most} segments");
    drop(w);
    let w = SetWriter::open(&set_dir, false).unwrap();
    assert_eq!(w.set().live_docs(), 240 - gone.len() as u64);
}

/// The submission check's rule, in the library as `check --add` and `/v1/check` use it: a run
/// adds its new documents in one step, none when any document of the run is an error, and a
/// near copy (of the set or of a document earlier in the run) is never added.
#[test]
fn a_check_run_adds_its_new_documents_or_none() {
    use pocketdex::check::{Committed, Status};
    use pocketdex::Check;
    let docs = samples();
    let p = params(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let mut w = SetWriter::create(&dir.path().join("set"), builder(&p)).unwrap();
    add_batch(&mut w, &docs[..50]);
    let run = |w: &mut SetWriter, batch: &[(&str, &str)], unreadable: usize| {
        let mut check = Check::new(w.set(), Some(w.builder()), 10, 0.8, false).unwrap();
        let f = check.fingerprinter().clone();
        let statuses: Vec<Status> = batch
            .iter()
            .map(|(id, text)| check.check(id, None, f.fingerprint(text)).unwrap().status)
            .collect();
        for _ in 0..unreadable {
            check.unchecked("unreadable.txt", "cannot read");
        }
        assert_eq!(
            check.errors(),
            statuses.iter().filter(|s| **s == Status::Error).count() + unreadable
        );
        (statuses, check.finish().commit(w).unwrap())
    };
    // A held id is an error: nothing of the run is added, the new document neither.
    let (s, c) = run(
        &mut w,
        &[("new", &docs[60].1), (&docs[3].0, &docs[61].1)],
        0,
    );
    assert_eq!(s, [Status::New, Status::Error]);
    assert!(
        matches!(
            c,
            Committed::Refused {
                errors: 1,
                held_ids: 1
            }
        ),
        "{c:?}"
    );
    assert_eq!(w.set().live_docs(), 50);
    // A document that could not be read refuses the run too.
    let (s, c) = run(&mut w, &[("new", &docs[60].1)], 1);
    assert_eq!(s, [Status::New]);
    assert!(
        matches!(
            c,
            Committed::Refused {
                errors: 1,
                held_ids: 0
            }
        ),
        "{c:?}"
    );
    assert_eq!(w.set().live_docs(), 50);
    // New documents go in as one segment; a copy of one in the set, or of one earlier in the
    // run, is a near copy and stays out.
    let segments = w.set().parts().len();
    let (s, c) = run(
        &mut w,
        &[
            ("a", &docs[60].1),
            ("b", &docs[61].1),
            ("copy", &docs[5].1),
            ("again", &docs[60].1),
        ],
        0,
    );
    assert_eq!(
        s,
        [Status::New, Status::New, Status::NearCopy, Status::NearCopy]
    );
    assert!(
        matches!(c, Committed::Added(ref ch) if ch.added == 2),
        "{c:?}"
    );
    assert_eq!(w.set().live_docs(), 52);
    assert!(w.set().find("a").unwrap().is_some() && w.set().find("again").unwrap().is_none());
    assert!(w.set().parts().len() <= segments + 1);
    // Nothing new: the set is unchanged.
    let (s, c) = run(&mut w, &[("copy", &docs[5].1)], 0);
    assert_eq!(s, [Status::NearCopy]);
    assert!(matches!(c, Committed::Nothing), "{c:?}");
    assert_eq!(w.set().live_docs(), 52);
}

/// A run with `replace` answers as checking and adding one document at a time does: a later
/// document is no near copy of a text an earlier one of the run replaced, and meets the text
/// that replaced it.
#[test]
fn a_replacing_check_run_answers_as_one_document_at_a_time() {
    use pocketdex::check::Status;
    use pocketdex::Check;
    let docs = samples();
    let p = params(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let run = |w: &mut SetWriter, batch: &[(&str, &str)]| -> Vec<Status> {
        let mut check = Check::new(w.set(), Some(w.builder()), 10, 0.8, true).unwrap();
        let f = check.fingerprinter().clone();
        let statuses = batch
            .iter()
            .map(|(id, text)| check.check(id, None, f.fingerprint(text)).unwrap().status)
            .collect();
        check.finish().commit(w).unwrap();
        statuses
    };
    // docs[3] is revised into docs[60]'s text; then its old text comes as a new document,
    // then the revision again under another id.
    let batch: [(&str, &str); 3] = [
        (&docs[3].0, &docs[60].1),
        ("old", &docs[3].1),
        ("again", &docs[60].1),
    ];
    let mut one = SetWriter::create(&dir.path().join("one"), builder(&p)).unwrap();
    add_batch(&mut one, &docs[..50]);
    let singly: Vec<Status> = batch
        .iter()
        .flat_map(|d| run(&mut one, std::slice::from_ref(d)))
        .collect();
    assert_eq!(singly, [Status::New, Status::New, Status::NearCopy]);
    let mut all = SetWriter::create(&dir.path().join("all"), builder(&p)).unwrap();
    add_batch(&mut all, &docs[..50]);
    assert_eq!(run(&mut all, &batch), singly);
    assert_eq!(all.set().live_docs(), one.set().live_docs());
    assert!(all.set().find("old").unwrap().is_some());
}

/// A set without segments (just created) is checked against as any set is: without adding,
/// every document is new unless an earlier one of the run is its near copy, as when adding.
#[test]
fn a_set_without_segments_is_checked_against_without_adding() {
    use pocketdex::check::Status;
    use pocketdex::Check;
    let docs = samples();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new");
    let p = params(1_000_000);
    drop(SetWriter::create(&path, builder(&p)).unwrap());
    let batch = [&docs[0].1, &docs[1].1, &docs[0].1];
    let run = |adding: bool| -> Vec<Status> {
        let set = IndexSet::open(&path).unwrap();
        assert!(set.parts().is_empty());
        let w = adding.then(|| SetWriter::open(&path, false).unwrap());
        let mut check = Check::new(&set, w.as_ref().map(|w| w.builder()), 10, 0.8, false).unwrap();
        let f = check.fingerprinter().clone();
        batch
            .iter()
            .enumerate()
            .map(|(i, t)| {
                check
                    .check(&i.to_string(), None, f.fingerprint(t))
                    .unwrap()
                    .status
            })
            .collect()
    };
    assert_eq!(run(false), [Status::New, Status::New, Status::NearCopy]);
    assert_eq!(run(false), run(true));
}

/// A set's directory holds its own files alone: no new set is made inside it, however deep.
#[test]
fn no_set_is_created_inside_another() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path().join("outer");
    let p = params(1_000_000);
    drop(SetWriter::create(&outer, builder(&p)).unwrap());
    for inner in [outer.join("inner"), outer.join("damaged/deeper")] {
        let e = SetWriter::create(&inner, builder(&p))
            .err()
            .expect("refused");
        assert!(
            e.to_string().contains("cannot lie inside the index set"),
            "{e}"
        );
        assert!(!inner.exists());
    }
    // Beside it, a set is made as anywhere.
    drop(SetWriter::create(&dir.path().join("beside"), builder(&p)).unwrap());
}
