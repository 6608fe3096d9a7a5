//! wordfreq's word lists (`large_<lang>.msgpack.gz`, see `scripts/fetch-wordfreq.sh`): the source
//! of the reference tables and of generated vocabularies.

use pocketdex::{Error, Result};
use std::io::Read;
use std::path::Path;

/// Reads a wordfreq word list (`large_<lang>.msgpack.gz`: gzip'd msgpack `[header, bucket0,
/// bucket1, …]`, every word in bucket i having frequency 10^(−i/100)): `(word, frequency)`, most
/// frequent first.
pub fn read(path: &Path) -> Result<Vec<(String, f64)>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut raw)
        .map_err(|e| Error::io(path, e))?;
    let bad = |what: &str| {
        Error::Invalid(format!(
            "{}: not a wordfreq msgpack list: {what}",
            path.display()
        ))
    };
    let value = rmpv::decode::read_value(&mut raw.as_slice()).map_err(|e| bad(&e.to_string()))?;
    let items = value
        .as_array()
        .ok_or_else(|| bad("top level is not an array"))?;
    let mut words = Vec::new();
    for (i, bucket) in items.iter().enumerate().skip(1) {
        let freq = 10f64.powf(-((i - 1) as f64) / 100.0);
        for word in bucket
            .as_array()
            .ok_or_else(|| bad("bucket is not an array"))?
        {
            let word = word.as_str().ok_or_else(|| bad("word is not a string"))?;
            words.push((word.to_string(), freq));
        }
    }
    Ok(words)
}
