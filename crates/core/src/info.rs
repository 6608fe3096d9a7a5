//! What an index holds, as one JSON object: `pocketdex info --json`, the server's `/v1/info`
//! and the Python package's `info()` answer with these.

use crate::error::Result;
use crate::index::Index;
use crate::set::IndexSet;
use serde_json::{json, Value};

/// An index file: format, signature, counts, parameters, sections, bytes per document,
/// posting-list lengths and the idf table (its terms for the samples and for the sketch). `file` is how the caller names it.
///
/// # Errors
/// When the part of the file holding the posting-list starts is damaged.
pub fn file_info<D: AsRef<[u8]>>(file: &str, index: &Index<D>) -> Result<Value> {
    let m = index.meta();
    let docs = m.doc_count.max(1) as f64;
    let sections = index.sections();
    let len_of = |name: &str| {
        sections
            .iter()
            .find(|s| s.name == name)
            .map_or(0, |s| s.len)
    };
    let (names, titles) = (len_of("NAMES"), len_of("TITLES"));
    let total = index.len_bytes();
    let mut o = json!({
        "file": file,
        "format_version": index.version(),
        "signed_by": index.signature().map(|s| s.public_key.to_text().trim().to_string()),
        "block_size": index.block_size(),
        "bytes": total,
        "documents": m.doc_count,
        "codes": m.slot_count,
        "references": m.ref_count,
        "posting_bits": m.posting_bits,
        "language": m.lang,
        "params": m.params,
        "sections": sections,
        "bytes_per_document": total as f64 / docs,
        "bytes_per_document_beyond_names": (total - names - titles) as f64 / docs,
        "resolution": index.resolution(),
        "lists": index.list_lengths()?,
        "idf": index.fingerprinter().idf().map(|i| json!({
            // 0: the language's table, estimated from word frequencies.
            "learned_from": i.docs,
            "terms": i.sample_terms(),
            "sketch_terms": i.len(),
            "default": i.default,
            "sketch_default": i.sketch_default(),
        })),
    });
    tidy_floats(&mut o);
    Ok(o)
}

/// An index set: generation, live and deleted documents, bytes, its schema's parameters and
/// its segments. `dir` is how the caller names it.
pub fn set_info<D: AsRef<[u8]>, S: AsRef<[u8]>>(
    dir: &str,
    set: &IndexSet<D>,
    schema: &Index<S>,
) -> Value {
    let segments: Vec<_> = set
        .parts()
        .iter()
        .map(|p| {
            json!({"file": p.file, "documents": p.index.doc_count(),
                   "deleted": p.index.doc_count() as u64 - p.live_docs(), "bytes": p.index.len_bytes()})
        })
        .collect();
    let docs: u64 = set.parts().iter().map(|p| p.index.doc_count() as u64).sum();
    let bytes: u64 = set.parts().iter().map(|p| p.index.len_bytes()).sum();
    let m = schema.meta();
    let mut o = json!({
        "set": dir,
        "generation": set.generation(),
        "live_documents": set.live_docs(),
        "deleted_documents": docs - set.live_docs(),
        "bytes": bytes,
        "language": m.lang,
        "params": m.params,
        "resolution": schema.resolution(),
        "segments": segments,
    });
    tidy_floats(&mut o);
    o
}

/// Rounds the floats of a JSON value for people and parsers alike: a value that is exactly an
/// f32 (a parameter such as a scheme boundary) becomes its shortest f32 form (-0.45, not
/// -0.44999998807907104), any other to 6 significant digits.
pub fn tidy_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            let tidy = if (x as f32) as f64 == x {
                (x as f32).to_string().parse::<f64>().unwrap_or(x)
            } else {
                format!("{x:.5e}").parse::<f64>().unwrap_or(x)
            };
            if let Some(t) = serde_json::Number::from_f64(tidy) {
                *n = t;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy_floats),
        Value::Object(o) => o.values_mut().for_each(tidy_floats),
        _ => {}
    }
}
