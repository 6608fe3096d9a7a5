//! The minimal perfect hash function over all distinct codes: `ph`'s FMPHGO with the pinned
//! [`crate::hash::MphfHasher`].
//!
//! Why FMPHGO and not PHast: PHast's `get` reaches `unreachable!()` for some keys outside its
//! build set, and every query probes codes that were never indexed; FMPHGO's `get` returns
//! `None` or an arbitrary slot for such keys, and the slot's 16-bit check rejects the latter.
//! FMPHGO's bytes do not depend on the thread count, so a build is reproducible anywhere.

use crate::error::{Error, Result};
use crate::hash::MphfHasher;
use ph::fmph::{GOBuildConf, GOConf, GOFunction, TwoToPowerBitsStatic};

/// The concrete MPHF type: 16-bit groups (2^4) and 4-bit group seeds (2^2), ph's recommended
/// GO setting.
pub type Function = GOFunction<TwoToPowerBitsStatic<4>, TwoToPowerBitsStatic<2>, MphfHasher>;

/// Builds the MPHF over distinct `keys` (all cores).
pub fn build(keys: &[u64]) -> Function {
    let conf = GOConf::hash_bps_bpg(
        MphfHasher,
        TwoToPowerBitsStatic::<2>,
        TwoToPowerBitsStatic::<4>,
    );
    GOFunction::from_slice_with_conf(keys, GOBuildConf::with_mt(conf, true))
}

/// Serialises the MPHF (ph's own layout; see `index-format.md`, section MPHF).
pub fn to_bytes(f: &Function) -> Vec<u8> {
    let mut out = Vec::with_capacity(f.write_bytes());
    f.write(&mut out).expect("writing to a Vec cannot fail");
    out
}

/// Reads an MPHF whose section checksum has already been checked. `ph`'s reader trusts its input,
/// so a crafted section could still make it panic: that panic becomes an error here.
pub fn from_bytes(mut bytes: &[u8]) -> Result<Function> {
    let total = bytes.len();
    // ph allocates what the level sizes ask for before reading; an impossible size would abort
    // the process (allocation failure cannot be caught), so the layout is checked first.
    if expected_len(bytes) != Some(total) {
        return Err(Error::format(
            "MPHF section: level sizes do not match its length",
        ));
    }
    let read = std::panic::catch_unwind(move || {
        let f = Function::read_with_hasher(&mut bytes, MphfHasher);
        (f, bytes.len())
    });
    match read {
        Ok((Ok(f), 0)) => Ok(f),
        Ok((Ok(_), left)) => Err(Error::format(format!(
            "MPHF section has {left} trailing bytes of {total}"
        ))),
        Ok((Err(e), _)) => Err(Error::format(format!("MPHF section unreadable: {e}"))),
        Err(_) => Err(Error::format("MPHF section unreadable")),
    }
}

/// The slot `f` gives `key` (`None` for some keys it was not built on). ph's lookup trusts the
/// section as its reader does: a crafted section with a valid checksum and layout can make it
/// index out of bounds, and that panic becomes an error here too.
#[inline]
pub fn get(f: &Function, key: u64) -> Result<Option<u64>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.get(&key)))
        .map_err(|_| Error::format("MPHF section is inconsistent (a crafted file?)"))
}

/// The length the section must have, from its level sizes (`index-format.md`, section MPHF):
/// group bits byte, VByte level count and sizes, 16 bits per group, seed bits byte, 4 bits per group.
fn expected_len(bytes: &[u8]) -> Option<usize> {
    let mut at = 1; // group bits
    let mut vbyte = || -> Option<u64> {
        let mut v = 0u64;
        for i in 0..8 {
            let b = *bytes.get(at)?;
            at += 1;
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None // a size needing a 9th byte is far beyond any real index
    };
    let levels = vbyte()?;
    if levels > 64 {
        return None;
    }
    let mut groups = 0u64;
    for _ in 0..levels {
        groups = groups.checked_add(vbyte()?)?;
    }
    if groups > 1 << 40 {
        return None;
    }
    let words = |bits: u64| bits.div_ceil(64) * 8;
    usize::try_from(at as u64 + words(16 * groups) + 1 + words(4 * groups)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::h64;

    #[test]
    fn is_a_bijection_and_round_trips() {
        let keys: Vec<u64> = (0..20_000u64).map(|i| h64(&i.to_le_bytes(), 1)).collect();
        let f = build(&keys);
        let mut seen = vec![false; keys.len()];
        for k in &keys {
            let slot = f.get(k).expect("member key has a slot") as usize;
            assert!(!seen[slot], "two keys share slot {slot}");
            seen[slot] = true;
        }
        let bytes = to_bytes(&f);
        let g = from_bytes(&bytes).unwrap();
        assert!(keys.iter().all(|k| f.get(k) == g.get(k)));
        // The same keys give the same bytes: builds are reproducible.
        assert_eq!(to_bytes(&build(&keys)), bytes);
        assert!(from_bytes(&bytes[..bytes.len() - 3]).is_err());
        // A level size of 2^40 groups is refused before ph would try to allocate it.
        let mut huge = vec![bytes[0], 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
        huge.extend_from_slice(&[0; 16]);
        assert!(from_bytes(&huge).is_err());
    }
}
