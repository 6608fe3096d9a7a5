//! Signed indexes (`index-format.md` §7.2): Ed25519 keys, the signature block appended to a
//! version-7 file, and the check of a signature against a trusted public key. The signature
//! signs the header, the directory and the small sections `open` reads; TREE is among them, and
//! its root covers every other byte a query reads through the block tree, so checking a
//! signature costs what `open` costs, not a pass over the file.

use crate::atomic::write_atomically;
use crate::error::{Error, Result};
use crate::format::{self, Directory, SectionId};
use ed25519_dalek::{Signer, Verifier};
use std::path::Path;

/// Bytes of the signature block at the end of a signed file.
pub const SIGNATURE_LEN: usize = 128;
/// The first eight bytes of the signature block.
pub(crate) const SIG_MAGIC: [u8; 8] = *b"PDX-SIG1";
/// The last eight bytes of a signed file.
pub const SIG_END: [u8; 8] = *b"PDX-SGN\n";
/// The one algorithm so far: Ed25519 (RFC 8032).
const ED25519: u32 = 1;
/// What a signature signs starts with this, so that it means nothing in another protocol.
const CONTEXT: &[u8] = b"pocketdex index signature v1\0";
const SECRET_TAG: &str = "pocketdex-secret-key-ed25519";
const PUBLIC_TAG: &str = "pocketdex-public-key-ed25519";

/// A secret signing key. Its text form (`pocketdex keygen`) is one line:
/// `pocketdex-secret-key-ed25519 <64 hex digits>`.
pub struct SecretKey(ed25519_dalek::SigningKey);

/// A public key that checks signatures; text form `pocketdex-public-key-ed25519 <64 hex digits>`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

impl SecretKey {
    /// A new key from the operating system's random source.
    pub fn generate() -> Result<SecretKey> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|e| Error::Invalid(format!("no random source for a new key: {e}")))?;
        Ok(SecretKey(ed25519_dalek::SigningKey::from_bytes(&seed)))
    }

    /// The key's public half.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The key as one line of text.
    pub fn to_text(&self) -> String {
        format!("{SECRET_TAG} {}\n", hex(self.0.as_bytes()))
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<SecretKey> {
        let bytes = parse_key(text, SECRET_TAG, "secret")?;
        Ok(SecretKey(ed25519_dalek::SigningKey::from_bytes(&bytes)))
    }
}

impl PublicKey {
    /// The key as one line of text.
    pub fn to_text(&self) -> String {
        format!("{PUBLIC_TAG} {}\n", hex(self.0.as_bytes()))
    }

