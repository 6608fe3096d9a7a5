//! The META and CLASSES sections: counts, fingerprinting parameters, prefix classes and
//! stopwords, so that a query needs nothing but the index file (`index-format.md`).

use crate::error::{Error, Result};
use crate::fingerprint::{Deviation, Params, Resolution};
use crate::format::{Reader, Writer};
use crate::reference::Classes;

/// Counts and parameters of an index (section META).
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// Number of documents.
    pub doc_count: u32,
    /// Number of distinct codes = MPHF slots.
    pub slot_count: u32,
    /// Number of (code, document) references = postings.
    pub ref_count: u64,
    /// Bits per posting (document id).
    pub posting_bits: u8,
    /// Language code (ISO 639-1 for the built-in references; at most 16 bytes).
    pub lang: String,
    /// Fingerprinting parameters.
    pub params: Params,
}

impl Meta {
    /// Encodes the section.
    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.doc_count);
        w.u32(self.slot_count);
        w.u64(self.ref_count);
        w.u8(self.posting_bits);
        w.short_bytes(self.lang.as_bytes());
        let p = &self.params;
        let r = p
            .resolution
            .expect("an index's resolution is chosen before it is written");
        w.u16(p.classes);
        w.u8(p.deviation as u8);
        w.u8(p.probes);
        w.u32(p.min_terms);
        w.u32(p.short_below);
        w.u8(p.minhash_bands);
        w.u8(p.sketch_words);
        w.u8(r.bands);
        w.u8(r.samples);
        w.u8(r.short_rows);
        w.u8(p.similar_bands);
        w.u8(p.similar_probes);
        w.u8(r.similar_rows);
        w.u8(p.schemes.len() as u8);
        for s in &p.schemes {
            w.u8(s.len() as u8);
            for &b in s {
                w.f32(b);
            }
        }
        w.u8(p.short_probes);
    }

    /// Decodes and validates the section.
    pub fn decode(bytes: &[u8], version: u32) -> Result<Meta> {
        let mut r = Reader::new(bytes, "META");
        let doc_count = r.u32()?;
        let slot_count = r.u32()?;
        let ref_count = r.u64()?;
        let posting_bits = r.u8()?;
        let lang = String::from_utf8(r.short_bytes()?.to_vec())
            .map_err(|_| Error::format("META: language is not UTF-8"))?;
        let classes = r.u16()?;
        let deviation = match r.u8()? {
            0 => Deviation::Relative,
            1 => Deviation::ZScore,
            d => {
                return Err(Error::format(format!(
                    "META: unknown deviation formula {d}"
                )))
            }
        };
        let probes = r.u8()?;
        let min_terms = r.u32()?;
        let short_below = r.u32()?;
        let minhash_bands = r.u8()?;
        let sketch_words = r.u8()?;
        let (bands, samples, short_rows) = (r.u8()?, r.u8()?, r.u8()?);
        let similar_bands = r.u8()?;
        let similar_probes = r.u8()?;
        let resolution = Resolution::new(bands, samples, short_rows, r.u8()?);
        let n = r.u8()?;
        let mut schemes = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let m = r.u8()?;
            schemes.push((0..m).map(|_| r.f32()).collect::<Result<Vec<f32>>>()?);
        }
        // Files before version 12 were queried with each short band's code alone.
        let short_probes = if version >= 12 { r.u8()? } else { 1 };
        r.finish()?;
        let params = Params {
            classes,
            schemes,
            deviation,
            probes,
            short_probes,
            min_terms,
            short_below,
            minhash_bands,
            sketch_words,
            similar_bands,
            similar_probes,
            resolution: Some(resolution),
        };
        params
            .validate()
            .map_err(|e| Error::format(format!("META: parameters: {e}")))?;
        if slot_count as u64 > ref_count || (ref_count > 0 && doc_count == 0) {
            return Err(Error::format("META: counts are inconsistent"));
        }
        if posting_bits as u32 != crate::format::bits_for(doc_count as u64) {
            return Err(Error::format(
                "META: posting width does not fit the document count",
            ));
        }
        Ok(Meta {
            doc_count,
            slot_count,
            ref_count,
            posting_bits,
            lang,
            params,
        })
    }
}

/// Encodes section CLASSES: the class shares, the prefix table and the stopwords.
pub fn encode_classes(classes: &Classes, stopwords: &[&str], w: &mut Writer) {
    w.u16(classes.k() as u16);
    for &p in classes.expected() {
        w.f64(p);
    }
    w.u32(classes.table().len() as u32);
    for (prefix, class) in classes.table() {
        w.u16(*class);
        w.short_bytes(prefix.as_bytes());
    }
    w.u32(stopwords.len() as u32);
    for s in stopwords {
        w.short_bytes(s.as_bytes());
    }
}

/// Decodes section CLASSES into the classes and the stopwords.
pub fn decode_classes(bytes: &[u8]) -> Result<(Classes, Vec<String>)> {
    let mut r = Reader::new(bytes, "CLASSES");
    let k = r.u16()?;
    let expected = (0..k).map(|_| r.f64()).collect::<Result<Vec<f64>>>()?;
    let utf8 = |b: &[u8]| {
        String::from_utf8(b.to_vec()).map_err(|_| Error::format("CLASSES: a string is not UTF-8"))
    };
    let n = r.u32()?;
    let mut table = Vec::with_capacity((n as usize).min(r.remaining() / 3));
    for _ in 0..n {
        let class = r.u16()?;
        table.push((utf8(r.short_bytes()?)?, class));
    }
    let n = r.u32()?;
    let mut stopwords = Vec::with_capacity((n as usize).min(r.remaining()));
    for _ in 0..n {
        stopwords.push(utf8(r.short_bytes()?)?);
    }
    r.finish()?;
    Ok((Classes::from_parts(table, expected)?, stopwords))
}
