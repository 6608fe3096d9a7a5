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

/// Reads an MPHF whose section checksum has already been checked. `ph`'s reader and lookup trust
/// their input, so the layout is checked first (see [`layout`]); a panic in ph's reader that
/// this check did not foresee still becomes an error here.
pub fn from_bytes(mut bytes: &[u8]) -> Result<Function> {
    let total = bytes.len();
    match layout(bytes) {
        Layout::Length(len) if len == total => {}
        Layout::Length(_) | Layout::Unreadable => {
            return Err(Error::format(
                "MPHF section: level sizes do not match its length",
            ))
        }
        Layout::BadLevel(l) => {
            return Err(Error::format(format!(
                "MPHF section: level {l} is not a positive whole number of 64-bit words"
            )))
        }
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

/// The slot `f` gives `key` (`None` for some keys it was not built on). With every level a
/// positive number of groups ([`from_bytes`] refuses others), every group and bit ph's lookup
/// computes lies inside its arrays, whatever their contents, so this cannot panic.
#[inline]
pub fn get(f: &Function, key: u64) -> Option<u64> {
    f.get(&key)
}

/// What the level sizes of an MPHF section say.
#[derive(Debug, PartialEq)]
enum Layout {
    /// The length the section must have.
    Length(usize),
    /// A level size that ph's builder never writes: 0 groups (ph's lookup would then read the
    /// seed and bit of a group beyond the arrays, the seed without a bounds check) or not a
    /// multiple of 4 groups (ph makes every level whole 64-bit words).
    BadLevel(u64),
    /// The sizes cannot be read, or ask for more than any index holds.
    Unreadable,
}

/// The section's layout from its level sizes (`index-format.md`, section MPHF): group bits byte,
/// VByte level count and sizes, 16 bits per group, seed bits byte, 4 bits per group. ph
/// allocates what the sizes ask for before reading, and an allocation failure aborts the
/// process, so the sizes are checked before ph sees them.
fn layout(bytes: &[u8]) -> Layout {
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
    let Some(levels) = vbyte().filter(|&l| l <= 64) else {
        return Layout::Unreadable;
    };
    let mut groups = 0u64;
    for l in 0..levels {
        let Some(size) = vbyte() else {
            return Layout::Unreadable;
        };
        if size == 0 || size % 4 != 0 {
            return Layout::BadLevel(l);
        }
        groups = match groups.checked_add(size) {
            Some(g) if g <= 1 << 40 => g,
            _ => return Layout::Unreadable,
        };
    }
    let words = |bits: u64| bits.div_ceil(64) * 8;
    match usize::try_from(at as u64 + words(16 * groups) + 1 + words(4 * groups)) {
        Ok(len) => Layout::Length(len),
        Err(_) => Layout::Unreadable,
    }
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

    /// A level of 0 groups with a length that matches would make ph's lookup read a group beyond
    /// its arrays (found by the `mutate` fuzz target); levels that are not whole 64-bit words
    /// are never written either. Both are refused with the level named.
    #[test]
    fn refuses_levels_ph_never_writes() {
        let keys: Vec<u64> = (0..100u64).map(|i| h64(&i.to_le_bytes(), 2)).collect();
        let bytes = to_bytes(&build(&keys));
        assert_eq!(layout(&bytes), Layout::Length(bytes.len()));
        let levels = bytes[1] as usize;
        assert!(levels >= 1 && bytes[2..2 + levels].iter().all(|&b| b < 0x80));
        // One more level of 0 groups: same length, so only the level check refuses it.
        let mut zero = vec![bytes[0], bytes[1] + 1];
        zero.extend_from_slice(&bytes[2..2 + levels]);
        zero.push(0);
        zero.extend_from_slice(&bytes[2 + levels..]);
        assert_eq!(layout(&zero), Layout::BadLevel(levels as u64));
        let err = from_bytes(&zero).err().expect("refused").to_string();
        assert!(err.contains(&format!("level {levels} ")), "{err}");
        // A level of 6 groups instead of 4 or 8 (whatever the length).
        let mut odd = bytes.clone();
        odd[2] = 6;
        assert_eq!(layout(&odd), Layout::BadLevel(0));
    }
}