    /// Reads the text form, or the 64 hex digits alone.
    pub fn parse(text: &str) -> Result<PublicKey> {
        let bytes = parse_key(text, PUBLIC_TAG, "public")?;
        ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| Error::Invalid("not a valid Ed25519 public key".into()))
    }

    /// True when `arg` (a front end's key argument) is a public key's text, its tagged form or
    /// its 64 hex digits, rather than the name of a key file.
    pub fn looks_like_text(arg: &str) -> bool {
        let t = arg.trim();
        // Any tag of a public key, so that a key of another algorithm is said to be unknown.
        t.starts_with("pocketdex-public-key")
            || (t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()))
    }

    /// The first 8 bytes in hex: enough to tell keys apart in messages.
    pub fn short(&self) -> String {
        hex(&self.0.as_bytes()[..8])
    }
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({})", hex(self.0.as_bytes()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The 32 key bytes of `text`: `<tag> <64 hex>` or the hex alone.
fn parse_key(text: &str, tag: &str, what: &str) -> Result<[u8; 32]> {
    // A byte order mark, as Windows' Notepad saves a copied key, is no part of it.
    let text = text.trim_start_matches('\u{feff}').trim();
    let digits = text.strip_prefix(tag).map_or(text, str::trim);
    let bad = || {
        Error::Invalid(format!(
            "not a pocketdex {what} key: expected `{tag} <64 hex digits>` (as `pocketdex keygen` writes it)"
        ))
    };
    if digits.len() != 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// A signature block: who signed and the signature.
#[derive(Clone, Debug)]
pub struct Signature {
    /// The key that made it (to be compared with a trusted key: anyone can sign).
    pub public_key: PublicKey,
    signature: ed25519_dalek::Signature,
}

/// Splits a file into the index and its signature, if it ends with a signature block.
pub(crate) fn split(bytes: &[u8]) -> Result<(&[u8], Option<Signature>)> {
    if bytes.len() < SIGNATURE_LEN || bytes[bytes.len() - 8..] != SIG_END {
        return Ok((bytes, None));
    }
    let (index, block) = bytes.split_at(bytes.len() - SIGNATURE_LEN);
    let mut r = format::Reader::new(block, "signature");
    let bad = |what: &str| Error::format(format!("signature block: {what}"));
    if r.take(8)? != SIG_MAGIC {
        return Err(bad("magic missing"));
    }
    if r.u32()? != ED25519 {
        return Err(bad("unknown algorithm (this pocketdex knows Ed25519)"));
    }
    if r.u32()? != 0 {
        return Err(bad("reserved field is not zero"));
    }
    if r.u64()? != index.len() as u64 {
        return Err(bad("the signed length is not the index's"));
    }
    let key: [u8; 32] = r.take(32)?.try_into().expect("32 bytes");
    let sig: [u8; 64] = r.take(64)?.try_into().expect("64 bytes");
    let public_key = ed25519_dalek::VerifyingKey::from_bytes(&key)
        .map(PublicKey)
        .map_err(|_| bad("the public key is not valid"))?;
    Ok((
        index,
        Some(Signature {
            public_key,
            signature: ed25519_dalek::Signature::from_bytes(&sig),
        }),
    ))
}

/// What a signature of this index signs: the context, the index's length, and BLAKE3 of its
/// header, directory and small sections (META, CLASSES, IDF, MPHF, TREE) in file order.
fn message(index: &[u8], dir: &Directory) -> Result<Vec<u8>> {
    if dir.get(SectionId::Tree).is_none() {
        return Err(Error::Invalid(format!(
            "only files of format version 7 or later can be signed (this one is version {}): rebuild it with this pocketdex",
            dir.version
        )));
    }
    let mut h = blake3::Hasher::new();
    h.update(&index[..dir.len_bytes()]);
    for e in dir
        .entries()
        .iter()
        .filter(|e| crate::integrity::CHECKED_AT_OPEN.contains(&e.id))
    {
        h.update(&index[e.range()]);
    }
    let mut m = CONTEXT.to_vec();
    m.extend((index.len() as u64).to_le_bytes());
    m.extend(h.finalize().as_bytes());
    Ok(m)
}

/// Checks that `signature` is `trusted`'s signature of `index` (an opened file's bytes without
/// the block; `open` checked the sections the message hashes).
pub(crate) fn check(
    index: &[u8],
    dir: &Directory,
    signature: Option<&Signature>,
    trusted: &PublicKey,
) -> Result<()> {
    let Some(sig) = signature else {
        return Err(Error::Signature(format!(
            "the index is not signed, and a trusted key ({}) was given: sign it with `pocketdex sign`, or leave out --public-key",
            trusted.short()
        )));
    };
    if sig.public_key != *trusted {
        // A block that does not verify with the key it carries was damaged (its key field
        // included): say that, not that another signed it.
        check_embedded(index, dir, sig)?;
        // Keys that differ past their first 8 bytes (a mistyped key) are told apart whole.
        let (mut signer, mut wanted) = (sig.public_key.short(), trusted.short());
        if signer == wanted {
            (signer, wanted) = (hex(sig.public_key.0.as_bytes()), hex(trusted.0.as_bytes()));
        }
        return Err(Error::Signature(format!(
            "the index is signed by key {signer}, not by the trusted key {wanted}"
        )));
    }
    trusted
        .0
        .verify(&message(index, dir)?, &sig.signature)
        .map_err(|_| {
            Error::Signature(
                "the signature does not match the index: the file was changed after it was signed"
                    .into(),
            )
        })
}

/// Checks that `signature` verifies with the key it carries: true of every signature block
/// `sign` wrote until a bit of the block (or of what it signs) changed. Says nothing of who
/// signed ([`check`] does, against a trusted key).
pub(crate) fn check_embedded(index: &[u8], dir: &Directory, signature: &Signature) -> Result<()> {
    signature
        .public_key
        .0
        .verify(&message(index, dir)?, &signature.signature)
        .map_err(|_| {
            Error::Signature(format!(
                "the signature block (key {}) does not verify with its own key: the block or the file was damaged or changed after signing; restore a good copy, or sign it again",
                signature.public_key.short()
            ))
        })
}

/// Signs the index file at `path` with `key`, in place (atomically: a new file replaces it); a
/// signature it had is replaced. The file is fully verified first: a signature vouches for
/// every byte.
pub fn sign_file(path: &Path, key: &SecretKey) -> Result<PublicKey> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let index = crate::index::Index::open(&bytes[..])?;
    index.verify()?;
    let (body, _) = split(&bytes)?;
    let dir = Directory::decode(body)?;
    let sig = key.0.sign(&message(body, &dir)?);
    let public = key.public();
    let mut block = Vec::with_capacity(SIGNATURE_LEN);
    block.extend(SIG_MAGIC);
    block.extend(ED25519.to_le_bytes());
    block.extend(0u32.to_le_bytes());
    block.extend((body.len() as u64).to_le_bytes());
    block.extend(public.0.as_bytes());
    block.extend(sig.to_bytes());
    block.extend(SIG_END);
    debug_assert_eq!(block.len(), SIGNATURE_LEN);
    let dir_of = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    write_atomically(
        dir_of,
        path,
        || {},
        |out| {
            out.write_all(body)?;
            out.write_all(&block)?;
            Ok(())
        },
    )?;
    Ok(public)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_as_text() {
        let k = SecretKey::generate().unwrap();
        let text = k.to_text();
        assert!(text.starts_with("pocketdex-secret-key-ed25519 "));
        let back = SecretKey::parse(&text).unwrap();
        assert_eq!(back.public(), k.public());
        let p = k.public().to_text();
        assert_eq!(PublicKey::parse(&p).unwrap(), k.public());
        // The hex alone is a public key too; a secret key is not one.
        assert_eq!(
            PublicKey::parse(&p[PUBLIC_TAG.len()..]).unwrap(),
            k.public()
        );
        assert!(PublicKey::parse(&text).is_err());
        assert!(PublicKey::parse("pocketdex-public-key-ed25519 12ab").is_err());
    }
}
